package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// IndexRequest is the body of POST /api/index. Documents in Add are added,
// or replaced when their id exists, with the payloads the pipeline's
// stages read computed by the loaded models; ids in Delete are removed.
// Deletions run after additions. Additions are committed in batches of at
// most index.BatchSize documents and Limits.MaxDocBytes bytes (or one
// document), and the request's timeout is looked at between them, so an
// error partway (a timeout, a model that fails on a document) leaves the
// earlier batches indexed; the error answer says how many documents were
// written, and no deletion has run.
//
//	{"add": [{"_id": "d1", "title": "…", "text": "…", "metadata": {…}}],
//	 "delete": ["d7"]}
type IndexRequest struct {
	Add    []dataset.Doc `json:"add,omitempty"`
	Delete []string      `json:"delete,omitempty"`
}

// IndexResponse answers /api/index.
type IndexResponse struct {
	Added   int `json:"added"`   // documents added or replaced: all of IndexRequest.Add
	Deleted int `json:"deleted"` // documents deleted: those of IndexRequest.Delete the index held
	// Missing lists ids asked to be deleted that the index did not hold.
	Missing   []string      `json:"missing,omitempty"`
	Payloads  []string      `json:"payloads"`  // payload names computed for the added documents
	Documents uint64        `json:"documents"` // in the index once the request is done
	Took      time.Duration `json:"took"`      // nanoseconds
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	if err := s.checkWrite(r); err != nil {
		return err
	}
	if s.store == nil && s.coord == nil {
		return &apiError{Status: http.StatusForbidden, Msg: "the index is not a semrank index: it is served for searching, and written by the application that built it"}
	}
	if s.store != nil && s.store.ReadOnly() {
		return &apiError{Status: http.StatusForbidden, Msg: "the index is served read-only (semrank serve --read-only): write it with semrank index, or serve it without --read-only"}
	}
	// The body is held, read and decoded, until the request is done; the
	// bodies held at once are bounded, so that requests queueing for the
	// write lock cannot fill the memory. One of unknown length counts as
	// the largest allowed.
	held := s.limits.MaxIndexBodyBytes
	if r.ContentLength >= 0 && r.ContentLength < held {
		held = r.ContentLength
	}
	if !s.queued.tryAcquire(held) {
		return &apiError{Status: http.StatusServiceUnavailable, Header: map[string]string{"Retry-After": "1"},
			Msg: fmt.Sprintf("%d bytes of /api/index requests are waiting or being written, and this one's %d would pass the limit of %d; send it again once they are done",
				s.queued.held(), held, s.limits.MaxQueuedIndexBytes)}
	}
	defer s.queued.release(held)
	raw, err := readBody(w, r, s.limits.MaxIndexBodyBytes)
	if err != nil {
		return err
	}
	if err := checkIndexText(raw); err != nil {
		return err
	}
	var req IndexRequest
	if err := decodeJSON(raw, &req); err != nil {
		return err
	}
	if n := len(req.Add) + len(req.Delete); n == 0 {
		return badRequest(`nothing to do: give "add" documents or "delete" ids`)
	} else if n > s.limits.MaxIndexDocs {
		return badRequest("%d documents in one request; the limit is %d", n, s.limits.MaxIndexDocs)
	}
	seen := make(map[string]bool, len(req.Add))
	for i, d := range req.Add {
		if err := s.checkID(d.ID); err != nil {
			return badRequest("add[%d]: %v", i, err)
		}
		if seen[d.ID] {
			return badRequest("add[%d]: id %q appears twice", i, d.ID)
		}
		seen[d.ID] = true
		if d.Title == "" && d.Text == "" {
			return badRequest("add[%d] (%q): document has neither title nor text", i, d.ID)
		}
		if n := docBytes(d); n > s.limits.MaxDocBytes {
			return &apiError{Status: http.StatusRequestEntityTooLarge,
				Msg: fmt.Sprintf("add[%d] (%q): document of %d bytes (title, text and metadata); the limit is %d bytes", i, d.ID, n, s.limits.MaxDocBytes)}
		}
		if !utf8.ValidString(d.Title) || !utf8.ValidString(d.Text) {
			return badRequest("add[%d] (%q): title or text is not valid UTF-8", i, d.ID)
		}
	}
	deleting := make(map[string]bool, len(req.Delete))
	for i, id := range req.Delete {
		if err := s.checkID(id); err != nil {
			return badRequest("delete[%d]: %v", i, err)
		}
		if deleting[id] {
			return badRequest("delete[%d]: id %q appears twice", i, id)
		}
		deleting[id] = true
	}
	if s.coord != nil {
		return s.writeShards(w, r, req, start)
	}

	// The models that compute payloads are the ones searches read them
	// with: the pipeline in use now. Read under writeMu, which a reload
	// holds while it builds and swaps the pipeline, so no reload comes
	// between choosing the encoders and writing; a reload after this keeps
	// them valid, since a new model whose payloads differ is refused by
	// its stage.
	if err := s.writeMu.Lock(r.Context()); err != nil {
		return &partialWrite{err: err, total: len(req.Add)} // waited too long behind another batch or a reload
	}
	defer s.writeMu.Unlock()
	encs := append([]index.PayloadEncoder{index.TermsEncoder{}}, s.current.Load().pipeline.Encoders()...)
	out := IndexResponse{Added: len(req.Add)}
	written := 0
	for _, part := range byBytes(req.Add, s.limits.MaxDocBytes) {
		// A part is one Bleve batch or a few, which cannot be
		// interrupted; the context is looked at between them.
		if err := r.Context().Err(); err != nil {
			return &partialWrite{err: err, written: written, total: len(req.Add)}
		}
		done := 0
		if err := s.store.Add(r.Context(), part, encs, func(d, _ int) { done = d }); err != nil {
			return &partialWrite{err: err, written: written + done, total: len(req.Add)}
		}
		written += len(part)
	}
	var del []string
	for _, id := range req.Delete {
		_, ok, err := s.store.Doc(id)
		if err != nil {
			return &partialWrite{err: err, written: len(req.Add), total: len(req.Add), deleting: true}
		}
		if ok {
			del = append(del, id)
		} else {
			out.Missing = append(out.Missing, id)
		}
	}
	if len(del) > 0 {
		if err := s.store.DeleteDocs(del...); err != nil {
			return &partialWrite{err: err, written: len(req.Add), total: len(req.Add), deleting: true}
		}
	}
	out.Deleted = len(del)
	for _, e := range encs {
		out.Payloads = append(out.Payloads, e.PayloadName())
	}
	n, err := s.store.DocCount()
	if err != nil {
		return err
	}
	out.Documents = n
	out.Took = time.Since(start)
	return writeJSON(w, http.StatusOK, out)
}

// writeShards answers /api/index on a coordinator: each document goes to
// its shard, whose server computes its payloads.
func (s *Server) writeShards(w http.ResponseWriter, r *http.Request, req IndexRequest, start time.Time) error {
	res, err := s.coord.Write(r.Context(), req.Add, req.Delete)
	if err != nil {
		return &apiError{Status: http.StatusBadGateway, Msg: err.Error()}
	}
	n, err := s.coord.IndexAlias.DocCount()
	if err != nil {
		return &apiError{Status: http.StatusBadGateway, Msg: fmt.Sprintf("written; counting the documents: %v", err)}
	}
	return writeJSON(w, http.StatusOK, IndexResponse{Added: res.Added, Deleted: res.Deleted, Missing: res.Missing,
		Payloads: res.Payloads, Documents: n, Took: time.Since(start)})
}

// byBytes cuts docs into consecutive parts of at most limit bytes
// (docBytes) each, or of one document. /api/index writes one part at a
// time: Bleve indexes a batch, analysis and all, without looking at the
// context, so a request of many long documents written in one batch ran
// far past its timeout (15 documents of 2 MB: 18 s and 2.1 GB); a part
// takes about as long as the largest document allowed, and as much
// memory.
func byBytes(docs []dataset.Doc, limit int64) [][]dataset.Doc {
	var parts [][]dataset.Doc
	start, n := 0, int64(0)
	for i, d := range docs {
		b := docBytes(d)
		if i > start && n+b > limit {
			parts = append(parts, docs[start:i])
			start, n = i, 0
		}
		n += b
	}
	if start < len(docs) {
		parts = append(parts, docs[start:])
	}
	return parts
}

// docBytes is the size of d that Limits.MaxDocBytes bounds: its title and
// text, and its metadata as JSON.
func docBytes(d dataset.Doc) int64 {
	n := int64(len(d.Title) + len(d.Text))
	if len(d.Metadata) > 0 {
		m, err := json.Marshal(d.Metadata)
		if err != nil {
			return math.MaxInt64 // cannot be: it was decoded from JSON
		}
		n += int64(len(m))
	}
	return n
}

// checkIndexText refuses an /api/index body that is not valid UTF-8 or
// holds an escaped lone surrogate (see decodeJSON), naming the document or
// deletion that holds it, when the body has the request's shape.
func checkIndexText(raw []byte) error {
	off, surrogate := badText(raw)
	if off < 0 {
		return nil
	}
	var shape struct {
		Add    []json.RawMessage `json:"add"`
		Delete []json.RawMessage `json:"delete"`
	}
	if json.Unmarshal(raw, &shape) == nil {
		for i, d := range shape.Add {
			if off, surrogate := badText(d); off >= 0 {
				name := fmt.Sprintf("add[%d]", i)
				var id struct {
					ID json.RawMessage `json:"_id"`
				}
				var s string
				if json.Unmarshal(d, &id) == nil && json.Unmarshal(id.ID, &s) == nil {
					if o, _ := badText(id.ID); o < 0 {
						name += " (" + quote(s) + ")"
					}
				}
				return badRequest("%s: %s", name, describeBadText(d, off, surrogate, "the document"))
			}
		}
		for i, id := range shape.Delete {
			if off, surrogate := badText(id); off >= 0 {
				return badRequest("delete[%d]: %s", i, describeBadText(id, off, surrogate, "the id"))
			}
		}
	}
	return badRequest("request body: %s", describeBadText(raw, off, surrogate, "the body"))
}

// partialWrite is an indexing error after which the first written
// documents of the request are in the index (Add commits in batches) and
// the rest, and every deletion, are not: the client must know what to send
// again, so the error answer ends with note.
type partialWrite struct {
	err            error
	written, total int  // documents to add written in full, of total
	deleting       bool // the error came while deleting, after every addition
}

func (e *partialWrite) Error() string { return e.err.Error() }
func (e *partialWrite) Unwrap() error { return e.err }

func (e *partialWrite) note() string {
	switch {
	case e.deleting:
		return fmt.Sprintf("all %d documents to add were written; the deletions may be incomplete", e.total)
	case e.written == 0:
		return "no document was written in full and nothing was deleted; send them again"
	}
	return fmt.Sprintf("the first %d of the %d documents to add were written in full, the others may be missing or lack their payloads (send them again), and nothing was deleted", e.written, e.total)
}

func (s *Server) checkID(id string) error {
	if len(id) > s.limits.MaxIDBytes {
		return badRequest("id of %d bytes; the limit is %d", len(id), s.limits.MaxIDBytes)
	}
	if !utf8.ValidString(id) {
		return badRequest("id %q is not valid UTF-8", id)
	}
	return dataset.CheckID(id)
}

// DocResponse answers GET /api/doc/{id}.
type DocResponse struct {
	ID       string         `json:"id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (s *Server) handleDoc(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if id == "" {
		return badRequest("give a document id: /api/doc/{id}")
	}
	if err := s.checkID(id); err != nil {
		return badRequest("%v", err)
	}
	d, ok, err := s.doc(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return &apiError{Status: http.StatusNotFound, Msg: "no document with id " + quote(id)}
	}
	return writeJSON(w, http.StatusOK, DocResponse{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata})
}

// doc returns the stored document id: a semrank index's, or, from
// another index, its title and text as the pipeline's fields name them
// and every stored field as its metadata.
func (s *Server) doc(ctx context.Context, id string) (dataset.Doc, bool, error) {
	if s.store != nil {
		return s.store.Doc(id)
	}
	c := []rerank.Candidate{{Doc: dataset.Doc{ID: id}}}
	if err := (rerank.Searcher{Index: s.idx, Pipeline: s.current.Load().pipeline}).Load(ctx, c); err != nil {
		return dataset.Doc{}, false, err
	}
	if c[0].Metadata == nil && c[0].Title == "" && c[0].Text == "" {
		return dataset.Doc{}, false, nil
	}
	return dataset.Doc{ID: id, Title: c[0].Title, Text: c[0].Text, Metadata: c[0].Metadata}, true, nil
}

// quote quotes s for an error message as Go does (quotes, control
// characters and invalid UTF-8 escaped), cut to its first 80 bytes.
func quote(s string) string {
	if len(s) > 80 {
		n := 80
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // cut between characters
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}
