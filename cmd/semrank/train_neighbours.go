package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

// trainNeighboursOptions are the flags of semrank train neighbours.
type trainNeighboursOptions struct {
	data, indexPath, pipelinePath, stage, out, update string
	size                                              int
}

// newTrainNeighboursCmd returns semrank train neighbours.
func newTrainNeighboursCmd() *cobra.Command {
	var o trainNeighboursOptions
	cmd := &cobra.Command{
		Use:   "neighbours --pipeline FILE (--data DIR | --index PATH) [--size 200 | --update LISTS] --out FILE",
		Short: "Compute the WMD neighbour lists that spare an ssg stage's 2-hop searches",
		Long: `Searches, for every document of the collection, its nearest documents by
exact WMD in the word vectors of the pipeline's ssg stage, and writes the
lists as a "wmd-neighbours" bundle. Named in the stage's neighbours option,
they spare the query graphs' 2-hop searches most of their transport
problems without changing a graph: a window document's nearest in the
window are read off its list, and every document its list does not hold
is at least the list's radius away. Documents added or edited after the
lists were computed, or whose text the stage sees otherwise, are searched
as without lists; --update LISTS brings earlier lists up to date with the
collection as it is now, searching only for the documents added or edited
since (--out may name LISTS itself). The work is one k-NN search over the
collection for each document searched, on every core.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrainNeighbours(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.pipelinePath, "pipeline", "", "pipeline file with the ssg stage (its word vectors; with --index, its fields: key)")
	f.StringVar(&o.stage, "stage", "", "the ssg stage's name, when the pipeline has several")
	f.StringVar(&o.data, "data", "", "BEIR directory whose corpus the stage reranks")
	f.StringVar(&o.indexPath, "index", "", "index (any Bleve index) whose documents the stage reranks")
	f.IntVar(&o.size, "size", ssg.DefaultListSize, "neighbours in each document's list")
	f.StringVar(&o.update, "update", "", "earlier lists of this collection to bring up to date (keeps their size)")
	f.StringVar(&o.out, "out", "", "output bundle")
	return cmd
}

// runTrainNeighbours runs semrank train neighbours.
func runTrainNeighbours(cmd *cobra.Command, o trainNeighboursOptions) error {
	if o.pipelinePath == "" || o.out == "" || (o.data == "") == (o.indexPath == "") {
		return errors.New("give --pipeline, one of --data DIR or --index PATH, and --out")
	}
	if o.size < 1 {
		return fmt.Errorf("--size %d: want ≥ 1", o.size)
	}
	if o.update != "" && cmd.Flags().Changed("size") {
		return errors.New("--update keeps the earlier lists' size; give --size only to compute lists anew")
	}
	if err := checkOutput("--out", o.out, o.pipelinePath, o.data, o.indexPath); err != nil {
		return err
	}
	var old *ssg.Neighbours
	if o.update != "" {
		var err error
		if old, err = ssg.LoadNeighbours(o.update); err != nil {
			return err
		}
	}
	if err := checkRetrainOutput(cmd.ErrOrStderr(), o.out); err != nil {
		return err
	}
	cfg, err := rerank.ReadConfig(o.pipelinePath)
	if err != nil {
		return err
	}
	spec, err := ssgSpec(cfg, o.pipelinePath, o.stage)
	if err != nil {
		return err
	}
	var ids, texts []string
	if o.data != "" {
		docs, _, err := dataset.LoadText(o.data)
		if err != nil {
			return err
		}
		for _, d := range docs {
			ids, texts = append(ids, d.ID), append(texts, d.FullText())
		}
	} else {
		idx, err := index.OpenAny(o.indexPath)
		if err != nil {
			return err
		}
		defer idx.Close()
		err = eachDocument(cmd.Context(), idx, cfg.Fields, func(c rerank.Candidate) error {
			ids, texts = append(ids, c.ID), append(texts, c.FullText())
			return nil
		})
		if err != nil {
			return err
		}
	}
	space, err := stages.WordSpace(spec, rerank.Env{Dir: filepath.Dir(o.pipelinePath)})
	if err != nil {
		return fmt.Errorf("pipeline %s: %w", o.pipelinePath, err)
	}
	start := time.Now()
	var (
		n        *ssg.Neighbours
		searched = len(texts)
	)
	if old == nil {
		bar := newBar(len(texts), "searching")
		n, err = ssg.BuildNeighbours(cmd.Context(), space, ids, texts, o.size, bar.Set)
		bar.Finish()
	} else {
		bar := newBar(len(texts), "searching the documents added or edited")
		n, searched, err = ssg.UpdateNeighbours(cmd.Context(), space, old, ids, texts, bar.Set)
		bar.Finish()
	}
	if err != nil {
		return err
	}
	if err := n.Save(o.out); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: the %d nearest of each of %d documents, %d searched (%.1fs)\n",
		o.out, n.Config.Size, n.Len(), searched, time.Since(start).Seconds())
	return nil
}

// ssgSpec returns cfg's ssg stage (the one named name, if set).
func ssgSpec(cfg *rerank.Config, path, name string) (rerank.StageSpec, error) {
	var found []rerank.StageSpec
	for _, s := range cfg.Stages {
		if s.Type == "ssg" && (name == "" || s.DisplayName(s.Type) == name) {
			found = append(found, s)
		}
	}
	switch {
	case len(found) == 0 && name != "":
		return rerank.StageSpec{}, fmt.Errorf("pipeline %s has no ssg stage named %q", path, name)
	case len(found) == 0:
		return rerank.StageSpec{}, fmt.Errorf("pipeline %s has no ssg stage", path)
	case len(found) > 1:
		return rerank.StageSpec{}, fmt.Errorf("pipeline %s has %d ssg stages; name one with --stage", path, len(found))
	}
	return found[0], nil
}
