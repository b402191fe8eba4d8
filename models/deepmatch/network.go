package deepmatch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Arch is the topology DeepMatch derives from the topic models: patch sets
// from finest to coarsest resolution, and the DAG between adjacent levels.
type Arch struct {
	Levels [][]Patch // Levels[0] feeds p-layerI; Levels[l] the l-th sparse layer above it
	// Children[l][q] (l ≥ 1) lists the patches of Levels[l-1] assigned to
	// patch q of Levels[l].
	Children [][][]int
}

// Shape sizes the network built on an Arch.
type Shape struct {
	Neurons   []int `json:"neurons"`   // neurons per patch at each level (K₁, K₂, …)
	Rank      int   `json:"rank"`      // D_p, the rank of each local bilinear decision
	Committee int   `json:"committee"` // neurons of the dense committee layer
}

// Net is the DeepMatch network: interaction space → p-layerI (K₁ low-rank
// bilinear decisions per finest patch) → sparse patch-induced layers wired
// by the DAG → dense committee layer → logistic output. A patch's neurons
// output zero unless the pair overlaps the patch.
type Net struct {
	arch  Arch
	shape Shape
	ps    params
	// first[p] holds patch p's K₁ filters, each [L_x (|p_x|·D) | L_y (|p_y|·D) | b].
	first  []*block
	nx, ny []int
	// upper[l-1][q] holds patch q's K_l neurons at level l ≥ 1, each
	// [w (|children|·K_{l-1}) | b].
	upper [][]*block
	com   *block // Committee × (P_L·K_L + 1)
	out   *block // Committee + 1
	// post[side] lists, for each word, the patches holding it on the X
	// side (post[xSide]) and the Y side, with the word's row there.
	post [2]wordPostings
	// scoring holds ScoreAll's states between calls: a state's buffers
	// are sized by the network, its patches' entry lists by the inputs.
	scoring sync.Pool
}

func (a Arch) validate(s Shape) error {
	if len(a.Levels) == 0 || len(a.Levels[0]) == 0 {
		return errors.New("deepmatch: architecture has no patches")
	}
	if len(s.Neurons) != len(a.Levels) {
		return fmt.Errorf("deepmatch: %d patch levels but %d neuron counts", len(a.Levels), len(s.Neurons))
	}
	if len(a.Children) != len(a.Levels) {
		return fmt.Errorf("deepmatch: %d patch levels but %d DAG levels", len(a.Levels), len(a.Children))
	}
	for l := 1; l < len(a.Levels); l++ {
		if len(a.Children[l]) != len(a.Levels[l]) {
			return fmt.Errorf("deepmatch: level %d has %d patches but %d child lists", l, len(a.Levels[l]), len(a.Children[l]))
		}
		for q, cs := range a.Children[l] {
			for _, c := range cs {
				if c < 0 || c >= len(a.Levels[l-1]) {
					return fmt.Errorf("deepmatch: level %d patch %d: child %d out of range", l, q, c)
				}
			}
		}
	}
	for _, k := range s.Neurons {
		if k < 1 {
			return fmt.Errorf("deepmatch: %d neurons per patch", k)
		}
	}
	if s.Rank < 1 || s.Committee < 1 {
		return fmt.Errorf("deepmatch: rank %d and committee %d must be positive", s.Rank, s.Committee)
	}
	return nil
}

// NewNet builds a randomly initialised network; init scales the initial
// weights of the bilinear filters.
func NewNet(a Arch, s Shape, init float64, seed uint64) (*Net, error) {
	if err := a.validate(s); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0xdee9))
	n := &Net{arch: a, shape: s}
	n.post = [2]wordPostings{newWordPostings(a.Levels, xSide), newWordPostings(a.Levels, ySide)}
	K1, D := s.Neurons[0], s.Rank
	for _, p := range a.Levels[0] {
		nx, ny := int(p.X.GetCardinality()), int(p.Y.GetCardinality())
		n.nx, n.ny = append(n.nx, nx), append(n.ny, ny)
		b := n.ps.add(K1*(nx*D+ny*D+1), init, rng)
		for k := range K1 {
			b.w[(k+1)*(nx*D+ny*D+1)-1] = 0 // biases start at zero
		}
		n.first = append(n.first, b)
	}
	for l := 1; l < len(a.Levels); l++ {
		var blocks []*block
		for q := range a.Levels[l] {
			in := len(a.Children[l][q]) * s.Neurons[l-1]
			blocks = append(blocks, n.ps.add(s.Neurons[l]*(in+1), 1/sqrtInt(in), rng))
		}
		n.upper = append(n.upper, blocks)
	}
	L := len(a.Levels) - 1
	in := len(a.Levels[L]) * s.Neurons[L]
	n.com = n.ps.add(s.Committee*(in+1), 1/sqrtInt(in), rng)
	n.out = n.ps.add(s.Committee+1, 1/sqrtInt(s.Committee), rng)
	return n, nil
}

// netWeights returns the number of weights NewNet allocates for a and s,
// or limit+1 when that is more than limit, without allocating: a loader
// checks a stored model's sizes with it before building the net. It
// follows NewNet's blocks one for one; keep the two in step.
func netWeights(a Arch, s Shape, limit int) int {
	mul := func(x, y int) int {
		if x < 0 || y < 0 || (x != 0 && y > (limit+1)/x) {
			return limit + 1
		}
		return x * y
	}
	n := 0
	add := func(k int) { n = min(n+k, limit+1) }
	if len(a.Levels) == 0 || len(s.Neurons) < len(a.Levels) {
		return 0 // NewNet refuses the architecture
	}
	for _, p := range a.Levels[0] {
		words := int(p.X.GetCardinality() + p.Y.GetCardinality())
		add(mul(s.Neurons[0], mul(words, s.Rank)+1))
	}
	for l := 1; l < len(a.Levels) && l < len(a.Children); l++ {
		for _, cs := range a.Children[l] {
			add(mul(s.Neurons[l], mul(len(cs), s.Neurons[l-1])+1))
		}
	}
	L := len(a.Levels) - 1
	add(mul(s.Committee, mul(len(a.Levels[L]), s.Neurons[L])+1))
	add(mul(s.Committee, 1) + 1)
	return n
}

// state is one pair's forward pass, kept for back-propagation.
type state struct {
	x, y   hits        // the words of each side the patches hold
	xFixed bool        // x was scattered once for pairs wanted for their scores alone (ScoreAll)
	on     [][]int     // patches computed per level (see computed); the rest output zero
	read   [][]bool    // computed's scratch: per level, the patches a computed parent reads
	act    [][]float64 // per level, P_l·K_l outputs (zero where silent)
	uv     []float64   // per finest patch and filter: L_xᵀx_p then L_yᵀy_p (2·D)
	// xu holds, with xFixed, L_xᵀx_p (D values) per finest patch x hits
	// and filter, computed once for all pairs.
	xu  []float64
	com []float64
	s   float64
}

func (n *Net) newState() *state {
	st := &state{x: newHits(n.arch), y: newHits(n.arch)}
	for l, ps := range n.arch.Levels {
		st.act = append(st.act, make([]float64, len(ps)*n.shape.Neurons[l]))
		st.on = append(st.on, nil)
		st.read = append(st.read, make([]bool, len(ps)))
	}
	st.uv = make([]float64, len(n.arch.Levels[0])*n.shape.Neurons[0]*2*n.shape.Rank)
	st.com = make([]float64, n.shape.Committee)
	return st
}

// Score returns the matching score of (x, y), in (0, 1).
func (n *Net) Score(x, y Input) float64 {
	st := n.newState()
	n.run(x, y, st)
	return st.s
}

// ScoreAll scores x against each of ys. The query side of the overlap test
// and its projections L_xᵀx_p are computed once for all candidates (the
// same sums run computes for each pair), the candidates' side only within
// the patches the query hits, and one state is reused. It is safe for
// concurrent use.
func (n *Net) ScoreAll(x Input, ys []Input) []float64 {
	st, _ := n.scoring.Get().(*state)
	if st == nil {
		st = n.newState()
		st.xFixed = true
		st.xu = make([]float64, len(st.uv)/2)
	}
	defer n.scoring.Put(st)
	st.x.scatter(x, &n.post[xSide], nil)
	K1, D := n.shape.Neurons[0], n.shape.Rank
	for p, hit := range st.x.hit[0] {
		if !hit {
			continue
		}
		clear(st.xu[p*K1*D : (p+1)*K1*D])
		size := n.nx[p]*D + n.ny[p]*D + 1
		for k := range K1 {
			project(st.x.ent[p], n.first[p].w[k*size:k*size+n.nx[p]*D], D, st.xu[(p*K1+k)*D:(p*K1+k+1)*D])
		}
	}
	out := make([]float64, len(ys))
	for i, y := range ys {
		n.run(x, y, st)
		out[i] = st.s
	}
	return out
}

// overlaps reports whether the pair overlaps patch p of level l: x holds
// one of its X words and y one of its Y words (Definition 3.1). y is
// scattered within x's patches, so its hits are the pair's overlaps.
func (st *state) overlaps(l, p int) bool { return st.y.hit[l][p] }

// entry is a word of an input that a patch side holds: its value and its
// row in the side's filter matrices.
type entry struct {
	row int
	val float64
}

// posting is a patch of a level holding a word, and the word's row in
// the patch side's filter matrices (its 0-based rank among the side's
// words).
type posting struct {
	level, patch, row int32
}

const (
	xSide = iota
	ySide
)

// wordPostings indexes the patches of every level by word, for one side,
// so that an input finds the patches it hits by looking up its own words
// instead of testing every patch's bitmap for every word. The patches
// holding word w are post[off[w]:off[w+1]], by level then patch: a word
// is looked up once for all levels.
type wordPostings struct {
	off  []int32
	post []posting
}

func newWordPostings(levels [][]Patch, side int) wordPostings {
	words := func(p Patch) []uint32 { // ascending, so row = rank − 1
		if side == xSide {
			return p.X.ToArray()
		}
		return p.Y.ToArray()
	}
	var count []int32
	for _, ps := range levels {
		for _, p := range ps {
			for _, w := range words(p) {
				for int(w) >= len(count) {
					count = append(count, 0)
				}
				count[w]++
			}
		}
	}
	wp := wordPostings{off: make([]int32, len(count)+1)}
	for w, c := range count {
		wp.off[w+1] = wp.off[w] + c
	}
	wp.post = make([]posting, wp.off[len(count)])
	next := slices.Clone(wp.off[:len(count)])
	for l, ps := range levels {
		for p, patch := range ps {
			for row, w := range words(patch) {
				wp.post[next[w]] = posting{level: int32(l), patch: int32(p), row: int32(row)}
				next[w]++
			}
		}
	}
	return wp
}

// of returns the postings of word w.
func (wp *wordPostings) of(w uint32) []posting {
	if int(w)+1 >= len(wp.off) {
		return nil
	}
	return wp.post[wp.off[w]:wp.off[w+1]]
}

// hits is one input's view of the patches: per level, whether it hits
// each patch on its side, and, for the finest patches, its entries there
// in ascending word order.
type hits struct {
	hit [][]bool
	ent [][]entry
}

func newHits(a Arch) hits {
	h := hits{ent: make([][]entry, len(a.Levels[0]))}
	for _, ps := range a.Levels {
		h.hit = append(h.hit, make([]bool, len(ps)))
	}
	return h
}

// scatter records which patches in hits, replacing what h held. With
// within non-nil, only the patches within hits are recorded: a pair
// overlaps no other, so the rest is never read.
func (h *hits) scatter(in Input, post *wordPostings, within *hits) {
	for l := range h.hit {
		clear(h.hit[l])
	}
	for p := range h.ent {
		h.ent[p] = h.ent[p][:0]
	}
	for i, w := range in.Idx {
		for _, ps := range post.of(w) {
			if within != nil && !within.hit[ps.level][ps.patch] {
				continue
			}
			h.hit[ps.level][ps.patch] = true
			if ps.level == 0 {
				h.ent[ps.patch] = append(h.ent[ps.patch], entry{row: int(ps.row), val: in.Val[i]})
			}
		}
	}
}

// project adds val·L[row] to u for each entry: u becomes L_pᵀ x_p without
// materialising x_p.
func project(es []entry, L []float64, D int, u []float64) {
	for _, e := range es {
		row := L[e.row*D : (e.row+1)*D]
		for d := range D {
			u[d] += e.val * row[d]
		}
	}
}

// run is the forward pass of (x, y) into st. Its sums leave out the
// neurons of silent patches: their outputs are zero, and a finite weight
// times zero adds ±0, which leaves a sum's value as it is (at most a
// zero's sign differs, which no later sum or sigmoid can tell). Weights
// are finite (a loaded model's are checked), so the score is the one
// summing every term gives, to the bit.
func (n *Net) run(x, y Input, st *state) {
	K1, D := n.shape.Neurons[0], n.shape.Rank
	// Silent patches output zero: only those the previous pair
	// overlapped hold outputs to clear.
	for l, on := range st.on {
		K := n.shape.Neurons[l]
		for _, p := range on {
			clear(st.act[l][p*K : (p+1)*K])
		}
	}
	if !st.xFixed {
		st.x.scatter(x, &n.post[xSide], nil)
	}
	st.y.scatter(y, &n.post[ySide], &st.x)
	n.computed(st)
	for _, p := range st.on[0] {
		w := n.first[p].w
		size := n.nx[p]*D + n.ny[p]*D + 1
		for k := range K1 {
			f := w[k*size : (k+1)*size]
			uv := st.uv[(p*K1+k)*2*D : (p*K1+k+1)*2*D]
			clear(uv)
			u, v := uv[:D], uv[D:]
			if st.xFixed {
				copy(u, st.xu[(p*K1+k)*D:])
			} else {
				project(st.x.ent[p], f[:n.nx[p]*D], D, u)
			}
			project(st.y.ent[p], f[n.nx[p]*D:size-1], D, v)
			pot := f[size-1]
			for d := range D {
				pot += u[d] * v[d]
			}
			st.act[0][p*K1+k] = activation(k, pot)
		}
	}
	for l := 1; l < len(n.arch.Levels); l++ {
		K, Kin := n.shape.Neurons[l], n.shape.Neurons[l-1]
		for _, q := range st.on[l] {
			cs := n.arch.Children[l][q]
			size := len(cs)*Kin + 1
			w := n.upper[l-1][q].w
			for k := range K {
				f := w[k*size : (k+1)*size]
				pot := f[size-1]
				for j, c := range cs {
					if !st.overlaps(l-1, c) {
						continue // silent
					}
					for i := range Kin {
						pot += f[j*Kin+i] * st.act[l-1][c*Kin+i]
					}
				}
				st.act[l][q*K+k] = activation(k, pot)
			}
		}
	}
	L := len(st.act) - 1
	top, KL := st.act[L], n.shape.Neurons[L]
	size := len(top) + 1
	for j := range n.shape.Committee {
		f := n.com.w[j*size : (j+1)*size]
		pot := f[size-1]
		for _, q := range st.on[L] {
			for i := q * KL; i < (q+1)*KL; i++ {
				pot += f[i] * top[i]
			}
		}
		st.com[j] = activation(j, pot)
	}
	C := n.shape.Committee
	pot := n.out.w[C]
	for j, c := range st.com {
		pot += n.out.w[j] * c
	}
	st.s = sigmoid(pot)
}

// computed sets st.on to the patches whose neurons run computes, in
// ascending order per level: every overlapped patch, or, when st scores
// pairs for their scores alone (ScoreAll), only those whose outputs reach
// the committee, the top level's overlapped patches and, below, the
// overlapped children of patches computed: a neuron no computed parent
// reads cannot change the score.
func (n *Net) computed(st *state) {
	L := len(n.arch.Levels) - 1
	for l := range st.on {
		st.on[l] = st.on[l][:0]
		if l < L && st.xFixed {
			continue
		}
		for p := range n.arch.Levels[l] {
			if st.overlaps(l, p) {
				st.on[l] = append(st.on[l], p)
			}
		}
	}
	if !st.xFixed {
		return
	}
	for l := L; l >= 1; l-- {
		read := st.read[l-1]
		for _, q := range st.on[l] {
			for _, c := range n.arch.Children[l][q] {
				read[c] = read[c] || st.overlaps(l-1, c)
			}
		}
		for c, r := range read {
			if r {
				st.on[l-1] = append(st.on[l-1], c)
				read[c] = false
			}
		}
	}
}

// backprop adds ds·∂s/∂θ to the gradients, for the pair whose forward pass
// is st. Only the blocks of overlapped patches are reached.
func (n *Net) backprop(x, y Input, st *state, ds float64) {
	C := n.shape.Committee
	dpot := ds * st.s * (1 - st.s)
	gOut := n.ps.grad(n.out)
	dcom := make([]float64, C)
	for j, c := range st.com {
		gOut[j] += dpot * c
		dcom[j] = dpot * n.out.w[j]
	}
	gOut[C] += dpot

	L := len(n.arch.Levels) - 1
	top := st.act[L]
	dact := make([][]float64, len(st.act))
	for l := range dact {
		dact[l] = make([]float64, len(st.act[l]))
	}
	size := len(top) + 1
	gCom := n.ps.grad(n.com)
	KL := n.shape.Neurons[L]
	for j := range C {
		dp := dcom[j] * slope(j, st.com[j])
		if dp == 0 {
			continue
		}
		f, g := n.com.w[j*size:(j+1)*size], gCom[j*size:(j+1)*size]
		g[size-1] += dp
		for _, q := range st.on[L] { // silent inputs have zero output and no gradient
			for k := range KL {
				i := q*KL + k
				g[i] += dp * top[i]
				dact[L][i] += dp * f[i]
			}
		}
	}
	for l := L; l >= 1; l-- {
		K, Kin := n.shape.Neurons[l], n.shape.Neurons[l-1]
		for _, q := range st.on[l] {
			cs := n.arch.Children[l][q]
			size := len(cs)*Kin + 1
			b := n.upper[l-1][q]
			g := n.ps.grad(b)
			for k := range K {
				dp := dact[l][q*K+k] * slope(k, st.act[l][q*K+k])
				f, gk := b.w[k*size:(k+1)*size], g[k*size:(k+1)*size]
				gk[size-1] += dp
				for j, c := range cs {
					for i := range Kin {
						gk[j*Kin+i] += dp * st.act[l-1][c*Kin+i]
						dact[l-1][c*Kin+i] += dp * f[j*Kin+i]
					}
				}
			}
		}
	}
	K1, D := n.shape.Neurons[0], n.shape.Rank
	scaled := make([]float64, D)
	for _, p := range st.on[0] {
		size := n.nx[p]*D + n.ny[p]*D + 1
		g := n.ps.grad(n.first[p])
		for k := range K1 {
			dp := dact[0][p*K1+k] * slope(k, st.act[0][p*K1+k])
			gk := g[k*size : (k+1)*size]
			uv := st.uv[(p*K1+k)*2*D : (p*K1+k+1)*2*D]
			u, v := uv[:D], uv[D:]
			gk[size-1] += dp
			// ∂pot/∂L_x[r] = x_r·v and ∂pot/∂L_y[r] = y_r·u (Equation 8).
			for d := range D {
				scaled[d] = dp * v[d]
			}
			accumulate(st.x.ent[p], scaled, gk[:n.nx[p]*D], D)
			for d := range D {
				scaled[d] = dp * u[d]
			}
			accumulate(st.y.ent[p], scaled, gk[n.nx[p]*D:size-1], D)
		}
	}
}

// accumulate adds val·dir to the gradient row of each entry.
func accumulate(es []entry, dir, g []float64, D int) {
	for _, e := range es {
		row := g[e.row*D : (e.row+1)*D]
		for d := range D {
			row[d] += e.val * dir[d]
		}
	}
}

func sqrtInt(n int) float64 {
	if n < 1 {
		return 1
	}
	return math.Sqrt(float64(n))
}
