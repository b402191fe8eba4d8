package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/rerank"
)

// inspectOptions are the flags of semrank inspect.
type inspectOptions struct {
	indexPath string
	verify    bool
}

// newInspectCmd returns semrank inspect.
func newInspectCmd() *cobra.Command {
	var o inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect [--verify] [--index INDEX] PATH...",
		Short: "Describe model files, pipeline files and indexes, and check that they load",
		Long: `Describe each PATH: a model file (its method, versions, the analyzer its
vocabulary came from, training fingerprint, metrics and tensors), a pipeline
file or a directory holding pipeline.yaml (its stages, their models and the
fusion; then it is built, as rerank and serve would build it, and any error is
reported), or an index directory (its
documents and payloads, with the model each payload came from).

With --index, pipelines are built against that index, which also checks that
its payloads come from the pipeline's models. The command fails when any PATH
cannot be read or a pipeline does not build.

With --verify, every index inspected (--index, and index directories among the
PATHs) is read whole: each segment file's CRC-32 is checked against its footer,
each payload segment's table and records against their checksums, and every
stored document is read back, naming any damaged file. Without it,
opening an index checks the segment footers, and their checksums for indexes
up to 256 MiB. "inspect --verify --index INDEX" alone verifies that index.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !(o.verify && o.indexPath != "") {
				return errors.New("requires at least 1 arg(s), only received 0 (or --verify --index INDEX)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runInspect(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.indexPath, "index", "", "build pipelines against this index (checks its payloads)")
	cmd.Flags().BoolVar(&o.verify, "verify", false, "read every index inspected whole: check each segment's CRC-32 and read back every stored document")
	return cmd
}

// runInspect runs semrank inspect.
func runInspect(cmd *cobra.Command, args []string, o inspectOptions) error {
	env := rerank.Env{}
	var opened *index.Index
	out := cmd.OutOrStdout()
	if o.verify && o.indexPath != "" {
		if err := verifyIndex(cmd.Context(), out, o.indexPath, nil); err != nil {
			fmt.Fprintf(out, "  error: %v\n", err)
			return fmt.Errorf("inspect: %s: see the errors above", o.indexPath)
		}
		if len(args) == 0 {
			return nil
		}
		fmt.Fprintln(out)
	}
	if o.indexPath != "" {
		idx, err := index.OpenReadOnly(o.indexPath)
		if err != nil {
			return err
		}
		defer idx.Close()
		env, opened = rerank.EnvFor(idx), idx
	}
	var failed []string
	for i, p := range args {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := inspect(cmd.Context(), out, p, env, opened, o.verify); err != nil {
			fmt.Fprintf(out, "  error: %v\n", err)
			failed = append(failed, p)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("inspect: %s: see the errors above", strings.Join(failed, ", "))
	}
	return nil
}

// inspect describes one path: an index directory, a pipeline file (YAML)
// or a model bundle. opened, when not nil, is the --index index, open
// already: the same index given as a path is read through it, since a
// second open would wait for the first one's lock. verify reads an index
// whole (see verifyIndex).
func inspect(ctx context.Context, w io.Writer, path string, env rerank.Env, opened *index.Index, verify bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		fmt.Fprintln(w, path)
		return err
	}
	if fi.IsDir() {
		switch p := pipelineFile(path); {
		case exists(filepath.Join(path, "index_meta.json")) && verify:
			return verifyIndex(ctx, w, path, opened)
		case exists(filepath.Join(path, "index_meta.json")):
			return inspectIndex(w, path, opened)
		case p != path:
			return inspectPipeline(w, p, env)
		}
		fmt.Fprintln(w, path)
		return fmt.Errorf("%s is neither a semrank index nor a directory holding pipeline.yaml", path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return inspectPipeline(w, path, env)
	}
	fmt.Fprintln(w, path)
	err = describeFile(w, path, "  ")
	if errors.Is(err, models.ErrNotBundle) {
		return fmt.Errorf("%s is not a semrank model; inspect reads models, pipeline files (.yaml, .yml, .json) and index directories", path)
	}
	return err
}

// describeFile describes the model bundle at path; for a linear fusion it
// also lists the weights, largest first: how much the fusion trusts each
// stage (the features are z-normalised per query, so weights compare).
func describeFile(w io.Writer, path, indent string) error {
	b, err := models.Load(path, "", 0)
	if err != nil {
		return err
	}
	describeModel(w, b, indent)
	if b.Manifest.Method != rerank.FusionMethod {
		return nil
	}
	l, err := rerank.LoadLinear(path)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(l.Weights))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(math.Abs(l.Weights[b]), math.Abs(l.Weights[a])) })
	for _, n := range names {
		fmt.Fprintf(w, "%s%-11s%+.4f  %s\n", indent, "weight", l.Weights[n], n)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func inspectIndex(w io.Writer, path string, opened *index.Index) error {
	fmt.Fprintf(w, "%s: index\n", path)
	idx := opened
	if idx == nil || !sameFile(path, idx.Path) {
		var err error
		if idx, err = index.OpenReadOnly(path); errors.Is(err, index.ErrNotSemrank) {
			return describeOther(w, path)
		}
		if err != nil {
			return err
		}
		defer idx.Close()
	}
	return describeIndex(w, idx)
}

// describeOther writes what the Bleve index at path, one semrank did not
// build, holds: its documents and the payloads attached to it.
func describeOther(w io.Writer, path string) error {
	b, err := index.OpenAny(path)
	if err != nil {
		return err
	}
	defer b.Close()
	n, err := b.DocCount()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  documents  %d (a Bleve index semrank did not build)\n", n)
	a, ok := b.(*index.Attached)
	src, attached := index.Source{}, false
	if ok {
		src, attached = a.Source()
	}
	if !attached {
		fmt.Fprintln(w, "  payloads   none attached (stages compute what they need from text at query time; semrank attach computes them)")
		return nil
	}
	fmt.Fprintf(w, "  attached   from %s\n", src)
	for _, name := range a.PayloadNames() {
		fmt.Fprintf(w, "  payload    %s from %s\n", name, a.PayloadModel(name))
	}
	return nil
}

// describeIndex writes what idx holds: its documents and payloads.
func describeIndex(w io.Writer, idx *index.Index) error {
	n, err := idx.DocCount()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  documents  %d\n", n)
	if !idx.TermVectors() {
		fmt.Fprintln(w, "  warning    no term vectors (an index from an earlier semrank): phrase queries match nothing and highlighting marks nothing; remove the index and index the collection again to get them (indexing into it keeps its mapping)")
	}
	names := idx.PayloadNames()
	if len(names) == 0 {
		fmt.Fprintln(w, "  payloads   none (stages compute what they need from text at query time)")
	}
	for _, name := range names {
		fmt.Fprintf(w, "  payload    %s from %s\n", name, idx.PayloadModel(name))
	}
	return nil
}

// verifyIndex checks every segment of the index at path in full, Bleve's
// and the payloads' (semrank_payloads/*.seg), one line each, then describes the index as inspectIndex does and reads back
// every stored document. The segments are checked before the index is
// opened, so that a damaged one is named even where opening fails.
// opened is as for inspect.
func verifyIndex(ctx context.Context, w io.Writer, path string, opened *index.Index) error {
	fmt.Fprintf(w, "%s: index\n", path)
	checks, err := index.VerifySegments(path)
	if err != nil {
		return err
	}
	payloads, err := index.VerifyPayloads(path)
	if err != nil {
		return err
	}
	checks = append(checks, payloads...)
	var damaged []string
	for _, c := range checks {
		rel, rerr := filepath.Rel(path, c.File)
		if rerr != nil {
			rel = c.File
		}
		if c.Err != nil {
			fmt.Fprintf(w, "  segment    %s (%d bytes) DAMAGED: %v\n", rel, c.Size, c.Err)
			damaged = append(damaged, c.File)
			continue
		}
		fmt.Fprintf(w, "  segment    %s (%d bytes) checksum ok\n", rel, c.Size)
	}
	if len(damaged) > 0 {
		return fmt.Errorf("%s: damaged segments: %s: %w", path, strings.Join(damaged, ", "), index.ErrDamaged)
	}
	idx := opened
	if idx == nil || !sameFile(path, idx.Path) {
		if idx, err = index.OpenReadOnly(path); err != nil {
			return err
		}
		defer idx.Close()
	}
	if err := describeIndex(w, idx); err != nil {
		return err
	}
	n, err := idx.CheckDocuments(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  verified   %d segment(s) whole, %d documents read back\n", len(checks), n)
	return nil
}

func inspectPipeline(w io.Writer, path string, env rerank.Env) error {
	fmt.Fprintf(w, "%s: pipeline\n", path)
	cfg, err := rerank.ReadConfig(path)
	if err != nil {
		return err
	}
	window := cfg.Window
	if window == 0 {
		window = rerank.DefaultWindow
	}
	fmt.Fprintf(w, "  window     %d\n", window)
	if q := cfg.FirstStage.QueryBoost; q != "" {
		fmt.Fprintf(w, "  first stage boosted by %s's query term weights\n", q)
	}
	dir := filepath.Dir(path)
	var bad []string // models that do not load
	model := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := describeFile(w, p, "      "); err != nil {
			if errors.Is(err, models.ErrNotBundle) {
				// wmd and ssg also read word vectors in word2vec or
				// GloVe form; building the pipeline below checks them.
				fmt.Fprintln(w, "      not a semrank model file (word vectors in word2vec or GloVe form?); the build below loads it")
				return
			}
			fmt.Fprintf(w, "      error: %v\n", err)
			bad = append(bad, p)
		}
	}
	for i, s := range cfg.Stages {
		fmt.Fprintf(w, "  stage %-3d  %s%s\n", i+1, s.DisplayName(s.Type), stageDetails(s))
		if s.Model != "" {
			model(s.Model)
		}
	}
	method := cfg.Fusion.Method
	if method == "" {
		method = "linear"
	}
	fmt.Fprintf(w, "  fusion     %s", method)
	if cfg.Fusion.Model != "" {
		fmt.Fprintf(w, " (model %s)", cfg.Fusion.Model)
	}
	fmt.Fprintln(w)
	if cfg.Fusion.Model != "" {
		model(cfg.Fusion.Model)
	}
	if r := cfg.Fusion.Regularize; r != nil {
		// The hits' scores are the fused ones smoothed (fusion.regularize).
		fmt.Fprintf(w, "  then       %s: the fused scores regularized over the window%s\n", rerank.SmoothName, stageDetails(rerank.StageSpec{Options: *r}))
	}
	if len(bad) > 0 {
		return fmt.Errorf("models that do not load: %s", strings.Join(bad, ", "))
	}
	against := "the index"
	checkPayloads := env.Payloads != nil // the empty index below holds none
	if env.Index == nil {
		// Stages that read collection statistics need an index to be
		// built; an empty one checks everything but the payloads.
		idx, err := index.Create("")
		if err != nil {
			return err
		}
		defer idx.Close()
		env = rerank.EnvFor(idx)
		against = "an empty index; --index checks an index's payloads"
	}
	p, _, err := rerank.LoadPipeline(path, env)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  builds     ok (against %s)\n", against)
	if n := len(cfg.Checksums); n > 0 {
		// Building compared them.
		fmt.Fprintf(w, "  sha256     listed files unchanged since the pipeline was written (%d)\n", n)
	}
	given := p.GivenListWeights()
	for _, f := range slices.Sorted(maps.Keys(given)) {
		fmt.Fprintf(w, "  note       the fusion weighs %s (%.3g), which only given candidate lists supply (rerank --data with candidates.trec); search and serve rank without it\n", f, given[f])
	}
	if checkPayloads {
		for _, e := range p.MissingPayloads(env.Payloads) {
			fmt.Fprintf(w, "  warning    the index lacks payload %q from %s: the stage computes it from text for every query, several times slower (index with semrank index --pipeline)\n", e.PayloadName(), e.ModelID())
		}
	}
	return nil
}

// stageDetails renders a stage's model and options for one line.
func stageDetails(s rerank.StageSpec) string {
	var parts []string
	if s.DisplayName(s.Type) != s.Type {
		parts = append(parts, "type "+s.Type)
	}
	if s.Model != "" {
		parts = append(parts, "model "+s.Model)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, s.Options[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// describeModel writes a bundle's manifest, one field per line.
func describeModel(w io.Writer, b *models.Bundle, indent string) {
	m := b.Manifest
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s%-11s%s\n", indent, k, v)
		}
	}
	line("method", fmt.Sprintf("%s (model version %d, bundle format %d)", m.Method, m.ModelVersion, m.FormatVersion))
	line("id", b.ID())
	line("analyzer", m.Analyzer)
	line("vocabulary", m.VocabHash)
	line("trained on", m.TrainingFingerprint)
	var metrics []string
	for _, k := range slices.Sorted(maps.Keys(m.Metrics)) {
		metrics = append(metrics, fmt.Sprintf("%s=%.4f", k, m.Metrics[k]))
	}
	line("metrics", strings.Join(metrics, " "))
	for _, k := range slices.Sorted(maps.Keys(m.Notes)) {
		line("note", k+": "+m.Notes[k])
	}
	if len(m.Config) > 0 {
		var compact bytes.Buffer
		if err := json.Compact(&compact, m.Config); err == nil {
			line("config", compact.String())
		}
	}
	var secs []string
	for _, s := range m.Sections {
		secs = append(secs, fmt.Sprintf("%s %s %v", s.Name, s.Kind, s.Shape))
	}
	line("sections", strings.Join(secs, "; "))
}
