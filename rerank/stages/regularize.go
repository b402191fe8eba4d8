package stages

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

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
		s := &Regularize{Stats: env.Stats, Payloads: env.Payloads, Analyze: env.Analyze, K: o.K, Alpha: o.Alpha, Adaptive: o.Adaptive, name: spec.DisplayName("regularize")}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("regularize: %w", err)
		}
		return s, nil
	})
}

// RegularizeOptions are the options of a regularize stage: k (neighbours
// per candidate, default 10), alpha (the weight of the neighbours,
// default 0.5) and adaptive (scale alpha by each window's score
// autocorrelation, default false).
type RegularizeOptions struct {
	K        int     `yaml:"k"`
	Alpha    float64 `yaml:"alpha"`
	Adaptive bool    `yaml:"adaptive"`
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
// With Adaptive set, each window is smoothed at α·max(0, ρ), ρ the
// window's score autocorrelation: the Pearson correlation of every
// candidate's score y_i with its neighbours' mean, Σ_j W_ij y_j / Σ_j
// W_ij, over the candidates with neighbours (Diaz, "Performance
// prediction using spatial autocorrelation", SIGIR 2007). Where the
// scores already agree with the graph, relevant documents are alike and
// smoothing pools their evidence; where they do not, a relevant document
// stands apart from its neighbours, and smoothing would lift them with it
// and pull it down toward them.
//
// Options: k (≥ 1, default 10), alpha (0 ≤ α < 1, default 0.5), adaptive
// (default false).
type Regularize struct {
	Stats    rerank.TermStats
	Payloads rerank.Payloads       // may be nil
	Analyze  func(string) []string // as TFIDF's
	K        int
	Alpha    float64
	Adaptive bool
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

// ReadsMetadata implements rerank.MetadataReader: the stage reads text
// alone.
func (*Regularize) ReadsMetadata() bool { return false }

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
	adj, z := knnGraph(len(cands), s.K, cosineRows(vecs, terms)), standardize(y)
	alpha := s.Alpha
	if s.Adaptive {
		alpha *= max(0, autocorrelation(adj, z))
	}
	return regularized(adj, z, alpha), nil
}

// autocorrelation returns the Pearson correlation of y_i with its
// neighbours' weighted mean in the graph adj, over the nodes with edges;
// 0 when fewer than two have edges or either side does not vary.
func autocorrelation(adj [][]neighbour, y []float64) float64 {
	var own, near []float64
	for i, edges := range adj {
		d, s := 0.0, 0.0
		for _, e := range edges {
			d += e.w
			s += e.w * y[e.j]
		}
		if d > 0 {
			own, near = append(own, y[i]), append(near, s/d)
		}
	}
	if len(own) < 2 {
		return 0
	}
	r := stat.Correlation(own, near, nil)
	if math.IsNaN(r) {
		return 0
	}
	return r
}

// cosineRows returns a function that sets out[j] to the cosine of
// vectors i and j (over term ids below terms), 0 for j = i and where
// either vector is empty. It is not safe for concurrent use.
func cosineRows(vecs [][]idWeight, terms int) func(i int, out []float64) {
	norms := vectorNorms(vecs)
	dense := make([]float64, terms)
	return func(i int, out []float64) {
		clear(out)
		if norms[i] == 0 {
			return
		}
		for _, tw := range vecs[i] {
			dense[tw.id] = tw.w
		}
		for j, v := range vecs {
			if j == i || norms[j] == 0 {
				continue
			}
			dot := 0.0
			for _, tw := range v {
				dot += tw.w * dense[tw.id]
			}
			out[j] = dot / (norms[i] * norms[j])
		}
		for _, tw := range vecs[i] {
			dense[tw.id] = 0
		}
	}
}

// neighbour is an edge of a graph: the node it leads to and its weight.
type neighbour struct {
	j int
	w float64
}

// knnGraph returns the symmetric k-nearest-neighbour graph of n nodes
// whose similarities row(i, out) gives, one row at a time: i and j are
// linked when j is among the k most similar to i or i among the k most
// similar to j, by an edge weighing their similarity (the larger of the
// two rows' values, should rounding make them differ). Only positive
// similarities make edges, never a node with itself; ties go to the lower
// index. Each node's edges are sorted by the node they lead to. It holds
// one row and at most 2·n·k edges in memory, whatever n.
func knnGraph(n, k int, row func(i int, out []float64)) [][]neighbour {
	adj := make([][]neighbour, n)
	sims := make([]float64, n)
	cands := make([]neighbour, 0, n)
	for i := range n {
		row(i, sims)
		cands = cands[:0]
		for j, v := range sims {
			if j != i && v > 0 {
				cands = append(cands, neighbour{j, v})
			}
		}
		slices.SortStableFunc(cands, func(a, b neighbour) int { return cmp.Compare(b.w, a.w) })
		for _, e := range cands[:min(k, len(cands))] {
			adj[i] = append(adj[i], e)
			adj[e.j] = append(adj[e.j], neighbour{i, e.w})
		}
	}
	for i, edges := range adj {
		slices.SortFunc(edges, func(a, b neighbour) int {
			return cmp.Or(cmp.Compare(a.j, b.j), cmp.Compare(b.w, a.w))
		})
		adj[i] = slices.CompactFunc(edges, func(a, b neighbour) bool { return a.j == b.j })
	}
	return adj
}

// standardize returns y less its mean, divided by its standard deviation
// (rerank.ZNormalize); all 0 when y's values are all equal or one is not
// a number.
func standardize(y []float64) []float64 {
	out := slices.Clone(y)
	rerank.ZNormalize(out)
	if len(out) > 0 && math.IsNaN(out[0]) {
		clear(out)
	}
	return out
}

// regularizeSteps bounds the iteration; at α = 0.99 the error shrinks by
// 10⁻¹² in about 2,750 steps.
const regularizeSteps = 5000

// regularized returns f = (1 − α)(I − αS)⁻¹ y for S = D^(−1/2) W D^(−1/2),
// W the symmetric graph adj and D its degrees (a node without edges keeps
// (1 − α)·y), by iterating f ← (1 − α)·y + α·S·f from y until no value
// moves by more than 10⁻¹² of the largest (see Regularize).
func regularized(adj [][]neighbour, y []float64, alpha float64) []float64 {
	n := len(y)
	inv := make([]float64, n) // D^(−1/2)
	for i, edges := range adj {
		d := 0.0
		for _, e := range edges {
			d += e.w
		}
		if d > 0 {
			inv[i] = 1 / math.Sqrt(d)
		}
	}
	f, next := slices.Clone(y), make([]float64, n)
	for range regularizeSteps {
		moved, largest := 0.0, 0.0
		for i, edges := range adj {
			sf := 0.0
			for _, e := range edges {
				sf += inv[i] * e.w * inv[e.j] * f[e.j]
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
