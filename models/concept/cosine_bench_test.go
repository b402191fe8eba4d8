package concept

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkCosinesStored: a window's 100 stored vectors of S2Net's 200
// dimensions, each in an allocation of its own as a cache of decoded
// payloads holds them, scored one by one (CosineStored) and four at a
// time (CosinesStored).
func BenchmarkCosinesStored(b *testing.B) {
	const n, dim = 100, 200
	rng := rand.New(rand.NewPCG(1, 2))
	q := make([]float64, dim)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	bs := make([][]float32, n)
	nbs := make([]float64, n)
	for k := range bs {
		bs[k] = make([]float32, dim)
		for i := range bs[k] {
			bs[k][i] = float32(rng.NormFloat64())
			nbs[k] += float64(bs[k][i]) * float64(bs[k][i])
		}
	}
	qn := SquaredNorm(q)
	out := make([]float64, n)
	b.Run("one", func(b *testing.B) {
		for range b.N {
			for k := range bs {
				out[k] = CosineStored(q, qn, bs[k], nbs[k])
			}
		}
	})
	b.Run("four", func(b *testing.B) {
		for range b.N {
			CosinesStored(q, qn, bs, nbs, out)
		}
	})
}
