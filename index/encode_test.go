package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/tweak"
)

// demoEncoders returns the demo slice's documents, with the first 40
// indexed a second time with other text (so that the logs hold rewrites),
// and the encoders of real models trained on it: term counts, TWEAK and
// LSA.
func demoEncoders(t *testing.T) ([]dataset.Doc, []PayloadEncoder) {
	t.Helper()
	ds, err := dataset.Load("../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, d := range ds.Corpus {
		texts = append(texts, d.FullText())
	}
	var qids []string
	for _, q := range ds.Queries {
		if len(ds.Candidates.Ranking(q.ID)) > 0 {
			qids = append(qids, q.ID)
		}
	}
	set, err := tweak.NewSet(ds, qids, tweak.Stats{DF: tweak.CountDF(texts)}, false)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := tweak.Train(context.Background(), set, tweak.Config{Loss: tweak.LossSSE, Alpha: 0.1, MaxIterations: 10}, tweak.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := lsa.Train(texts, lsa.Config{Dim: 20})
	if err != nil {
		t.Fatal(err)
	}
	docs := slices.Clone(ds.Corpus)
	for _, d := range ds.Corpus[:40] {
		d.Text = d.Text + " " + d.Title
		docs = append(docs, d)
	}
	return docs, []PayloadEncoder{TermsEncoder{}, tweak.NewEncoder(tm), concept.EncoderFor("", "lsa", lm)}
}

// withProcs runs f with GOMAXPROCS n and chunks of chunk documents.
func withProcs(n, chunk int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	defer func(c int) { encodeChunk = c }(encodeChunk)
	encodeChunk = chunk
	f()
}

// TestAddParallelByteIdentical indexes a real slice with real encoders on
// one core, with chunks of a batch, and on two, with chunks of 7
// documents (many chunk boundaries, and rewrites across them): the payload
// logs must be the same bytes, and every document's payload what its
// encoders return for its last text.
func TestAddParallelByteIdentical(t *testing.T) {
	docs, encs := demoEncoders(t)
	dir := t.TempDir()
	var progress [2][]int
	for i, run := range []struct{ procs, chunk int }{{1, BatchSize}, {2, 7}} {
		withProcs(run.procs, run.chunk, func() {
			idx, err := Create(filepath.Join(dir, fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := idx.Add(context.Background(), docs, encs, func(done, _ int) { progress[i] = append(progress[i], done) }); err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				last := map[string]dataset.Doc{}
				for _, d := range docs {
					last[d.ID] = d
				}
				for id, d := range last {
					for _, enc := range encs {
						want, _ := enc.EncodePayload(d)
						got, ok, _ := idx.Payload(enc.PayloadName(), id)
						if !ok || !bytes.Equal(got, want) {
							t.Fatalf("%s payload of %s: %d bytes (ok %v), want the encoder's %d", enc.PayloadName(), id, len(got), ok, len(want))
						}
					}
				}
			}
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if fmt.Sprint(progress[0]) != fmt.Sprint(progress[1]) {
		t.Errorf("progress on one core %v, on two %v", progress[0], progress[1])
	}
	for _, enc := range encs {
		var logs [2][]byte
		for i := range logs {
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i), "semrank_payloads", enc.PayloadName()+".log"))
			if err != nil {
				t.Fatal(err)
			}
			logs[i] = b
		}
		if len(logs[0]) == 0 || !bytes.Equal(logs[0], logs[1]) {
			t.Errorf("%s log: %d bytes on one core, %d on two, not the same bytes", enc.PayloadName(), len(logs[0]), len(logs[1]))
		}
	}
}

// failEncoder fails, or panics, on the documents it names.
type failEncoder struct {
	fail  map[string]bool
	panic bool
}

func (failEncoder) PayloadName() string { return "fail" }
func (failEncoder) ModelID() string     { return "fail-v1" }
func (e failEncoder) EncodePayload(d dataset.Doc) ([]byte, error) {
	if e.fail[d.ID] {
		if e.panic {
			panic("encoder panicked on " + d.ID)
		}
		return nil, errors.New("cannot encode " + d.ID)
	}
	return []byte(d.ID), nil
}

func manyDocs(n int) []dataset.Doc {
	docs := make([]dataset.Doc, n)
	for i := range docs {
		docs[i] = dataset.Doc{ID: fmt.Sprintf("d%04d", i), Text: fmt.Sprintf("document number %d", i)}
	}
	return docs
}

// TestAddParallelFirstError: the error names the first failing document
// in document order, whichever worker met a later one first, and a check
// of Add's own (an empty id) before it wins as it does on one core.
func TestAddParallelFirstError(t *testing.T) {
	withProcs(2, 5, func() {
		docs := manyDocs(2*BatchSize + 10)
		enc := failEncoder{fail: map[string]bool{"d1500": true, "d1203": true}}
		idx, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		err = idx.Add(context.Background(), docs, []PayloadEncoder{TermsEncoder{}, enc}, nil)
		if err == nil || !strings.Contains(err.Error(), `"d1203"`) || !strings.Contains(err.Error(), "cannot encode d1203") {
			t.Fatalf("Add: %v, want the error of d1203", err)
		}
		// The first batch went in, with its payloads, as on one core.
		if n, _ := idx.DocCount(); n != BatchSize {
			t.Errorf("%d documents indexed, want the first batch's %d", n, BatchSize)
		}
		if _, ok, _ := idx.Payload("fail", "d0999"); !ok {
			t.Error("the first batch's payloads are missing")
		}
		docs[1100].ID = ""
		idx2, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		defer idx2.Close()
		if err := idx2.Add(context.Background(), docs, []PayloadEncoder{enc}, nil); err == nil || !strings.Contains(err.Error(), "document 1100 has no id") {
			t.Fatalf("Add: %v, want document 1100's missing id", err)
		}
	})
}

// TestAddParallelPanic: an encoder's panic reaches Add's caller, in its
// goroutine, with the encoder's value.
func TestAddParallelPanic(t *testing.T) {
	withProcs(2, 5, func() {
		idx, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		var got any
		func() {
			defer func() { got = recover() }()
			_ = idx.Add(context.Background(), manyDocs(50), []PayloadEncoder{failEncoder{fail: map[string]bool{"d0031": true, "d0042": true}, panic: true}}, nil)
		}()
		if got != "encoder panicked on d0031" {
			t.Fatalf("recovered %v, want the encoder's panic on d0031", got)
		}
	})
}

// TestAddParallelCancel: a context cancelled while Add runs (here, from
// the progress of its first batch) stops it with the context's error,
// leaving the batches already written.
func TestAddParallelCancel(t *testing.T) {
	withProcs(2, 100, func() {
		idx, err := Create("")
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		err = idx.Add(ctx, manyDocs(3*BatchSize), []PayloadEncoder{TermsEncoder{}}, func(done, _ int) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Add: %v, want context.Canceled", err)
		}
		if n, _ := idx.DocCount(); n != BatchSize {
			t.Errorf("%d documents indexed, want the first batch's %d", n, BatchSize)
		}
	})
}

// TestAddFieldsAnalyzedOnce: with payloads, Add hands Bleve the title and
// text its encode workers analyzed (analyzers.AnalyzeParts) instead of
// letting Bleve analyze them again; every posting of title, text and _all
// (document, frequency, norm, and each occurrence's position and offsets)
// is the one Bleve's own analysis gives, on one core and on two with many
// chunks.
func TestAddFieldsAnalyzedOnce(t *testing.T) {
	docs, encs := demoEncoders(t)
	dir := t.TempDir()
	var dumps []string
	for i, run := range []struct {
		procs, chunk int
		encs         []PayloadEncoder
	}{{1, BatchSize, nil}, {1, BatchSize, encs}, {2, 7, encs}} {
		withProcs(run.procs, run.chunk, func() {
			idx, err := Create(filepath.Join(dir, fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if idx.fieldsAnalyzer() == nil {
				t.Fatal("NewMapping's title and text are not analyzed by semrank's analyzer")
			}
			if err := idx.Add(context.Background(), docs, run.encs, nil); err != nil {
				t.Fatal(err)
			}
			dumps = append(dumps, postings(t, idx))
		})
	}
	if len(dumps[0]) < 1000 {
		t.Fatalf("postings: %q, too few to compare", dumps[0])
	}
	for i := 1; i < len(dumps); i++ {
		if dumps[i] != dumps[0] {
			t.Errorf("run %d: postings differ from Bleve's own analysis", i)
		}
	}
}

// postings lists every posting of the title, text and _all fields of idx,
// sorted, with its term vectors.
func postings(t *testing.T, idx *Index) string {
	adv, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lines []string
	for _, field := range []string{FieldTitle, FieldText, "_all"} {
		dict, err := r.FieldDict(field)
		if err != nil {
			t.Fatal(err)
		}
		for e, err := dict.Next(); e != nil || err != nil; e, err = dict.Next() {
			if err != nil {
				t.Fatal(err)
			}
			tfr, err := r.TermFieldReader(context.Background(), []byte(e.Term), field, true, true, true)
			if err != nil {
				t.Fatal(err)
			}
			for p, err := tfr.Next(nil); p != nil || err != nil; p, err = tfr.Next(nil) {
				if err != nil {
					t.Fatal(err)
				}
				id, err := r.ExternalID(p.ID)
				if err != nil {
					t.Fatal(err)
				}
				// _all lists a document's fields in the order Bleve's
				// mapping visits its map, which varies: vectors sorted.
				var vs []string
				for _, v := range p.Vectors {
					vs = append(vs, fmt.Sprintf("%s@%d[%d,%d]", v.Field, v.Pos, v.Start, v.End))
				}
				slices.Sort(vs)
				lines = append(lines, fmt.Sprintf("%s %s %s freq %d norm %g: %s", field, e.Term, id, p.Freq, p.Norm, strings.Join(vs, " ")))
			}
			tfr.Close()
		}
		dict.Close()
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
