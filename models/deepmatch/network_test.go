package deepmatch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func patchOf(x, y []uint32) Patch {
	return Patch{X: roaring.BitmapOf(x...), Y: roaring.BitmapOf(y...)}
}

// input builds an Input over the given word ids with arbitrary weights.
func input(vals map[uint32]float64) Input {
	var in Input
	for w := range uint32(64) {
		if v, ok := vals[w]; ok {
			in.Idx = append(in.Idx, w)
			in.Val = append(in.Val, v)
		}
	}
	return in
}

// tinyArch has four fine patches and two coarse ones over 8 words a side.
func tinyArch() Arch {
	fine := []Patch{
		patchOf([]uint32{0, 1}, []uint32{0, 2}),
		patchOf([]uint32{2, 3}, []uint32{1, 3}),
		patchOf([]uint32{4, 5}, []uint32{4, 5}),
		patchOf([]uint32{6, 7}, []uint32{6, 7}),
	}
	coarse := []Patch{
		patchOf([]uint32{0, 1, 2, 3}, []uint32{0, 1, 2, 3}),
		patchOf([]uint32{3, 4, 5, 6, 7}, []uint32{4, 5, 6, 7}),
	}
	return Arch{Levels: [][]Patch{fine, coarse}, Children: [][][]int{nil, BuildDAG(fine, coarse, 2)}}
}

func tinyNet(t *testing.T) *Net {
	t.Helper()
	n, err := NewNet(tinyArch(), Shape{Neurons: []int{2, 3}, Rank: 2, Committee: 4}, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Random biases too, so that every unit is in a generic regime.
	rng := rand.New(rand.NewPCG(9, 9))
	for _, b := range n.ps.blocks {
		for i := range b.w {
			if b.w[i] == 0 {
				b.w[i] = rng.NormFloat64() * 0.5
			}
		}
	}
	return n
}

// namedMatcher is a matcher for tests, with its method's name.
type namedMatcher struct {
	name string
	m    matcher
}

// tinyMatchers returns one small matcher of each method over vocabularies
// of 8 words.
func tinyMatchers(t *testing.T) []namedMatcher {
	t.Helper()
	return []namedMatcher{
		{"deepmatch", tinyNet(t)},
		{"bilinear", NewBilinear(8, 8, 3, 0.5, 2)},
		{"siamese", NewSiamese(8, 8, 4, 3, 0.5, 3)},
	}
}

// TestGradients compares back-propagated gradients with central
// differences for every weight of each matcher.
func TestGradients(t *testing.T) {
	x := input(map[uint32]float64{0: 0.5, 2: 0.3, 3: 0.6, 5: 0.4, 7: 0.2})
	y := input(map[uint32]float64{1: 0.7, 2: 0.2, 4: 0.5, 6: 0.3})
	for _, tc := range tinyMatchers(t) {
		t.Run(tc.name, func(t *testing.T) {
			ps := tc.m.params()
			s, st := tc.m.forward(x, y)
			if math.IsNaN(s) {
				t.Fatal("NaN score")
			}
			tc.m.backward(x, y, st, 1)
			checked := 0
			for bi, b := range ps.blocks {
				for i := range b.w {
					orig := b.w[i]
					const h = 1e-6
					b.w[i] = orig + h
					sp := tc.m.Score(x, y)
					b.w[i] = orig - h
					sm := tc.m.Score(x, y)
					b.w[i] = orig
					num := (sp - sm) / (2 * h)
					if d := math.Abs(num - b.g[i]); d > 1e-6*math.Max(1, math.Abs(num)) {
						t.Fatalf("block %d weight %d: backprop %.8g, numeric %.8g", bi, i, b.g[i], num)
					}
					if num != 0 {
						checked++
					}
				}
			}
			if checked < 10 {
				t.Fatalf("only %d weights have a nonzero gradient; the check is vacuous", checked)
			}
			ps.zeroGrad()
		})
	}
}

// TestSilentPatches checks the overlap gating: a patch the pair does not
// overlap on both sides passes no signal forward and gets no gradient.
func TestSilentPatches(t *testing.T) {
	n := tinyNet(t)
	// x hits fine patches 0, 1 and 2 on the x side; y hits only patch 0's
	// y words, so patches 1 and 2 are half-hit and must stay silent. Coarse
	// patch 1 (words 3–7) is hit on x only.
	x := input(map[uint32]float64{0: 0.6, 3: 0.5, 4: 0.6})
	y := input(map[uint32]float64{2: 0.8, 0: 0.3})
	tests := []struct {
		name string
		b    *block
		on   bool
	}{
		{"fine patch 0 (overlapped)", n.first[0], true},
		{"fine patch 1 (x side only)", n.first[1], false},
		{"fine patch 2 (x side only)", n.first[2], false},
		{"fine patch 3 (neither)", n.first[3], false},
		{"coarse patch 0 (overlapped)", n.upper[0][0], true},
		{"coarse patch 1 (x side only)", n.upper[0][1], false},
	}
	base, st := n.forward(x, y)
	n.backward(x, y, st, 1)
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var gnorm float64
			for _, g := range tc.b.g {
				gnorm += g * g
			}
			if tc.on != (gnorm > 0) {
				t.Errorf("gradient norm² %g, overlapped=%v", gnorm, tc.on)
			}
			saved := append([]float64(nil), tc.b.w...)
			for i := range tc.b.w {
				tc.b.w[i] += rng.NormFloat64()
			}
			changed := n.Score(x, y) != base
			copy(tc.b.w, saved)
			if changed != tc.on {
				t.Errorf("perturbing the patch's weights changed the score: %v, overlapped=%v", changed, tc.on)
			}
		})
	}
	n.ps.zeroGrad()
}

func TestNewNetRejectsBadShapes(t *testing.T) {
	a := tinyArch()
	tests := []struct {
		name string
		a    Arch
		s    Shape
	}{
		{"no patches", Arch{}, Shape{Neurons: []int{1}, Rank: 1, Committee: 1}},
		{"neuron counts", a, Shape{Neurons: []int{2}, Rank: 1, Committee: 1}},
		{"zero rank", a, Shape{Neurons: []int{2, 2}, Rank: 0, Committee: 1}},
		{"zero neurons", a, Shape{Neurons: []int{0, 2}, Rank: 1, Committee: 1}},
		{"child out of range", Arch{Levels: a.Levels, Children: [][][]int{nil, {{0, 9}, {1}}}}, Shape{Neurons: []int{2, 2}, Rank: 1, Committee: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewNet(tc.a, tc.s, 0.1, 1); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestBuildDAG(t *testing.T) {
	a := tinyArch()
	ch := a.Children[1]
	// Coarse patch 0 covers fine 0 and 1 exactly; coarse 1 covers 2 and 3.
	want := [][]int{{0, 1}, {2, 3}}
	for q := range want {
		if len(ch[q]) != len(want[q]) {
			t.Fatalf("children %v, want %v", ch, want)
		}
		for i := range want[q] {
			if ch[q][i] != want[q][i] {
				t.Fatalf("children %v, want %v", ch, want)
			}
		}
	}
	// With one child each, the orphans still get a parent.
	ch = BuildDAG(a.Levels[0], a.Levels[1], 1)
	seen := map[int]bool{}
	for _, cs := range ch {
		for _, c := range cs {
			seen[c] = true
		}
	}
	if len(seen) != 4 {
		t.Fatalf("children %v leave fine patches without a parent", ch)
	}
}

// TestScoreAll checks that batch scoring, which computes the query's side
// once (DeepMatch: reuses one state and tests the query side of each
// patch once), matches scoring pair by pair to the bit.
func TestScoreAll(t *testing.T) {
	x := input(map[uint32]float64{0: 0.6, 3: 0.5, 4: 0.6, 6: 0.2})
	ys := []Input{
		input(map[uint32]float64{0: 0.3, 2: 0.8, 5: 0.1}),
		input(map[uint32]float64{7: 1}), // overlaps less than the first
		input(map[uint32]float64{}),     // overlaps nothing
		input(map[uint32]float64{1: 0.4, 4: 0.4, 6: 0.5}),
	}
	for _, tc := range tinyMatchers(t) {
		got := tc.m.ScoreAll(x, ys)
		for i, y := range ys {
			if want := tc.m.Score(x, y); got[i] != want {
				t.Errorf("%s, candidate %d: ScoreAll %g, Score %g", tc.name, i, got[i], want)
			}
		}
	}
}

// zeroGrad clears the gradients without updating.
func (ps *params) zeroGrad() {
	for _, b := range ps.touched {
		clear(b.g)
		b.touched = false
	}
	ps.touched = ps.touched[:0]
}

// denseScore is the forward pass as the paper writes it, every sum over
// all its terms, silent patches' zero outputs included: run, which leaves
// those out and computes the query's side once, must agree to the bit.
func denseScore(n *Net, x, y Input) float64 {
	has := func(in Input, set *roaring.Bitmap) bool {
		for _, w := range in.Idx {
			if set.Contains(w) {
				return true
			}
		}
		return false
	}
	proj := func(in Input, set *roaring.Bitmap, L []float64, D int) []float64 {
		u := make([]float64, D)
		for i, w := range in.Idx {
			if set.Contains(w) {
				row := int(set.Rank(w)) - 1
				for d := range D {
					u[d] += in.Val[i] * L[row*D+d]
				}
			}
		}
		return u
	}
	var act [][]float64
	for l, ps := range n.arch.Levels {
		K := n.shape.Neurons[l]
		a := make([]float64, len(ps)*K)
		for p, patch := range ps {
			if !has(x, patch.X) || !has(y, patch.Y) {
				continue
			}
			for k := range K {
				var pot float64
				if l == 0 {
					D, nx, ny := n.shape.Rank, n.nx[p], n.ny[p]
					size := nx*D + ny*D + 1
					f := n.first[p].w[k*size : (k+1)*size]
					u, v := proj(x, patch.X, f[:nx*D], D), proj(y, patch.Y, f[nx*D:size-1], D)
					pot = f[size-1]
					for d := range D {
						pot += u[d] * v[d]
					}
				} else {
					cs, Kin := n.arch.Children[l][p], n.shape.Neurons[l-1]
					size := len(cs)*Kin + 1
					f := n.upper[l-1][p].w[k*size : (k+1)*size]
					pot = f[size-1]
					for j, c := range cs {
						for i := range Kin {
							pot += f[j*Kin+i] * act[l-1][c*Kin+i]
						}
					}
				}
				a[p*K+k] = activation(k, pot)
			}
		}
		act = append(act, a)
	}
	top := act[len(act)-1]
	size := len(top) + 1
	com := make([]float64, n.shape.Committee)
	for j := range com {
		f := n.com.w[j*size : (j+1)*size]
		pot := f[size-1]
		for i, a := range top {
			pot += f[i] * a
		}
		com[j] = activation(j, pot)
	}
	pot := n.out.w[len(com)]
	for j, c := range com {
		pot += n.out.w[j] * c
	}
	return sigmoid(pot)
}

// TestScoreAllDense checks ScoreAll and Score against denseScore on
// random inputs, scoring the same net over and over so that states reused
// between pairs and between calls start from what other inputs left.
func TestScoreAllDense(t *testing.T) {
	n := tinyNet(t)
	rng := rand.New(rand.NewPCG(4, 4))
	randInput := func() Input {
		vals := map[uint32]float64{}
		for w := range uint32(8) {
			if rng.IntN(3) == 0 {
				vals[w] = rng.Float64()
			}
		}
		return input(vals)
	}
	for trial := range 50 {
		x := randInput()
		ys := make([]Input, 1+rng.IntN(6))
		for i := range ys {
			ys[i] = randInput()
		}
		got := n.ScoreAll(x, ys)
		for i, y := range ys {
			want := denseScore(n, x, y)
			if math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("trial %d, candidate %d: ScoreAll %v, dense %v", trial, i, got[i], want)
			}
			if s := n.Score(x, y); math.Float64bits(s) != math.Float64bits(want) {
				t.Fatalf("trial %d, candidate %d: Score %v, dense %v", trial, i, s, want)
			}
		}
	}
}
