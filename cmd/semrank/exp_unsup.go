package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/cmd/semrank/internal/unsupexp"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/ssg"
	"github.com/semrank/semrank/models/topics"
	"github.com/semrank/semrank/models/wmd"
	"github.com/semrank/semrank/rerank"
)

func newUnsupExperimentCmd() *cobra.Command {
	var (
		data, vectors, topicsPath, metrics, statsDir, indexPath, base string
		depth                                                         int
		collection                                                    []string
		cfg                                                           ssg.Config
	)
	cmd := &cobra.Command{
		Use:   "unsup --data DIR --vectors V --topics MODEL",
		Short: "Unsupervised reranking: WMD, SSG-WD, SSG-D vs TF-IDF cosine, BM25 and IR order",
		Long: `Reranks every judged query's given candidates (candidates.trec), or with
--index its top --depth BM25 candidates from a semrank index, with WMD, the
soft-seeded SSL graph without (SSG-WD) and with (SSG-D) dropout, TF-IDF
cosine and textbook BM25 (collection statistics from --stats DIR's corpus,
default --data's), and the first-stage order, and prints a markdown table.
No judgments are used except to score the rankings.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// SSG reads a zero k, hops, seeds or damping as its default,
			// and SSG-D with dropout 0 would be SSG-WD again.
			if err := checkPositive(cmd, "depth", "k", "hops", "seeds", "dropout", "damping"); err != nil {
				return err
			}
			if err := checkNonNegative(cmd, "max-dist"); err != nil {
				return err
			}
			if indexPath == "" {
				if err := checkUnused(cmd, "applies to --index only (without it, the given candidate lists are reranked whole)", "depth"); err != nil {
					return err
				}
			}
			if names := unsupexp.SystemNames(); !slices.Contains(names, base) {
				return fmt.Errorf("--base %q: want one of %q", base, names)
			}
			ds, err := dataset.Load(data)
			if err != nil {
				return err
			}
			if ds.Qrels == nil {
				return fmt.Errorf("%s has no qrels to score against", data)
			}
			ms, err := eval.ParseMetrics(metrics)
			if err != nil {
				return err
			}
			v, err := embed.LoadFile(vectors, embed.FormatAuto)
			if err != nil {
				return err
			}
			tm, err := topics.Load(topicsPath)
			if err != nil {
				return err
			}
			space := wmd.NewSpace(v)
			wd, err := ssg.New(space, tm, cfg)
			if err != nil {
				return err
			}
			d, err := ssg.New(space, tm, cfg)
			if err != nil {
				return err
			}
			wd.Config.Dropout = 0
			if len(collection) > 0 {
				texts, err := unsupexp.CollectionTexts(cmd.Context(), collection, nil, rerank.Fields{})
				if err != nil {
					return err
				}
				wd.SetCollection(texts)
				d.SetCollection(texts)
			}
			var lists unsupexp.Lists
			if indexPath != "" {
				// Full retrieval: score the judged queries only, as trec_eval
				// does. (SemEval keeps every query: the official MAP counts
				// queries without a relevant candidate as 0.)
				ds = unsupexp.JudgedOnly(ds)
				// Not :=, which would declare an err of this block's own
				// and leave IndexLists' error unchecked below.
				var idx *index.Index
				if idx, err = index.OpenReadOnly(indexPath); err != nil {
					return err
				}
				defer idx.Close()
				lists, err = unsupexp.IndexLists(cmd.Context(), idx, ds, depth)
			} else {
				lists, err = unsupexp.GivenLists(ds)
			}
			if err != nil {
				return err
			}
			statsDS := ds
			if statsDir != "" {
				if statsDS, err = dataset.Load(statsDir); err != nil {
					return err
				}
			}
			var conv unsupexp.Convergence
			systems := unsupexp.Systems(unsupexp.CorpusStats(statsDS.Corpus), space, wd, d, &conv)
			rows, err := unsupexp.Compare(cmd.Context(), ds, lists, systems, ms, os.Stderr)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: %d queries; SSG k=%d hops=%d seeds=%d mu_pp=%g mu_np=%g damping=%g, SSG-D dropout %g; SSG-WD converged on %d of %d queries (largest change < %g within %d iterations)\n\n",
				data, len(ds.Queries), wd.Config.K, wd.Config.Hops, wd.Config.Seeds, wd.Config.MuPP, wd.Config.MuNP, wd.Config.Damping, d.Config.Dropout,
				conv.Converged, conv.Total, wd.Config.Tol, wd.Config.MaxIter)
			if n := lists.Missing(ds.Qrels); n > 0 {
				fmt.Fprintf(w, "Note: %d of %d judged queries have no candidates; every system counts them 0.\n\n", n, len(ds.Qrels))
			}
			return unsupexp.WriteTable(w, rows, ms, base)
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "BEIR directory with candidates.trec and qrels")
	f.StringVar(&indexPath, "index", "", "take candidates from this index (BM25 top --depth, or the given lists scored by BM25) instead of candidates.trec")
	f.IntVar(&depth, "depth", 100, "candidates per query with --index")
	f.StringVar(&statsDir, "stats", "", "BEIR directory whose corpus gives TF-IDF/BM25 statistics (default --data)")
	f.StringVar(&vectors, "vectors", "", "word vectors (embed bundle, word2vec or GloVe)")
	f.StringVar(&topicsPath, "topics", "", "topic model from semrank train topics")
	f.StringArrayVar(&collection, "collection", nil, "BEIR directory whose queries and documents SSG graphs may draw neighbours from (repeatable; default: the candidates only)")
	f.StringVar(&base, "base", "WMD", "system the paired tests compare against")
	f.StringVar(&metrics, "metrics", "map@10,mrr@10,p@1,p@5", "metrics")
	f.IntVar(&cfg.K, "k", 10, "SSG neighbours per hop")
	f.IntVar(&cfg.Hops, "hops", 2, "SSG hops (1 or 2)")
	f.IntVar(&cfg.Seeds, "seeds", 3, "SSG soft seeds of each kind (k')")
	f.Float64Var(&cfg.MaxDist, "max-dist", 0, "drop WMD edges longer than this (0: keep all)")
	f.StringVar(&cfg.Edges, "edges", ssg.EdgesWMD, "SSG edges between documents weighed by: wmd (the paper's) or wcd (the ssg stage's default)")
	f.Float64Var(&cfg.Dropout, "dropout", 0.5, "SSG-D dropout probability on seed edges, in (0,1) (0 would be SSG-WD)")
	f.Float64Var(&cfg.Damping, "damping", 0.5, "SSG label update damping in (0,1] (1: the paper's undamped Jacobi)")
	for _, n := range []string{"data", "vectors", "topics"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}
