// Package deepmatchexp runs the DeepMatch comparison of issue 5: DeepMatch
// against the paper's two inner-product baselines (low-rank bilinear,
// Siamese network), TF-IDF cosine and the first-stage (IR) order, on
// reranking SemEval candidate lists, on a fixed split or by k-fold
// cross-validation, with paired significance tests. It also scores the
// paper's own protocol — nDCG@1 on pools of one relevant and five random
// candidates — so the paper's claim can be checked on both.
package deepmatchexp

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/semrank/semrank/cmd/semrank/internal/conceptexp"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/stages"
)

// System names.
const (
	IR    = "IR order"
	TFIDF = "TF-IDF cosine"
)

// Config is the experiment: one training config per learned method.
type Config struct {
	Methods []deepmatch.Config
	Log     io.Writer // progress lines; may be nil
	Seed    uint64    // for the random pools
}

// check refuses a method named twice: both would report under one name.
func (c Config) check() error {
	seen := map[string]bool{}
	for _, m := range c.Methods {
		if seen[m.Method] {
			return fmt.Errorf("deepmatchexp: method %q twice", m.Method)
		}
		seen[m.Method] = true
	}
	return nil
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Scores holds, per system, one score list per test query (candidate order).
type Scores map[string][][]float64

// Outcome is what one split or one cross-validation produced.
type Outcome struct {
	Test   []deepmatch.Query
	Scores Scores
	Names  []string // systems in report order
	// Pools are the paper-protocol pools of the test queries: each holds one
	// relevant candidate, at a random place, and five random documents of
	// other queries.
	Pools      []deepmatch.Query
	PoolScores Scores
	// Params holds each learned system's weight count, one per split: one
	// for RunSplit, one per fold for CrossValidate (vocabularies, and so
	// the embedding tables, differ between folds).
	Params map[string][]int
}

// baselines scores the test queries with the unlearned systems. TF-IDF
// takes its document frequencies from the texts of corpus.
func baselines(test []deepmatch.Query, corpus []string) (Scores, error) {
	tf := &stages.TFIDF{Stats: tweak.CountDF(corpus)}
	s := Scores{}
	for _, q := range test {
		ir := make([]float64, len(q.Cands))
		cands := make([]rerank.Candidate, len(q.Cands))
		for i, c := range q.Cands {
			ir[i] = -float64(i) // candidates arrive in first-stage order
			cands[i] = rerank.Candidate{Doc: dataset.Doc{ID: c.ID, Text: c.Text}}
		}
		cos, err := tf.Score(context.Background(), rerank.Query{ID: q.ID, Text: q.Text}, cands)
		if err != nil {
			return nil, err
		}
		s[IR] = append(s[IR], ir)
		s[TFIDF] = append(s[TFIDF], cos)
	}
	return s, nil
}

// pools builds the paper's evaluation pools: for each test query with a
// relevant candidate, its first relevant candidate and five candidates of
// other test queries drawn at random, the relevant one at a random place.
// Rankings keep the pool order among equal scores, so a relevant candidate
// always first would win every tie: TF-IDF scores 0 for every candidate
// sharing no word with the query, a fifth of the SemEval A pools.
func pools(test []deepmatch.Query, seed uint64) []deepmatch.Query {
	rng := rand.New(rand.NewPCG(seed, 0x9001))
	place := rand.New(rand.NewPCG(seed, 0x9002)) // its own stream: the same negatives are drawn
	var out []deepmatch.Query
	for i, q := range test {
		var pos *deepmatch.Cand
		for j := range q.Cands {
			if q.Cands[j].Relevant {
				pos = &q.Cands[j]
				break
			}
		}
		if pos == nil || len(test) < 2 {
			continue
		}
		p := deepmatch.Query{ID: q.ID, Text: q.Text, Cands: []deepmatch.Cand{*pos}}
		for len(p.Cands) < 6 {
			o := rng.IntN(len(test))
			if o == i || len(test[o].Cands) == 0 {
				continue
			}
			c := test[o].Cands[rng.IntN(len(test[o].Cands))]
			c.Relevant = false
			c.ID = fmt.Sprintf("%s#%d", c.ID, len(p.Cands)) // a document may be drawn twice
			p.Cands = append(p.Cands, c)
		}
		k := place.IntN(len(p.Cands))
		p.Cands[0], p.Cands[k] = p.Cands[k], p.Cands[0]
		out = append(out, p)
	}
	return out
}

// Texts lists the texts of every candidate, for document frequencies.
func Texts(qs []deepmatch.Query) []string {
	var out []string
	for _, q := range qs {
		for _, c := range q.Cands {
			out = append(out, c.Text)
		}
	}
	return out
}

// RunSplit trains each method on train (early stopping on a tenth of it)
// and scores test. corpus gives TF-IDF its document frequencies.
func RunSplit(ctx context.Context, train, test []deepmatch.Query, corpus []string, cfg Config) (*Outcome, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	o := &Outcome{Test: test, Names: []string{IR, TFIDF}, Params: map[string][]int{}}
	var err error
	if o.Scores, err = baselines(test, corpus); err != nil {
		return nil, err
	}
	o.Pools = pools(test, cfg.Seed)
	if o.PoolScores, err = baselines(o.Pools, corpus); err != nil {
		return nil, err
	}
	for _, mc := range cfg.Methods {
		name := mc.Method
		cfg.logf("training %s on %d queries", name, len(train))
		m, err := deepmatch.Train(ctx, train, nil, mc, func(p deepmatch.Progress) {
			if p.Epoch > 0 {
				cfg.logf("  %s epoch %d loss %.4f holdout MAP %.4f", name, p.Epoch, p.Loss, p.DevMAP)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		o.Params[name] = append(o.Params[name], m.Params())
		for _, q := range test {
			o.Scores[name] = append(o.Scores[name], m.ScoreQuery(q))
		}
		for _, q := range o.Pools {
			o.PoolScores[name] = append(o.PoolScores[name], m.ScoreQuery(q))
		}
		o.Names = append(o.Names, name)
	}
	return o, nil
}

// CrossValidate runs RunSplit over k folds of qs (query i in fold i mod k)
// and joins the folds' test scores, so every query is scored once by a model
// that did not see it.
func CrossValidate(ctx context.Context, qs []deepmatch.Query, k int, cfg Config) (*Outcome, error) {
	if k < 2 || k > len(qs) {
		return nil, fmt.Errorf("deepmatchexp: %d folds over %d queries", k, len(qs))
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	corpus := Texts(qs)
	var all *Outcome
	for f := range k {
		var train, test []deepmatch.Query
		for i, q := range qs {
			if i%k == f {
				test = append(test, q)
			} else {
				train = append(train, q)
			}
		}
		cfg.logf("fold %d/%d: %d train, %d test queries", f+1, k, len(train), len(test))
		o, err := RunSplit(ctx, train, test, corpus, cfg)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		if all == nil {
			all = o
			continue
		}
		all.Test = append(all.Test, o.Test...)
		all.Pools = append(all.Pools, o.Pools...)
		for n, s := range o.Scores {
			all.Scores[n] = append(all.Scores[n], s...)
		}
		for n, s := range o.PoolScores {
			all.PoolScores[n] = append(all.PoolScores[n], s...)
		}
		for n, p := range o.Params {
			all.Params[n] = append(all.Params[n], p...)
		}
	}
	return all, nil
}

// AddFused adds "<system> + IR", the per-list z-score sum of each learned
// system's scores with the first-stage order (conceptexp.Fuse).
func (o *Outcome) AddFused() {
	for _, n := range o.Names {
		if n == IR {
			continue
		}
		o.Scores[n+conceptexp.FuseSuffix] = conceptexp.Fuse(o.Scores[n], o.Scores[IR])
		o.Names = append(o.Names, n+conceptexp.FuseSuffix)
	}
}
