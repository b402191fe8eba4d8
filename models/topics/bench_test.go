package topics

import (
	"os"
	"testing"

	"github.com/semrank/semrank/analyzers"
)

// BenchmarkRepresent places a document with a topic model, as SSG does for
// every node of every query graph: the SemEval topic model when
// scripts/results.sh has trained it (out/results/semeval.topics), else a
// small model of planted topics.
func BenchmarkRepresent(b *testing.B) {
	var m *Model
	if path := "../../out/results/semeval.topics"; fileExists(path) {
		var err error
		if m, err = Load(path); err != nil {
			b.Fatal(err)
		}
	} else {
		docs, _ := planted(300)
		var err error
		if m, err = Train(b.Context(), docs, Config{K: 5}); err != nil {
			b.Fatal(err)
		}
	}
	doc := analyzers.Words("Which bank gives the best salary account for expats in Doha, and how long does the visa take?")
	for b.Loop() {
		m.Represent(doc)
	}
	b.ReportMetric(float64(len(m.Centers)), "topics")
	b.ReportMetric(float64(len(m.Vocab)), "words")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
