package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cluster"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// payloadModel is a model whose payloads index stores when a flag of its
// name (--tweak, ...) gives its file.
type payloadModel struct {
	name, usage string
	load        func(path string) (index.PayloadEncoder, error)
}

// payloadModels are the models index has a flag for.
var payloadModels = []payloadModel{
	{"lsa", "LSA model: store every document's concept vector (payload \"lsa\")", loadLSAPayload},
	{"s2net", "S2Net model (TF-IDF inputs): store every document's concept vector (payload \"s2net\")", loadS2NetPayload},
	{"dse", "DSE model: store every document's embedding Φ(d) (payload \"dse\")", loadDSEPayload},
	{"quality", "answer quality model (without context features): store every document's score (payload \"quality\")", loadQualityPayload},
	{"tweak", "TWEAK model: store every document's learned term-weight vector (payload \"tweak\")", loadTWEAKPayload},
}

// indexOptions are the flags of semrank index.
type indexOptions struct {
	dataDir, indexPath, pipelinePath, shard string
	models                                  []string // the files of payloadModels
}

// newIndexCmd returns semrank index.
func newIndexCmd() *cobra.Command {
	var o indexOptions
	cmd := &cobra.Command{
		Use:   "index --data DIR --index PATH [--pipeline FILE | --tweak MODEL ...] [--shard I/N]",
		Short: "Index a BEIR directory's corpus with Bleve (BM25), with optional learned payloads",
		Long: `Index a BEIR directory's corpus with Bleve (BM25), with optional learned payloads.

--pipeline stores every payload the pipeline's stages read (an index to serve
that pipeline from); the model flags (--tweak, --lsa, ...) name payload
models one by one.

--index may name an existing index (documents with known ids are replaced),
a new path or an empty folder. A new index is built in a staging folder
beside the path (.NAME.indexing-*) and moved into place once it is whole, so
a failed, interrupted or killed run leaves no partial index at the path (a
killed run leaves its staging folder, which the next run points out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runIndex(cmd, o) },
	}
	cmd.Flags().StringVar(&o.dataDir, "data", "", "BEIR directory: its corpus.jsonl is indexed (queries and judgments, if any, are not read)")
	cmd.Flags().StringVar(&o.indexPath, "index", "", "index path (created if absent or an empty folder)")
	cmd.Flags().StringVar(&o.pipelinePath, "pipeline", "", "pipeline file, or a directory holding pipeline.yaml: store the payloads its stages read")
	cmd.Flags().StringVar(&o.shard, "shard", "", "index only shard I of N (I/N, 0-based): the documents whose id hashes to I")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("index")
	o.models = make([]string, len(payloadModels))
	for i, m := range payloadModels {
		cmd.Flags().StringVar(&o.models[i], m.name, "", m.usage)
	}
	return cmd
}

// runIndex runs semrank index.
func runIndex(cmd *cobra.Command, o indexOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	corpus, si, sn, err := indexCorpus(cmd.ErrOrStderr(), o)
	if err != nil {
		return err
	}
	encs, err := loadEncoders(o.models)
	if err != nil {
		return err
	}
	for _, left := range leftStaging(o.indexPath) {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is a new index that a semrank index run was building (killed before it finished, or still running); remove it once no such run is going\n", left)
	}
	idx, target, err := openForIndex(o.indexPath)
	if err != nil {
		return err
	}
	encs, err = prepareIndex(idx, o.pipelinePath, encs, si, sn)
	var before uint64
	if err == nil {
		before, err = idx.DocCount()
	}
	if err != nil {
		idx.Close()
		target.discard()
		return err
	}
	start := time.Now()
	after, err := addCorpus(cmd.Context(), idx, corpus, encs)
	if err != nil {
		target.discard()
		return err
	}
	if err := target.publish(); err != nil {
		return err
	}
	el := time.Since(start)
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "indexed %d documents into %s in %s (%.0f docs/s)\n",
		len(corpus), o.indexPath, el.Round(time.Millisecond), float64(len(corpus))/el.Seconds())
	if before > 0 {
		// Adding to an existing index is allowed (documents with
		// known ids are replaced); say so, in case the path was
		// meant for a new one.
		replaced := before + uint64(len(corpus)) - after
		fmt.Fprintf(w, "  the index already held %d documents; %d of them replaced by documents with the same ids\n", before, replaced)
	}
	for _, e := range encs {
		fmt.Fprintf(w, "  payload %s from model %s\n", e.PayloadName(), e.ModelID())
	}
	return nil
}

// indexCorpus returns the documents of --data that index adds: with
// --shard I/N, those of shard I (si) of N (sn); si is -1 without it.
func indexCorpus(w io.Writer, o indexOptions) (corpus []dataset.Doc, si, sn int, err error) {
	if corpus, err = loadCorpus(o.dataDir); err != nil {
		return nil, 0, 0, err
	}
	noteEmptyDocs(w, filepath.Join(o.dataDir, dataset.CorpusFile), corpus)
	if o.shard == "" {
		return corpus, -1, 0, nil
	}
	if si, sn, err = cluster.ParseShard(o.shard); err != nil {
		return nil, 0, 0, fmt.Errorf("--shard: %w", err)
	}
	return slices.DeleteFunc(corpus, func(d dataset.Doc) bool { return cluster.Of(d.ID, sn) != si }), si, sn, nil
}

// prepareIndex marks idx as shard si of sn (when si ≥ 0) and adds to encs
// the payload encoders of the pipeline at pipelinePath, if any.
func prepareIndex(idx *index.Index, pipelinePath string, encs []index.PayloadEncoder, si, sn int) ([]index.PayloadEncoder, error) {
	if si >= 0 {
		if err := cluster.MarkShard(idx, si, sn); err != nil {
			return nil, fmt.Errorf("--shard: %w", err)
		}
	}
	if pipelinePath == "" {
		return encs, nil
	}
	return pipelineEncoders(pipelinePath, idx, encs)
}

// addCorpus adds corpus to idx with the payloads of encs, compacts it and
// closes it, returning its document count after.
func addCorpus(ctx context.Context, idx *index.Index, corpus []dataset.Doc, encs []index.PayloadEncoder) (uint64, error) {
	bar := newBar(len(corpus), "indexing")
	err := idx.Add(ctx, corpus, encs, func(done, _ int) { bar.Set(done) })
	bar.Finish()
	if err == nil {
		err = idx.Compact(ctx)
	}
	var after uint64
	if err == nil {
		after, err = idx.DocCount()
	}
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	return after, err
}

// loadCorpus reads the documents of BEIR directory dir, its corpus.jsonl
// alone: indexing needs no queries or judgments, so a folder holding only
// a corpus is enough.
func loadCorpus(dir string) ([]dataset.Doc, error) {
	docs, err := dataset.LoadCorpus(dir)
	if err != nil {
		return nil, dataDirError("--data", dir, err)
	}
	return docs, nil
}

// loadDataset is dataset.Load, explaining a --data that names a file
// or an index.
func loadDataset(dir string) (*dataset.Dataset, error) {
	ds, err := dataset.Load(dir)
	if err != nil {
		return nil, dataDirError("--data", dir, err)
	}
	return ds, nil
}

// noteEmptyDocs says which documents have neither title nor text: they
// are indexed, but no query can find them, and many of them usually mean
// the text is under another key ("body", "contents"), which a corpus line
// may carry and which is not read. (POST /api/index refuses such a
// document.)
func noteEmptyDocs(w io.Writer, path string, docs []dataset.Doc) {
	var empty []string
	for _, d := range docs {
		if strings.TrimSpace(d.Title) == "" && strings.TrimSpace(d.Text) == "" {
			empty = append(empty, d.ID)
		}
	}
	if len(empty) == 0 {
		return
	}
	fmt.Fprintf(w, "note: %d of %d documents in %s have neither \"title\" nor \"text\", so no search finds them (first: %q); a corpus line is {\"_id\": ..., \"title\": ..., \"text\": ..., \"metadata\": {...}}, and text under any other key is not indexed\n",
		len(empty), len(docs), path, empty[0])
}

// dataDirError explains err, from opening a file in BEIR directory dir
// (flag's value), when dir is not a directory at all: a corpus file given
// instead of its folder, or an index given for the data.
func dataDirError(flag, dir string, err error) error {
	st, serr := os.Stat(dir)
	switch {
	case serr != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s %s is a file: give the folder that holds %s (and, for the commands that need them, %s and %s): %w", flag, dir, dataset.CorpusFile, dataset.QueriesFile, dataset.QrelsFile, err)
	case isIndex(dir):
		return fmt.Errorf("%s %s is a semrank index, not a BEIR directory (--index names the index, %s the folder holding %s): %w", flag, dir, flag, dataset.CorpusFile, err)
	}
	return err
}

// isIndex reports whether dir looks like a Bleve index folder.
func isIndex(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "index_meta.json"))
	return err == nil
}

// loadEncoders returns the built-in term-count payload plus the payloads
// of the models whose files paths gives (one per payloadModels entry, ""
// for none).
func loadEncoders(paths []string) ([]index.PayloadEncoder, error) {
	out := []index.PayloadEncoder{index.TermsEncoder{}}
	for i, m := range payloadModels {
		if paths[i] == "" {
			continue
		}
		e, err := m.load(paths[i])
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", m.name, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// pipelineEncoders adds to encs the payload encoders of the pipeline at
// path, built against idx (so a stage whose model differs from the one
// that wrote idx's payloads is refused). A payload a model flag also names
// must come from the same model.
func pipelineEncoders(path string, idx *index.Index, encs []index.PayloadEncoder) ([]index.PayloadEncoder, error) {
	p, _, err := rerank.LoadPipeline(path, rerank.EnvFor(idx), rerank.StagesOnly())
	if err != nil {
		return nil, err
	}
	have := map[string]string{}
	for _, e := range encs {
		have[e.PayloadName()] = e.ModelID()
	}
	for _, e := range p.Encoders() {
		switch id, ok := have[e.PayloadName()]; {
		case !ok:
			encs = append(encs, e)
			have[e.PayloadName()] = e.ModelID()
		case id != e.ModelID():
			return nil, fmt.Errorf("--pipeline %s: payload %q from model %s, but a flag names model %s", path, e.PayloadName(), e.ModelID(), id)
		}
	}
	return encs, nil
}
