package topics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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

// TestLoadRejectsBadModels saves models that would load and then panic or
// score NaN: no topics (the SSG seeding indexes topic 0) or a NaN mean
// length. Load must refuse them with an error naming the file.
func TestLoadRejectsBadModels(t *testing.T) {
	docs, _ := planted(60)
	tests := []struct {
		name   string
		damage func(m *Model)
	}{
		{"no topics", func(m *Model) { m.Config.K, m.Centers, m.Topics, m.Catch = 0, nil, nil, nil }},
		{"nan mean length", func(m *Model) { m.MeanLen = math.NaN() }},
		{"no documents", func(m *Model) { m.Docs = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Train(context.Background(), docs, Config{K: 3})
			if err != nil {
				t.Fatal(err)
			}
			tt.damage(m)
			path := filepath.Join(t.TempDir(), "m")
			if err := m.Save(path); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want an error naming %s", err, path)
			}
		})
	}
}
