package stages

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/semrank/semrank/rerank"
)

func init() {
	rerank.RegisterStage("regularize", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		if env.Stats == nil {
			return nil, errors.New("regularize needs collection statistics: build the pipeline against a semrank index with rerank.EnvFor(idx) (index.Open or index.Create), or any Bleve index through rerank.LoadPipeline or offline.Open")
		}
		o := RegularizeOptions{K: 10, Alpha: 0.5}
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		s := &Regularize{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, K: o.K, Alpha: o.Alpha, name: spec.DisplayName("regularize")}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("regularize: %w", err)
		}
		return s, nil
	})
}

// RegularizeOptions are the options of a regularize stage: k (neighbours
// per candidate, default 10) and alpha (the weight of the neighbours,
// default 0.5).
type RegularizeOptions struct {
	K     int     `yaml:"k"`
	Alpha float64 `yaml:"alpha"`
}

// Regularize smooths the first stage's scores over the window, so that
// candidates alike in their words get alike scores: Diaz's score
// regularization ("Regularizing ad hoc retrieval scores", CIKM 2005),
// the cluster hypothesis applied to scores rather than clusters. A
// relevant document's near duplicates rise with it; a document that
// matched the query's words by chance, alike in nothing to its
// neighbours in the ranking, sinks.
//
// The window is a graph: each candidate is linked to its K nearest
// others by the cosine of their TF-IDF vectors (the tfidf stage's
// weights, idf from the index), an edge weighing that cosine and kept
// when either end chose it (W symmetric, no self loops; candidates with
// nothing in common get no edge). The initial scores y are the first
// stage's, standardised over the window (mean 0, standard deviation 1;
// all 0 when they are all equal). The regularized scores minimise
// f'(I − S)f + μ‖f − y‖², S = D^(−1/2) W D^(−1/2), D the degrees, whose
// solution
//
//	f = (1 − α) · (I − α·S)⁻¹ · y,  α = 1/(1 + μ)
//
// is found by iterating f ← (1 − α)·y + α·S·f from f = y (Zhou et al.'s
// iteration, which converges since S's eigenvalues lie in [−1, 1]) until
// no score moves by more than 10⁻¹² of the largest. Alpha 0 returns y.
//
// Options: k (≥ 1, default 10), alpha (0 ≤ α < 1, default 0.5).
type Regularize struct {
	Stats    rerank.TermStats
	Payloads rerank.Payloads       // may be nil
	Analyze  func(string) []string // as TFIDF's
	K        int
	Alpha    float64
	name     string
}

// check refuses settings that would make the iteration diverge or the
// graph empty.
func (s *Regularize) check() error {
	switch {
	case s.K < 1:
		return fmt.Errorf("option k %d: want ≥ 1 neighbours (default 10)", s.K)
	case !(s.Alpha >= 0 && s.Alpha < 1):
		return fmt.Errorf("option alpha %g: want a number from 0 to below 1 (default 0.5)", s.Alpha)
	}
	return nil
}

// Name implements rerank.Stage.
func (s *Regularize) Name() string {
	if s.name == "" {
		return "regularize"
	}
	return s.name
}

// ReadsDocs implements rerank.DocReader, as TFIDF's.
func (s *Regularize) ReadsDocs(ctx context.Context, ids []string, reads []bool) error {
	return termsMissingIn(ctx, s.Payloads, ids, reads)
}

// Score implements rerank.Stage.
func (s *Regularize) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	n, err := s.Stats.DocCount()
	if err != nil {
		return nil, err
	}
	vecs, terms, err := windowVectors(ctx, s.Stats, s.Payloads, s.Analyze, cands, n)
	if err != nil {
		return nil, err
	}
	y := make([]float64, len(cands))
	for i, c := range cands {
		y[i] = c.Score
	}
	return Regularized(KNNGraph(cosines(vecs, terms), s.K), Standardize(y), s.Alpha), nil
}

// cosines returns the matrix of the vectors' pairwise cosines (0 on the
// diagonal and where a vector is empty), over term ids below terms.
func cosines(vecs [][]idWeight, terms int) [][]float64 {
	n := len(vecs)
	out := make([][]float64, n)
	flat := make([]float64, n*n)
	norms := make([]float64, n)
	for i, v := range vecs {
		out[i] = flat[i*n : (i+1)*n : (i+1)*n]
		norms[i] = math.Sqrt(squaresOf(v))
	}
	dense := make([]float64, terms)
	for i, v := range vecs {
		if norms[i] == 0 {
			continue
		}
		for _, tw := range v {
			dense[tw.id] = tw.w
		}
		for j := i + 1; j < n; j++ {
			if norms[j] == 0 {
				continue
			}
			dot := 0.0
			for _, tw := range vecs[j] {
				dot += tw.w * dense[tw.id]
			}
			c := dot / (norms[i] * norms[j])
			out[i][j], out[j][i] = c, c
		}
		for _, tw := range v {
			dense[tw.id] = 0
		}
	}
	return out
}

// squaresOf returns the sum of a vector's squared weights.
func squaresOf(v []idWeight) float64 {
	sq := 0.0
	for _, tw := range v {
		sq += tw.w * tw.w
	}
	return sq
}

// KNNGraph returns the symmetric k-nearest-neighbour graph of a
// similarity matrix: W[i][j] = sim[i][j] when j is among the k most
// similar to i or i among the k most similar to j, else 0. Only positive
// similarities make edges, never a node with itself; ties go to the lower
// index.
func KNNGraph(sim [][]float64, k int) [][]float64 {
	n := len(sim)
	w := make([][]float64, n)
	flat := make([]float64, n*n)
	for i := range w {
		w[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	order := make([]int, 0, n)
	for i, row := range sim {
		order = order[:0]
		for j, v := range row {
			if j != i && v > 0 {
				order = append(order, j)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(row[b], row[a]) })
		for _, j := range order[:min(k, len(order))] {
			w[i][j], w[j][i] = row[j], sim[j][i]
		}
	}
	return w
}

// Standardize returns y less its mean, divided by its standard deviation
// (all 0 when y's values are all equal or not finite).
func Standardize(y []float64) []float64 {
	out := make([]float64, len(y))
	if len(y) == 0 {
		return out
	}
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	sd := 0.0
	for _, v := range y {
		sd += (v - mean) * (v - mean)
	}
	sd = math.Sqrt(sd / float64(len(y)))
	if !(sd > 0) || math.IsInf(sd, 0) {
		return out
	}
	for i, v := range y {
		out[i] = (v - mean) / sd
	}
	return out
}

// regularizeSteps bounds the iteration; at α = 0.99 the error shrinks by
// 10⁻¹² in about 2,750 steps.
const regularizeSteps = 5000

// Regularized returns f = (1 − α)(I − αS)⁻¹ y for S = D^(−1/2) W D^(−1/2),
// W a symmetric graph and D its degrees (a node without edges keeps
// (1 − α)·y), by iterating f ← (1 − α)·y + α·S·f from y until no value
// moves by more than 10⁻¹² of the largest (see Regularize).
func Regularized(w [][]float64, y []float64, alpha float64) []float64 {
	n := len(y)
	inv := make([]float64, n) // D^(−1/2)
	for i, row := range w {
		d := 0.0
		for _, v := range row {
			d += v
		}
		if d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	f, next := slices.Clone(y), make([]float64, n)
	for range regularizeSteps {
		moved, largest := 0.0, 0.0
		for i, row := range w {
			sf := 0.0
			for j, v := range row {
				if v != 0 {
					sf += inv[i] * v * inv[j] * f[j]
				}
			}
			next[i] = (1-alpha)*y[i] + alpha*sf
			moved = max(moved, math.Abs(next[i]-f[i]))
			largest = max(largest, math.Abs(next[i]))
		}
		f, next = next, f
		if moved <= 1e-12*largest {
			break
		}
	}
	return f
}
