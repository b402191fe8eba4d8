// Package ssgtest builds the small word-vector and topic-model fixture the
// SSG and WMD tests share: two well-separated groups of words (banking and
// desert trips) and a two-topic model over documents of those groups.
package ssgtest

import (
	"context"
	"testing"

	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/topics"
)

// Words are the fixture's vocabulary: the first four are one group, the
// last four the other.
var Words = []string{"bank", "loan", "salary", "account", "beach", "desert", "camping", "sand"}

// Fixture returns 2-dimensional vectors placing each group on its own axis
// and a topic model trained on 120 documents of one group each.
func Fixture(t testing.TB) (*embed.Vectors, *topics.Model) {
	t.Helper()
	var data []float64
	for i := range Words {
		if i < 4 {
			data = append(data, 1+0.1*float64(i), 0)
		} else {
			data = append(data, 0, 1+0.1*float64(i))
		}
	}
	v, err := embed.NewVectors(Words, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]string
	for i := 0; i < 120; i++ {
		g := Words[:4]
		if i%2 == 1 {
			g = Words[4:]
		}
		d := make([]string, 5+i%4)
		for j := range d {
			d[j] = g[(i*7+j*3)%4]
		}
		docs = append(docs, d)
	}
	tm, err := topics.Train(context.Background(), docs, topics.Config{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	return v, tm
}
