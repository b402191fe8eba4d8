package tweak

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Shuffled returns qids sorted and then shuffled by a generator seeded
// with seed and salt: the same queries give the same order on every run,
// whatever order they came in.
func Shuffled(qids []string, seed, salt uint64) []string {
	out := append([]string(nil), qids...)
	sort.Strings(out)
	rng := rand.New(rand.NewPCG(seed, salt))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// HoldOut deals a seeded random fraction frac of qids (at least one) into
// dev and the rest into train: the inner split that chooses α when no dev
// set is given.
func HoldOut(qids []string, frac float64, seed uint64) (train, dev []string, err error) {
	s := Shuffled(qids, seed, 1)
	n := max(1, int(math.Round(frac*float64(len(s)))))
	if n >= len(s) {
		return nil, nil, fmt.Errorf("tweak: %d queries leave none to train on after holding out %g for dev", len(s), frac)
	}
	return s[n:], s[:n], nil
}
