package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/semrank/semrank/dataset"
)

var corpus = []dataset.Doc{
	{ID: "d1", Title: "Good bank in Doha", Text: "Which bank is best for an expat salary account?", Metadata: map[string]any{"user_id": "U1"}},
	{ID: "d2", Title: "Driving licence", Text: "How do I convert my driving licence in Qatar?"},
	{ID: "d3", Title: "Bank loans", Text: "Personal loan from a bank after work termination"},
	{ID: "d4", Title: "Weekend trips", Text: "Where to go camping in the desert this weekend"},
}

// lenEncoder is a payload encoder for tests: the payload is the length of
// the document's text.
type lenEncoder struct{ model string }

func (lenEncoder) PayloadName() string { return "len" }
func (e lenEncoder) ModelID() string   { return e.model }
func (lenEncoder) EncodePayload(d dataset.Doc) ([]byte, error) {
	return []byte(fmt.Sprint(len(d.Text))), nil
}

func build(t *testing.T, encs ...PayloadEncoder) (*Index, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idx")
	idx, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(context.Background(), corpus, encs, nil); err != nil {
		t.Fatal(err)
	}
	return idx, path
}

func TestTopNAndDocs(t *testing.T) {
	idx, _ := build(t)
	defer idx.Close()
	q, err := TextQuery("a good bank for my salary")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := idx.TopN(context.Background(), q, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "d1" || hits[1].ID != "d3" {
		t.Fatalf("hits = %+v, want d1 then d3", hits)
	}
	if hits[0].Rank != 1 || hits[0].Title != "Good bank in Doha" || hits[0].Metadata["user_id"] != "U1" {
		t.Errorf("hit fields = %+v", hits[0])
	}
	d, ok, err := idx.Doc("d2")
	if err != nil || !ok || d.Title != "Driving licence" {
		t.Errorf("Doc(d2) = %+v, %v, %v", d, ok, err)
	}
	if _, ok, _ := idx.Doc("nope"); ok {
		t.Error("Doc(nope) found a document")
	}
	if _, err := TextQuery("the of and"); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("stop-word query: err = %v, want ErrEmptyQuery", err)
	}
	df, err := idx.DocFreq("bank")
	if err != nil || df != 2 {
		t.Errorf("DocFreq(bank) = %d, %v; want 2", df, err)
	}
}

func TestGivenKeepsEveryCandidate(t *testing.T) {
	idx, _ := build(t)
	defer idx.Close()
	q, _ := TextQuery("bank loan")
	hits, err := idx.Given(context.Background(), q, []string{"d4", "d1", "d2", "d3", "d1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, h := range hits {
		got = append(got, h.ID)
		if h.Rank != i+1 {
			t.Errorf("rank of %s = %d, want %d", h.ID, h.Rank, i+1)
		}
	}
	// d3 matches both terms, d1 one; d4 and d2 match none and follow in
	// their given order; the duplicate d1 is dropped.
	if want := "d3 d1 d4 d2"; strings.Join(got, " ") != want {
		t.Errorf("Given order = %v, want %s", got, want)
	}
	if _, err := idx.Given(context.Background(), q, []string{"d1", "ghost"}); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("unknown candidate: err = %v", err)
	}
	// A query without terms keeps the given order.
	hits, err = idx.Given(context.Background(), nil, []string{"d2", "d1"})
	if err != nil || hits[0].ID != "d2" || hits[1].ID != "d1" {
		t.Errorf("nil query: %+v, %v", hits, err)
	}
}

func TestPayloadsPersistAndRefuseOtherModels(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	if b, ok, _ := idx.Payload("len", "d2"); !ok || string(b) != "45" {
		t.Fatalf("payload d2 = %q, %v", b, ok)
	}
	if err := idx.DeleteDocs("d2"); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if idx.PayloadModel("len") != "m1" {
		t.Errorf("PayloadModel = %q", idx.PayloadModel("len"))
	}
	if _, ok, _ := idx.Payload("len", "d2"); ok {
		t.Error("payload of deleted d2 survived reopening")
	}
	if b, ok, _ := idx.Payload("len", "d1"); !ok || string(b) != "47" {
		t.Errorf("payload d1 after reopen = %q, %v", b, ok)
	}
	err = idx.Add(context.Background(), corpus[:1], []PayloadEncoder{lenEncoder{"m2"}}, nil)
	if !errors.Is(err, ErrModelMismatch) {
		t.Errorf("other model: err = %v, want ErrModelMismatch", err)
	}
	// PayloadFrom reads a payload only from the model that wrote it.
	for _, tc := range []struct {
		model, id string
		want      string
	}{{"m1", "d1", "47"}, {"m2", "d1", ""}, {"", "d1", ""}, {"m1", "d2", ""}} {
		b, ok, err := idx.PayloadFrom("len", tc.model, tc.id)
		if err != nil || ok != (tc.want != "") || string(b) != tc.want {
			t.Errorf("PayloadFrom(len, %q, %s) = %q, %v, %v; want %q", tc.model, tc.id, b, ok, err, tc.want)
		}
	}
}

// TestEmptiedPayloadReleasesModel: once every document holding a name's
// payloads is indexed again without its model, or deleted, the name holds
// nothing: its log and its model claim are gone, also after reopening, and
// another model may store under it without a rebuild. While one document
// keeps a payload, the claim stays.
func TestEmptiedPayloadReleasesModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		empty  func(*Index) error
		others bool // documents keep the name's payloads
	}{
		{"re-indexed without the model", func(x *Index) error { return x.Add(context.Background(), corpus, nil, nil) }, false},
		{"deleted", func(x *Index) error { return x.DeleteDocs("d1", "d2", "d3", "d4") }, false},
		{"one document re-indexed", func(x *Index) error { return x.Add(context.Background(), corpus[:1], nil, nil) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			if err := tc.empty(idx); err != nil {
				t.Fatal(err)
			}
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
			idx, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			_, statErr := os.Stat(filepath.Join(path, payloadDir, "len.log"))
			if got := idx.PayloadModel("len"); tc.others != (got == "m1") || tc.others != (statErr == nil) {
				t.Errorf("model claim %q, log stat %v; want the claim and log kept: %v", got, statErr, tc.others)
			}
			err = idx.Add(context.Background(), corpus[:1], []PayloadEncoder{lenEncoder{"m2"}}, nil)
			if tc.others != errors.Is(err, ErrModelMismatch) {
				t.Errorf("another model: err = %v; want ErrModelMismatch: %v", err, tc.others)
			}
		})
	}
}

func TestOpenRefusesNonIndex(t *testing.T) {
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotSemrank) {
		t.Errorf("err = %v, want ErrNotSemrank", err)
	}
	_, path := build(t)
	if _, err := Create(path); err == nil {
		t.Error("Create over an existing index succeeded")
	}
}

func TestTermCountsRoundTrip(t *testing.T) {
	for _, toks := range [][]string{nil, {"bank"}, {"bank", "doha", "bank", "visa"}} {
		got, err := DecodeTermCounts(EncodeTermCounts(toks))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for _, tk := range toks {
			want[tk]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round trip %v: got %v", toks, got)
		}
	}
}

// FuzzDecodeTermCounts checks that what decodes is what the encoder
// writes: sorted distinct terms, which re-encode to the same terms.
func FuzzDecodeTermCounts(f *testing.F) {
	f.Add(EncodeTermCounts([]string{"bank", "doha", "bank"}))
	f.Add([]byte{})
	f.Add([]byte{2, 1, 'b', 1, 1, 'a', 1}) // unsorted
	f.Add([]byte{2, 1, 'a', 1, 1, 'a', 1}) // a term twice
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := DecodeTermList(b)
		m, merr := DecodeTermCounts(b)
		if (err == nil) != (merr == nil) || err == nil && len(m) != len(list) {
			t.Fatalf("DecodeTermList: %d terms, %v; DecodeTermCounts: %d terms, %v", len(list), err, len(m), merr)
		}
		if err != nil {
			return
		}
		var toks []string
		for _, tc := range list {
			if tc.Count > 1000 {
				return
			}
			for range tc.Count {
				toks = append(toks, tc.Term)
			}
		}
		// Bytes may differ (a varint need not be minimal); the terms may not.
		if again, err := DecodeTermList(EncodeTermCounts(toks)); err != nil || !slices.Equal(again, list) {
			t.Fatalf("%x decodes to %v, which re-encodes to %v (%v)", b, list, again, err)
		}
	})
}

// TestPayloadConcurrentModels races two writers with different models for
// a new payload name: exactly one may win.
func TestPayloadConcurrentModels(t *testing.T) {
	for i := 0; i < 300; i++ {
		ps, err := openPayloads("", false)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		for _, m := range []string{"a", "b"} {
			go func() { errs <- ps.put("x", []payloadRec{{model: m, id: "d" + m, data: []byte(m)}}) }()
		}
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) {
			t.Fatalf("round %d: errors %v and %v, want exactly one", i, e1, e2)
		}
	}
}

// TestPayloadLongID: a document id the log could not read back is refused
// when written, instead of making the index fail to open.
func TestPayloadLongID(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	long := dataset.Doc{ID: strings.Repeat("x", 70000), Text: "long id"}
	if err := idx.Add(context.Background(), []dataset.Doc{long}, []PayloadEncoder{lenEncoder{"m1"}}, nil); err == nil {
		t.Error("no error for a 70000-byte id")
	}
	idx.Close()
	idx, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
}

// TestIndexDropsStalePayloads checks that replacing a document through
// Index (which computes no payloads) drops the payloads of its old text,
// also after a reopen, and leaves the other documents' payloads alone.
func TestIndexDropsStalePayloads(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	if err := idx.Index("d1", map[string]any{"title": "New", "text": "replaced"}); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	idx, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	for id, want := range map[string]bool{"d1": false, "d2": true} {
		if _, ok, _ := idx.Payload("len", id); ok != want {
			t.Errorf("payload of %s present = %v, want %v", id, ok, want)
		}
	}
}

// TestBatchDropsStalePayloads: a raw bleve batch run through Batch drops
// the payloads, under every name, of each document it indexes or deletes,
// also after a reopen, and leaves the other documents' payloads alone; a
// batch that fails (here on a closed Bleve index) changes no payload.
func TestBatchDropsStalePayloads(t *testing.T) {
	newDoc := map[string]any{FieldTitle: "New", FieldText: "replaced"}
	tests := []struct {
		name    string
		fill    func(*bleve.Batch) error
		fail    bool
		dropped []string // documents of corpus whose payloads go
	}{
		{"re-index", func(b *bleve.Batch) error { return b.Index("d1", newDoc) }, false, []string{"d1"}},
		{"delete", func(b *bleve.Batch) error { b.Delete("d2"); return nil }, false, []string{"d2"}},
		{"re-index, delete and internal", func(b *bleve.Batch) error {
			b.Delete("d2")
			b.SetInternal([]byte("k"), []byte("v"))
			return b.Index("d4", newDoc)
		}, false, []string{"d2", "d4"}},
		{"new document", func(b *bleve.Batch) error { return b.Index("d5", newDoc) }, false, nil},
		{"internal only", func(b *bleve.Batch) error { b.SetInternal([]byte("k"), []byte("v")); return nil }, false, nil},
		{"failed batch", func(b *bleve.Batch) error { b.Delete("d2"); return b.Index("d1", newDoc) }, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"}, TermsEncoder{})
			b := idx.NewBatch()
			if err := tc.fill(b); err != nil {
				t.Fatal(err)
			}
			if tc.fail {
				// Only Bleve's half: the payload store stays open, so a
				// wrong deletion would reach its logs.
				if err := idx.bleveIndex.Close(); err != nil {
					t.Fatal(err)
				}
				if err := idx.Batch(b); err == nil {
					t.Fatal("a batch on a closed Bleve index succeeded")
				}
				idx.payloads.close()
				var err error
				if idx, err = Open(path); err != nil {
					t.Fatal(err)
				}
			} else if err := idx.Batch(b); err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				for _, d := range corpus {
					want := !slices.Contains(tc.dropped, d.ID)
					for _, name := range []string{"len", TermsPayload} {
						if _, ok, _ := idx.Payload(name, d.ID); ok != want {
							t.Errorf("round %d: payload %s of %s present = %v, want %v", round, name, d.ID, ok, want)
						}
					}
				}
				if _, ok, _ := idx.Payload("len", "d5"); ok {
					t.Errorf("round %d: payload of d5, indexed without one", round)
				}
				idx.Close()
				var err error
				if idx, err = Open(path); err != nil {
					t.Fatal(err)
				}
			}
			idx.Close()
		})
	}
}

// TestBatchUnknownLayout plays a Bleve whose batches Batch cannot read: it
// refuses them, running nothing and keeping payloads, while the index holds
// payloads, and runs them while it holds none; Add and DeleteDocs, which
// know their documents, keep working.
func TestBatchUnknownLayout(t *testing.T) {
	defer func(f func(*bleve.Batch) ([]string, bool)) { readBatchIDs = f }(readBatchIDs)
	readBatchIDs = func(*bleve.Batch) ([]string, bool) { return nil, false }
	for _, tc := range []struct {
		name    string
		encs    []PayloadEncoder
		wantErr bool
	}{
		{"no payloads", nil, false},
		{"payloads", []PayloadEncoder{lenEncoder{"m1"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, _ := build(t, tc.encs...)
			defer idx.Close()
			b := idx.NewBatch()
			b.Delete("d2")
			err := idx.Batch(b)
			if tc.wantErr && !errors.Is(err, errBatchLayout) || !tc.wantErr && err != nil {
				t.Fatalf("err = %v, want errBatchLayout: %v", err, tc.wantErr)
			}
			if _, ok, _ := idx.Doc("d2"); ok != tc.wantErr {
				t.Errorf("d2 indexed = %v after the batch, want %v", ok, tc.wantErr)
			}
			if _, ok, _ := idx.Payload("len", "d2"); ok != tc.wantErr {
				t.Errorf("payload of d2 present = %v, want %v", ok, tc.wantErr)
			}
			if err := idx.Add(context.Background(), []dataset.Doc{{ID: "d1", Text: "replaced"}}, tc.encs, nil); err != nil {
				t.Fatal(err)
			}
			if err := idx.DeleteDocs("d3"); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := idx.Payload("len", "d3"); ok {
				t.Error("payload of d3 outlived DeleteDocs")
			}
			if b, ok, _ := idx.Payload("len", "d1"); tc.wantErr && (!ok || string(b) != "8") {
				t.Errorf("payload of d1 after Add = %q, %v; want 8", b, ok)
			}
		})
	}
}

// TestBatchLayout pins the layout of bleve.Batch in Bleve v2.6.1 that
// Batch reads its documents from, and checks that other layouts are told
// apart rather than misread.
func TestBatchLayout(t *testing.T) {
	idx, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	for _, id := range []string{"b", "a", "b"} {
		if err := b.Index(id, map[string]any{FieldText: id}); err != nil {
			t.Fatal(err)
		}
	}
	b.Delete("c")
	b.SetInternal([]byte("k"), []byte("v"))
	b.DeleteInternal([]byte("k2"))
	if ids, ok := batchIDs(b); !ok || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("batchIDs = %q, %v; want [a b c], true: has bleve.Batch changed its layout?", ids, ok)
	}
	if ids, ok := batchIDs(idx.NewBatch()); !ok || len(ids) != 0 {
		t.Errorf("batchIDs of an empty batch = %q, %v", ids, ok)
	}
	if ids, ok := batchIDs(nil); !ok || len(ids) != 0 {
		t.Errorf("batchIDs(nil) = %q, %v", ids, ok)
	}
	type otherOps struct{ IndexOps map[string]any }
	type embedded struct{ internal *bindex.Batch }
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"no internal field", &struct{ other *bindex.Batch }{bindex.NewBatch()}},
		{"internal of another type", &struct{ internal *otherOps }{&otherOps{map[string]any{"a": nil}}}},
		{"nil internal", &struct{ internal *bindex.Batch }{}},
		{"not a pointer", struct{ internal *bindex.Batch }{bindex.NewBatch()}},
		{"nil pointer", (*struct{ internal *bindex.Batch })(nil)},
		{"internal behind a nil embedded pointer", &struct{ *embedded }{}},
	} {
		if ids, ok := opIDs(reflect.ValueOf(tc.v)); ok {
			t.Errorf("%s: read as a batch of %q", tc.name, ids)
		}
	}
}

// TestAddWritesNoDeletionOfWhatItRewrites: Add drops a replaced
// document's payloads itself, sparing those it writes afresh, so the log
// of a payload it rewrites gets the new payload and no deletion record.
func TestAddWritesNoDeletionOfWhatItRewrites(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	if err := idx.Add(context.Background(), []dataset.Doc{{ID: "d1", Text: "replaced"}}, []PayloadEncoder{lenEncoder{"m1"}}, nil); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	raw, err := os.ReadFile(filepath.Join(path, payloadDir, "len.log"))
	if err != nil {
		t.Fatal(err)
	}
	off := recordOffsets(t, raw)
	if want := 1 + len(corpus) + 1; len(off) != want { // model, corpus, d1 again
		t.Errorf("%d records, want %d", len(off), want)
	}
	for _, at := range off {
		if binary.LittleEndian.Uint32(raw[at+4:]) == deleteLen {
			t.Errorf("deletion record at byte %d", at)
		}
	}
}

// TestTopNTiesByID: which of several equally scored documents enter the
// top n must not depend on the order they were indexed in (internal
// document numbers), or two indexes of one corpus give different runs.
// With more than ten query terms Bleve sums term scores in an order that
// varies from document to document, so equal documents differ in their
// scores' last bits: they still tie (StableScore) and are chosen by ID.
func TestTopNTiesByID(t *testing.T) {
	ctx := context.Background()
	long := "bank account loan salary doha expat card credit house villa rent cheap fast visa"
	tests := []struct {
		name   string
		query  string
		text   string
		filler bool // documents matching one query term each, among the tied ones
		batch  int
		ns     []int
	}{
		{"one term, one batch each", "bank", "bank account", false, 1, []int{3}},
		{"many terms, one batch", long, long, true, 1000, []int{1, 2, 3, 7, 10, 25, 59}},
		{"many terms, one batch each", long, long, true, 1, []int{1, 3, 10, 59}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var docs []dataset.Doc
			for i := range 60 {
				docs = append(docs, dataset.Doc{ID: fmt.Sprintf("d%02d", i), Text: tc.text})
				if tc.filler {
					docs = append(docs, dataset.Doc{ID: fmt.Sprintf("o%02d", i), Text: strings.Fields(tc.query)[i%14] + " filler"})
				}
			}
			q, err := TextQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			for _, order := range []string{"forward", "reverse"} {
				in := slices.Clone(docs)
				if order == "reverse" {
					slices.Reverse(in)
				}
				idx, err := Create("")
				if err != nil {
					t.Fatal(err)
				}
				// Internal numbers follow this order.
				for i := 0; i < len(in); i += tc.batch {
					if err := idx.Add(ctx, in[i:min(i+tc.batch, len(in))], nil, nil); err != nil {
						t.Fatal(err)
					}
				}
				for _, n := range tc.ns {
					hits, err := idx.TopN(ctx, q, n)
					if err != nil {
						t.Fatal(err)
					}
					var got, want []string
					for i, h := range hits {
						got = append(got, h.ID)
						want = append(want, fmt.Sprintf("d%02d", i))
					}
					if len(got) != n || !slices.Equal(got, want) {
						t.Errorf("indexed %s: top %d %v, want %v", order, n, got, want)
					}
				}
				idx.Close()
			}
		})
	}
}

// TestOpenLockedIndex: an index another holder has open (semrank serve)
// is an error naming the lock after a short wait, not a silent hang.
func TestOpenLockedIndex(t *testing.T) {
	defer func(d time.Duration) { lockWait = d }(lockWait)
	lockWait = 400 * time.Millisecond
	path := filepath.Join(t.TempDir(), "idx")
	idx, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	second, err := Open(path)
	if err == nil {
		second.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("second open: err = %v, want the index named as locked", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("absent index: err = %v, want it named as missing", err)
	}
}

// TestAddDropsStalePayloads checks that replacing a document through Add
// keeps only payloads of its new text: those its encoders compute anew,
// none from the encoders it was first indexed with and is not now.
func TestAddDropsStalePayloads(t *testing.T) {
	replaced := dataset.Doc{ID: "d1", Title: "New", Text: "replaced"}
	tests := []struct {
		name     string
		encs     []PayloadEncoder
		wantLen  string // payload "len" of d1; "" for none
		wantTerm bool   // payload "terms" of d1 present
	}{
		{"no encoders", nil, "", false},
		{"another payload", []PayloadEncoder{TermsEncoder{}}, "", true},
		{"the same payload", []PayloadEncoder{lenEncoder{"m1"}}, "8", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			if err := idx.Add(context.Background(), []dataset.Doc{replaced}, tc.encs, nil); err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				b, ok, _ := idx.Payload("len", "d1")
				if got := string(b); ok != (tc.wantLen != "") || got != tc.wantLen {
					t.Errorf("round %d: payload len of d1 = %q, %v; want %q", round, got, ok, tc.wantLen)
				}
				if _, ok, _ := idx.Payload(TermsPayload, "d1"); ok != tc.wantTerm {
					t.Errorf("round %d: payload terms of d1 present = %v, want %v", round, ok, tc.wantTerm)
				}
				if b, ok, _ := idx.Payload("len", "d2"); !ok || string(b) != "45" {
					t.Errorf("round %d: payload len of d2 = %q, %v; want 45", round, b, ok)
				}
				idx.Close()
				var err error
				if idx, err = Open(path); err != nil {
					t.Fatal(err)
				}
			}
			idx.Close()
		})
	}
}

// TestDocFreqAfterConcurrentWrite: a DocFreq that read the statistics
// before a concurrent write must not cache them after the write has
// invalidated the cache.
func TestDocFreqAfterConcurrentWrite(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write func(*Index) error
		want  uint64
	}{
		{"add", func(x *Index) error {
			return x.Add(ctx, []dataset.Doc{{ID: "d5", Text: "bank account"}}, nil, nil)
		}, 3},
		{"delete", func(x *Index) error { return x.DeleteDocs("d3") }, 1},
		{"index", func(x *Index) error {
			return x.Index("d1", map[string]any{FieldText: "no longer about money"})
		}, 1},
	}
	lookups := []struct {
		name string
		df   func(x *Index, term string) (uint64, error)
	}{
		{"DocFreq", (*Index).DocFreq},
		{"DocFreqs", func(x *Index, term string) (uint64, error) {
			dfs, err := x.DocFreqs([]string{"account", term})
			if err != nil {
				return 0, err
			}
			return dfs[1], nil
		}},
	}
	defer func() { testHookDocFreq = nil }()
	for _, lk := range lookups {
		for _, tc := range tests {
			t.Run(lk.name+"/"+tc.name, func(t *testing.T) {
				idx, _ := build(t)
				defer idx.Close()
				// The write lands between the read and its caching.
				testHookDocFreq = func() {
					testHookDocFreq = nil
					if err := tc.write(idx); err != nil {
						t.Error(err)
					}
				}
				if _, err := lk.df(idx, "bank"); err != nil {
					t.Fatal(err)
				}
				if df, err := lk.df(idx, "bank"); err != nil || df != tc.want {
					t.Errorf("%s(bank) after the write = %d, %v; want %d", lk.name, df, err, tc.want)
				}
			})
		}
	}
}

// TestDocFreqs: a batch lookup gives each term's DocFreq, whether cached
// or not, and fails once the index is closed.
func TestDocFreqs(t *testing.T) {
	idx, _ := build(t)
	terms := []string{"bank", "unseen", "account", "bank"}
	if _, err := idx.DocFreq("account"); err != nil { // cached
		t.Fatal(err)
	}
	got, err := idx.DocFreqs(terms)
	if err != nil {
		t.Fatal(err)
	}
	for i, term := range terms {
		want, err := idx.DocFreq(term)
		if err != nil || got[i] != want {
			t.Errorf("DocFreqs[%d] (%s) = %d; DocFreq %d, %v", i, term, got[i], want, err)
		}
	}
	if got, err := idx.DocFreqs(nil); err != nil || len(got) != 0 {
		t.Errorf("DocFreqs(nil) = %v, %v", got, err)
	}
	idx.Close()
	if _, err := idx.DocFreqs(terms); err == nil {
		t.Error("no error from a closed index")
	}
}

// TestAddRefusesTwoModelsForOnePayload: two stages of one type (S2Net at
// two dimensions) must not write one payload name, or the store would hold
// one model's id over the other's bytes.
func TestAddRefusesTwoModelsForOnePayload(t *testing.T) {
	docs := []dataset.Doc{{ID: "d1", Text: "bank account"}}
	for _, tc := range []struct {
		name    string
		encs    []PayloadEncoder
		wantErr string
	}{
		{"two models", []PayloadEncoder{lenEncoder{"m1"}, lenEncoder{"m2"}}, `payload "len" asked of two models, m1 and m2`},
		{"one model twice", []PayloadEncoder{lenEncoder{"m1"}, lenEncoder{"m1"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := Create("")
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			err = idx.Add(context.Background(), docs, tc.encs, nil)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := idx.PayloadModel("len"); got != "m1" {
					t.Errorf("payload model %q, want m1", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if n, _ := idx.DocCount(); n != 0 {
				t.Errorf("%d documents indexed before the refusal", n)
			}
		})
	}
}

// nameEncoder writes an empty payload under a given name.
type nameEncoder string

func (e nameEncoder) PayloadName() string                     { return string(e) }
func (nameEncoder) ModelID() string                           { return "m" }
func (nameEncoder) EncodePayload(dataset.Doc) ([]byte, error) { return []byte{1}, nil }

func TestPayloadNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"s2net": true, "s2net_gamma2.5": true, // stage names made from options
		"": false, ".hidden": false, "..": false, "a/b": false, `a\b`: false,
		strings.Repeat("n", maxNameLen): true, strings.Repeat("n", maxNameLen+1): false, "a\x00b": false,
	} {
		idx, err := Create(filepath.Join(t.TempDir(), "idx"))
		if err != nil {
			t.Fatal(err)
		}
		err = idx.Add(context.Background(), []dataset.Doc{{ID: "d1", Text: "bank"}}, []PayloadEncoder{nameEncoder(name)}, nil)
		idx.Close()
		if (err == nil) != ok {
			t.Errorf("payload name %q: err = %v, want ok %v", name, err, ok)
		}
	}
}

// TestCompact: compacting merges an index on disk into one segment and
// returns at once for an in-memory one, which scorch never merges (it
// used to wait forever).
func TestCompact(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "idx")} {
		idx, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range corpus { // one segment each
			if err := idx.Add(context.Background(), []dataset.Doc{d}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- idx.Compact(context.Background()) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Compact(%q): %v", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Compact(%q) did not return", path)
		}
		if n, err := idx.DocCount(); err != nil || n != uint64(len(corpus)) {
			t.Errorf("after Compact(%q): %d documents, %v", path, n, err)
		}
		idx.Close()
	}
}

// TestCompactCancelled: a Compact whose context ends reports it, rather
// than success for a merge scorch gave up (the interrupted "semrank index"
// then published an unmerged index and said it had indexed), and the
// index keeps every document and can be compacted afterwards.
func TestCompactCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	idx, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { idx.Close() }()
	for _, d := range corpus { // one segment each
		if err := idx.Add(context.Background(), []dataset.Doc{d}, []PayloadEncoder{lenEncoder{"m1"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := idx.Compact(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Compact with a cancelled context: %v, want context.Canceled", err)
	}
	idx.Close()
	if idx, err = Open(path); err != nil {
		t.Fatal(err)
	}
	if err := idx.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := idx.DocCount(); err != nil || n != uint64(len(corpus)) {
		t.Errorf("%d documents, %v", n, err)
	}
	for _, d := range corpus {
		if _, ok, _ := idx.Payload("len", d.ID); !ok {
			t.Errorf("no payload len of %s", d.ID)
		}
	}
}

// TestDocFreqCacheBounded: the DocFreq cache keeps at most dfCacheMax
// terms however many distinct terms are asked for between writes, and
// its counts stay right.
func TestDocFreqCacheBounded(t *testing.T) {
	defer func(n int) { dfCacheMax = n }(dfCacheMax)
	dfCacheMax = 8
	idx, _ := build(t)
	defer idx.Close()
	for i := range 100 {
		term := fmt.Sprintf("unseen%d", i)
		if i%10 == 0 {
			term = "bank"
		}
		df, err := idx.DocFreq(term)
		if want := map[bool]uint64{true: 2}[term == "bank"]; err != nil || df != want {
			t.Fatalf("DocFreq(%s) = %d, %v; want %d", term, df, err, want)
		}
		if n := len(idx.dfCache); n > dfCacheMax {
			t.Fatalf("after %d terms the cache holds %d, more than %d", i+1, n, dfCacheMax)
		}
	}
}

// countedIndex lets countingIndex embed bleve.Index, whose Index method
// would clash with a field named Index.
type countedIndex = bleve.Index

// countingIndex records the size of every search it runs.
type countingIndex struct {
	countedIndex
	sizes *[]int
}

func (x countingIndex) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	*x.sizes = append(*x.sizes, req.Size)
	return x.countedIndex.SearchInContext(ctx, req)
}

// tiedIndex returns an index of 300 documents alike in every term, all
// tied for "bank", added out of ID order.
func tiedIndex(t *testing.T) *Index {
	t.Helper()
	var docs []dataset.Doc
	for i := range 300 {
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("d%03d", (i*7)%300), Text: "bank account"})
	}
	idx, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(context.Background(), docs, nil, nil); err != nil {
		idx.Close()
		t.Fatal(err)
	}
	return idx
}

// TestSearchTiesByIDBounded: a tied group that crosses the cut and runs
// past the hits fetched is completed by one search of maxTieHits hits past
// the cut without stored fields; a group still open there is cut among
// the hits fetched, ordered by ID; the kept hits get their stored fields.
func TestSearchTiesByIDBounded(t *testing.T) {
	idx := tiedIndex(t)
	defer idx.Close()
	defer func(old int) { maxTieHits = old }(maxTieHits)
	for _, tc := range []struct {
		limit     int
		wantSizes string
		whole     bool // the group completes: the top 10 are d000..d009
	}{
		// The stored fields of the ten kept are read after, without a
		// search.
		{1024, fmt.Sprintf("[%d 1034]", 10+tieSlack), true},
		{100, fmt.Sprintf("[%d 110]", 10+tieSlack), false},
	} {
		maxTieHits = tc.limit
		var sizes []int
		q, _ := TextQuery("bank")
		req := bleve.NewSearchRequestOptions(q, 10, 0, false)
		req.Fields = storedFields
		res, err := SearchTiesByID(context.Background(), countingIndex{idx, &sizes}, req, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if h.Fields[FieldText] != "bank account" {
				t.Fatalf("limit %d: hit %s without its stored text: %v", tc.limit, h.ID, h.Fields)
			}
		}
		if fmt.Sprint(sizes) != tc.wantSizes {
			t.Errorf("limit %d: searched sizes %v, want %s", tc.limit, sizes, tc.wantSizes)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		if !slices.IsSorted(got) || len(got) != 10 {
			t.Errorf("limit %d: hits %v, want 10 in ID order", tc.limit, got)
		}
		if first := got[0] == "d000" && got[9] == "d009"; first != tc.whole {
			t.Errorf("limit %d: hits %v; lowest ids chosen = %v, want %v", tc.limit, got, first, tc.whole)
		}
	}
}

// TestSearchTiesByIDSlack: a tied group that crosses the cut and ends
// within the tieSlack hits fetched past it is ordered by ID from the one
// search, without a second.
func TestSearchTiesByIDSlack(t *testing.T) {
	var docs []dataset.Doc
	for i := range 12 { // tied, crossing the cut at 10
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("t%02d", (i*5)%12), Text: "bank account"})
	}
	for i := range 30 { // lower: longer texts
		docs = append(docs, dataset.Doc{ID: fmt.Sprintf("l%02d", i), Text: "bank account of a river and its many long winding banks"})
	}
	idx, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(context.Background(), docs, nil, nil); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	q, _ := TextQuery("bank")
	res, err := SearchTiesByID(context.Background(), countingIndex{idx, &sizes}, bleve.NewSearchRequestOptions(q, 10, 0, false), 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]int{10 + tieSlack}); fmt.Sprint(sizes) != want {
		t.Errorf("searched sizes %v, want %s", sizes, want)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	if want := "[t00 t01 t02 t03 t04 t05 t06 t07 t08 t09]"; fmt.Sprint(got) != want {
		t.Errorf("hits %v, want %s", got, want)
	}
}

// TestSearchTiesByIDPagesAgree: with one cut, requests of any size over a
// tied group larger than the ID-ordered bound return the first hits of
// one list, so that pages fetched with different sizes neither repeat nor
// skip hits (they did when the bound grew with the request size).
func TestSearchTiesByIDPagesAgree(t *testing.T) {
	idx := tiedIndex(t)
	defer idx.Close()
	defer func(old int) { maxTieHits = old }(maxTieHits)
	maxTieHits = 50
	q, _ := TextQuery("bank")
	var longest []string
	for _, size := range []int{300, 10, 11, 40, 60, 61, 100, 250} {
		res, err := SearchTiesByID(context.Background(), idx, bleve.NewSearchRequestOptions(q, size, 0, false), 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID)
		}
		if longest == nil {
			longest = got
			if len(got) != 300 {
				t.Fatalf("%d hits, want 300", len(got))
			}
			if !slices.IsSorted(got[:60]) {
				t.Errorf("the first 60 (cut 10 + bound 50) are not in ID order: %v", got[:60])
			}
			continue
		}
		if !slices.Equal(got, longest[:size]) {
			t.Errorf("size %d: %v\nwant the first %d of the longest request: %v", size, got, size, longest[:size])
		}
	}
}

// TestMetaNeverIndexed: metadata given to a raw Bleve write as a map, not
// as the JSON string FieldMeta holds, must not be indexed (searchable
// through FieldAll, or under meta.category): not with the mapping of
// NewMapping, nor in an index created with an older one, whose metadata
// sub-document was dynamic, once Open has opened it. Metadata written as
// semrank writes it is read back and not searchable either way.
func TestMetaNeverIndexed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		make func(t *testing.T, path string) *Index
	}{
		{"new mapping", func(t *testing.T, path string) *Index {
			idx, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			return idx
		}},
		{"dynamic metadata mapping, reopened", func(t *testing.T, path string) *Index {
			m := NewMapping()
			m.DefaultMapping.Properties[FieldMeta].Dynamic = true // as AddFieldMappingsAt made it
			b, err := bleve.NewUsing(path, m, scorch.Name, scorch.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			idx, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return idx
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := tc.make(t, filepath.Join(t.TempDir(), "idx"))
			defer idx.Close()
			b := idx.NewBatch()
			if err := b.Index("a", map[string]any{FieldTitle: "bank", FieldText: "good bank",
				FieldMeta: map[string]any{"user_name": "zorblax", "category": "Money", "n": 7.0}}); err != nil {
				t.Fatal(err)
			}
			if err := idx.Batch(b); err != nil {
				t.Fatal(err)
			}
			if err := idx.Add(ctx, []dataset.Doc{{ID: "s", Title: "bank", Text: "bank account",
				Metadata: map[string]any{"user_name": "quuxbar", "category": "Money"}}}, nil, nil); err != nil {
				t.Fatal(err)
			}
			for _, word := range []string{"zorblax", "quuxbar", "money"} {
				q, err := TextQuery(word)
				if err != nil {
					t.Fatal(err)
				}
				if hits, err := idx.TopN(ctx, q, 10); err != nil || len(hits) != 0 {
					t.Errorf("metadata word %q found in %s: %+v, %v", word, FieldAll, hits, err)
				}
			}
			mq := bleve.NewMatchQuery("Money")
			mq.SetField(FieldMeta + ".category")
			if res, err := idx.Search(bleve.NewSearchRequest(mq)); err != nil || res.Total != 0 {
				t.Errorf("meta.category searchable: %v hits, %v", res.Total, err)
			}
			if fields, err := idx.Fields(); err != nil || slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, FieldMeta+".") }) {
				t.Errorf("fields = %q, %v; want none under %s.", fields, err, FieldMeta)
			}
			if d, ok, err := idx.Doc("a"); err != nil || !ok || d.Metadata != nil {
				t.Errorf("Doc(a) = %+v, %v, %v; want no metadata", d, ok, err)
			}
			if d, ok, err := idx.Doc("s"); err != nil || !ok || d.Metadata["user_name"] != "quuxbar" {
				t.Errorf("Doc(s) = %+v, %v, %v; want its metadata", d, ok, err)
			}
		})
	}
}

// TestIndexRefusesMetaNotJSONString: Index takes FieldMeta only as the
// metadata's JSON object in a string, where Bleve's mapping would look
// for it, and refuses anything else with an error naming the field,
// writing nothing.
func TestIndexRefusesMetaNotJSONString(t *testing.T) {
	type withMeta struct {
		Title string `json:"title"`
		Meta  any    `json:"meta,omitempty"`
	}
	type otherTag struct {
		Meta map[string]any `json:"metadata"`
	}
	obj := `{"category":"Money"}`
	tests := []struct {
		name     string
		data     any
		wantMeta bool // stored metadata read back
		wantErr  bool
	}{
		{"JSON object string", map[string]any{FieldText: "bank", FieldMeta: obj}, true, false},
		{"string map", map[string]string{FieldText: "bank", FieldMeta: obj}, true, false},
		{"pointer to a map", &map[string]any{FieldText: "bank", FieldMeta: obj}, true, false},
		{"struct", withMeta{Title: "bank", Meta: obj}, true, false},
		{"no metadata", map[string]any{FieldText: "bank"}, false, false},
		{"nil metadata", map[string]any{FieldText: "bank", FieldMeta: nil}, false, false},
		{"struct, no metadata", withMeta{Title: "bank"}, false, false},
		{"struct, other tag", otherTag{Meta: map[string]any{"category": "Money"}}, false, false},
		{"map", map[string]any{FieldText: "bank", FieldMeta: map[string]any{"category": "Money"}}, false, true},
		{"struct's map", withMeta{Title: "bank", Meta: map[string]any{"category": "Money"}}, false, true},
		{"pointer to a metadata map", map[string]any{FieldText: "bank", FieldMeta: &map[string]any{"category": "Money"}}, false, true},
		{"bytes", map[string]any{FieldText: "bank", FieldMeta: []byte(obj)}, false, true},
		{"number", map[string]any{FieldText: "bank", FieldMeta: 7}, false, true},
		{"plain string", map[string]any{FieldText: "bank", FieldMeta: "Money"}, false, true},
		{"JSON array", map[string]any{FieldText: "bank", FieldMeta: `["Money"]`}, false, true},
		{"JSON null", map[string]any{FieldText: "bank", FieldMeta: "null"}, false, true},
		{"empty string", map[string]any{FieldText: "bank", FieldMeta: ""}, false, true},
	}
	idx, err := Create("")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	for i, tc := range tests {
		id := fmt.Sprint("doc", i)
		err := idx.Index(id, tc.data)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), `"meta" (index.FieldMeta)`) || !strings.Contains(err.Error(), "JSON object string") {
				t.Errorf("%s: err = %v, want a refusal naming index.FieldMeta and its form", tc.name, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		d, ok, err := idx.Doc(id)
		if err != nil || ok == tc.wantErr {
			t.Errorf("%s: indexed = %v, %v; want %v", tc.name, ok, err, !tc.wantErr)
		}
		if got := d.Metadata["category"] == "Money"; got != tc.wantMeta {
			t.Errorf("%s: metadata %v, want it read back: %v", tc.name, d.Metadata, tc.wantMeta)
		}
	}
}

// hookedBleve is a Bleve index that calls written after each write it
// runs, or fails every write with fail.
type hookedBleve struct {
	bleveIndex
	written func()
	fail    error
}

func (h *hookedBleve) Index(id string, data any) error {
	if h.fail != nil {
		return h.fail
	}
	if err := h.bleveIndex.Index(id, data); err != nil {
		return err
	}
	h.written()
	return nil
}

func (h *hookedBleve) Batch(b *bleve.Batch) error {
	if h.fail != nil {
		return h.fail
	}
	if err := h.bleveIndex.Batch(b); err != nil {
		return err
	}
	h.written()
	return nil
}

// TestWriteNeverPairsNewTextWithOldPayload: while a write replaces a
// document, a reader that sees its new text in Bleve must not get the
// payloads of its old text, through any write; and a write that fails
// leaves the old payloads readable.
func TestWriteNeverPairsNewTextWithOldPayload(t *testing.T) {
	replaced := replacedD1
	for _, tc := range replacingWrites(context.Background()) {
		for _, fail := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fail=%v", tc.name, fail), func(t *testing.T) {
				idx, _ := build(t, lenEncoder{"m1"})
				defer idx.Close()
				old, _, _ := idx.Payload("len", "d1")
				h := &hookedBleve{bleveIndex: idx.bleveIndex}
				idx.bleveIndex = h
				if fail {
					h.fail = errors.New("write failed")
				}
				var checked bool
				h.written = func() {
					checked = true
					d, _, err := idx.Doc("d1")
					if err != nil || d.Text != replaced.Text {
						t.Fatalf("Doc(d1) after the write to Bleve = %+v, %v", d, err)
					}
					if b, ok, _ := idx.Payload("len", "d1"); ok && string(b) != fmt.Sprint(len(replaced.Text)) {
						t.Errorf("the new text is in Bleve, and payload len of d1 is %q, of the old text", b)
					}
				}
				if err := tc.op(idx); (err != nil) != fail {
					t.Fatalf("write: err = %v, want failure %v", err, fail)
				}
				if !checked && !fail {
					t.Fatal("no write reached Bleve")
				}
				b, ok, _ := idx.Payload("len", "d1")
				switch {
				case fail && (!ok || string(b) != string(old)):
					t.Errorf("after a failed write: payload len of d1 = %q, %v; want %q", b, ok, old)
				case !fail && ok && string(b) != fmt.Sprint(len(replaced.Text)):
					t.Errorf("after the write: payload len of d1 = %q, of the old text", b)
				}
				if b, ok, _ := idx.Payload("len", "d2"); !ok || string(b) != "45" {
					t.Errorf("payload len of d2 = %q, %v; want 45", b, ok)
				}
			})
		}
	}
}

// rewritingWrites are replacingWrites and the deletion of d1: every write
// that drops payloads of documents Bleve held.
func rewritingWrites(ctx context.Context) []indexOp {
	return append(replacingWrites(ctx), indexOp{"DeleteDocs", func(x *Index) error { return x.DeleteDocs("d1") }})
}

// replacedD1 is the new version of corpus's d1 that replacingWrites write.
var replacedD1 = dataset.Doc{ID: "d1", Title: "New", Text: "replaced"}

// replacingWrites are the ways to replace d1 of corpus with replacedD1.
func replacingWrites(ctx context.Context) []indexOp {
	raw := map[string]any{FieldTitle: replacedD1.Title, FieldText: replacedD1.Text}
	return []indexOp{
		{"Index", func(x *Index) error { return x.Index("d1", raw) }},
		{"Batch", func(x *Index) error {
			b := x.NewBatch()
			if err := b.Index("d1", raw); err != nil {
				return err
			}
			return x.Batch(b)
		}},
		{"Add, same payload", func(x *Index) error {
			return x.Add(ctx, []dataset.Doc{replacedD1}, []PayloadEncoder{lenEncoder{"m1"}}, nil)
		}},
		{"Add, another payload", func(x *Index) error {
			return x.Add(ctx, []dataset.Doc{replacedD1}, []PayloadEncoder{TermsEncoder{}}, nil)
		}},
	}
}

// TestPhraseAndHighlight checks what term vectors give Bleve code searching
// a semrank index: phrase queries match word order, and highlighting marks
// the matched words.
func TestPhraseAndHighlight(t *testing.T) {
	idx, _ := build(t)
	defer idx.Close()
	tests := []struct {
		phrase string
		want   []string
	}{
		{"driving licence", []string{"d2"}},
		{"licence driving", nil},
		{"personal loan", []string{"d3"}},
	}
	for _, tc := range tests {
		req := bleve.NewSearchRequest(bleve.NewMatchPhraseQuery(tc.phrase))
		req.Highlight = bleve.NewHighlight()
		res, err := idx.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.ID)
			var marked bool
			for _, frags := range h.Fragments {
				for _, f := range frags {
					marked = marked || strings.Contains(f, "<mark>")
				}
			}
			if !marked {
				t.Errorf("%q: hit %s has no highlighted fragment: %v", tc.phrase, h.ID, h.Fragments)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("phrase %q matched %v, want %v", tc.phrase, got, tc.want)
		}
	}
}

// TestTermVectors checks that new indexes keep term vectors and that an
// index created without them, as before semrank kept them, says so.
func TestTermVectors(t *testing.T) {
	idx, _ := build(t)
	defer idx.Close()
	if !idx.TermVectors() {
		t.Error("a new index reports no term vectors")
	}
	old := NewMapping()
	for _, name := range []string{FieldTitle, FieldText} {
		old.DefaultMapping.Properties[name].Fields[0].IncludeTermVectors = false
	}
	path := filepath.Join(t.TempDir(), "old")
	b, err := bleve.New(path, old)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.TermVectors() {
		t.Error("an index without term vectors reports them")
	}
}

// TestCreateInEmptyDir: an index may be created where an empty folder
// stands (made by mkdir beforehand), but not over anything else.
func TestCreateInEmptyDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(path string) error
		wantErr string
	}{
		{"absent", func(string) error { return nil }, ""},
		{"empty folder", func(p string) error { return os.Mkdir(p, 0o755) }, ""},
		{"folder with a file", func(p string) error {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "notes.txt"), []byte("x"), 0o644)
		}, "already exists"},
		{"file", func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) }, "already exists"},
		// The index goes where the link points; the link stays.
		{"link to an empty folder", func(p string) error {
			target := p + ".target"
			if err := os.Mkdir(target, 0o755); err != nil {
				return err
			}
			return os.Symlink(target, p)
		}, ""},
	} {
		for _, open := range []struct {
			name string
			f    func(string) (*Index, error)
		}{{"Create", Create}, {"OpenOrCreate", OpenOrCreate}} {
			t.Run(tc.name+"/"+open.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "idx")
				if err := tc.setup(path); err != nil {
					t.Fatal(err)
				}
				idx, err := open.f(path)
				if tc.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					idx.Close()
					if _, err := Open(path); err != nil {
						t.Errorf("the created index does not open: %v", err)
					}
					if st, err := os.Lstat(path); tc.name == "link to an empty folder" && (err != nil || st.Mode()&os.ModeSymlink == 0) {
						t.Errorf("the link was replaced: %v, %v", st, err)
					}
					return
				}
				if open.name == "OpenOrCreate" {
					// Anything else is opened, and is no index.
					tc.wantErr = "not a semrank index"
				}
				if err == nil {
					idx.Close()
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
				}
			})
		}
	}
}

// modelEncoder is a payload encoder for tests with a given name and model
// id; the payload is the document's text.
type modelEncoder struct{ name, model string }

func (e modelEncoder) PayloadName() string                       { return e.name }
func (e modelEncoder) ModelID() string                           { return e.model }
func (modelEncoder) EncodePayload(d dataset.Doc) ([]byte, error) { return []byte(d.Text), nil }

// TestAddRefusesBeforeWriting: what the payload store cannot hold is
// refused before Bleve holds the batch's new text, so a refused Add
// leaves every document, text and payloads, as it was, also after a
// reopen (a refusal after the Bleve batch left the old payloads of the
// names being rewritten beside the new text).
func TestAddRefusesBeforeWriting(t *testing.T) {
	defer func(old int) { maxPayload = old }(maxPayload)
	replaced := dataset.Doc{ID: "d1", Title: "New", Text: "replaced"}
	tests := []struct {
		name       string
		maxPayload int
		bad        dataset.Doc
		encs       []PayloadEncoder
		wantErr    string
	}{
		{"id too long", maxPayload, dataset.Doc{ID: strings.Repeat("L", maxIDLen+1), Text: "x"},
			[]PayloadEncoder{lenEncoder{"m1"}}, "more than the 65536"},
		{"model without an id", maxPayload, dataset.Doc{ID: "d9", Text: "x"},
			[]PayloadEncoder{lenEncoder{"m1"}, modelEncoder{"other", ""}}, "without an id"},
		{"model id too long", maxPayload, dataset.Doc{ID: "d9", Text: "x"},
			[]PayloadEncoder{lenEncoder{"m1"}, modelEncoder{"other", strings.Repeat("m", maxIDLen+1)}}, "model id of"},
		{"payload name too long for a file", maxPayload, dataset.Doc{ID: "d9", Text: "x"},
			[]PayloadEncoder{lenEncoder{"m1"}, modelEncoder{strings.Repeat("n", 300), "m"}}, "invalid payload name"},
		{"payload name with a NUL byte", maxPayload, dataset.Doc{ID: "d9", Text: "x"},
			[]PayloadEncoder{lenEncoder{"m1"}, modelEncoder{"a\x00b", "m"}}, "invalid payload name"},
		{"payload too large", 2, dataset.Doc{ID: "big", Text: strings.Repeat("x", 100)},
			[]PayloadEncoder{lenEncoder{"m1"}}, "more than 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			maxPayload = tc.maxPayload
			err := idx.Add(context.Background(), []dataset.Doc{replaced, tc.bad}, tc.encs, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Add: err = %v, want one saying %q", err, tc.wantErr)
			}
			for round := range 2 {
				if d, _, err := idx.Doc("d1"); err != nil || d.Text != corpus[0].Text {
					t.Errorf("round %d: text of d1 = %q, %v; want it unchanged", round, d.Text, err)
				}
				if b, ok, _ := idx.Payload("len", "d1"); !ok || string(b) != fmt.Sprint(len(corpus[0].Text)) {
					t.Errorf("round %d: payload len of d1 = %q, %v; want that of its unchanged text", round, b, ok)
				}
				if n, _ := idx.DocCount(); n != uint64(len(corpus)) {
					t.Errorf("round %d: %d documents, want %d", round, n, len(corpus))
				}
				idx.Close()
				if idx, err = Open(path); err != nil {
					t.Fatal(err)
				}
			}
			idx.Close()
		})
	}
}

// TestClosedIndex: every operation on a closed index fails with
// bleve.ErrorIndexClosed, none panics (DocFreq read a nil scorch snapshot,
// a second Close closed Bleve's channel twice), and Compact does not
// report a merge it never ran.
func TestClosedIndex(t *testing.T) {
	ctx := context.Background()
	tests := append([]indexOp{
		{"Close", func(x *Index) error { return x.Close() }},
		{"DocFreq", func(x *Index) error { _, err := x.DocFreq("bank"); return err }},
		{"DocFreq of a cached term", func(x *Index) error { _, err := x.DocFreq("cached"); return err }},
		{"Compact", func(x *Index) error { return x.Compact(ctx) }},
	}, documentWrites(ctx)...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, _ := build(t, lenEncoder{"m1"})
			if _, err := idx.DocFreq("cached"); err != nil {
				t.Fatal(err)
			}
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				err = tc.op(idx)
			}()
			if !errors.Is(err, bleve.ErrorIndexClosed) {
				t.Errorf("err = %v, want bleve.ErrorIndexClosed", err)
			}
		})
	}
}

// indexOp is one call on an Index, for tables of what a state refuses.
type indexOp struct {
	name string
	op   func(*Index) error
}

// documentWrites are the ways to write documents (and their payloads).
func documentWrites(ctx context.Context) []indexOp {
	return []indexOp{
		{"Add", func(x *Index) error { return x.Add(ctx, corpus[:1], []PayloadEncoder{lenEncoder{"m1"}}, nil) }},
		{"Index", func(x *Index) error { return x.Index("d1", map[string]any{FieldText: "x"}) }},
		{"DeleteDocs", func(x *Index) error { return x.DeleteDocs("d1") }},
		{"Batch", func(x *Index) error {
			b := x.NewBatch()
			b.Delete("d1")
			return x.Batch(b)
		}},
	}
}

// TestCloseWaitsForWrite: a Close that comes while a write is between
// Bleve and the payload logs waits for the write to finish, so that the
// reopened index does not pair the new text with the old payloads (Close
// used to close the logs under the write, whose payload records then went
// nowhere, without an error).
func TestCloseWaitsForWrite(t *testing.T) {
	replaced := dataset.Doc{ID: "d1", Title: "New", Text: "replaced"}
	raw := map[string]any{FieldTitle: replaced.Title, FieldText: replaced.Text}
	tests := []struct {
		name    string
		write   func(*Index) error
		wantLen string // payload len of d1 after the reopen; "" for none
	}{
		{"Add", func(x *Index) error {
			return x.Add(context.Background(), []dataset.Doc{replaced}, []PayloadEncoder{lenEncoder{"m1"}}, nil)
		}, "8"},
		{"Index", func(x *Index) error { return x.Index("d1", raw) }, ""},
		{"Batch", func(x *Index) error {
			b := x.NewBatch()
			if err := b.Index("d1", raw); err != nil {
				return err
			}
			return x.Batch(b)
		}, ""},
		{"DeleteDocs", func(x *Index) error { return x.DeleteDocs("d1") }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			h := &hookedBleve{bleveIndex: idx.bleveIndex}
			idx.bleveIndex = h
			closed := make(chan error, 1)
			h.written = func() {
				go func() { closed <- idx.Close() }()
				time.Sleep(100 * time.Millisecond) // for a Close that does not wait to get through
			}
			if err := tc.write(idx); err != nil {
				t.Fatalf("write: %v", err)
			}
			if err := <-closed; err != nil {
				t.Fatalf("Close: %v", err)
			}
			idx, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			b, ok, _ := idx.Payload("len", "d1")
			if got := string(b); ok != (tc.wantLen != "") || got != tc.wantLen {
				t.Errorf("after the reopen: payload len of d1 = %q, %v; want %q", got, ok, tc.wantLen)
			}
		})
	}
}

// TestOpenWithoutMapping: a Bleve index folder whose mapping was never
// stored (a semrank index killed while Bleve created it) is refused with
// an error that says so and what to do, not Bleve's JSON error about an
// empty mapping; a damaged (non-empty) mapping keeps Bleve's error.
func TestOpenWithoutMapping(t *testing.T) {
	tests := []struct {
		name        string
		mapping     []byte // stored under Bleve's mapping key; nil deletes it
		wantNoMap   bool
		wantMessage string
	}{
		{"mapping never stored", nil, true, "remove it and index again"},
		{"mapping damaged", []byte(`{"default_analyzer":`), false, "error parsing mapping JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "idx")
			idx, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := bleve.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mapping == nil {
				err = b.DeleteInternal([]byte("_mapping"))
			} else {
				err = b.SetInternal([]byte("_mapping"), tc.mapping)
			}
			if cerr := b.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Open(path)
			if err == nil {
				got.Close()
				t.Fatal("Open succeeded")
			}
			if errors.Is(err, ErrNoMapping) != tc.wantNoMap || !strings.Contains(err.Error(), tc.wantMessage) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %q; want ErrNoMapping %v, naming %s and saying %q", err, tc.wantNoMap, path, tc.wantMessage)
			}
		})
	}
}

// TestOpenReadOnly: an index opened read-only searches and reads its
// payloads, refuses every write with ErrReadOnly (Bleve's own internal
// writes too) and changes no file; two read-only opens share the index,
// and a writer is kept out while they hold it.
func TestOpenReadOnly(t *testing.T) {
	defer func(d time.Duration) { lockWait = d }(lockWait)
	lockWait = 400 * time.Millisecond
	ctx := context.Background()
	idx, path := build(t, lenEncoder{"m1"})
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	before := snapshotFiles(t, path)
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	second, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("second read-only open: %v", err)
	}
	defer second.Close()
	if w, err := Open(path); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		if err == nil {
			w.Close()
		}
		t.Errorf("writer while read-only opens hold the index: err = %v, want it locked", err)
	}
	q, err := TextQuery("bank")
	if err != nil {
		t.Fatal(err)
	}
	hits, err := second.TopN(ctx, q, 10)
	if err != nil || len(hits) == 0 {
		t.Errorf("TopN: %d hits, %v", len(hits), err)
	}
	if b, ok, err := ro.Payload("len", "d1"); err != nil || !ok || string(b) != "47" {
		t.Errorf("payload d1 = %q, %v, %v", b, ok, err)
	}
	for _, tc := range append(documentWrites(ctx), []indexOp{
		{"SetInternal", func(x *Index) error { return x.SetInternal([]byte("k"), []byte("v")) }},
		{"DeleteInternal", func(x *Index) error { return x.DeleteInternal([]byte("k")) }},
		{"Compact", func(x *Index) error { return x.Compact(ctx) }},
	}...) {
		if err := tc.op(ro); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: err = %v, want ErrReadOnly", tc.name, err)
		}
	}
	if n, err := ro.DocCount(); err != nil || n != uint64(len(corpus)) {
		t.Errorf("DocCount after refused writes = %d, %v; want %d", n, err, len(corpus))
	}
	ro.Close()
	second.Close()
	if after := snapshotFiles(t, path); !maps.Equal(before, after) {
		t.Errorf("files changed by a read-only open:\nbefore %v\nafter  %v", before, after)
	}
}

// snapshotFiles maps every file under dir to its size and modification
// time.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKilledWriteLeavesNoStalePayload: a process killed after a write
// reached Bleve (which persists a batch before it returns) but before the
// payload logs did must not leave the reopened index pairing the new text,
// or no document at all, with the old payloads. The kill is played by
// ending the writing goroutine (runtime.Goexit) as Bleve returns: its
// deferred calls touch no file, so the logs are left as a kill leaves
// them; Close then only closes them.
func TestKilledWriteLeavesNoStalePayload(t *testing.T) {
	for _, tc := range rewritingWrites(context.Background()) {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			h := &hookedBleve{bleveIndex: idx.bleveIndex, written: runtime.Goexit}
			idx.bleveIndex = h
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = tc.op(idx)
				t.Error("the write went on past Bleve")
			}()
			<-done
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(string) (*Index, error){OpenReadOnly, Open, Open} {
				idx, err := open(path)
				if err != nil {
					t.Fatal(err)
				}
				d, inBleve, err := idx.Doc("d1")
				if err != nil {
					t.Fatal(err)
				}
				if b, ok, _ := idx.Payload("len", "d1"); ok && (!inBleve || string(b) != fmt.Sprint(len(d.Text))) {
					t.Errorf("read-only %v: d1 in Bleve %v with text %q, and payload len %q", idx.ReadOnly(), inBleve, d.Text, b)
				}
				if b, ok, _ := idx.Payload("len", "d2"); !ok || string(b) != "45" {
					t.Errorf("read-only %v: payload len of d2 = %q, %v; want 45", idx.ReadOnly(), b, ok)
				}
				if err := idx.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(path, payloadDir, journalPrefix+"*")); len(left) > 0 {
				t.Errorf("journals left after Open: %v", left)
			}
		})
	}
}

// TestJournalSyncedAroundBleveWrite: what a power loss could undo is
// synced in the order that keeps payloads from outliving their text: the
// journal (its bytes, then its name in the folder) before Bleve takes the
// write, and the payload logs after it, before the journal goes.
func TestJournalSyncedAroundBleveWrite(t *testing.T) {
	for _, tc := range rewritingWrites(context.Background()) {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			defer idx.Close()
			var events []string
			sync := syncFile
			t.Cleanup(func() { syncFile = sync })
			syncFile = func(f *os.File) error {
				switch name := f.Name(); {
				case name == filepath.Join(path, payloadDir):
					events = append(events, "folder")
				case strings.HasPrefix(filepath.Base(name), journalPrefix):
					events = append(events, "journal")
				case filepath.Ext(name) == ".log":
					events = append(events, "log")
				}
				return sync(f)
			}
			idx.bleveIndex = &hookedBleve{bleveIndex: idx.bleveIndex, written: func() { events = append(events, "bleve") }}
			if err := tc.op(idx); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(slices.Compact(events), " ")
			if got != "journal folder bleve log" {
				t.Errorf("synced and written in the order %q, want journal folder bleve log", got)
			}
		})
	}
}

// TestFailedPayloadWriteDropsOnReopen: a write whose payloads fail to
// reach their log after Bleve took its text (a full disk; here the log is
// closed under the store) leaves the reopened index without the
// document's payload, not with that of its old text.
func TestFailedPayloadWriteDropsOnReopen(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	if err := idx.payloads.sets["len"].log.Close(); err != nil {
		t.Fatal(err)
	}
	replaced := dataset.Doc{ID: "d1", Text: "replaced"}
	if err := idx.Add(context.Background(), []dataset.Doc{replaced}, []PayloadEncoder{lenEncoder{"m1"}}, nil); err == nil {
		t.Fatal("Add wrote to a closed log")
	}
	_ = idx.Close() // fails to sync the closed log
	idx, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if b, ok, _ := idx.Payload("len", "d1"); ok && string(b) != fmt.Sprint(len(replaced.Text)) {
		t.Errorf("payload len of d1 = %q, of the old text", b)
	}
}
