package stages

import (
	"context"
	"fmt"
	"math"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// idWeight is one term of a sparse TF-IDF vector, the term named by its
// number within a window (see scorePeers), in the vector's term order.
type idWeight struct {
	id int32
	w  float64
}

// scorePeers is Score with Peers set.
func (t *TFIDF) scorePeers(ctx context.Context, cands []rerank.Candidate, n uint64) ([]float64, error) {
	vecs, terms, err := windowVectors(ctx, t.Stats, t.Payloads, t.Analyze, cands, n)
	if err != nil {
		return nil, err
	}
	return peerCosines(cands, vecs, terms), nil
}

// windowVectors returns the candidates' TF-IDF vectors, weighted as the
// tfidf stage weighs them (tfidfWeight, idfWeight over n documents), and
// the number of distinct terms they hold. The window's distinct terms are
// numbered as they are first met, so that their IDFs are looked up
// together, once each, and sums over candidates index arrays rather than
// maps keyed by term; each vector is in its term list's order. Term
// counts come from the index's terms payload, else from the text analyzed
// by analyze.
func windowVectors(ctx context.Context, stats rerank.TermStats, p rerank.Payloads, analyze func(string) []string, cands []rerank.Candidate, n uint64) ([][]idWeight, int, error) {
	stored, err := windowTerms(ctx, p, cands)
	if err != nil {
		return nil, 0, err
	}
	ids := make(map[string]int32, 32*len(cands))
	var terms []string // by number
	counts := make([][]int, len(cands))
	vecs := make([][]idWeight, len(cands))
	// number appends term (the bytes of a stored term list, or a string)
	// to candidate i's vector, a string made only for a term new to the
	// window.
	number := func(i int, term []byte, count int) {
		id, ok := ids[string(term)]
		if !ok {
			s := string(term)
			id = int32(len(terms))
			ids[s] = id
			terms = append(terms, s)
		}
		vecs[i] = append(vecs[i], idWeight{id: id})
		counts[i] = append(counts[i], count)
	}
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if stored[i] != nil {
			size := func(n int) { vecs[i], counts[i] = make([]idWeight, 0, n), make([]int, 0, n) }
			err := index.EachTermCount(stored[i], size, func(term []byte, count int) { number(i, term, count) })
			if err != nil {
				return nil, 0, fmt.Errorf("document %s: %w", c.ID, err)
			}
			continue
		}
		list, err := termList(nil, analyze, c)
		if err != nil {
			return nil, 0, err
		}
		for _, tc := range list {
			number(i, []byte(tc.Term), tc.Count)
		}
	}
	// Every term's IDF in one lookup of the statistics.
	dfs, err := rerank.DocFreqs(stats, terms)
	if err != nil {
		return nil, 0, err
	}
	idf := make([]float64, len(terms))
	for id, df := range dfs {
		idf[id] = idfWeight(n, df)
	}
	for i, v := range vecs {
		for j := range v {
			v[j].w = tfidfWeight(counts[i][j], idf[v[j].id])
		}
	}
	return vecs, len(idf), nil
}

// vectorNorms returns the Euclidean norm of each of vecs.
func vectorNorms(vecs [][]idWeight) []float64 {
	norms := make([]float64, len(vecs))
	for i, v := range vecs {
		for _, tw := range v {
			norms[i] += tw.w * tw.w
		}
		norms[i] = math.Sqrt(norms[i])
	}
	return norms
}

// peerCosines returns, for each candidate, the mean cosine of its vector
// (over terms numbered below terms) with those of the candidates by other
// users (all others when its user is unknown); 0 when it has no such
// peer. It takes linear time in the number of candidates: the mean cosine
// with a set of vectors is the dot product with the sum of their unit
// vectors, and the sum over a candidate's peers is the sum over all
// candidates less the sum over its own user's. Sums run in candidate
// order and term order.
func peerCosines(cands []rerank.Candidate, vecs [][]idWeight, terms int) []float64 {
	users := make([]string, len(cands))
	members := map[string][]int{} // candidates per known user
	for i, c := range cands {
		users[i], _ = c.Metadata["user_id"].(string)
		if users[i] != "" {
			members[users[i]] = append(members[users[i]], i)
		}
	}
	all := make([]float64, terms) // every unit vector summed
	norms := vectorNorms(vecs)
	for i, v := range vecs {
		if norms[i] == 0 {
			continue
		}
		for _, tw := range v {
			all[tw.id] += tw.w / norms[i]
		}
	}
	out := make([]float64, len(cands))
	// score sets out[i] from the sum over its own user's candidates, mine
	// (nil: the candidate alone).
	score := func(i int, mine []float64) {
		own := max(len(members[users[i]]), 1)
		peers := len(cands) - own
		if peers == 0 || norms[i] == 0 {
			return
		}
		dot := 0.0
		for _, tw := range vecs[i] {
			w := tw.w / norms[i]
			m := w
			if mine != nil {
				m = mine[tw.id]
			}
			dot += w * (all[tw.id] - m)
		}
		out[i] = dot / float64(peers)
	}
	var group []float64 // the unit vectors of one user's candidates summed
	for i, u := range users {
		ms := members[u]
		if len(ms) < 2 {
			score(i, nil)
			continue
		}
		if ms[0] != i {
			continue // scored with its user's first candidate
		}
		if group == nil {
			group = make([]float64, terms)
		}
		for _, j := range ms {
			if norms[j] != 0 {
				for _, tw := range vecs[j] {
					group[tw.id] += tw.w / norms[j]
				}
			}
		}
		for _, j := range ms {
			score(j, group)
		}
		for _, j := range ms {
			for _, tw := range vecs[j] {
				group[tw.id] = 0
			}
		}
	}
	return out
}
