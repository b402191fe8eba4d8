package recipe

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/learn"
)

// Selection is what Select decided: the stages the fusion keeps, its
// weights, and the held-out measurements that decided it.
type Selection struct {
	Kept   []string       // stage names the fusion keeps, in the examples' order
	Fusion *rerank.Linear // trained on every example, over the kept stages; nil when none is kept
	// FirstStage is the held-out MAP of the first-stage order, Fused that
	// of the fusion of the kept stages, Test their paired comparison.
	FirstStage, Fused float64
	Test              eval.Comparison
	Stages            []StageVerdict // every stage, in the examples' order
	// Prior is true when Select kept the prior fusion it was given, and
	// Fusion is the prior. Learned and PriorMAP are the learned
	// fusion's (the first stage's, when the learned one did not beat it)
	// and the prior's held-out MAP, PriorTest their comparison (PriorMAP
	// 0 without a prior).
	Prior             bool
	Learned, PriorMAP float64
	PriorTest         eval.Comparison
	Queries           int // examples (pseudo-queries) measured
	// Found counts the examples with a relevant candidate: with fewer
	// than minFound, nothing is measured or kept.
	Found int
}

// StageVerdict is one stage's measurements: its held-out MAP fused alone
// with the first stage, and the change in the selected fusion's MAP when
// it is dropped (kept stages) or added (dropped ones).
type StageVerdict struct {
	Name          string
	Alone, Change float64
	Kept          bool
	// Survived is true for a stage the fusion kept that was then dropped
	// with the fusion, which did not beat the first stage.
	Survived bool
}

// selectFolds is the number of folds Select cross-validates fusions over.
const selectFolds = 5

// minFound is the fewest examples with a relevant candidate (pseudo-
// queries whose document the first stage retrieved) that Select learns
// from: two a fold.
const minFound = 2 * selectFolds

// minGainP is the largest p-value (paired t-test, over held-out
// examples) at which Select trusts a fusion to beat the first stage.
const minGainP = 0.05

// Select chooses the stages a linear fusion keeps, by their fused MAP on
// held-out examples: every measured fusion is trained on some folds of
// the examples and scores the others. Starting from every stage, it drops
// stages one at a time, each time, of those whose absence does not lower
// MAP significantly (paired t-test over the examples, p < 0.05), the one
// whose absence leaves the highest MAP, until every stage left helps
// significantly. When the kept
// fusion does not then beat the first-stage order significantly (paired
// t-test, p < 0.05), it keeps none, and a pipeline built on the selection
// ranks as its first stage does: with labels that only approximate
// relevance (pseudo-queries), a fusion must show its gain to be trusted
// over the first stage.
//
// A prior, when not nil, is a fusion fixed beforehand (the recipe's equal
// weights, chosen on judged collections) that stands unless the learned
// fusion (or the first stage's order, when no learned one was kept)
// beats it significantly on the same held-out examples. Pseudo-queries
// judge the stages less well than the judgments the prior was chosen on:
// on CACM and LISA the learned fusions they preferred, and the first
// stage, rank far below the prior (docs/RESULTS.md).
func Select(examples []learn.Example, opt learn.LinearOptions, prior *rerank.Linear) (*Selection, error) {
	s := &Selection{Queries: len(examples)}
	for _, ex := range examples {
		if hasRelevant(ex) {
			s.Found++
		}
	}
	if s.Found < minFound {
		// Nothing can be measured: the prior, if any, stands.
		if len(examples) > 0 {
			for _, n := range examples[0].Input.Names {
				kept := prior != nil && prior.Weights[n] != 0
				if kept {
					s.Kept = append(s.Kept, n)
				}
				s.Stages = append(s.Stages, StageVerdict{Name: n, Kept: kept})
			}
		}
		if prior != nil {
			s.Prior, s.Fusion = true, prior
		}
		return s, nil
	}
	names := examples[0].Input.Names
	first := heldOutAP(examples, nil, opt)
	if first.err != nil {
		return nil, first.err
	}
	s.FirstStage = mean(first.ap)
	alone := map[string]float64{}
	for _, n := range names {
		r := heldOutAP(examples, []string{n}, opt)
		if r.err != nil {
			return nil, r.err
		}
		alone[n] = mean(r.ap)
	}
	kept := slices.Clone(names)
	cur := heldOutAP(examples, kept, opt)
	if cur.err != nil {
		return nil, cur.err
	}
	change := map[string]float64{}
	for len(kept) > 0 {
		best, bestAt := apResult{}, -1
		for i := range kept {
			r := heldOutAP(examples, slices.Delete(slices.Clone(kept), i, i+1), opt)
			if r.err != nil {
				return nil, r.err
			}
			c, err := eval.Compare(cur.ap, r.ap)
			if err != nil {
				return nil, err
			}
			if c.Delta > 0 && c.PTTest < minGainP {
				continue // the stage helps: keep it
			}
			if bestAt < 0 || mean(r.ap) > mean(best.ap) {
				best, bestAt = r, i
			}
		}
		if bestAt < 0 {
			break
		}
		change[kept[bestAt]] = mean(cur.ap) - mean(best.ap) // what it added
		kept = slices.Delete(kept, bestAt, bestAt+1)
		cur = best
	}
	for _, n := range kept {
		r := heldOutAP(examples, slices.DeleteFunc(slices.Clone(kept), func(k string) bool { return k == n }), opt)
		if r.err != nil {
			return nil, r.err
		}
		change[n] = mean(cur.ap) - mean(r.ap)
	}
	// The learned fusion must beat the first stage significantly.
	survived := kept
	if len(kept) > 0 {
		c, err := eval.Compare(cur.ap, first.ap)
		if err != nil {
			return nil, err
		}
		s.Test = c
		if c.Delta <= 0 || c.PTTest >= minGainP {
			kept = nil
			cur = first
		}
	}
	s.Learned = mean(cur.ap)
	// The prior stands unless the learned fusion beats it significantly.
	if prior != nil {
		ap := make([]float64, len(examples))
		if err := fuseAll(examples, prior, ap); err != nil {
			return nil, err
		}
		s.PriorMAP = mean(ap)
		c, err := eval.Compare(cur.ap, ap)
		if err != nil {
			return nil, err
		}
		s.PriorTest = c
		if len(kept) == 0 || c.Delta <= 0 || c.PTTest >= minGainP {
			if s.Test, err = eval.Compare(ap, first.ap); err != nil {
				return nil, err
			}
			s.Prior, cur.ap, kept, survived = true, ap, nil, nil
			for _, n := range names {
				if prior.Weights[n] == 0 {
					continue
				}
				kept = append(kept, n)
				// What the stage adds to the prior: its MAP against
				// the prior's without the stage's weight.
				without := &rerank.Linear{Weights: maps.Clone(prior.Weights)}
				delete(without.Weights, n)
				rest := make([]float64, len(examples))
				if err := fuseAll(examples, without, rest); err != nil {
					return nil, err
				}
				change[n] = mean(cur.ap) - mean(rest)
			}
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	s.Kept, s.Fused = kept, mean(cur.ap)
	for _, n := range names {
		s.Stages = append(s.Stages, StageVerdict{Name: n, Alone: alone[n], Change: change[n], Kept: slices.Contains(kept, n), Survived: kept == nil && slices.Contains(survived, n)})
	}
	switch {
	case len(kept) > 0 && s.Prior:
		s.Fusion = prior
	case len(kept) > 0:
		var err error
		if s.Fusion, err = learn.TrainLinear(onlyStages(examples, kept), opt); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// apResult is a fusion's per-example held-out average precision.
type apResult struct {
	ap  []float64
	err error
}

// heldOutAP cross-validates a linear fusion of the first stage and the
// stages named keep over examples (selectFolds folds, example i in fold
// i mod selectFolds) and returns each example's average precision when
// its fold was held out. With keep empty it is the first stage's order.
func heldOutAP(examples []learn.Example, keep []string, opt learn.LinearOptions) apResult {
	sub := onlyStages(examples, keep)
	ap := make([]float64, len(sub))
	for k := range selectFolds {
		var train, test []int
		for i := range sub {
			if i%selectFolds == k {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		var f rerank.Fusion = firstStageOrder{}
		exs := make([]learn.Example, len(train))
		for j, i := range train {
			exs[j] = sub[i]
		}
		// Training folds without a relevant candidate teach nothing: the
		// first stage's order stands.
		if len(keep) > 0 && slices.ContainsFunc(exs, hasRelevant) {
			lin, err := learn.TrainLinear(exs, opt)
			if err != nil {
				return apResult{err: err}
			}
			f = lin
		}
		held := make([]learn.Example, len(test))
		apt := make([]float64, len(test))
		for j, i := range test {
			held[j] = sub[i]
		}
		if err := fuseAll(held, f, apt); err != nil {
			return apResult{err: err}
		}
		for j, i := range test {
			ap[i] = apt[j]
		}
	}
	return apResult{ap: ap}
}

// fuseAll sets ap[i] to the average precision of examples[i] ranked by f.
func fuseAll(examples []learn.Example, f rerank.Fusion, ap []float64) error {
	for i, ex := range examples {
		scores, err := f.Fuse(ex.Input)
		if err != nil {
			return err
		}
		ap[i] = averagePrecision(ex, scores)
	}
	return nil
}

// firstStageOrder ranks candidates in first-stage order.
type firstStageOrder struct{}

// ReadsMetadata implements rerank.MetadataReader: the order is the first
// stage's.
func (firstStageOrder) ReadsMetadata() bool { return false }

func (firstStageOrder) Fuse(in rerank.FusionInput) ([]float64, error) {
	out := make([]float64, len(in.Candidates))
	for i, c := range in.Candidates {
		out[i] = -float64(c.Rank)
	}
	return out, nil
}

// averagePrecision is trec AP (eval's "map") of ex's candidates ranked by
// scores, over the relevant candidates in the list.
func averagePrecision(ex learn.Example, scores []float64) float64 {
	run, judged := dataset.NewRun(), map[string]int{}
	for i, c := range ex.Input.Candidates {
		run.Add("q", dataset.Entry{DocID: c.ID, Score: scores[i], Rank: i + 1})
		judged[c.ID] = ex.Labels[i]
	}
	res, err := eval.Evaluate(dataset.Qrels{"q": judged}, run, mapMetric)
	if err != nil {
		return 0 // unreachable: one query, distinct candidates, finite scores
	}
	return res.Mean[0]
}

var mapMetric = eval.MustParseMetrics("map")

// onlyStages returns examples with the stage scores of the stages named
// keep alone.
func onlyStages(examples []learn.Example, keep []string) []learn.Example {
	out := make([]learn.Example, len(examples))
	for i, ex := range examples {
		in := rerank.FusionInput{Candidates: ex.Input.Candidates}
		for s, n := range ex.Input.Names {
			if slices.Contains(keep, n) {
				in.Names = append(in.Names, n)
				in.Scores = append(in.Scores, ex.Input.Scores[s])
			}
		}
		out[i] = learn.Example{Input: in, Labels: ex.Labels}
	}
	return out
}

// hasRelevant reports whether ex has a relevant candidate.
func hasRelevant(ex learn.Example) bool {
	return slices.ContainsFunc(ex.Labels, func(y int) bool { return y > 0 })
}

func stageVerdictNames(vs []StageVerdict) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Write writes the selection as a table: each stage's held-out MAP alone
// and its change to the fusion, whether it was kept and why, then the
// fusion against the first stage and its weights.
func (s *Selection) Write(w io.Writer) error {
	var b strings.Builder
	if s.Found < minFound {
		what := "none kept; the pipeline ranks in first-stage order"
		if s.Prior {
			what = "the fixed equal weights stand"
		}
		fmt.Fprintf(&b, "Only %d of %d pseudo-queries found their document in the first stage's window, too few (want %d) to choose among %s: %s\n", s.Found, s.Queries, minFound, strings.Join(stageVerdictNames(s.Stages), ", "), what)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Stages chosen on %d pseudo-queries, each scored by stage models and fusion weights that did not train on it (MAP, %d-fold):\n", s.Queries, selectFolds)
	fmt.Fprintf(&b, "%-14s %8s %8s  %s\n", "stage", "alone", "change", "verdict")
	fmt.Fprintf(&b, "%-14s %8.4f %8s  %s\n", "first stage", s.FirstStage, "", "")
	for _, v := range s.Stages {
		verdict := "dropped: the fusion did as well without it, or not significantly worse"
		switch {
		case v.Kept:
			verdict = "kept"
		case v.Survived:
			verdict = "dropped with the fusion, which did not beat the first stage"
		}
		fmt.Fprintf(&b, "%-14s %8.4f %+8.4f  %s\n", v.Name, v.Alone, v.Change, verdict)
	}
	switch {
	case len(s.Kept) == 0 && s.Test.N == 0:
		b.WriteString("fusion: none; no stage raised the first stage's MAP, and the pipeline ranks in first-stage order\n")
	case len(s.Kept) == 0:
		fmt.Fprintf(&b, "fusion: none; the best fusion's %+.4f MAP over the first stage is not significant (p = %.4f, want < %g), and the pipeline ranks in first-stage order\n", s.Test.Delta, s.Test.PTTest, minGainP)
	default:
		switch {
		case s.Prior:
			fmt.Fprintf(&b, "fusion: fixed equal weights (%.4f on the held-out pseudo-queries), which the learned fusion or the first stage (%.4f, p = %.4f) did not beat significantly; ", s.PriorMAP, s.Learned, s.PriorTest.PTTest)
		case s.PriorMAP > 0:
			fmt.Fprintf(&b, "fusion: learned weights, which beat the fixed equal weights on the held-out pseudo-queries (%.4f against %.4f, p = %.4f); ", s.Learned, s.PriorMAP, s.PriorTest.PTTest)
		default:
			b.WriteString("fusion: learned weights; ")
		}
		fmt.Fprintf(&b, "%.4f MAP against the first stage's %.4f (%+.4f, p = %.4f, %d better, %d worse); weights:", s.Fused, s.FirstStage, s.Test.Delta, s.Test.PTTest, s.Test.Improved, s.Test.Hurt)
		names := append([]string{rerank.FeatureFirstScore, rerank.FeatureFirstRank}, s.Kept...)
		for _, n := range names {
			fmt.Fprintf(&b, " %s %.3f", n, s.Fusion.Weights[n])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
