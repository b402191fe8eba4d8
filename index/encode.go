package index

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// encodeChunk is the number of documents whose payloads are computed
// together, one chunk ahead of Add's batches; a variable so that tests can
// cross many chunk boundaries with a small corpus.
var encodeChunk = BatchSize

// encoded is one document's payload from one encoder, or how computing it
// failed.
type encoded struct {
	data     []byte
	err      error
	panicked bool
	panicVal any // what the encoder panicked with, raised again by Add
	done     bool
}

// payloadChunk holds the payloads of docs[start:start+n], document-major:
// out[k*len(encoders)+e] is encoder e's payload of document start+k; and,
// when Add asked for them, the documents' title and text analyzed for
// Bleve: fields[2k] and fields[2k+1] (see analyzers.AnalyzeParts).
type payloadChunk struct {
	start  int
	out    []encoded
	fields []analysis.TokenStream
}

// encodeAhead computes every encoder's payload of each document of docs on
// GOMAXPROCS workers, chunk by chunk of encodeChunk documents, and sends
// the chunks in document order. It works one chunk ahead of its reader, so
// that the payloads of the next batch are computed while Bleve indexes
// this one, and holds at most three chunks at once. With fields, it also
// analyzes each document's title and text, before its encoders, which then
// find the analysis of its full text in the shared cache, and keeps the
// streams for Bleve's fields (see Index.batchIndex): the text is
// analyzed once for the index and the payloads.
//
// Encoders are pure functions of a document (PayloadEncoder), so the bytes
// do not depend on which worker computed them or when: Add writes the
// records in document order, as it did computing them one by one. For
// each document the encoders run in their order and stop at the first
// that fails, as they do in sequence; a panic is recovered and kept, for
// Add to raise again in its own goroutine, where the caller (a server's
// handler) can recover it. Documents after a failing one may have been
// encoded for nothing; that costs time, never a record.
//
// The workers stop once ctx is done, leaving the rest of the chunk not
// done, and the channel is closed when every chunk was sent or ctx ended.
// The returned wait blocks until no worker runs: Add cancels ctx and
// waits before it returns, so that no encoder runs once Add has returned.
func encodeAhead(ctx context.Context, docs []dataset.Doc, encoders []PayloadEncoder, fields bool) (<-chan payloadChunk, func()) {
	ch := make(chan payloadChunk, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		for start := 0; start < len(docs); start += encodeChunk {
			chunk := docs[start:min(start+encodeChunk, len(docs))]
			c := payloadChunk{start: start}
			if fields {
				c.fields = make([]analysis.TokenStream, 2*len(chunk))
			}
			c.out = encodeDocs(ctx, chunk, encoders, c.fields)
			select {
			case ch <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, wg.Wait
}

// encodeDocs computes the payloads of docs on up to GOMAXPROCS workers,
// each taking the next document not yet taken. Given fields (two for each
// document), a worker first analyzes the document's title and text into
// them, and drops the analysis of its full text from the shared cache once
// the document's encoders have read it.
func encodeDocs(ctx context.Context, docs []dataset.Doc, encoders []PayloadEncoder, fields []analysis.TokenStream) []encoded {
	out := make([]encoded, len(docs)*len(encoders))
	workers := min(runtime.GOMAXPROCS(0), len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(docs) || ctx.Err() != nil {
					return
				}
				if fields == nil {
					encodeDoc(docs[k], encoders, out[k*len(encoders):(k+1)*len(encoders)])
					continue
				}
				p := analyzers.AnalyzeParts(docs[k].Title, docs[k].Text)
				copy(fields[2*k:2*k+2], p.Streams)
				encodeDoc(docs[k], encoders, out[k*len(encoders):(k+1)*len(encoders)])
				analyzers.Forget(p.Text)
			}
		}()
	}
	wg.Wait()
	return out
}

// encodeDoc runs encoders over d in order, into out, stopping at the first
// that fails or panics.
func encodeDoc(d dataset.Doc, encoders []PayloadEncoder, out []encoded) {
	for e, enc := range encoders {
		out[e] = encodeOne(d, enc)
		if out[e].err != nil || out[e].panicked {
			return
		}
	}
}

func encodeOne(d dataset.Doc, enc PayloadEncoder) (r encoded) {
	defer func() {
		if v := recover(); v != nil {
			r = encoded{panicked: true, panicVal: v, done: true}
		}
	}()
	p, err := enc.EncodePayload(d)
	return encoded{data: p, err: err, done: true}
}
