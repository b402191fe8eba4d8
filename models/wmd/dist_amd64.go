//go:build amd64 && !purego

package wmd

import "golang.org/x/sys/cpu"

// hasAVX selects the AVX kernels; hasFMA, with it, the FMA kernel for
// word distances.
var (
	hasAVX = cpu.X86.HasAVX
	hasFMA = cpu.X86.HasAVX && cpu.X86.HasFMA
)

// distLanesAVX sets out[k] = √(Σ_i (y[i] − qt[i·lanes + k])²) for every
// k < lanes, with lanes a positive multiple of 4 and dim ≥ 1: sixteen,
// eight or four lanes per pass over y, one subtraction, multiplication
// and addition per term in euclid's order, so each lane equals euclid's
// result bit for bit. pf, unless nil, is a vector of dim values to
// prefetch (the next y).
//
//go:noescape
func distLanesAVX(y *float64, dim int, qt *float64, lanes int, out, pf *float64)

// The minimum kernels below give the same values as their Go versions in
// minimum.go (a minimum is exact): four lanes at a time, then one.

//go:noescape
func minAVX(xs *float64, n int, inf float64) float64

//go:noescape
func minDiffAVX(row, v *float64, n int, inf float64) float64

//go:noescape
func minDiffColsAVX(row, v, cm *float64, n int, ui, inf float64) float64

//go:noescape
func minAndColsAVX(row, cm *float64, n int, inf float64) float64

// useAVX switches the AVX kernels on or off (tests: the Go versions on a
// processor with AVX) and returns the previous setting; on only where the
// processor has AVX.
func useAVX(on bool) bool {
	was := hasAVX
	hasAVX = on && cpu.X86.HasAVX
	hasFMA = hasAVX && cpu.X86.HasFMA
	return was
}

// distLanesFMA is distLanesAVX with fused multiply-adds and two partial
// sums per lane (even and odd dims), in blocks of up to 24 lanes, about
// twice as fast; each distance then differs from euclid's in the last
// bits only, and is the same in any lane of any block.
//
//go:noescape
func distLanesFMA(y *float64, dim int, qt *float64, lanes int, out, pf *float64)

// rowColMinAVX and rowsDualAVX are rowColMin and rowsDual (bound.go)
// over n ≥ 1 rows, four lanes at a time (stride is a multiple of 4);
// they give the Go versions' values.

//go:noescape
func rowColMinAVX(base *float64, stride int, ids *int32, n int, r, cm *float64, inf float64)

//go:noescape
func rowsDualAVX(base *float64, stride int, ids *int32, n int, sub, rsub, r, cm *float64, inf float64)
