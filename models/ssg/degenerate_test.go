package ssg

import (
	"context"
	"testing"
)

// TestDegenerateInputs: empty pools, all-OOV and empty pool texts, one
// document, identical documents, a pool copy of the query, with and
// without a collection: no error or panic, one score per pool text, -2
// for texts without vectors, a label in [0,1] or an unreached
// score in (-2,-1] otherwise, and identical nodes scored alike without
// dropout.
func TestDegenerateInputs(t *testing.T) {
	space, tm := fixture(t)
	pools := [][]string{
		nil,
		{},
		{"the of"},
		{"bank"},
		{"bank loan", "bank loan", "bank loan"},
		{"bank salary loan"},
		{"the", "", "bank salary loan", "zzz qqq"},
	}
	for _, coll := range []bool{false, true} {
		for _, hops := range []int{1, 2} {
			for _, pool := range pools {
				for _, dropout := range []float64{0, 0.3} {
					m, err := New(space, tm, Config{K: 2, Hops: hops, Dropout: dropout})
					if err != nil {
						t.Fatal(err)
					}
					if coll {
						m.SetCollection([]string{"bank loan", "", "the", "sand", "bank salary loan"})
					}
					sc, err := m.Score(context.Background(), "bank salary loan", pool)
					if err != nil {
						t.Fatalf("%v: %v", pool, err)
					}
					if len(sc) != len(pool) {
						t.Fatalf("%q: %d scores", pool, len(sc))
					}
					for i, x := range sc {
						empty := m.Space.Doc(pool[i]).Empty()
						reached := x >= 0 && x <= 1
						if empty && x != -2 || !empty && !reached && !(x > -2 && x <= -1) {
							t.Errorf("coll %v hops %d %q: score %d = %v", coll, hops, pool, i, x)
						}
						if dropout == 0 && i > 0 && pool[i] == pool[i-1] && reached && sc[i-1] >= 0 && x != sc[i-1] {
							t.Errorf("identical documents scored %v and %v", sc[i-1], x)
						}
					}
				}
			}
		}
	}
}
