package stages

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// peerCosinesByTerm is peerCosines as it reads with sums kept in maps
// keyed by term: the array version must match it to the bit.
func peerCosinesByTerm(users []string, vecs [][]termWeight) []float64 {
	count := map[string]int{}
	for _, u := range users {
		if u != "" {
			count[u]++
		}
	}
	all := map[string]float64{}
	groups := map[string]map[string]float64{}
	norms := make([]float64, len(vecs))
	for i, v := range vecs {
		if norms[i] = math.Sqrt(squares(v)); norms[i] == 0 {
			continue
		}
		g := groups[users[i]]
		if g == nil && count[users[i]] > 1 {
			g = map[string]float64{}
			groups[users[i]] = g
		}
		for _, tw := range v {
			w := tw.w / norms[i]
			all[tw.term] += w
			if g != nil {
				g[tw.term] += w
			}
		}
	}
	out := make([]float64, len(vecs))
	for i, v := range vecs {
		peers := len(vecs) - max(count[users[i]], 1)
		if peers == 0 || norms[i] == 0 {
			continue
		}
		var dot float64
		for _, tw := range v {
			w := tw.w / norms[i]
			rest := all[tw.term] - w // the peers' sum when the user has one candidate
			if g, ok := groups[users[i]]; ok {
				rest = all[tw.term] - g[tw.term]
			}
			dot += w * rest
		}
		out[i] = dot / float64(peers)
	}
	return out
}

// TestPeerCosinesByTerm checks peerCosines against peerCosinesByTerm on
// random windows with unknown users, users of one and of several
// candidates, and empty vectors.
func TestPeerCosinesByTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		n, terms := 1+rng.IntN(12), 1+rng.IntN(20)
		cands := make([]rerank.Candidate, n)
		users := make([]string, n)
		vecs := make([][]idWeight, n)
		byTerm := make([][]termWeight, n)
		for i := range cands {
			if u := rng.IntN(5); u > 0 {
				users[i] = "u" + strconv.Itoa(u)
				cands[i].Doc = dataset.Doc{Metadata: map[string]any{"user_id": users[i]}}
			}
			for id := range terms {
				if rng.IntN(3) == 0 {
					w := rng.Float64() * 3
					vecs[i] = append(vecs[i], idWeight{int32(id), w})
					byTerm[i] = append(byTerm[i], termWeight{strconv.Itoa(id), w})
				}
			}
		}
		got, want := peerCosines(cands, vecs, terms), peerCosinesByTerm(users, byTerm)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("trial %d, candidate %d (users %v): %v, by term %v", trial, i, users, got[i], want[i])
			}
		}
	}
}
