package translation

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

// TestReadUnknownWordProbability: the background probability of a word
// outside the vocabulary, the last one stored, must be a probability. An
// infinite one loaded, and every question with such a word scored +Inf.
func TestReadUnknownWordProbability(t *testing.T) {
	m, err := Train(context.Background(), forum, nil, toyConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p  float64
		ok bool
	}{
		{m.Background[len(m.Vocab)], true},
		{1, true},
		{math.Inf(1), false},
		{2, false},
		{1 << 40, false},
		{0, false},
		{-0.5, false},
		{math.NaN(), false},
	} {
		c := *m
		c.Background = append([]float64(nil), m.Background...)
		c.Background[len(m.Vocab)] = tc.p
		_, err := Read(bytes.NewReader(modeltest.Saved(t, &c)), "edited.model")
		switch {
		case tc.ok && err != nil:
			t.Errorf("probability %v: %v", tc.p, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "edited.model") || !strings.Contains(err.Error(), "unknown word")):
			t.Errorf("probability %v: err = %v, want one naming the file and the unknown word", tc.p, err)
		}
	}
}
