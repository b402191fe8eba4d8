package index

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// BenchmarkInternalStorePayloads measures why payloads do not live in
// Bleve's internal key-value store, which a batch can write atomically
// with the text: batches of 1,000 short documents, with and without a
// 300-byte internal value per document, into a scorch index. It reports
// the first and the last batch's time; scorch copies every internal value
// into each new snapshot (and persists them all again), so with payloads
// a batch's cost grows with the collection.
//
//	go test -run '^$' -bench BenchmarkInternalStorePayloads -benchtime 1x ./index/
func BenchmarkInternalStorePayloads(b *testing.B) {
	const batches = 30
	for _, withKV := range []bool{false, true} {
		b.Run(fmt.Sprintf("internal=%v", withKV), func(b *testing.B) {
			for b.Loop() {
				idx, err := bleve.New(filepath.Join(b.TempDir(), "i"), bleve.NewIndexMapping())
				if err != nil {
					b.Fatal(err)
				}
				payload := make([]byte, 300)
				var first, last time.Duration
				for n := range batches {
					batch := idx.NewBatch()
					for i := range 1000 {
						id := fmt.Sprintf("d%d-%d", n, i)
						if err := batch.Index(id, map[string]any{"body": "a short forum post " + id}); err != nil {
							b.Fatal(err)
						}
						if withKV {
							batch.SetInternal([]byte("p:"+id), payload)
						}
					}
					start := time.Now()
					if err := idx.Batch(batch); err != nil {
						b.Fatal(err)
					}
					switch n {
					case 0:
						first = time.Since(start)
					case batches - 1:
						last = time.Since(start)
					}
				}
				idx.Close()
				b.ReportMetric(first.Seconds()*1000, "first-batch-ms")
				b.ReportMetric(last.Seconds()*1000, "last-batch-ms")
			}
		})
	}
}
