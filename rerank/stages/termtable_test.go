package stages

import (
	"errors"
	"hash/maphash"
	"strings"
	"testing"

	"github.com/semrank/semrank/index"
)

// FuzzTermTable: a table built from any terms payload counts every term
// as index.DecodeTermList decodes it, and 0 for others, with the same
// total; a malformed payload is DecodeTermList's error.
func FuzzTermTable(f *testing.F) {
	f.Add("bank doha bank visa account", "bank visa loan")
	f.Add("", "x")
	f.Add("a a a b c c d e f g h i j k l m n o p q r s t u v w x y z", "z a q")
	f.Fuzz(func(t *testing.T, text, probe string) {
		for _, b := range [][]byte{index.EncodeTermCounts(strings.Fields(text)), []byte(text)} {
			want, werr := index.DecodeTermList(b)
			tab, err := newTermTable(b, maphash.Bytes(tables.seed, b))
			if (err != nil) != (werr != nil) {
				t.Fatalf("%q: table error %v, DecodeTermList's %v", b, err, werr)
			}
			if err != nil {
				if !errors.Is(err, werr) && err.Error() != werr.Error() {
					t.Fatalf("%q: table error %v, DecodeTermList's %v", b, err, werr)
				}
				continue
			}
			total := 0
			in := map[string]bool{}
			for _, tc := range want {
				total += tc.Count
				in[tc.Term] = true
				if got := tab.count(tc.Term, termHash(tc.Term)); got != tc.Count {
					t.Fatalf("%q: count of %q %d, want %d", b, tc.Term, got, tc.Count)
				}
			}
			if tab.total != total {
				t.Fatalf("%q: total %d, want %d", b, tab.total, total)
			}
			for _, p := range append(strings.Fields(probe), "", probe) {
				if !in[p] {
					if got := tab.count(p, termHash(p)); got != 0 {
						t.Fatalf("%q: count of absent %q %d", b, p, got)
					}
				}
			}
		}
	})
}
