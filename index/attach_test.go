package index

import (
	"context"
	"errors"
	"iter"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
)

// docsOf yields docs, as rerank.Attach yields an index's documents.
func docsOf(docs ...dataset.Doc) iter.Seq2[dataset.Doc, error] {
	return func(yield func(dataset.Doc, error) bool) {
		for _, d := range docs {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// plainAttached is a Bleve index with the default mapping, on disk, as an
// Attached.
func plainAttached(t *testing.T) (*Attached, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plain")
	b, err := bleve.New(path, bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAttached(b, path)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, path
}

// TestAttachRecomputesWhatChanged: a second Attach keeps what is up to
// date, recomputes a document whose text changed, a payload whose model
// changed and everything when the source changed, and drops the payloads
// of documents gone.
func TestAttachRecomputesWhatChanged(t *testing.T) {
	ctx := context.Background()
	a, _ := plainAttached(t)
	src := Source{Title: []string{"t"}, Text: []string{"body"}, Analyzer: "standard"}
	docs := []dataset.Doc{{ID: "a", Text: "one"}, {ID: "b", Text: "two two"}, {ID: "c", Title: "x", Text: "three"}}
	steps := []struct {
		name string
		src  Source
		enc  lenEncoder
		docs []dataset.Doc
		want AttachReport
	}{
		{"first", src, lenEncoder{model: "len-1"}, docs, AttachReport{Docs: 3, Computed: 3}},
		{"again", src, lenEncoder{model: "len-1"}, docs, AttachReport{Docs: 3, Kept: 3}},
		{"one text changed", src, lenEncoder{model: "len-1"}, []dataset.Doc{docs[0], {ID: "b", Text: "changed"}, docs[2]}, AttachReport{Docs: 3, Computed: 1, Kept: 2}},
		{"back as it was", src, lenEncoder{model: "len-1"}, docs, AttachReport{Docs: 3, Computed: 1, Kept: 2}},
		{"another model", src, lenEncoder{model: "len-2"}, docs, AttachReport{Docs: 3, Computed: 3}},
		{"another source", Source{Text: []string{"body"}, Analyzer: "standard"}, lenEncoder{model: "len-2"}, docs, AttachReport{Docs: 3, Computed: 3}},
		{"one gone", Source{Text: []string{"body"}, Analyzer: "standard"}, lenEncoder{model: "len-2"}, docs[:2], AttachReport{Docs: 2, Kept: 2, Dropped: 1}},
	}
	for _, s := range steps {
		rep, err := a.Attach(ctx, s.src, []PayloadEncoder{s.enc}, docsOf(s.docs...), nil)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if rep != s.want {
			t.Fatalf("%s: %+v, want %+v", s.name, rep, s.want)
		}
		v := a.PayloadsFor(s.src)
		if v == nil {
			t.Fatalf("%s: no payloads for the source just attached", s.name)
		}
		if m := v.PayloadModel("len"); m != s.enc.ModelID() {
			t.Fatalf("%s: payload model %q, want %q", s.name, m, s.enc.ModelID())
		}
		ids := []string{"absent"}
		for _, d := range s.docs {
			b, ok, _ := v.PayloadFrom("len", s.enc.ModelID(), d.ID)
			if want := strconv.Itoa(len(d.Text)); !ok || string(b) != want {
				t.Fatalf("%s: payload of %s %q (%v), want %q", s.name, d.ID, b, ok, want)
			}
			ids = append(ids, d.ID)
		}
		// A window's read agrees, and finds nothing for another model.
		for _, model := range []string{s.enc.ModelID(), "other"} {
			got, err := v.PayloadsFrom("len", model, ids)
			if err != nil || len(got) != len(ids) {
				t.Fatalf("%s: PayloadsFrom(len, %s) = %d payloads, %v", s.name, model, len(got), err)
			}
			for i, id := range ids {
				want, ok, _ := v.PayloadFrom("len", model, id)
				if (got[i] != nil) != ok || string(got[i]) != string(want) {
					t.Fatalf("%s: PayloadsFrom(len, %s)[%s] = %q, PayloadFrom %q (%v)", s.name, model, id, got[i], want, ok)
				}
			}
		}
	}
	if a.PayloadsFor(src) != nil {
		t.Fatal("payloads served for a source no longer attached")
	}
	if got, err := a.x.payloads.ids("len"); err != nil || strings.Join(got, ",") != "a,b" {
		t.Fatalf("documents holding payloads: %v, %v; want a, b", got, err)
	}
}

// TestAttachTermsAsStagesAskForThem: term counts attached for an
// analyzer are served under the model id stages ask for, and only to a
// view of that analyzer.
func TestAttachTermsAsStagesAskForThem(t *testing.T) {
	a, _ := plainAttached(t)
	src := Source{Text: []string{"body"}, Analyzer: "standard"}
	enc := TermsEncoder{Analyzer: "standard", Tokens: strings.Fields}
	if _, err := a.Attach(context.Background(), src, []PayloadEncoder{enc}, docsOf(dataset.Doc{ID: "a", Text: "x y x"}), nil); err != nil {
		t.Fatal(err)
	}
	if m := a.PayloadModel(TermsPayload); m != "bleve-standard" {
		t.Fatalf("stored terms model %q", m)
	}
	v := a.PayloadsFor(src)
	if m := v.PayloadModel(TermsPayload); m != (TermsEncoder{}).ModelID() {
		t.Fatalf("terms model as served %q, want %q", m, (TermsEncoder{}).ModelID())
	}
	b, ok, err := v.PayloadFrom(TermsPayload, (TermsEncoder{}).ModelID(), "a")
	if err != nil || !ok {
		t.Fatalf("terms of a: %v %v", ok, err)
	}
	counts, err := DecodeTermCounts(b)
	if err != nil || counts["x"] != 2 || counts["y"] != 1 {
		t.Fatalf("terms of a: %v %v", counts, err)
	}
	if _, ok, _ := v.Payload(sourcePayload, "a"); ok || v.PayloadModel(sourcePayload) != "" {
		t.Fatal("the fingerprints are served as a payload")
	}
	if a.PayloadsFor(Source{Text: []string{"body"}, Analyzer: "keyword"}) != nil {
		t.Fatal("terms of one analyzer served to another's")
	}
}

// TestAttachRefuses: what Attach cannot do says why, and writes nothing
// it should not.
func TestAttachRefuses(t *testing.T) {
	ctx := context.Background()
	a, path := plainAttached(t)
	src := Source{Text: []string{"body"}, Analyzer: "standard"}
	doc := docsOf(dataset.Doc{ID: "a", Text: "one"}, dataset.Doc{ID: "b", Text: "two"})
	for _, c := range []struct {
		name string
		src  Source
		encs []PayloadEncoder
		want string
	}{
		{"no field", Source{Analyzer: "standard"}, nil, "names no field"},
		{"no analyzer", Source{Text: []string{"body"}}, nil, "names no analyzer"},
		{"empty field", Source{Text: []string{""}, Analyzer: "standard"}, nil, "empty field"},
		{"fingerprints' name", src, []PayloadEncoder{modelEncoder{sourcePayload, "m"}}, "fingerprints"},
		{"two models, one name", src, []PayloadEncoder{lenEncoder{model: "len-1"}, lenEncoder{model: "len-2"}}, "two models"},
		{"a document fails", src, []PayloadEncoder{failEncoder{fail: map[string]bool{"b": true}}}, `"b"`},
	} {
		_, err := a.Attach(ctx, c.src, c.encs, doc, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenAny(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ra, ok := ro.(*Attached)
	if !ok {
		t.Fatalf("OpenAny of an index with an attachment: %T", ro)
	}
	if _, err := ra.Attach(ctx, src, []PayloadEncoder{lenEncoder{model: "len-1"}}, doc, nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("attach to a read-only index: %v", err)
	}
	sem, err := Create(filepath.Join(t.TempDir(), "semrank"))
	if err != nil {
		t.Fatal(err)
	}
	defer sem.Close()
	if _, err := NewAttached(sem.bleveIndex, sem.Path); err == nil || !strings.Contains(err.Error(), "semrank index") {
		t.Fatalf("NewAttached over a semrank index: %v", err)
	}
}
