package index

import (
	"reflect"
	"sort"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// storedReader reads the stored text fields of hits straight from the
// segments of a scorch snapshot, by the document numbers their search
// found. Bleve's loader (bleve.LoadAndHighlightAllFields) looks each
// hit's id up in the id dictionary and builds a document of field values
// before copying them into the hit; for a window of candidates that was
// most of the time a reranking of an index without payloads took.
type storedReader struct {
	segs []*scorch.SegmentSnapshot
	offs []uint64 // the first document number of each segment
	all  bool     // every field ("*")
	want map[string]bool
}

// newStoredReader returns the reader of fields (or every field, "*") in
// r, nil where r is not a scorch snapshot or may hide stored fields
// itself (a mapping update that deleted a field's stored values, which
// Bleve's loader leaves out until a merge drops them).
func newStoredReader(r bindex.IndexReader, fields []string) *storedReader {
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok || snap == nil || len(fields) == 0 {
		return nil
	}
	if f := reflect.ValueOf(snap).Elem().FieldByName("updatedFields"); !f.IsValid() || f.Kind() != reflect.Map || f.Len() > 0 {
		return nil
	}
	s := &storedReader{segs: snap.Segments(), want: map[string]bool{}}
	var off uint64
	for _, seg := range s.segs {
		s.offs = append(s.offs, off)
		off += uint64(seg.FullSize())
	}
	for _, f := range fields {
		s.all = s.all || f == "*"
		s.want[f] = true
	}
	return s
}

// load sets h's stored fields as Bleve's loader would and reports true,
// or reports false, leaving h without fields, where it cannot tell them
// so: h has no document number or has nested documents, the document at
// h's number in this snapshot is deleted or is not h's (a merge since
// h's search renumbered it), or a field holds other than text.
func (s *storedReader) load(h *search.DocumentMatch) bool {
	if len(h.IndexInternalID) != 8 || len(h.Descendants) > 0 {
		return false
	}
	num := h.IndexInternalID.Value()
	i := sort.Search(len(s.offs), func(i int) bool { return s.offs[i] > num }) - 1
	if i < 0 {
		return false
	}
	seg, local := s.segs[i], num-s.offs[i]
	if local >= uint64(seg.FullSize()) {
		return false
	}
	if del := seg.Deleted(); del != nil && del.Contains(uint32(local)) {
		return false
	}
	var id string
	text := true
	err := seg.VisitDocument(local, func(name string, typ byte, value []byte, _ []uint64) bool {
		if name == "_id" {
			id = string(value)
			return true
		}
		if typ != 't' {
			text = false
			return false
		}
		if s.all || s.want[name] {
			h.AddFieldValue(name, string(value))
		}
		return true
	})
	if err != nil || !text || id != h.ID {
		h.Fields = nil
		return false
	}
	return true
}
