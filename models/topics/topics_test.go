package topics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/models/internal/modeltest"
)

var plantedVocab = [][]string{
	{"bank", "loan", "salary", "account", "transfer"},
	{"beach", "desert", "camping", "sand", "dunes"},
	{"visa", "sponsor", "permit", "residence", "exit"},
}

// planted returns documents of varied length drawn from three topics
// with disjoint vocabularies (plus a few shared words), and each document's topic.
func planted(n int) ([][]string, []int) {
	r := rand.New(rand.NewPCG(5, 6))
	vocab := plantedVocab
	shared := []string{"qatar", "doha", "please", "thanks"}
	var docs [][]string
	var label []int
	for i := 0; i < n; i++ {
		l := i % 3
		d := make([]string, 9+r.IntN(9)) // varied lengths: A_ij rarely equals a threshold
		for j := range d {
			if r.IntN(6) == 0 {
				d[j] = shared[r.IntN(len(shared))]
			} else {
				d[j] = vocab[l][r.IntN(len(vocab[l]))]
			}
		}
		docs = append(docs, d)
		label = append(label, l)
	}
	return docs, label
}

func TestRecoversPlantedTopics(t *testing.T) {
	docs, label := planted(300)
	m, err := Train(context.Background(), docs, Config{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Every planted topic must map to one cluster, and the clusters differ.
	clusterOf := map[int]map[int]int{}
	for j, d := range docs {
		c := m.Represent(d).Cluster
		if clusterOf[label[j]] == nil {
			clusterOf[label[j]] = map[int]int{}
		}
		clusterOf[label[j]][c]++
	}
	used := map[int]bool{}
	for l, cs := range clusterOf {
		if len(cs) != 1 {
			t.Fatalf("planted topic %d split over clusters %v", l, cs)
		}
		for c := range cs {
			if used[c] {
				t.Fatalf("two planted topics share cluster %d", c)
			}
			used[c] = true
		}
	}
	// A planted topic word is only ever a catchword of its topic's cluster,
	// and every cluster has catchwords.
	owner := map[string]int{}
	for l, words := range plantedVocab {
		for _, w := range words {
			owner[w] = l
		}
	}
	clusterTopic := map[int]int{}
	for l, cs := range clusterOf {
		for c := range cs {
			clusterTopic[c] = l
		}
	}
	for c, J := range m.Catch {
		if len(J) == 0 {
			t.Errorf("cluster %d has no catchwords", c)
		}
		for _, i := range J {
			if l, ok := owner[m.Vocab[i]]; ok && l != clusterTopic[c] {
				t.Errorf("word %q of topic %d is a catchword of cluster %d (topic %d)", m.Vocab[i], l, c, clusterTopic[c])
			}
		}
	}
	// The farthest topic from any topic is another topic.
	if f := m.Farthest(0); f == 0 {
		t.Error("Farthest(0) = 0")
	}
	// Catchword vectors: a document is closest to its own topic.
	rep := m.Represent([]string{"visa", "sponsor", "permit", "exit"})
	best := 0
	for l, v := range rep.Catch {
		if v > rep.Catch[best] {
			best = l
		}
	}
	if best != rep.Cluster {
		t.Errorf("catchword weights peak at topic %d, cluster is %d (%v)", best, rep.Cluster, rep.Catch)
	}

	path := filepath.Join(t.TempDir(), "t.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Catch, m.Catch) || !reflect.DeepEqual(back.Zeta, m.Zeta) || back.Represent(docs[0]).Cluster != m.Represent(docs[0]).Cluster {
		t.Error("model changed across save/load")
	}
	if back.IDF("bank") >= back.IDF("unseen-word") {
		t.Error("IDF of a seen word not below an unseen word's")
	}
	// Farthest's kept answers are its answers: asked again, from a loaded
	// model, and from a model holding the topics alone (nothing kept).
	bare := &Model{Topics: m.Topics}
	for l := range m.Topics {
		want := bare.Farthest(l)
		for _, got := range []int{m.Farthest(l), m.Farthest(l), back.Farthest(l), back.Farthest(l)} {
			if got != want {
				t.Errorf("Farthest(%d) = %d, want %d", l, got, want)
			}
		}
	}
}

// TestRecordsAnalyzer: the vocabulary holds embed.Tokenize's words
// (analyzers.Words), so a model from another version of that analyzer is
// refused.
func TestRecordsAnalyzer(t *testing.T) {
	docs, _ := planted(300)
	m, err := Train(context.Background(), docs, Config{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Analyzer(t, m, analyzers.WordsID(), Load, (*Model).Save)
}

func TestTrainRejectsBadInput(t *testing.T) {
	docs, _ := planted(10)
	tests := []struct {
		docs [][]string
		cfg  Config
		want string
	}{
		{docs, Config{K: 1}, "K = 1"},
		{docs[:2], Config{K: 3}, "2 documents"},
		{[][]string{{}, {}, {}, {"a"}}, Config{K: 3}, "non-empty"},
		// NaN and ±Inf pass withDefaults and trained a model whose config
		// could not be saved (a pipeline's topics_gamma: .nan reaches here).
		{docs, Config{K: 3, Gamma: math.NaN()}, "gamma is NaN"},
		{docs, Config{K: 3, Gamma: math.Inf(1)}, "gamma is +Inf"},
		{docs, Config{K: 3, W0: math.NaN()}, "w0 is NaN"},
		{docs, Config{K: 3, Eps0: math.Inf(-1)}, "eps0 is -Inf"},
		{docs, Config{K: 3, Iter: -1}, "-1 iterations"},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := Train(context.Background(), tc.docs, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// cancelAfter is a context that reports itself cancelled from the
// (n+1)-th call of Err on: cancelled while a long computation runs.
type cancelAfter struct {
	context.Context
	n atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestTrainCancelled: a cancelled training returns the context's error,
// never a partly trained model.
func TestTrainCancelled(t *testing.T) {
	docs, _ := planted(60)
	for n := range int32(3) {
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		if m, err := Train(ctx, docs, Config{K: 3}); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: model %v, err %v; want %v", n, m != nil, err, context.Canceled)
		}
	}
}

// TestLoadRejectsBadModels saves models that would load and then panic,
// allocate without bound or score NaN: too few topics (the SSG seeding
// needs a second topic for its 0-seeds), a NaN mean length, a negative
// document frequency (a NaN IDF), catchwords out of order (catchMass
// searches them) or a config asking for more topics than the file holds
// over an empty vocabulary. Load must refuse them with an error naming the
// file.
func TestLoadRejectsBadModels(t *testing.T) {
	docs, _ := planted(60)
	const many = 1 << 40
	tests := []struct {
		name   string
		damage func(m *Model)
		edit   func(b *models.Bundle) // after damage, on the bundle saved
	}{
		{"no topics", func(m *Model) { m.Config.K, m.Centers, m.Topics, m.Catch = 0, nil, nil, nil }, nil},
		{"one topic", func(m *Model) { m.Config.K, m.Centers, m.Topics, m.Catch = 1, m.Centers[:1], m.Topics[:1], m.Catch[:1] }, nil},
		{"nan mean length", func(m *Model) { m.MeanLen = math.NaN() }, nil},
		{"no documents", func(m *Model) { m.Docs = 0 }, nil},
		{"negative df", func(m *Model) { m.DF[0] = -1 }, nil},
		{"nan df", func(m *Model) { m.DF[0] = math.NaN() }, nil},
		// Non-finite centres, topics or thresholds would silently pick the
		// wrong cluster, farthest topic or thresholded words.
		{"nan centre", func(m *Model) { m.Centers[1][0] = math.NaN() }, nil},
		{"infinite centre", func(m *Model) { m.Centers[0][2] = math.Inf(1) }, nil},
		{"nan topic", func(m *Model) { m.Topics[2][1] = math.NaN() }, nil},
		{"nan zeta", func(m *Model) { m.Zeta[0] = math.NaN() }, nil},
		{"infinite zeta", func(m *Model) { m.Zeta[0] = math.Inf(1) }, nil},
		{"duplicate word", func(m *Model) { m.Vocab[1] = m.Vocab[0] }, nil},
		{"catchwords out of order", func(m *Model) { J := m.Catch[0]; J[0], J[1] = J[1], J[0] }, nil},
		{"catchwords not pairs", nil, func(b *models.Bundle) { b.AddTensor("catchwords", []int{1, 3}, []float64{0, 0, 1}) }},
		{"many topics, no words", nil, func(b *models.Bundle) {
			b.SetConfig(Config{K: many})
			b.AddStrings("vocab", nil)
			b.Manifest.VocabHash = models.HashStrings(nil)
			for _, name := range []string{"centers", "topics"} {
				b.AddTensor(name, []int{many, 0}, nil)
			}
			b.AddTensor("zeta", []int{0}, nil)
			b.AddTensor("df", []int{0}, nil)
			b.AddTensor("catchwords", []int{0, 2}, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Train(context.Background(), docs, Config{K: 3})
			if err != nil {
				t.Fatal(err)
			}
			if tt.damage != nil {
				tt.damage(m)
			}
			b, err := m.Bundle()
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(b)
			}
			path := filepath.Join(t.TempDir(), "m")
			if err := b.Save(path); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want an error naming %s", err, path)
			}
		})
	}
}

// TestLloydReseedsEmptyClusters starts Lloyd's iterations with every
// document in one cluster. Without reseeding, the other centres stay zero
// and empty; with it, each takes the worst-fitting document and the
// clusters separate the planted groups.
func TestLloydReseedsEmptyClusters(t *testing.T) {
	col := func(ids ...int) doc {
		d := doc{ids: ids}
		for range ids {
			d.a = append(d.a, 1/float64(len(ids)))
		}
		return d
	}
	tests := []struct {
		name  string
		B     []doc
		k     int
		group []int // the planted cluster of each document
	}{
		{"two groups", []doc{col(0), col(0), col(0), col(1), col(1), col(1)}, 2, []int{0, 0, 0, 1, 1, 1}},
		{"three groups", []doc{col(0, 1), col(0, 1), col(2, 3), col(2, 3), col(4), col(4)}, 3, []int{0, 0, 1, 1, 2, 2}},
		{"more clusters than groups", []doc{col(0), col(0, 1), col(1), col(1, 2)}, 3, nil},
		{"identical documents", []doc{col(0), col(0), col(0)}, 2, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &Model{Config: Config{K: tc.k, Iter: 30}}
			assign := m.lloydSparse(context.Background(), tc.B, 5, make([]int, len(tc.B)))
			used := map[int]bool{}
			for _, a := range assign {
				used[a] = true
			}
			want := min(tc.k, len(slices.CompactFunc(slices.Clone(tc.B), func(a, b doc) bool { return slices.Equal(a.ids, b.ids) })))
			if len(used) != want {
				t.Errorf("assignment %v uses %d clusters, want %d", assign, len(used), want)
			}
			for l, c := range m.Centers {
				if used[l] && slices.Max(c) == 0 {
					t.Errorf("centre %d is zero", l)
				}
			}
			for i := range tc.group {
				for j := range tc.group {
					if (tc.group[i] == tc.group[j]) != (assign[i] == assign[j]) {
						t.Fatalf("assignment %v does not match the planted groups %v", assign, tc.group)
					}
				}
			}
		})
	}
}
