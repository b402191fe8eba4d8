package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
	"github.com/semrank/semrank/server"
)

// searchOptions are the flags of semrank search.
type searchOptions struct {
	indexPath, pipelinePath       string
	n                             int
	explain, queryString, jsonOut bool
}

// newSearchCmd returns semrank search.
func newSearchCmd() *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search --index PATH [-n 10] [--pipeline FILE] [--query-string] [--json] \"query text\"",
		Short: "Search an index with BM25 (and a rerank pipeline) and print the hits",
		Long: `Search an index and print rank, id, score and title. With --pipeline the
hits are reranked and each line shows the first-stage and reranked position;
--explain adds each stage's score.

The query text is matched against the title and text of each document. With
--query-string it is read in Bleve's query-string syntax instead:
title:compiler (one field), +must, -mustnot, "a phrase", word^2 (boost).
The first stage then runs that query as written (a pipeline's learned query
term weights are not applied), and the stages compare the candidates with
its words (field names, operators and negated words removed); a query
without words (ids, wildcards alone) is shown in first-stage order. A query
that starts with "-" goes after "--", or the shell's words would be read as
flags: semrank search --index PATH --query-string -- '-draft compiler'.

--json prints the answer POST /api/search gives for the same request
({"query": TEXT, "size": N, "explain": ..., "rerank": {"enabled": ...}}, the
query an object {"query": TEXT} with --query-string): the same hits, each
with its first-stage rank and score and its stage scores.`,
		Args: func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return errors.New("give the query text, e.g. semrank search --index PATH \"visa renewal\"")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runSearch(cmd, args, o) },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.HasPrefix(err.Error(), "unknown") || strings.HasPrefix(err.Error(), "invalid argument") {
			return fmt.Errorf("%w (a query that starts with \"-\" goes after \"--\": semrank search --index PATH --query-string -- '-draft compiler')", err)
		}
		return err
	})
	cmd.Flags().StringVar(&o.indexPath, "index", "", "index path")
	cmd.Flags().IntVarP(&o.n, "n", "n", 10, "number of results")
	cmd.Flags().StringVar(&o.pipelinePath, "pipeline", "", "rerank with this pipeline file (or a directory holding pipeline.yaml)")
	cmd.Flags().BoolVar(&o.explain, "explain", false, "with --pipeline: print each stage's score")
	cmd.Flags().BoolVar(&o.jsonOut, "json", false, "print the JSON answer of POST /api/search for the same request")
	cmd.Flags().BoolVar(&o.queryString, "query-string", false, `read the query in Bleve's query-string syntax (title:word, +must, -not, "phrase")`)
	_ = cmd.MarkFlagRequired("index")
	return cmd
}

// runSearch runs semrank search.
func runSearch(cmd *cobra.Command, args []string, o searchOptions) error {
	o.pipelinePath = pipelineFile(o.pipelinePath)
	if o.n <= 0 {
		return fmt.Errorf("-n %d: want a positive number of results", o.n)
	}
	if o.explain && o.pipelinePath == "" {
		return errors.New("--explain shows the stages' scores: give a --pipeline")
	}
	idx, err := index.OpenAny(o.indexPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	text := strings.Join(args, " ")
	if o.jsonOut {
		return searchJSON(cmd, idx, o.pipelinePath, text, o.queryString, o.n, o.explain)
	}
	var q query.Query
	if o.queryString {
		if q, err = parseQueryString(text); err != nil {
			return err
		}
	}
	if si, ok := idx.(*index.Index); ok && o.queryString && strings.Contains(text, `"`) && !si.TermVectors() {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s keeps no term vectors (indexed by an earlier semrank), so phrases match nothing; remove it and index the collection again (indexing into it keeps its mapping)\n", o.indexPath)
	}
	if o.pipelinePath != "" && q != nil && strings.TrimSpace(rerank.QueryText(q)) == "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: the query has no words for the stages to compare candidates with; the hits are in first-stage order, without stage scores to explain")
		o.pipelinePath = ""
	}
	if o.pipelinePath != "" {
		return searchReranked(cmd, idx, o.pipelinePath, text, q, o.n, o.explain)
	}
	return searchFirstStage(cmd, idx, text, q, o.n)
}

// searchFirstStage prints the first stage's top n hits for text (or q,
// a parsed query string, when not nil).
func searchFirstStage(cmd *cobra.Command, idx bleve.Index, text string, q query.Query, n int) error {
	p, err := rerank.FirstStagePipeline(idx, n)
	if err != nil {
		return err
	}
	s := rerank.Searcher{Index: idx, Pipeline: p}
	cands, err := s.Candidates(cmd.Context(), rerank.Query{Text: text}, q, n)
	if err == nil {
		err = s.Load(cmd.Context(), cands)
	}
	if err != nil {
		return err
	}
	if q == nil && cands == nil {
		return fmt.Errorf("%q: %w", text, index.ErrEmptyQuery)
	}
	w := cmd.OutOrStdout()
	for _, c := range cands {
		fmt.Fprintf(w, "%3d  %-14s %8.4f  %s\n", c.Rank, c.ID, c.Score, snippet(c, 70))
	}
	if len(cands) == 0 {
		fmt.Fprintln(w, "no results")
	}
	return nil
}

// runOptions are the flags of semrank run.
type runOptions struct {
	dataDir, indexPath, out, runPipeline string
	depth                                int
}

// newRunCmd returns semrank run.
func newRunCmd() *cobra.Command {
	var o runOptions
	runCmd := &cobra.Command{
		Use:   "run --data DIR --index PATH [--pipeline FILE] [--depth 100] --out run.trec",
		Short: "Run every query of a BEIR directory over any Bleve index and write a TREC run",
		Long: `Run every query of DIR/queries.jsonl over the index, any Bleve index. When the
directory has candidates.trec, exactly those candidates are scored by the first
stage (candidates matching no query term follow in their given order);
otherwise the top --depth documents are retrieved.

Without --pipeline the run is the first stage's: over a semrank index its BM25
text query, over any other a Bleve match query on the mapping's default search
field, as a Bleve application sends. With --pipeline the hits are reranked, and
the pipeline's fields: and first_stage: keys name the fields its stages read
and its first stage searches.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, o) },
	}
	runCmd.Flags().StringVar(&o.dataDir, "data", "", "BEIR directory")
	runCmd.Flags().StringVar(&o.indexPath, "index", "", "index path")
	runCmd.Flags().IntVar(&o.depth, "depth", 100, "candidates per query when the directory has no candidates.trec (at least the pipeline's window)")
	runCmd.Flags().StringVar(&o.runPipeline, "pipeline", "", "rerank with this pipeline file (or a directory holding pipeline.yaml)")
	runCmd.Flags().StringVar(&o.out, "out", "", "output TREC run")
	for _, f := range []string{"data", "index", "out"} {
		_ = runCmd.MarkFlagRequired(f)
	}
	return runCmd
}

// runRun runs semrank run.
func runRun(cmd *cobra.Command, o runOptions) error {
	o.runPipeline = pipelineFile(o.runPipeline)
	if o.depth <= 0 {
		return fmt.Errorf("--depth %d: want a positive number of candidates", o.depth)
	}
	// An absent DIR/candidates.trec is not read: --out may
	// create it (the trainers' candidate lists).
	inputs := readDatasetFiles(o.dataDir)
	if o.runPipeline != "" {
		inputs = append(inputs, pipelineFiles(o.runPipeline, true)...)
	}
	if err := checkOutput("--out", o.out, inputs...); err != nil {
		return err
	}
	ds, err := runDataset(o.dataDir)
	if err != nil {
		return err
	}
	if ds.Candidates != nil && cmd.Flags().Changed("depth") {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: --depth is not used: %s lists the candidates, and each is scored\n", filepath.Join(o.dataDir, dataset.CandidatesFile))
	}
	idx, err := index.OpenAny(o.indexPath)
	if err != nil {
		return err
	}
	defer idx.Close()
	var run dataset.Run
	tag := "bm25"
	bar := newBar(len(ds.Queries), "queries")
	progress := func(d, _ int) { bar.Set(d) }
	if o.runPipeline == "" {
		run, err = offline.FirstStageRun(cmd.Context(), idx, ds, o.depth, progress)
	} else {
		var p *rerank.Pipeline
		if p, _, err = rerank.LoadPipeline(o.runPipeline, rerank.EnvOf(idx)); err == nil {
			_, run, err = offline.RunDataset(cmd.Context(), idx, ds, p, o.depth, progress)
		}
		tag = "semrank"
	}
	bar.Finish()
	if err != nil {
		return err
	}
	if err := checkRanked(ds, run); err != nil {
		return err
	}
	if err := run.WriteFile(o.out, tag); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d queries\n", o.out, run.Len())
	noteUnrankedQueries(cmd.ErrOrStderr(), ds, run)
	return nil
}

// snippet returns the start of c's title, else of its text, else of its
// first stored string field (by name: a plain index's fields are its
// own), on one line of at most n characters.
func snippet(c rerank.Candidate, n int) string {
	s := c.Title
	if s == "" {
		s = c.Text
	}
	if s == "" {
		for _, k := range slices.Sorted(maps.Keys(c.Metadata)) {
			if v, ok := c.Metadata[k].(string); ok && v != "" {
				s = v
				break
			}
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// parseQueryString reads text as a Bleve query string, checking its syntax
// here so that a typo is reported as such rather than as a failed search.
func parseQueryString(text string) (query.Query, error) {
	q := query.NewQueryStringQuery(text)
	if _, err := q.Parse(); err != nil {
		return nil, fmt.Errorf("%q is not a valid Bleve query string: %w", text, err)
	}
	return q, nil
}

// searchJSON prints the answer semrank serve gives to POST /api/search
// for text (a query string with queryString) over idx, n hits, reranked
// by the pipeline at pipelinePath when it is not "".
func searchJSON(cmd *cobra.Command, idx bleve.Index, pipelinePath, text string, queryString bool, n int, explain bool) error {
	var p *rerank.Pipeline
	var err error
	if pipelinePath == "" {
		p, err = rerank.FirstStagePipeline(idx, n)
	} else {
		p, _, err = rerank.LoadPipeline(pipelinePath, rerank.EnvOf(idx))
	}
	if err != nil {
		return err
	}
	var q any = text
	if queryString {
		q = map[string]string{"query": text}
	}
	raw, err := json.Marshal(q)
	if err != nil {
		return err
	}
	enabled := pipelinePath != ""
	req := server.SearchRequest{Query: raw, Size: &n, Explain: explain, Rerank: &server.RerankOptions{Enabled: &enabled}}
	l := server.DefaultLimits
	l.MaxSize, l.MaxQueryBytes = max(l.MaxSize, n), max(l.MaxQueryBytes, len(raw))
	res, err := server.Search(cmd.Context(), idx, p, &req, l)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false)
	return enc.Encode(res)
}

// searchReranked searches with the pipeline's first stage, or with q when
// it is not nil, and reranks the hits.
func searchReranked(cmd *cobra.Command, idx bleve.Index, pipelinePath, text string, q query.Query, n int, explain bool) error {
	ctx := cmd.Context()
	p, _, err := rerank.LoadPipeline(pipelinePath, rerank.EnvOf(idx))
	if err != nil {
		return err
	}
	given := p.GivenListWeights()
	for _, f := range slices.Sorted(maps.Keys(given)) {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s's fusion weighs %s (%.3g), which only a given candidate list supplies; a search has none, so it ranks differently from an evaluation over given lists\n", pipelinePath, f, given[f])
	}
	if q != nil {
		text = rerank.QueryText(q)
	} else if _, err := p.Query(text); err != nil {
		return fmt.Errorf("%q: %w", text, err)
	}
	s := rerank.Searcher{Index: idx, Pipeline: p}
	scored, err := s.Search(ctx, rerank.Query{Text: text}, q, n)
	if err != nil {
		return err
	}
	scored = scored[:min(n, len(scored))]
	shown := make([]rerank.Candidate, len(scored))
	for i, sc := range scored {
		shown[i] = sc.Candidate
	}
	if err := s.Load(ctx, shown); err != nil {
		return err
	}
	for i := range scored {
		scored[i].Candidate = shown[i]
	}
	w := cmd.OutOrStdout()
	if len(scored) == 0 {
		fmt.Fprintln(w, "no results")
		return nil
	}
	fmt.Fprintf(w, "rank  was  %-14s %9s  title\n", "id", "score")
	for i, s := range scored {
		move := " "
		switch {
		case s.Rank > i+1:
			move = "↑"
		case s.Rank < i+1:
			move = "↓"
		}
		fmt.Fprintf(w, "%4d  %3d%s %-14s %9.4f  %s\n", i+1, s.Rank, move, s.ID, s.Score, snippet(s.Candidate, 60))
		if explain {
			fmt.Fprintf(w, "      first stage %.4f", s.Candidate.Score)
			for j, name := range p.StageNames() {
				fmt.Fprintf(w, "  %s %.4f", name, s.StageScores[j])
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// runDataset reads the BEIR directory a run searches: its queries (and
// judgments and candidates, if any), and its corpus.jsonl when it has one;
// without, the documents are the index's alone, and the judgments and
// candidates are not checked against them.
func runDataset(dir string) (*dataset.Dataset, error) {
	if exists(filepath.Join(dir, dataset.CorpusFile)) {
		return loadDataset(dir)
	}
	ds, err := dataset.LoadWith(dir, nil)
	if err != nil {
		return nil, dataDirError("--data", dir, err)
	}
	return ds, nil
}
