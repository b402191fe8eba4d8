// Package topics implements the thresholded-SVD topic model of Bansal,
// Bhattacharyya & Kannan (2014), "A provable SVD-based algorithm for
// learning topics in dominant admixture corpus", as the soft-seed source of
// the SSG reranker (Srivastava & Datt, 2017, §3.3):
//
//  1. A is the word×document matrix of relative frequencies, m the mean
//     document length. Each word i gets a threshold ζ_i: the largest
//     ζ ∈ {0..m} with |{j : A_ij > ζ/m}| ≥ w0·s/2 and |{j : A_ij = ζ/m}| ≤
//     3ε·w0·s (s documents). B_ij = √ζ_i where A_ij > ζ_i/m, else 0.
//  2. The rank-k SVD of B (randomised subspace iteration, since B is large
//     and sparse) projects the documents; k-means on the projections
//     (k-means++ start, Lloyd) gives starting centres; Lloyd's iterations on
//     the columns of B itself then give the clusters R_1..R_k.
//  3. Catchwords: g(i,l) is the ⌊ε0·w0·s/2⌋-th largest A_ij over j ∈ R_l;
//     word i is a catchword of topic l when g(i,l) > 0 and
//     g(i,l) > Gamma·g(i,l') for every other topic l'.
//  4. Topic l's word distribution M_·l is the mean of A_·j over the
//     ⌊ε0·w0·s/2⌋ documents with the largest catchword mass Σ_{i∈J_l} A_ij.
//
// Defaults follow the SSG paper (w0 = 1/k, ε = 1/10, ε0 = 1/6). Choices
// where the papers are silent: Gamma = 1.1 (Bansal's γ depends on ρ and
// δ, which neither paper fixes); 30 Lloyd iterations at most; SVD by
// subspace iteration with 10 extra dimensions and 3 power steps; a word
// with no valid ζ gets ζ = 0 (its row of B is zero); a document is
// assigned to the nearest centre in B space, so queries outside the
// collection are placed the same way; a cluster that Lloyd's iterations
// empty takes the document farthest from its centre. The model also stores each word's
// document frequency, which the SSG feature nodes use for IDF weights.
package topics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"

	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// Method and Version identify topics bundles.
const (
	Method  = "topics"
	Version = 1
)

// DefaultK is the number of topics semrank uses when none is given (K has
// no default in Config: W0 and the catchword counts depend on it).
const DefaultK = 50

// Config sets the model's parameters; zero fields take defaults.
type Config struct {
	K     int     `json:"k"`
	W0    float64 `json:"w0"`   // lowest probability that a topic is dominant; default 1/K
	Eps   float64 `json:"eps"`  // default 1/10
	Eps0  float64 `json:"eps0"` // default 1/6
	Gamma float64 `json:"gamma"`
	Iter  int     `json:"iter"`
	Seed  uint64  `json:"seed"`
}

func (c Config) withDefaults() Config {
	if c.W0 == 0 && c.K > 0 {
		c.W0 = 1 / float64(c.K)
	}
	if c.Eps == 0 {
		c.Eps = 0.1
	}
	if c.Eps0 == 0 {
		c.Eps0 = 1.0 / 6
	}
	if c.Gamma == 0 {
		c.Gamma = 1.1
	}
	if c.Iter == 0 {
		c.Iter = 30
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// Model is a trained thresholded-SVD topic model.
type Model struct {
	Config  Config
	Vocab   []string
	index   map[string]int
	MeanLen float64   // m, mean document length
	Zeta    []float64 // per-word thresholds ζ_i
	// Centers are the clusters' centres in thresholded space, one row of
	// len(Vocab) per topic. Represent reads their squared norms, which
	// Train and Load compute once: a model's Centers are not to be
	// changed after either returns it.
	Centers [][]float64
	norms   []float64      // ‖Centers[l]‖², for nearest
	far     []atomic.Int32 // Farthest's answers, + 1 (0: not asked yet)
	Catch   [][]int        // catchwords J_l of each topic
	Topics  [][]float64    // M_·l, one word distribution per topic
	DF      []float64      // document frequency of each word
	Docs    int            // s
	// Analyzer identifies the analyzer the vocabulary's words came from:
	// the one embed.Tokenize uses (analyzers.WordsID) for a trained model;
	// for a loaded one, what its bundle recorded ("" when saved before
	// analyzers were recorded), kept so that re-saving it claims nothing
	// unchecked.
	Analyzer string
}

// doc is a column of A: word ids and relative frequencies.
type doc struct {
	ids []int
	a   []float64
}

func (m *Model) column(tokens []string, grow bool) doc {
	count := map[int]float64{}
	n := 0
	for _, t := range tokens {
		i, ok := m.index[t]
		if !ok && grow {
			i = len(m.Vocab)
			m.index[t] = i
			m.Vocab = append(m.Vocab, t)
			ok = true
		}
		n++
		if ok {
			count[i]++
		}
	}
	d := doc{}
	for i := range count {
		d.ids = append(d.ids, i)
	}
	sort.Ints(d.ids)
	for _, i := range d.ids {
		d.a = append(d.a, count[i]/float64(n))
	}
	return d
}

// thresholded returns the column of B for a column of A.
func (m *Model) thresholded(d doc) doc {
	var b doc
	for k, i := range d.ids {
		if z := m.Zeta[i]; z > 0 && d.a[k] > z/m.MeanLen {
			b.ids = append(b.ids, i)
			b.a = append(b.a, math.Sqrt(z))
		}
	}
	return b
}

// Train fits the model to tokenized documents: embed.Tokenize's words, as
// the SSG graphs that use the model tokenize queries and candidates. The
// model records that analyzer (analyzers.WordsID) as its words' source.
func Train(ctx context.Context, docs [][]string, cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	if cfg.K < 2 {
		return nil, fmt.Errorf("topics: K = %d, want ≥ 2", cfg.K)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"w0", cfg.W0}, {"eps", cfg.Eps}, {"eps0", cfg.Eps0}, {"gamma", cfg.Gamma}} {
		// withDefaults replaces only zeros; NaN or ±Inf would train to
		// the end and then fail to save the config.
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return nil, fmt.Errorf("topics: %s is %v, want a finite number", f.name, f.v)
		}
	}
	if cfg.Iter < 0 {
		return nil, fmt.Errorf("topics: %d iterations, want ≥ 1 (0 picks the default)", cfg.Iter)
	}
	if len(docs) < cfg.K {
		return nil, fmt.Errorf("topics: %d documents for %d topics", len(docs), cfg.K)
	}
	m := &Model{Config: cfg, index: map[string]int{}, Analyzer: analyzers.WordsID()}
	cols := make([]doc, 0, len(docs))
	var total float64
	for _, t := range docs {
		if len(t) == 0 {
			continue
		}
		cols = append(cols, m.column(t, true))
		total += float64(len(t))
	}
	s := len(cols)
	if s < cfg.K {
		return nil, fmt.Errorf("topics: %d non-empty documents for %d topics", s, cfg.K)
	}
	m.Docs = s
	m.MeanLen = total / float64(s)
	V := len(m.Vocab)
	m.DF = make([]float64, V)
	perWord := make([][]float64, V)
	for _, c := range cols {
		for k, i := range c.ids {
			m.DF[i]++
			perWord[i] = append(perWord[i], c.a[k])
		}
	}
	m.thresholds(perWord)
	B := make([]doc, s)
	for j, c := range cols {
		B[j] = m.thresholded(c)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 17))
	proj, err := project(B, V, cfg.K, rng)
	if err != nil {
		return nil, err
	}
	assign := kmeansDense(proj, cfg.K, cfg.Iter, rng)
	assign = m.lloydSparse(ctx, B, V, assign)
	if err := ctx.Err(); err != nil {
		return nil, err // lloydSparse stopped early
	}
	m.norms = sqNorms(m.Centers)
	m.catchwords(cols, assign)
	m.far = make([]atomic.Int32, len(m.Topics))
	return m, nil
}

// thresholds computes ζ_i from the non-zero values of each word's row of A.
func (m *Model) thresholds(perWord [][]float64) {
	cfg := m.Config
	s := float64(m.Docs)
	need := cfg.W0 * s / 2
	maxEq := 3 * cfg.Eps * cfg.W0 * s
	zmax := int(math.Ceil(m.MeanLen))
	m.Zeta = make([]float64, len(perWord))
	for i, vals := range perWord {
		zeros := s - float64(len(vals))
		for z := zmax; z >= 0; z-- {
			t := float64(z) / m.MeanLen
			var above, equal float64
			for _, v := range vals {
				switch {
				case v > t:
					above++
				case v == t:
					equal++
				}
			}
			if z == 0 {
				equal += zeros
			}
			if above >= need && equal <= maxEq {
				m.Zeta[i] = float64(z)
				break
			}
		}
	}
}

// project returns the documents' coordinates in the top-k left singular
// subspace of B (V×s), computed by randomised subspace iteration.
func project(B []doc, V, k int, rng *rand.Rand) ([][]float64, error) {
	s := len(B)
	r := min(k+10, V, s)
	// Y = B·Ω, Ω s×r Gaussian.
	omega := make([]float64, s*r)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	Y := mat.NewDense(V, r, nil)
	mulB := func(dst *mat.Dense, X []float64) { // dst = B·X, X s×r
		dst.Zero()
		for j, c := range B {
			x := X[j*r : j*r+r]
			for k, i := range c.ids {
				row := dst.RawRowView(i)
				v := c.a[k]
				for t := range row {
					row[t] += v * x[t]
				}
			}
		}
	}
	mulBT := func(Q *mat.Dense) []float64 { // Bᵀ·Q, s×r
		out := make([]float64, s*r)
		for j, c := range B {
			o := out[j*r : j*r+r]
			for k, i := range c.ids {
				row := Q.RawRowView(i)
				v := c.a[k]
				for t := range o {
					o[t] += v * row[t]
				}
			}
		}
		return out
	}
	// orth returns the thin V×r orthonormal factor of Y's QR
	// decomposition. (mat.QR.QTo would form the full V×V factor: gigabytes
	// and most of the training time for a vocabulary of 20,000 words.)
	orth := func(Y *mat.Dense) *mat.Dense {
		Q := mat.DenseCopyOf(Y)
		a := Q.RawMatrix()
		tau := make([]float64, r)
		query := make([]float64, 1) // workspace size queries
		lapack64.Geqrf(a, tau, query, -1)
		lw := int(query[0])
		lapack64.Orgqr(a, tau, query, -1)
		lw = max(lw, int(query[0]), r)
		work := make([]float64, lw)
		lapack64.Geqrf(a, tau, work, lw)
		lapack64.Orgqr(a, tau, work, lw)
		return Q
	}
	mulB(Y, omega)
	Q := orth(Y)
	for p := 0; p < 3; p++ {
		mulB(Y, mulBT(Q))
		Q = orth(Y)
	}
	// Small SVD of Qᵀ·B (r×s) gives B ≈ Q·U·Σ·Vᵀ; keep k directions.
	Z := mat.NewDense(s, r, mulBT(Q)) // (QᵀB)ᵀ
	var svd mat.SVD
	if !svd.Factorize(Z, mat.SVDThin) {
		return nil, errors.New("topics: SVD did not converge")
	}
	var Vt mat.Dense // Z = U Σ Vᵀ, Z s×r; document coordinates are U_k·Σ_k
	svd.UTo(&Vt)
	sv := svd.Values(nil)
	kk := min(k, len(sv))
	out := make([][]float64, s)
	for j := range out {
		out[j] = make([]float64, kk)
		for t := 0; t < kk; t++ {
			out[j][t] = Vt.At(j, t) * sv[t]
		}
	}
	return out, nil
}

func sqdist(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		d := x - b[i]
		s += d * d
	}
	return s
}

// kmeansDense clusters points with k-means++ seeding and Lloyd iterations.
func kmeansDense(pts [][]float64, k, iter int, rng *rand.Rand) []int {
	n := len(pts)
	centers := [][]float64{append([]float64(nil), pts[rng.IntN(n)]...)}
	d2 := make([]float64, n)
	for i := range d2 {
		d2[i] = math.Inf(1)
	}
	for len(centers) < k {
		var sum float64
		last := centers[len(centers)-1]
		for i, p := range pts {
			d2[i] = min(d2[i], sqdist(p, last))
			sum += d2[i]
		}
		next := rng.IntN(n)
		if sum > 0 {
			r := rng.Float64() * sum
			for i, d := range d2 {
				if r -= d; r <= 0 {
					next = i
					break
				}
			}
		}
		centers = append(centers, append([]float64(nil), pts[next]...))
	}
	assign := make([]int, n)
	for it := 0; it < iter; it++ {
		changed := false
		for i, p := range pts {
			best, bl := math.Inf(1), 0
			for l, c := range centers {
				if d := sqdist(p, c); d < best {
					best, bl = d, l
				}
			}
			if assign[i] != bl || it == 0 {
				changed = changed || assign[i] != bl
				assign[i] = bl
			}
		}
		if !changed && it > 0 {
			break
		}
		counts := make([]float64, k)
		for l := range centers {
			clear(centers[l])
		}
		for i, p := range pts {
			counts[assign[i]]++
			for t, x := range p {
				centers[assign[i]][t] += x
			}
		}
		for l := range centers {
			if counts[l] == 0 {
				copy(centers[l], pts[rng.IntN(n)])
				continue
			}
			for t := range centers[l] {
				centers[l][t] /= counts[l]
			}
		}
	}
	return assign
}

// lloydSparse runs Lloyd's iterations on the sparse columns of B from the
// given assignment and stores the final centres.
func (m *Model) lloydSparse(ctx context.Context, B []doc, V int, assign []int) []int {
	k := m.Config.K
	centers := make([][]float64, k)
	for l := range centers {
		centers[l] = make([]float64, V)
	}
	norms := make([]float64, k)
	for it := 0; it < m.Config.Iter; it++ {
		counts := make([]float64, k)
		for l := range centers {
			clear(centers[l])
		}
		for j, c := range B {
			counts[assign[j]]++
			for t, i := range c.ids {
				centers[assign[j]][i] += c.a[t]
			}
		}
		for l := range centers {
			norms[l] = 0
			if counts[l] > 0 {
				for i := range centers[l] {
					centers[l][i] /= counts[l]
					norms[l] += centers[l][i] * centers[l][i]
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		// A reseeded cluster took a document from another one, whose
		// centre is now stale: iterate at least once more.
		changed := reseed(B, assign, centers, norms, counts)
		for j, c := range B {
			if l := nearest(c, centers, norms); l != assign[j] {
				assign[j] = l
				changed++
			}
		}
		if changed == 0 {
			break
		}
	}
	m.Centers = centers
	return assign
}

// reseed gives each emptied cluster the document farthest from its own
// centre, taken from a cluster that keeps others, and returns how many it
// moved. Left empty, a cluster's centre would be zero, which lies at
// distance ‖b‖² from every column: it would take in the documents that fit
// no topic and learn no catchwords, or stay empty for good. The farthest
// document is the standard choice (it is the worst fit and lowers the
// clustering cost most); ties go to the first such document, so training
// stays deterministic.
func reseed(B []doc, assign []int, centers [][]float64, norms, counts []float64) int {
	moved := 0
	for l := range centers {
		if counts[l] > 0 {
			continue
		}
		far, jFar := -1.0, -1
		for j, c := range B {
			a := assign[j]
			if counts[a] < 2 {
				continue
			}
			d := norms[a]
			for t, i := range c.ids {
				d += c.a[t] * (c.a[t] - 2*centers[a][i])
			}
			if d > far && d > 1e-12 {
				far, jFar = d, j
			}
		}
		if jFar < 0 {
			// Every document sits on its centre: there is nothing
			// left to split.
			return moved
		}
		counts[assign[jFar]]--
		assign[jFar] = l
		counts[l] = 1
		norms[l] = 0
		for t, i := range B[jFar].ids {
			centers[l][i] = B[jFar].a[t]
			norms[l] += B[jFar].a[t] * B[jFar].a[t]
		}
		moved++
	}
	return moved
}

// sqNorms returns the squared Euclidean norm of each row: what nearest
// needs of the centres, computed once per model rather than once per
// Represent (a pass over K×|Vocab| values, for every node of every SSG
// graph).
func sqNorms(rows [][]float64) []float64 {
	out := make([]float64, len(rows))
	for l, r := range rows {
		for _, x := range r {
			out[l] += x * x
		}
	}
	return out
}

// nearest returns the centre closest to a sparse column: it minimises
// ‖c‖² − 2·b·c (‖b‖² is the same for every centre).
func nearest(b doc, centers [][]float64, norms []float64) int {
	best, bl := math.Inf(1), 0
	for l, c := range centers {
		d := norms[l]
		for t, i := range b.ids {
			d -= 2 * b.a[t] * c[i]
		}
		if d < best {
			best, bl = d, l
		}
	}
	return bl
}

// catchwords finds each topic's catchwords and word distribution.
func (m *Model) catchwords(cols []doc, assign []int) {
	cfg := m.Config
	k, V := cfg.K, len(m.Vocab)
	rank := max(int(cfg.Eps0*cfg.W0*float64(m.Docs)/2), 1)
	// g[l][i]: the rank-th largest A_ij over documents j of cluster l.
	vals := make([]map[int][]float64, k)
	for l := range vals {
		vals[l] = map[int][]float64{}
	}
	for j, c := range cols {
		for t, i := range c.ids {
			vals[assign[j]][i] = append(vals[assign[j]][i], c.a[t])
		}
	}
	g := make([][]float64, k)
	for l := range g {
		g[l] = make([]float64, V)
		for i, v := range vals[l] {
			if len(v) >= rank {
				sort.Sort(sort.Reverse(sort.Float64Slice(v)))
				g[l][i] = v[rank-1]
			}
		}
	}
	m.Catch = make([][]int, k)
	for i := 0; i < V; i++ {
		for l := 0; l < k; l++ {
			if g[l][i] <= 0 {
				continue
			}
			ok := true
			for l2 := 0; l2 < k && ok; l2++ {
				ok = l2 == l || g[l][i] > cfg.Gamma*g[l2][i]
			}
			if ok {
				m.Catch[l] = append(m.Catch[l], i)
			}
		}
	}
	m.Topics = make([][]float64, k)
	for l := range m.Topics {
		m.Topics[l] = make([]float64, V)
		type scored struct {
			j int
			s float64
		}
		var top []scored
		for j, c := range cols {
			if s := catchMass(c, m.Catch[l]); s > 0 {
				top = append(top, scored{j, s})
			}
		}
		sort.Slice(top, func(a, b int) bool { return top[a].s > top[b].s })
		if len(top) > rank {
			top = top[:rank]
		}
		for _, t := range top {
			c := cols[t.j]
			for x, i := range c.ids {
				m.Topics[l][i] += c.a[x] / float64(len(top))
			}
		}
	}
}

// catchMass is Σ_{i∈J} A_ij for a sorted catchword list J.
func catchMass(c doc, J []int) float64 {
	var s float64
	for t, i := range c.ids {
		if x := sort.SearchInts(J, i); x < len(J) && J[x] == i {
			s += c.a[t]
		}
	}
	return s
}

// Rep is a document as the SSG soft seeding sees it.
type Rep struct {
	Cluster int       // dominant topic: nearest centre in thresholded space
	Catch   []float64 // catchword topic weights Σ_{i∈J_l} A_ij, one per topic
}

// Represent places a tokenized document (in or out of the collection).
func (m *Model) Represent(tokens []string) Rep {
	c := m.column(tokens, false)
	b := m.thresholded(c)
	r := Rep{Cluster: nearest(b, m.Centers, m.norms), Catch: make([]float64, len(m.Catch))}
	for l, J := range m.Catch {
		r.Catch[l] = catchMass(c, J)
	}
	return r
}

// Farthest returns the topic whose word distribution is farthest
// (Euclidean) from topic l's: a pass over every topic's distribution,
// kept for the next query of topic l.
func (m *Model) Farthest(l int) int {
	if l >= 0 && l < len(m.far) {
		if f := m.far[l].Load(); f > 0 {
			return int(f) - 1
		}
	}
	best, bl := -1.0, l
	for l2, t := range m.Topics {
		if l2 == l {
			continue
		}
		if d := sqdist(m.Topics[l], t); d > best {
			best, bl = d, l2
		}
	}
	if l >= 0 && l < len(m.far) {
		m.far[l].Store(int32(bl) + 1)
	}
	return bl
}

// IDF returns log((s+1)/(df+0.5)) of a word (the most informative value
// for words the collection never saw).
func (m *Model) IDF(word string) float64 {
	df := 0.0
	if i, ok := m.index[word]; ok {
		df = m.DF[i]
	}
	return math.Log((float64(m.Docs) + 1) / (df + 0.5))
}

// Save writes the model as a "topics" bundle.
func (m *Model) Save(path string) error {
	b, err := m.Bundle()
	if err != nil {
		return err
	}
	return b.Save(path)
}

// Bundle returns the model as a "topics" bundle.
func (m *Model) Bundle() (*models.Bundle, error) {
	b := models.New(Method, Version)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	b.AddStrings("vocab", m.Vocab)
	b.Manifest.VocabHash = models.HashStrings(m.Vocab)
	b.Manifest.Analyzer = m.Analyzer
	k, V := len(m.Centers), len(m.Vocab)
	flat := func(rows [][]float64) []float64 {
		out := make([]float64, 0, k*V)
		for _, r := range rows {
			out = append(out, r...)
		}
		return out
	}
	b.AddTensor("centers", []int{k, V}, flat(m.Centers))
	b.AddTensor("topics", []int{k, V}, flat(m.Topics))
	b.AddTensor("zeta", []int{V}, m.Zeta)
	b.AddTensor("df", []int{V}, m.DF)
	b.AddTensor("stats", []int{2}, []float64{m.MeanLen, float64(m.Docs)})
	var catch []float64 // topic id, word id pairs
	for l, J := range m.Catch {
		for _, i := range J {
			catch = append(catch, float64(l), float64(i))
		}
	}
	b.AddTensor("catchwords", []int{len(catch) / 2, 2}, catch)
	return b, nil
}

// Load reads a "topics" bundle.
func Load(path string) (*Model, error) { return models.LoadWith(path, Read) }

// Read reads a "topics" bundle from r; name, the file r reads, is for
// errors.
func Read(r io.Reader, name string) (*Model, error) {
	return models.ReadAs(r, name, Method, Version, fromBundle)
}

func fromBundle(b *models.Bundle) (*Model, error) {
	var err error
	// Words from another analyzer would miss the vocabulary.
	if err := b.CheckAnalyzer(analyzers.WordsID()); err != nil {
		return nil, err
	}
	m := &Model{index: map[string]int{}, Analyzer: b.Manifest.Analyzer}
	if err := b.Config(&m.Config); err != nil {
		return nil, err
	}
	if m.Config.K < 2 {
		return nil, fmt.Errorf("config has %d topics, want ≥ 2", m.Config.K)
	}
	if m.Vocab, err = b.Strings("vocab"); err != nil {
		return nil, err
	}
	if err := b.CheckVocab(models.HashStrings(m.Vocab)); err != nil {
		return nil, err
	}
	V := len(m.Vocab)
	if V == 0 {
		// Tensors of shape [K 0] hold nothing, whatever K says.
		return nil, errors.New("empty vocabulary")
	}
	for i, w := range m.Vocab {
		m.index[w] = i
	}
	if len(m.index) != V {
		return nil, errors.New("vocabulary lists a word twice")
	}
	rows := func(name string) ([][]float64, error) {
		t, err := b.Tensor(name, 2)
		if err != nil {
			return nil, err
		}
		if t.Shape[1] != V || t.Shape[0] != m.Config.K {
			return nil, fmt.Errorf("%s has shape %v, want [%d %d]", name, t.Shape, m.Config.K, V)
		}
		for i, x := range t.Data {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s of topic %d, word %q is %v", name, i/V, m.Vocab[i%V], x)
			}
		}
		out := make([][]float64, t.Shape[0])
		for l := range out {
			out[l] = t.Data[l*V : (l+1)*V]
		}
		return out, nil
	}
	if m.Centers, err = rows("centers"); err != nil {
		return nil, err
	}
	m.norms = sqNorms(m.Centers)
	if m.Topics, err = rows("topics"); err != nil {
		return nil, err
	}
	m.far = make([]atomic.Int32, len(m.Topics))
	vec := func(name string, n int) ([]float64, error) {
		t, err := b.Tensor(name, 1)
		if err != nil {
			return nil, err
		}
		if len(t.Data) != n {
			return nil, fmt.Errorf("%s has %d values, want %d", name, len(t.Data), n)
		}
		return t.Data, nil
	}
	if m.Zeta, err = vec("zeta", V); err != nil {
		return nil, err
	}
	for i, z := range m.Zeta {
		if !(z >= 0) || math.IsInf(z, 1) {
			return nil, fmt.Errorf("threshold of %q is %v", m.Vocab[i], z)
		}
	}
	if m.DF, err = vec("df", V); err != nil {
		return nil, err
	}
	for i, df := range m.DF {
		if !(df >= 0) || math.IsInf(df, 1) {
			return nil, fmt.Errorf("df of %q is %v", m.Vocab[i], df)
		}
	}
	st, err := vec("stats", 2)
	if err != nil {
		return nil, err
	}
	m.MeanLen, m.Docs = st[0], int(st[1])
	if !(m.MeanLen > 0) || math.IsInf(m.MeanLen, 0) || !(st[1] >= 1 && st[1] <= math.MaxInt32) {
		return nil, fmt.Errorf("bad statistics %v", st)
	}
	ct, err := b.Tensor("catchwords", 2)
	if err != nil {
		return nil, err
	}
	if ct.Shape[1] != 2 {
		return nil, fmt.Errorf("catchwords has shape %v, want [n 2]", ct.Shape)
	}
	m.Catch = make([][]int, m.Config.K)
	for p := 0; p+1 < len(ct.Data); p += 2 {
		l, i := int(ct.Data[p]), int(ct.Data[p+1])
		if l < 0 || l >= m.Config.K || i < 0 || i >= V || float64(l) != ct.Data[p] || float64(i) != ct.Data[p+1] {
			return nil, fmt.Errorf("catchword (%v, %v) out of range", ct.Data[p], ct.Data[p+1])
		}
		// catchMass searches each topic's list: it must be increasing.
		if J := m.Catch[l]; len(J) > 0 && J[len(J)-1] >= i {
			return nil, fmt.Errorf("catchwords of topic %d not in increasing order", l)
		}
		m.Catch[l] = append(m.Catch[l], i)
	}
	return m, nil
}
