package stages

import (
	"context"
	"fmt"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterTrainer(tweak.Method, fitTWEAK)
}

// fitTWEAK trains a TWEAK model. Options: loss (sse, log, preference;
// default sse, which did best on SemEval B in docs/RESULTS.md), alpha (L2
// weight, default 0.1, or auto: chosen from tweak.AlphaGrid by dev MAP on
// in.Dev, else on a fifth of the training queries before retraining on
// all), query_log (default true), max_iter (L-BFGS iterations, default
// 200), df (where document frequencies come from: corpus, the default,
// counts them over in.Train's and in.Dev's corpora; index reads in.Index).
// The frequencies are frozen into the model. A judged query's candidates
// that its judgments leave out count as not relevant
// (dataset.Dataset.WithUnjudgedNotRelevant). With in.Dev the model records
// its dev metrics.
func fitTWEAK(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	o := DefaultTweakOptions()
	if err := spec.DecodeOptions(&o); err != nil {
		return spec, err
	}
	cfg, err := o.config()
	if err != nil {
		return spec, err
	}
	auto, dfFrom := o.Alpha.Auto, o.DF
	if err := needJudged(in); err != nil {
		return spec, err
	}
	if in.Train.Candidates == nil {
		return spec, tweak.ErrNoCandidates
	}
	st, err := tweakStats(in, dfFrom, cfg.QueryLog)
	if err != nil {
		return spec, err
	}
	// TWEAK's losses read judged candidates only: count the rest as
	// not relevant, as the other trainers and the evaluation do.
	train := in.Train.WithUnjudgedNotRelevant()
	set, err := tweak.NewSet(train, judgedIDs(train), st, cfg.QueryLog)
	if err != nil {
		return spec, err
	}
	var dev *tweak.Set
	if in.Dev != nil && in.Dev.Qrels != nil && in.Dev.Candidates != nil {
		d := in.Dev.WithUnjudgedNotRelevant()
		if dev, err = tweak.NewSet(d, judgedIDs(d), st, false); err != nil {
			return spec, err
		}
	}
	runs := 1
	if auto {
		runs = len(tweak.AlphaGrid)
		if dev == nil {
			runs++ // the retraining on every query
		}
	}
	steps := newSteps(in, runs*cfg.MaxIterations)
	opt := tweak.Options{Dev: dev}
	if in.Progress != nil {
		opt.Progress = func(p tweak.Progress) { steps.step("lbfgs", p.Iteration, p.Loss, p.DevMAP) }
	}
	var m *tweak.Model
	if auto {
		m, err = tweakAutoAlpha(ctx, in, train, set, dev, st, cfg, opt)
	} else {
		m, err = tweak.Train(ctx, set, cfg, opt)
	}
	if err != nil {
		return spec, err
	}
	pairs, prefs := set.Pairs()
	logf(in, "trained on %d queries (%d candidate pairs, %d preference pairs), loss %s, alpha %g",
		len(set.Queries()), pairs, prefs, cfg.Loss, m.Config.Alpha)
	for i, name := range tweak.FeatureNames {
		logf(in, "  w[%s] = %+.4f", name, m.W[i])
	}
	if dev != nil {
		logf(in, "dev (%d queries): MAP %.4f  AUC %.4f  MRR %.4f", len(dev.Queries()),
			m.Metrics["dev_map@10"], m.Metrics["dev_auc"], m.Metrics["dev_mrr@10"])
	}
	return saveModel(spec, in, tweak.Method, m.Save)
}

// config returns the training configuration o asks for (with α 0 when
// it is auto).
func (o TweakOptions) config() (cfg tweak.Config, err error) {
	if cfg.Loss, err = tweak.ParseLoss(o.Loss); err != nil {
		return cfg, err
	}
	if o.MaxIter <= 0 {
		return cfg, fmt.Errorf("option max_iter: want > 0, got %d", o.MaxIter)
	}
	cfg.Alpha, cfg.QueryLog, cfg.MaxIterations = o.Alpha.Alpha, o.QueryLog, o.MaxIter
	return cfg, nil
}

// tweakStats returns the document frequencies the option df names and,
// with queryLog, the training queries' term frequencies (the qf feature).
func tweakStats(in rerank.TrainInput, dfFrom string, queryLog bool) (tweak.Stats, error) {
	var st tweak.Stats
	switch dfFrom {
	case "corpus":
		// Each document once: training and dev sets read from one
		// index share its documents.
		var texts []string
		seen := map[string]bool{}
		for _, ds := range []*dataset.Dataset{in.Train, in.Dev} {
			if ds == nil {
				continue
			}
			for _, d := range ds.Corpus {
				if !seen[d.ID] {
					seen[d.ID] = true
					texts = append(texts, d.FullText())
				}
			}
		}
		st.DF = tweak.CountDF(texts)
	case "index":
		if in.Index == nil {
			return st, fmt.Errorf("option df: index, but TrainInput.Index is nil")
		}
		df, err := indexDF(in.Index)
		if err != nil {
			return st, err
		}
		st.DF = df
	default:
		return st, fmt.Errorf("option df: want corpus or index, got %q", dfFrom)
	}
	if queryLog {
		qs := make([]string, len(in.Train.Queries))
		for i, q := range in.Train.Queries {
			qs[i] = q.FullText()
		}
		st.QF = tweak.CountDF(qs)
	}
	return st, nil
}

// indexDF freezes the document frequencies of every term of idx.
func indexDF(idx *index.Index) (*tweak.DFTable, error) {
	dict, err := idx.FieldDict(index.FieldAll)
	if err != nil {
		return nil, fmt.Errorf("term dictionary: %w", err)
	}
	defer dict.Close()
	var terms []string
	for {
		e, err := dict.Next()
		if err != nil {
			return nil, fmt.Errorf("term dictionary: %w", err)
		}
		if e == nil {
			break
		}
		terms = append(terms, e.Term)
	}
	return tweak.Snapshot(idx, terms)
}

// tweakAutoAlpha chooses α by dev MAP on dev, or on a fifth of the
// training queries held out and then retrains on all of them, logging
// each α's dev metrics.
func tweakAutoAlpha(ctx context.Context, in rerank.TrainInput, train *dataset.Dataset, set, dev *tweak.Set, st tweak.Stats, cfg tweak.Config, opt tweak.Options) (*tweak.Model, error) {
	innerTrain, innerDev := set, dev
	if dev == nil {
		tq, dq, err := tweak.HoldOut(set.Queries(), 0.2, 2016)
		if err != nil {
			return nil, err
		}
		if innerTrain, err = tweak.NewSet(train, tq, st, cfg.QueryLog); err != nil {
			return nil, err
		}
		if innerDev, err = tweak.NewSet(train, dq, st, cfg.QueryLog); err != nil {
			return nil, err
		}
	}
	m, table, err := tweak.SelectAlpha(ctx, innerTrain, innerDev, cfg, tweak.AlphaGrid, opt)
	if err != nil {
		return nil, err
	}
	for _, r := range table {
		logf(in, "alpha %-6g dev MAP %.4f AUC %.4f", r.Alpha, r.DevMAP, r.DevAUC)
	}
	if dev != nil {
		return m, nil
	}
	cfg.Alpha = m.Config.Alpha
	return tweak.Train(ctx, set, cfg, opt)
}

// judgedIDs returns the ids of ds's judged queries that have candidates.
// The list is never nil, which tweak.NewSet would take for every judged
// query in ds's candidate lists, known to ds.Queries or not: with none,
// NewSet reports that no judged query has candidates.
func judgedIDs(ds *dataset.Dataset) []string {
	out := []string{}
	if ds.Candidates == nil {
		return out
	}
	for _, q := range ds.Queries {
		if _, ok := ds.Qrels[q.ID]; ok && len(ds.Candidates.Ranking(q.ID)) > 0 {
			out = append(out, q.ID)
		}
	}
	return out
}
