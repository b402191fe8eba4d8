package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// IndexRequest is the body of POST /api/index. Documents in Add are added,
// or replaced when their id exists, with the payloads the pipeline's
// stages read computed by the loaded models; ids in Delete are removed.
// Deletions run after additions. Additions are committed in batches of
// index.BatchSize documents, so an error partway (a timeout, a model that
// fails on a document) leaves the earlier batches indexed; the error answer
// says how many documents were written, and no deletion has run.
//
//	{"add": [{"_id": "d1", "title": "…", "text": "…", "metadata": {…}}],
//	 "delete": ["d7"]}
type IndexRequest struct {
	Add    []eval.Doc `json:"add,omitempty"`
	Delete []string   `json:"delete,omitempty"`
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
	if s.idx.ReadOnly() {
		return &apiError{Status: http.StatusForbidden, Msg: "the index is served read-only (semrank serve --read-only): write it with semrank index, or serve it without --read-only"}
	}
	var req IndexRequest
	if err := decodeBody(w, r, s.limits.MaxIndexBodyBytes, &req); err != nil {
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
	if len(req.Add) > 0 {
		written := 0
		if err := s.idx.Add(r.Context(), req.Add, encs, func(done, _ int) { written = done }); err != nil {
			return &partialWrite{err: err, written: written, total: len(req.Add)}
		}
	}
	var del []string
	for _, id := range req.Delete {
		_, ok, err := s.idx.Doc(id)
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
		if err := s.idx.DeleteDocs(del...); err != nil {
			return &partialWrite{err: err, written: len(req.Add), total: len(req.Add), deleting: true}
		}
	}
	out.Deleted = len(del)
	for _, e := range encs {
		out.Payloads = append(out.Payloads, e.PayloadName())
	}
	n, err := s.idx.DocCount()
	if err != nil {
		return err
	}
	out.Documents = n
	out.Took = time.Since(start)
	return writeJSON(w, http.StatusOK, out)
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
	return eval.CheckID(id)
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
	d, ok, err := s.idx.Doc(id)
	if err != nil {
		return err
	}
	if !ok {
		return &apiError{Status: http.StatusNotFound, Msg: "no document with id " + quote(id)}
	}
	return writeJSON(w, http.StatusOK, DocResponse{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata})
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
