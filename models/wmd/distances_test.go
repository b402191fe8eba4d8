package wmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/semrank/semrank/models/embed"
)

// TestDistancesMatchWMD checks Index.Distances against Space.WMD bit for
// bit, on one and on several goroutines, with the distance cache and
// without it, for documents in any order, repeated, and empty.
func TestDistancesMatchWMD(t *testing.T) {
	s, docs := randomSpace(t, 80, 120, 24)
	docs = append(docs, s.DocFromTokens(nil)) // an empty document
	idx := s.NewIndex(docs)
	which := []int{len(docs) - 1, 7, 3, 3}
	for i := range docs {
		which = append(which, (i*37)%len(docs))
	}
	cases := []struct {
		name  string
		procs int
		cache int
	}{
		{"serial", 1, maxCacheEntries},
		{"parallel", 4, maxCacheEntries},
		{"parallel without cache", 4, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			was, wasCache := runtime.GOMAXPROCS(c.procs), maxCacheEntries
			maxCacheEntries = c.cache
			defer func() { runtime.GOMAXPROCS(was); maxCacheEntries = wasCache }()
			for qi := 0; qi < 6; qi++ {
				q := docs[qi*11]
				got, err := idx.Distances(context.Background(), q, which)
				if err != nil {
					t.Fatal(err)
				}
				for k, d := range which {
					want, err := s.WMD(q, docs[d])
					if err != nil {
						t.Fatal(err)
					}
					if math.Float64bits(got[k]) != math.Float64bits(want) {
						t.Fatalf("query %d, document %d: Distances %v, WMD %v", qi, d, got[k], want)
					}
				}
			}
		})
	}
}

func TestDistancesEdgeCases(t *testing.T) {
	s, docs := randomSpace(t, 20, 10, 25)
	idx := s.NewIndex(docs)
	got, err := idx.Distances(context.Background(), s.DocFromTokens(nil), []int{0, 1})
	if err != nil || !math.IsInf(got[0], 1) || !math.IsInf(got[1], 1) {
		t.Errorf("empty query: %v, %v; want +Inf each", got, err)
	}
	if got, err := idx.Distances(context.Background(), docs[0], nil); err != nil || len(got) != 0 {
		t.Errorf("no documents: %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := idx.Distances(ctx, docs[0], []int{0, 1, 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// BenchmarkWindowDistances is the wmd stage's work on one window: an index
// of 100 candidates of 30 words in a 100-dimension space, built anew, and
// a 10-word query's exact distance to each.
func BenchmarkWindowDistances(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	const nw, dim = 5000, 100
	words := make([]string, nw)
	data := make([]float64, nw*dim)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	for i := range data {
		data[i] = r.NormFloat64()
	}
	v, err := embed.NewVectors(words, dim, data)
	if err != nil {
		b.Fatal(err)
	}
	s := NewSpace(v)
	doc := func(n int) Doc {
		toks := make([]string, n)
		for k := range toks {
			toks[k] = words[r.IntN(nw)]
		}
		return s.DocFromTokens(toks)
	}
	docs := make([]Doc, 100)
	all := make([]int, len(docs))
	for i := range docs {
		docs[i], all[i] = doc(30), i
	}
	q := doc(10)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.NewIndex(docs).Distances(ctx, q, all); err != nil {
			b.Fatal(err)
		}
	}
}
