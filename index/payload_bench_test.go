package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/semrank/semrank/dataset"
)

// vecEncoder stores a 100-float32 vector per document, the size of a
// concept vector or a short TWEAK weight list.
type vecEncoder struct{}

func (vecEncoder) PayloadName() string { return "vec" }
func (vecEncoder) ModelID() string     { return "bench" }
func (vecEncoder) EncodePayload(d dataset.Doc) ([]byte, error) {
	b := make([]byte, 0, 400)
	for i := 0; i < 100; i++ {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(len(d.Text)+i)))
	}
	return b, nil
}

func benchDocs(n int) []dataset.Doc {
	docs := make([]dataset.Doc, n)
	for i := range docs {
		docs[i] = dataset.Doc{ID: fmt.Sprintf("d%05d", i), Title: "question about banks and visas", Text: fmt.Sprintf("body %d of a forum post about living in Doha, Qatar", i)}
	}
	return docs
}

// BenchmarkPayloadRead compares reading 100 candidates' payloads from the
// side store, from its log's tail in the heap and, once folded, from its
// memory-mapped segment, with reading them from a stored-only Bleve field through
// idx.Document, the alternative the design rejected.
func BenchmarkPayloadRead(b *testing.B) {
	docs := benchDocs(5000)
	ctx := context.Background()
	dir := b.TempDir()
	idx, err := Create(filepath.Join(dir, "side"))
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(ctx, docs, []PayloadEncoder{vecEncoder{}}, nil); err != nil {
		b.Fatal(err)
	}
	m := NewMapping()
	f := bleve.NewTextFieldMapping()
	f.Index, f.Store, f.IncludeInAll, f.DocValues = false, true, false, false
	m.DefaultMapping.AddFieldMappingsAt("payload", f)
	stored, err := bleve.NewUsing(filepath.Join(dir, "stored"), m, scorch.Name, scorch.Name, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer stored.Close()
	batch := stored.NewBatch()
	for _, d := range docs {
		p, _ := vecEncoder{}.EncodePayload(d)
		doc := bleveDoc(d)
		doc["payload"] = string(p)
		if err := batch.Index(d.ID, doc); err != nil {
			b.Fatal(err)
		}
	}
	if err := stored.Batch(batch); err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = docs[i*37%len(docs)].ID
	}
	read := func(b *testing.B) {
		for b.Loop() {
			for _, id := range ids {
				if p, ok, _ := idx.Payload("vec", id); !ok || len(p) != 400 {
					b.Fatal("missing payload")
				}
			}
		}
	}
	b.Run("side-store/100", read) // the log's tail, in the heap
	if err := idx.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("side-store-segment/100", read)                       // folded: the mapped segment
	b.Run("side-store-segment-window/100", func(b *testing.B) { // one read of the window
		model := idx.PayloadModel("vec")
		for b.Loop() {
			ps, err := idx.PayloadsFrom("vec", model, ids)
			if err != nil || len(ps) != len(ids) || len(ps[99]) != 400 {
				b.Fatal("missing payload", err)
			}
		}
	})
	b.Run("stored-field/100", func(b *testing.B) {
		for b.Loop() {
			for _, id := range ids {
				doc, err := stored.Document(id)
				if err != nil || doc == nil {
					b.Fatal("missing document")
				}
				n := 0
				doc.VisitFields(func(f bindex.Field) {
					if f.Name() == "payload" {
						n = len(f.Value())
					}
				})
				if n != 400 {
					b.Fatalf("payload of %d bytes", n)
				}
			}
		}
	})
	q, _ := TextQuery("bank visa Doha")
	b.Run("search-top100", func(b *testing.B) {
		for b.Loop() {
			if _, err := idx.TopN(ctx, q, 100); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteOne measures, in one run, adding one new document with a
// payload and replacing one that holds a payload: a replacement also
// writes, and syncs, the journal that keeps a killed or power-cut write
// from pairing the new text with the old payload, and syncs the logs
// before the journal goes (a new document needs neither).
func BenchmarkWriteOne(b *testing.B) {
	ctx := context.Background()
	for _, replace := range []bool{false, true} {
		name := "new"
		if replace {
			name = "replace"
		}
		b.Run(name, func(b *testing.B) {
			idx, err := Create(filepath.Join(b.TempDir(), "idx"))
			if err != nil {
				b.Fatal(err)
			}
			defer idx.Close()
			if err := idx.Add(ctx, benchDocs(100), []PayloadEncoder{vecEncoder{}}, nil); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				d := dataset.Doc{ID: fmt.Sprintf("new%d", i), Text: fmt.Sprint("text number ", i)}
				if replace {
					d.ID = "d00001"
				}
				if err := idx.Add(ctx, []dataset.Doc{d}, []PayloadEncoder{vecEncoder{}}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPayloadKinds compares a window's four payloads read one kind
// at a time (PayloadsFrom each) with reading them together
// (PayloadsFromKinds), over 50 windows of 100 of 5,000 documents, all
// kept from earlier reads, as windows find them query after query.
func BenchmarkPayloadKinds(b *testing.B) {
	docs := benchDocs(5000)
	ctx := context.Background()
	idx, err := Create(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	names := []string{"terms", "tweak", "s2net", "lsa"}
	models := []string{"m", "m", "m", "m"}
	var encs []PayloadEncoder
	for _, n := range names {
		encs = append(encs, modelEncoder{n, "m"})
	}
	if err := idx.Add(ctx, docs, encs, nil); err != nil {
		b.Fatal(err)
	}
	if err := idx.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	windows := make([][]string, 50)
	for w := range windows {
		windows[w] = make([]string, 100)
		for i := range windows[w] {
			windows[w][i] = docs[(w*100+i)*37%len(docs)].ID
		}
	}
	b.Run("each", func(b *testing.B) {
		w := 0
		for b.Loop() {
			for k, n := range names {
				if _, err := idx.PayloadsFrom(n, models[k], windows[w%len(windows)]); err != nil {
					b.Fatal(err)
				}
			}
			w++
		}
	})
	b.Run("together", func(b *testing.B) {
		w := 0
		for b.Loop() {
			if _, err := idx.PayloadsFromKinds(names, models, windows[w%len(windows)]); err != nil {
				b.Fatal(err)
			}
			w++
		}
	})
}
