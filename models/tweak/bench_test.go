package tweak_test

import (
	"context"
	"os"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/models/tweak"
)

// benchCorpus is real SemEval text: the subtask-A training corpus when the
// converted data is present (out/data/A-train, written by scripts/data.sh),
// else the small slice in testdata.
func benchCorpus(b *testing.B) ([]dataset.Doc, *dataset.Dataset) {
	b.Helper()
	train, err := dataset.Load("../../testdata/tweak")
	if err != nil {
		b.Fatal(err)
	}
	docs := train.Corpus
	if dir := "../../out/data/A-train"; fileExists(dir) {
		ds, err := dataset.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		docs = ds.Corpus
	}
	return docs, train
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// BenchmarkIndexing indexes the same documents into a fresh in-memory
// scorch index, plain and with TWEAK payloads; docs/s of the two sub-
// benchmarks give the cost of computing and storing the learned vectors.
func BenchmarkIndexing(b *testing.B) {
	docs, train := benchCorpus(b)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.FullText()
	}
	st := tweak.Stats{DF: tweak.CountDF(texts)}
	set, err := tweak.NewSet(train, nil, st, false)
	if err != nil {
		b.Fatal(err)
	}
	m, err := tweak.Train(context.Background(), set, tweak.Config{Loss: tweak.LossPreference, Alpha: 0.1, MaxIterations: 50}, tweak.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		encs []index.PayloadEncoder
	}{
		{"plain", nil},
		{"tweak", []index.PayloadEncoder{tweak.NewEncoder(m)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				idx, err := index.Create("")
				if err != nil {
					b.Fatal(err)
				}
				if err := idx.Add(context.Background(), docs, bc.encs, nil); err != nil {
					b.Fatal(err)
				}
				if err := idx.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(docs)*b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// BenchmarkEncodePayload measures the TWEAK payload alone per document.
func BenchmarkEncodePayload(b *testing.B) {
	docs, train := benchCorpus(b)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.FullText()
	}
	set, err := tweak.NewSet(train, nil, tweak.Stats{DF: tweak.CountDF(texts)}, false)
	if err != nil {
		b.Fatal(err)
	}
	m, err := tweak.Train(context.Background(), set, tweak.Config{Loss: tweak.LossSSE, Alpha: 0.1, MaxIterations: 20}, tweak.Options{})
	if err != nil {
		b.Fatal(err)
	}
	enc := tweak.NewEncoder(m)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := enc.EncodePayload(docs[i%len(docs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCosineEncoded scores a question's terms against the stored
// vectors of 100 real comments, as the TWEAK stage does for a window.
func BenchmarkCosineEncoded(b *testing.B) {
	docs, _ := benchCorpus(b)
	docs = docs[:min(100, len(docs))]
	vec := func(text string) tweak.Vector {
		var v tweak.Vector
		for i, o := range tweak.Analyze("", text).Terms {
			v.Terms = append(v.Terms, o.Term)
			v.Weights = append(v.Weights, 1+float64(i%7)/7)
		}
		return v
	}
	enc := make([][]byte, len(docs))
	for i, d := range docs {
		var err error
		if enc[i], err = vec(d.FullText()).AppendBinary(nil); err != nil {
			b.Fatal(err)
		}
	}
	q := vec("Where can I find a good bank in Doha to open an account for my salary and a visa?")
	for b.Loop() {
		for _, e := range enc {
			if _, err := tweak.CosineEncoded(q, e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
