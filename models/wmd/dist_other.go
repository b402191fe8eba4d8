//go:build !amd64 || purego

package wmd

const (
	hasAVX = false
	hasFMA = false
)

// The kernels below exist only so the portable code compiles: every call
// site is guarded by hasAVX or hasFMA, constant false here, so the compiler
// removes the calls and these bodies can never run.

func distLanesAVX(y *float64, dim int, qt *float64, lanes int, out, pf *float64) {
	panic("wmd: no AVX kernel on this platform")
}

func minAVX(xs *float64, n int, inf float64) float64 { panic("wmd: no AVX") }

func minDiffAVX(row, v *float64, n int, inf float64) float64 { panic("wmd: no AVX") }

func minDiffColsAVX(row, v, cm *float64, n int, ui, inf float64) float64 { panic("wmd: no AVX") }

func minAndColsAVX(row, cm *float64, n int, inf float64) float64 { panic("wmd: no AVX") }

func useAVX(on bool) bool { return false }

func distLanesFMA(y *float64, dim int, qt *float64, lanes int, out, pf *float64) {
	panic("wmd: no FMA kernel on this platform")
}

func rowColMinAVX(base *float64, stride int, ids *int32, n int, r, cm *float64, inf float64) {
	panic("wmd: no AVX")
}

func rowsDualAVX(base *float64, stride int, ids *int32, n int, sub, rsub, r, cm *float64, inf float64) {
	panic("wmd: no AVX")
}
