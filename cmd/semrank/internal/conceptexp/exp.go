// Package conceptexp runs the concept-vector experiments of semrank: LSA,
// S2Net and DSE against TF-IDF cosine and the first-stage order, each alone
// and fused with the first stage, on a train/test split or by k-fold
// cross-validation over queries, with paired significance tests.
//
// The unsupervised parts — the vocabulary, LSA, and DSE's RBM pretraining —
// are fitted once on the extra corpus (LoadExtra: unlabelled texts and
// comparable pairs) plus the training lists; in cross-validation they are
// fitted on the extra corpus alone, so one fit serves every fold and no
// test query's text is seen. S2Net and DSE fine-tuning see only the
// training lists (and the extra corpus's comparable pairs), with early
// stopping on a held-out fifth of the training queries.
package conceptexp

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/models/tweak"
)

// Config chooses the systems and their settings.
type Config struct {
	Ks    []int // S2Net (and LSA) dimensions
	Cs    []int // DSE embedding dimensions
	Space concept.SpaceConfig
	S2Net s2net.Config
	DSE   dse.Config
	// TWEAK, when set, trains TWEAK on the training lists: TWEAK cosine is
	// reported, and S2Net is also trained on TWEAK-weighted inputs.
	TWEAK func(ctx context.Context, train []concept.Judged) (*tweak.Model, error)
	Seed  uint64
	Log   io.Writer // progress lines; may be nil
}

// IR, TFIDF name the baseline systems.
const (
	IR    = "IR order"
	TFIDF = "TF-IDF cosine"
)

// Scores holds one system's scores: per list, per candidate.
type Scores map[string][][]float64

// Fixed is what does not depend on the training queries: the vocabulary,
// LSA at the largest k, and DSE's pretrained network.
type Fixed struct {
	Space *concept.Space
	LSA   *lsa.Model
	DSE   map[int]*dse.Model // pretrained, by C
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Prepare fits the unsupervised parts on data (texts; lists' texts too).
func Prepare(ctx context.Context, data concept.Data, cfg Config) (*Fixed, error) {
	for _, k := range cfg.Ks {
		if k < 1 {
			return nil, fmt.Errorf("conceptexp: LSA/S2Net dimension %d, want ≥ 1", k)
		}
	}
	for _, c := range cfg.Cs {
		if c < 1 {
			return nil, fmt.Errorf("conceptexp: DSE dimension %d, want ≥ 1", c)
		}
	}
	start := time.Now()
	texts := append([]string(nil), data.Texts...)
	for _, l := range data.Lists {
		texts = append(texts, l.Query)
		texts = append(texts, l.Docs...)
	}
	space, err := concept.BuildSpace(texts, cfg.Space)
	if err != nil {
		return nil, err
	}
	kmax := 0
	for _, k := range cfg.Ks {
		kmax = max(kmax, k)
	}
	f := &Fixed{Space: space}
	if kmax > 0 {
		docs := make([]concept.Sparse, len(texts))
		for i, t := range texts {
			docs[i] = space.Vector(t, concept.TFIDF)
		}
		if f.LSA, err = lsa.Fit(space, docs, lsa.Config{Dim: kmax, Seed: cfg.Seed}); err != nil {
			return nil, err
		}
	}
	cfg.logf("vocabulary %d terms from %d texts; LSA k=%d (%.0fs)", space.Dim(), len(texts), kmax, time.Since(start).Seconds())
	f.DSE = map[int]*dse.Model{}
	var base *dse.Model
	for _, c := range cfg.Cs {
		dc := cfg.DSE
		dc.C, dc.Seed, dc.Mix = c, cfg.Seed, -1
		m, _, err := dse.Pretrain(ctx, concept.Data{Texts: texts}, dc, dse.Options{Base: base})
		if err != nil {
			return nil, fmt.Errorf("dse C=%d: %w", c, err)
		}
		f.DSE[c], base = m, m
		cfg.logf("DSE %v–%d pretrained (%.0fs)", m.Config.Hidden, c, time.Since(start).Seconds())
	}
	return f, nil
}

// truncated returns LSA restricted to its first k dimensions.
func truncated(m *lsa.Model, k int) *lsa.Model {
	d, _ := m.Proj.Dims()
	c := *m
	c.Proj = mat.DenseCopyOf(m.Proj.Slice(0, d, 0, k))
	c.Sigma = m.Sigma[:k]
	c.Config.Dim = k
	return &c
}

// RunSplit trains every system on train (with the extra corpus) and scores
// the test lists.
func RunSplit(ctx context.Context, fx *Fixed, extra concept.Data, train, test []concept.Judged, cfg Config) (Scores, []string, error) {
	out := Scores{}
	var names []string
	add := func(name string, s [][]float64) {
		out[name] = s
		names = append(names, name)
	}
	ir := make([][]float64, len(test))
	for i, l := range test {
		ir[i] = l.Scores
	}
	add(IR, ir)
	tf := make([][]float64, len(test))
	for i, l := range test {
		q := fx.Space.Vector(l.Query, concept.TFIDF)
		tf[i] = make([]float64, len(l.Docs))
		for j, d := range l.Docs {
			tf[i][j] = q.Cosine(fx.Space.Vector(d, concept.TFIDF))
		}
	}
	add(TFIDF, tf)
	data := concept.Data{Texts: extra.Texts, Pairs: extra.Pairs, Lists: train}
	var tw *tweak.Model
	if cfg.TWEAK != nil {
		var err error
		if tw, err = cfg.TWEAK(ctx, train); err != nil {
			return nil, nil, fmt.Errorf("tweak: %w", err)
		}
		add("TWEAK", tweakScores(tw, test))
	}
	for _, k := range cfg.Ks {
		l := truncated(fx.LSA, k)
		add(fmt.Sprintf("LSA k=%d", k), concept.CosineScores(l, test))
		inputs := []s2net.Weighter{nil}
		if tw != nil {
			inputs = append(inputs, s2net.TWEAK(tw))
		}
		for _, w := range inputs {
			sc := cfg.S2Net
			sc.Dim, sc.Seed = k, cfg.Seed
			name := fmt.Sprintf("S2Net k=%d", k)
			if w != nil {
				name = fmt.Sprintf("S2Net(TWEAK) k=%d", k)
			}
			start := time.Now()
			m, curve, err := s2net.Train(ctx, data, sc, s2net.Options{Space: fx.Space, LSA: fx.LSA, Weighter: w})
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			cfg.logf("  %s: %d iterations, best held-out MAP %.4f (%.0fs)", name, len(curve)-1, bestDev(curve), time.Since(start).Seconds())
			add(name, concept.CosineScores(m, test))
		}
	}
	for _, c := range cfg.Cs {
		start := time.Now()
		m := fx.DSE[c].Clone()
		curve, err := m.FineTune(ctx, data, dse.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("dse C=%d: %w", c, err)
		}
		cfg.logf("  DSE C=%d: %d epochs, best held-out MAP %.4f, mix λ=%g (%.0fs)", c, len(curve)-1, bestDev(curve), m.Config.Mix, time.Since(start).Seconds())
		dot, mixed := dseScores(m, test)
		add(fmt.Sprintf("DSE C=%d", c), dot)
		add(fmt.Sprintf("DSE+TF-IDF C=%d", c), mixed)
	}
	return out, names, nil
}

func bestDev(curve []concept.Iteration) float64 {
	best := math.Inf(-1)
	for _, it := range curve {
		if it.DevMAP > best {
			best = it.DevMAP
		}
	}
	return best
}

// dseScores returns Φ(q)·Φ(d) and the mixed score with the model's λ.
func dseScores(m *dse.Model, lists []concept.Judged) (dot, mixed [][]float64) {
	for _, l := range lists {
		q := m.Embed(l.Query)
		d := make([]float64, len(l.Docs))
		x := make([]float64, len(l.Docs))
		for j, doc := range l.Docs {
			phi := m.Embed(doc)
			d[j] = concept.Dot(q, phi)
			x[j] = m.Score(q, phi, m.TFIDFCosine(l.Query, doc))
		}
		dot = append(dot, d)
		mixed = append(mixed, x)
	}
	return dot, mixed
}

// CrossValidate runs k-fold cross-validation over lists: every system is
// trained on k−1 folds and scores the held-out fold. The scores returned
// are aligned with the returned lists (fold by fold).
func CrossValidate(ctx context.Context, fx *Fixed, extra concept.Data, lists []concept.Judged, k int, cfg Config) ([]concept.Judged, Scores, []string, error) {
	folds, err := concept.Folds(lists, k, cfg.Seed)
	if err != nil {
		return nil, nil, nil, err
	}
	var all []concept.Judged
	scores := Scores{}
	var names []string
	for f, test := range folds {
		var train []concept.Judged
		for g, fold := range folds {
			if g != f {
				train = append(train, fold...)
			}
		}
		cfg.logf("fold %d/%d: %d training, %d test queries", f+1, k, len(train), len(test))
		s, n, err := RunSplit(ctx, fx, extra, train, test, cfg)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		names = n
		all = append(all, test...)
		for name, v := range s {
			scores[name] = append(scores[name], v...)
		}
	}
	return all, scores, names, nil
}
