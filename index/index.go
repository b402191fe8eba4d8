// Package index builds and opens semrank's Bleve indexes: one English
// analyzer (package analyzers) over the fields title and text, searched
// together with BM25, plus per-document payloads (learned term weights,
// concept vectors) computed at index time by the models a user names.
//
// Payloads live in a side store beside the Bleve files rather than in a
// stored Bleve field: reading 100 payloads from memory costs microseconds,
// while idx.Document costs 2–5 µs per hit, a sixteenth to a fifth of the
// search itself for 100 hits (see BenchmarkPayloadRead and docs/RESULTS.md). Each payload records the ID of the model that wrote it,
// and the index refuses payloads from a different model.
package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// Field names of a semrank document.
const (
	FieldTitle = "title"
	FieldText  = "text"
	// FieldMeta holds the record's metadata as one string: a JSON object
	// such as {"category":"Money"}. It is stored, never indexed: it can be
	// read back (Doc, Hit.Metadata, the stages) but not searched or faceted.
	// A raw Bleve document (Index, or bleve.Batch.Index run through Batch)
	// must give it in that form, as Add does:
	//
	//	map[string]any{"title": "…", "text": "…", "meta": `{"category":"Money"}`}
	//
	// Index refuses any other value under FieldMeta (a map, a number, a
	// string that is not a JSON object). A raw batch is not checked: there
	// a map or a number is dropped, neither indexed nor stored, and a
	// string that is not a JSON object is stored but reads back as no
	// metadata. Indexes created before the mapping said so (it used to
	// index the properties of a map) are mapped the same way once Open has
	// opened them.
	FieldMeta = "meta"
	// FieldAll is Bleve's composite of every searchable field.
	FieldAll = "_all"
)

// BatchSize is the number of documents per Bleve batch.
const BatchSize = 1000

// NewMapping returns the index mapping: title and text analyzed with
// analyzers.Name, stored, and with term vectors (the positions that phrase
// queries and highlighting need, as in Bleve's default text mapping; BM25
// scores do not read them), metadata stored only, BM25 scoring. Nothing
// else a document holds is indexed or stored: its other properties are
// ignored, and so is anything nested under FieldMeta, whose only mapped
// form is a string (the JSON of the metadata; see FieldMeta). A raw Bleve
// document looks like
//
//	map[string]any{FieldTitle: "Good bank", FieldText: "Which bank …", FieldMeta: `{"user_id":"U1"}`}
//
// with FieldMeta optional.
func NewMapping() *mapping.IndexMappingImpl {
	m := bleve.NewIndexMapping()
	m.ScoringModel = "bm25"
	m.DefaultAnalyzer = analyzers.Name
	dm := bleve.NewDocumentStaticMapping()
	for _, name := range []string{FieldTitle, FieldText} {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzers.Name
		f.Store = true
		f.IncludeInAll = true
		f.IncludeTermVectors = true
		dm.AddFieldMappingsAt(name, f)
	}
	meta := bleve.NewTextFieldMapping()
	meta.Index = false
	meta.Store = true
	meta.IncludeInAll = false
	meta.DocValues = false
	dm.AddFieldMappingsAt(FieldMeta, meta)
	m.DefaultMapping = dm
	closeMeta(m)
	return m
}

// closeMeta makes the sub-document FieldMeta of m static.
// AddFieldMappingsAt makes a dynamic one, and Bleve would then index every
// property of a metadata map given in place of its JSON string (searchable
// through FieldAll, facetable as meta.category). NewMapping calls it, and
// so does Open: indexes created with an older NewMapping recorded a
// dynamic one, fixed in memory (the mapping recorded in the index is left
// as it is). Documents whose metadata is a string, all semrank writes, are
// mapped the same either way.
func closeMeta(m *mapping.IndexMappingImpl) {
	if m.DefaultMapping == nil {
		return
	}
	if md := m.DefaultMapping.Properties[FieldMeta]; md != nil {
		md.Dynamic = false
	}
}

// checkMeta returns an error when data, a document for Bleve, holds under
// FieldMeta anything but the metadata's JSON object as a string (see
// FieldMeta). It looks where Bleve's mapping would: a key of a map, or a
// field of a struct named so by its json tag.
func checkMeta(data any) error {
	v, ok := metaValue(reflect.ValueOf(data))
	if !ok {
		return nil
	}
	if v, ok = deref(v); !ok {
		return nil // nil metadata: none
	}
	if v.Kind() == reflect.String {
		var m map[string]any
		if json.Unmarshal([]byte(v.String()), &m) == nil && m != nil {
			return nil
		}
		return fmt.Errorf("field %q (index.FieldMeta) must hold the metadata as a JSON object string, such as `{\"category\":\"Money\"}`; got the string %.40q", FieldMeta, v.String())
	}
	return fmt.Errorf("field %q (index.FieldMeta) must hold the metadata as a JSON object string, such as `{\"category\":\"Money\"}`, not a %s: encode it with json.Marshal first (a map there would be neither stored nor searchable)", FieldMeta, v.Type())
}

// deref follows interfaces and pointers to the value they hold; ok is
// false at a nil.
func deref(v reflect.Value) (_ reflect.Value, ok bool) {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// metaValue returns what v, a document, holds under FieldMeta; ok is false
// when it holds nothing there.
func metaValue(v reflect.Value) (_ reflect.Value, ok bool) {
	if v, ok = deref(v); !ok {
		return v, false
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return v, false
		}
		m := v.MapIndex(reflect.ValueOf(FieldMeta).Convert(v.Type().Key()))
		return m, m.IsValid()
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == FieldMeta && f.IsExported() {
				return v.Field(i), true
			}
		}
	}
	return v, false
}

// bleveIndex lets Index embed bleve.Index: embedding the interface type
// directly would clash with its Index method.
type bleveIndex = bleve.Index

// Index is a Bleve index with semrank's mapping and payload store. It is
// itself a bleve.Index, and its writes keep payloads in step with the
// documents they describe: a document indexed again, through Add, Index or
// a raw bleve.Batch run by Batch, keeps only the payloads Add computes for
// its new text (none through Index or Batch: stages then score it from its
// text), and a document deleted, through Delete, DeleteDocs or Batch, loses
// its payloads.
//
// Searches may run while it is written. Bleve and the payload store are
// written one after the other, so a write is not seen all at once; what a
// concurrent reader may see of a document being replaced is:
//
//   - Through Index and Batch: from the moment the write starts, the
//     document has no payloads (Payload reports none), until the write
//     ends, when they are gone for good, or returns an error, when the old
//     ones are back. Its old or its new text, whichever a search sees, is
//     thus never paired with the old payloads.
//   - Through Add: the same for each batch of BatchSize documents, until
//     the batch's new payloads are written. A search whose Bleve snapshot
//     was taken before the batch reached Bleve still holds the old text
//     and, reading payloads after the batch, gets those of the new text:
//     Bleve and the payloads have no common snapshot. That search scores
//     the document from a mix of its old text and its new payloads, once.
//   - Through Delete and DeleteDocs: a search that found the document
//     before its deletion sees it without payloads.
//
// A process killed during a write, or a power loss, leaves the reopened
// index without the payloads of the write's documents that held any (see
// rewrite and payloadStore.begin), never with payloads of text they no
// longer hold; a rerun of the write computes them again.
//
// DocFreq's cache is cleared when each write ends, and a count read during
// a write is not cached. Concurrent writes of the same document are not
// ordered between Bleve and the payload store (the last write to Bleve may
// not be the last to the payloads): writers must be serialised by the
// caller, as package server does (one /api/index request at a time).
type Index struct {
	bleveIndex
	// Path is the index directory given to Create or Open; "" for an
	// in-memory index (Create("")), whose payloads are not persisted.
	Path     string
	payloads *payloadStore

	// dfCache memoises DocFreq until the next write through this Index:
	// rerank stages ask for the same terms query after query, and opening a
	// reader per term costs more than the rest of a TF-IDF stage.
	dfMu    sync.RWMutex
	dfCache map[string]uint64
	dfGen   uint64 // counts invalidations

	// wmu is held for reading by each write (Add's batches, Index, Batch,
	// DeleteDocs) and for writing by Close, so that Close waits for the
	// writes in flight: a write whose Bleve batch went through must also
	// reach the payload logs, or a reopened index would pair the new text
	// with the old payloads. closed is set by Close.
	wmu    sync.RWMutex
	closed atomic.Bool

	readOnly bool // opened by OpenReadOnly
	// plain is set for an index semrank did not build (Attached): its
	// documents are the application's, whose fields FieldMeta's rule
	// does not govern.
	plain bool
}

// beginWrite holds off Close until endWrite; it fails once the index is
// closed, and on an index opened read-only.
func (x *Index) beginWrite() error {
	if x.readOnly {
		return ErrReadOnly
	}
	x.wmu.RLock()
	if x.closed.Load() {
		x.wmu.RUnlock()
		return bleve.ErrorIndexClosed
	}
	return nil
}

func (x *Index) endWrite() { x.wmu.RUnlock() }

// Batch executes a Bleve batch and invalidates cached statistics. It
// overrides bleve.Index's Batch so that Bleve code, and users building raw
// batches (idx.NewBatch, b.Index, b.Delete), keep payloads in step: once
// the batch has succeeded, every document it indexed or deleted has lost
// its payloads, as through Index and Delete, and stages score it from its
// text. A batch that fails leaves payloads as they were.
//
// bleve.Batch does not say which documents it touches, and Bleve v2.6.1
// has no hook that would: its index events carry no ids, and wrapping
// scorch under an index type of our own would change the type recorded in
// existing indexes and hide *scorch.Scorch from the code that asserts it.
// So Batch reads the ids with reflect from the batch's unexported
// internal *bleve_index_api.Batch, the keys of its IndexOps map (a nil
// document is a deletion; both drop payloads). Reflect only reads the map
// keys; nothing is written and unsafe is not used. Should a later Bleve lay
// the batch out otherwise, Batch refuses it with an error while the index
// holds any payload, rather than leave payloads of text that is gone, and
// runs it as Bleve would while the index holds none. TestBatchLayout pins
// the layout of v2.6.1. Add, Index, Delete and DeleteDocs know their ids
// and do not depend on it.
func (x *Index) Batch(b *bleve.Batch) error {
	if err := x.beginWrite(); err != nil {
		return err
	}
	defer x.endWrite()
	ids, ok := readBatchIDs(b)
	if !ok && x.payloads.holdsAny() {
		return errBatchLayout
	}
	x.payloads.hide(ids)
	defer x.payloads.unhide(ids)
	return x.rewrite(ids, nil, nil, func() error { return x.runBatch(b) })
}

// errBatchLayout is returned by Batch for a batch whose documents it cannot
// list while the index holds payloads.
var errBatchLayout = errors.New("index: cannot tell which documents this bleve.Batch indexes or deletes (its layout is not that of Bleve v2.6.1), so their payloads could outlive their text; the batch was not run: write through Add, Index or DeleteDocs instead")

// runBatch executes b through Bleve and invalidates cached statistics,
// leaving payloads to its caller.
func (x *Index) runBatch(b *bleve.Batch) error {
	defer x.invalidate()
	return x.bleveIndex.Batch(b)
}

// readBatchIDs is batchIDs; tests replace it to play a Bleve whose batch
// layout is unknown.
var readBatchIDs = batchIDs

// batchIDs returns the ids of the documents b indexes or deletes, sorted;
// ok is false when b is not laid out as in Bleve v2.6.1. A nil batch has
// none, and goes to Bleve as it is.
func batchIDs(b *bleve.Batch) (ids []string, ok bool) {
	if b == nil {
		return nil, true
	}
	return opIDs(reflect.ValueOf(b))
}

// opIDs returns the keys of v.internal.IndexOps, where v points to a struct
// whose field internal is a non-nil *bleve_index_api.Batch whose IndexOps
// is a map[string]bleve_index_api.Document; ok is false for anything else.
func opIDs(v reflect.Value) (ids []string, ok bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	in := ownField(v.Elem(), "internal")
	if !in.IsValid() || in.Type() != reflect.TypeFor[*bindex.Batch]() || in.IsNil() {
		return nil, false
	}
	ops := ownField(in.Elem(), "IndexOps")
	if !ops.IsValid() || ops.Type() != reflect.TypeFor[map[string]bindex.Document]() {
		return nil, false
	}
	ids = make([]string, 0, ops.Len())
	for it := ops.MapRange(); it.Next(); {
		ids = append(ids, it.Key().String())
	}
	// Sorted so that the deletions land in the logs in one order from run
	// to run.
	slices.Sort(ids)
	return ids, true
}

// ownField returns the field of struct s called name, or the zero Value
// when s has none of its own: a field promoted from an embedded struct is
// another layout, and reaching it through a nil embedded pointer would
// panic (reflect.Value.FieldByName).
func ownField(s reflect.Value, name string) reflect.Value {
	f, ok := s.Type().FieldByName(name)
	if !ok || len(f.Index) != 1 {
		return reflect.Value{}
	}
	return s.Field(f.Index[0])
}

// Index adds or replaces one document and invalidates cached statistics.
// It computes no payloads and drops those the document had, which describe
// its old text: stages then score it from its text. Prefer Add, which
// batches and computes payloads.
//
// It overrides bleve.Index's Index, and refuses data that holds under
// FieldMeta anything but a string of the metadata's JSON object (see
// FieldMeta), which the mapping would neither store nor index.
func (x *Index) Index(id string, data any) error {
	if err := checkMeta(data); err != nil && !x.plain {
		return fmt.Errorf("index: document %q: %w", id, err)
	}
	if err := x.beginWrite(); err != nil {
		return err
	}
	defer x.endWrite()
	ids := []string{id}
	x.payloads.hide(ids)
	defer x.payloads.unhide(ids)
	defer x.invalidate()
	return x.rewrite(ids, nil, nil, func() error { return x.bleveIndex.Index(id, data) })
}

// rewrite runs write, which replaces or deletes the documents ids in
// Bleve, then drops their payloads under every name but the keys of keep
// and writes pending's. A journal of the documents among ids holding
// payloads is written before write and removed once the payloads are
// written, or Bleve refused write (see payloadStore.begin): a process
// killed in between, or a payload write that fails, leaves it, and the
// next Open drops those documents' payloads rather than pair them with
// text Bleve may no longer hold.
func (x *Index) rewrite(ids []string, keep map[string]string, pending map[string][]payloadRec, write func() error) error {
	journal, err := x.payloads.begin(ids)
	if err != nil {
		return err
	}
	if err := write(); err != nil {
		// Bleve refused the write, and the payloads stand (a write that
		// fails changes none); a journal that cannot be removed would
		// only drop them on the next open.
		_ = x.payloads.abandon(journal)
		return err
	}
	// From here a failure keeps the journal: Bleve holds the write, and
	// the logs may not.
	if err := x.payloads.delete(ids, keep); err != nil {
		return err
	}
	for name, recs := range pending {
		if err := x.payloads.put(name, recs); err != nil {
			return err
		}
	}
	return x.payloads.end(journal)
}

// SetInternal stores an internal key, as bleve.Index's does; on an index
// opened read-only it returns ErrReadOnly (Bleve's would wait forever for
// a persister a read-only index does not run).
func (x *Index) SetInternal(key, val []byte) error {
	if x.readOnly {
		return fmt.Errorf("index: set internal: %w", ErrReadOnly)
	}
	return x.bleveIndex.SetInternal(key, val)
}

// DeleteInternal deletes an internal key, as bleve.Index's does; see
// SetInternal.
func (x *Index) DeleteInternal(key []byte) error {
	if x.readOnly {
		return fmt.Errorf("index: delete internal: %w", ErrReadOnly)
	}
	return x.bleveIndex.DeleteInternal(key)
}

func (x *Index) invalidate() {
	x.dfMu.Lock()
	x.dfCache = nil
	x.dfGen++
	x.dfMu.Unlock()
}

// ErrNotSemrank is returned by Open for a directory that is not a semrank
// index.
var ErrNotSemrank = errors.New("not a semrank index")

// ErrNoMapping is returned by Open for a Bleve index folder that holds no
// index mapping: one whose creation was cut short (a process killed after
// Bleve made the folder and its store, before it stored the mapping).
var ErrNoMapping = errors.New("the folder holds a Bleve index without its mapping: its creation was cut short (a killed semrank index?), so it is no index to open or add to; remove it and index again")

// noMapping reports whether err, from bleve.OpenUsing, says the index
// stores no mapping at all. Bleve v2.6.1 then parses an empty mapping and
// returns its JSON error, with the (empty) contents after it, as a string:
// TestOpenWithoutMapping pins it.
func noMapping(err error) bool {
	return strings.TrimSpace(err.Error()) == "error parsing mapping JSON: unexpected end of JSON input\nmapping contents:"
}

// Create makes a new index at path, which must not exist or be an empty
// folder (or a link to one: the index is made where it points). An empty
// folder keeps its mode; a new one gets Bleve's, 0700. An empty
// path makes an in-memory scorch index (no payload persistence).
func Create(path string) (*Index, error) {
	target := path
	var keepMode os.FileMode // the empty folder's, kept for the index
	if path != "" {
		if st, err := os.Stat(path); err == nil {
			keepMode = st.Mode().Perm()
			if !isEmptyDir(path) {
				return nil, fmt.Errorf("index: %s already exists (an index is created as a new folder, or in an empty one)", path)
			}
			// Bleve creates the folder itself: an empty one (made by
			// mkdir beforehand) is taken away for it, where it is, not a
			// link to it.
			if target, err = filepath.EvalSymlinks(path); err != nil {
				return nil, fmt.Errorf("index: %w", err)
			}
			if err := os.Remove(target); err != nil {
				return nil, fmt.Errorf("index: %s is an empty folder, but Bleve must create the index folder itself and it cannot be replaced (%v): give a path inside it", path, err)
			}
		}
	}
	// target is path, resolved through its links when it names an empty
	// folder; "" (in memory) stays "".
	b, err := bleve.NewUsing(target, NewMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("index: create %s: %w", path, err)
	}
	if keepMode != 0 {
		// Bleve made the folder anew, 0700: the user's folder keeps the
		// mode it had (755 for one made by mkdir).
		if err := os.Chmod(target, keepMode); err != nil {
			b.Close()
			return nil, fmt.Errorf("index: create %s: %w", path, err)
		}
	}
	return withPayloads(b, path, false)
}

// withPayloads returns b, opened or created at path, as an Index with the
// payload store at path; it closes b when the store cannot be opened.
func withPayloads(b bleve.Index, path string, readOnly bool) (*Index, error) {
	ps, err := openPayloads(path, readOnly)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &Index{bleveIndex: b, Path: path, payloads: ps, readOnly: readOnly}, nil
}

// ErrReadOnly is returned by the writes (Add, Index, Batch, Delete,
// DeleteDocs, SetInternal, DeleteInternal, Compact) of an index opened
// with OpenReadOnly.
var ErrReadOnly = errors.New("index: opened read-only")

// Open opens an existing semrank index for reading and writing. Only one
// process at a time can hold an index so (Open waits a little, then says
// it is locked), and none while others hold it read-only.
func Open(path string) (*Index, error) { return open(path, false) }

// OpenReadOnly opens an existing semrank index for searching and reading
// alone: its writes return ErrReadOnly, and no file of the index is
// changed (not even to cut the tail a crash tore off a payload log, which
// is skipped). Several processes can hold one index read-only at once
// (searches, runs and reranks side by side), and an index on a read-only
// file system opens; none can while a process holds it with Open.
func OpenReadOnly(path string) (*Index, error) { return open(path, true) }

// ReadOnly reports whether the index was opened with OpenReadOnly.
func (x *Index) ReadOnly() bool { return x.readOnly }

func open(path string, readOnly bool) (*Index, error) {
	b, err := openAt(path, readOnly)
	if err != nil {
		return nil, err
	}
	if !isSemrank(b) {
		b.Close()
		return nil, fmt.Errorf("index: %s: %w (its mapping does not use the %s analyzer)", path, ErrNotSemrank, analyzers.Name)
	}
	closeMeta(b.Mapping().(*mapping.IndexMappingImpl))
	return withPayloads(b, path, readOnly)
}

// OpenAny opens the Bleve index at path read-only, whatever its mapping:
// a semrank index as OpenReadOnly opens it (an *Index, with its
// payloads), any other as Bleve opens it for the application that built
// it: an *Attached, with its payloads, when some were attached to it
// (semrank attach), and a plain bleve.Index otherwise.
func OpenAny(path string) (bleve.Index, error) {
	b, err := openAt(path, true)
	if err != nil {
		return nil, err
	}
	if !isSemrank(b) {
		if !hasAttachment(path) {
			return b, nil
		}
		a, err := newAttached(b, path, true)
		if err != nil {
			b.Close()
			return nil, err
		}
		return a, nil
	}
	closeMeta(b.Mapping().(*mapping.IndexMappingImpl))
	return withPayloads(b, path, true)
}

// isSemrank reports whether b has semrank's mapping (NewMapping).
func isSemrank(b bleve.Index) bool {
	im, ok := b.Mapping().(*mapping.IndexMappingImpl)
	return ok && im.DefaultAnalyzer == analyzers.Name
}

// openAt opens the Bleve index at path, waiting lockWait at most for
// another process's lock.
func openAt(path string, readOnly bool) (bleve.Index, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("index: %s does not exist", path)
	}
	if _, err := os.Stat(filepath.Join(path, "index_meta.json")); err != nil {
		return nil, fmt.Errorf("index: %s: %w", path, ErrNotSemrank)
	}
	// Bleve locks the index file while it is open; without a timeout a
	// second process (a search while semrank serve holds the index) would
	// wait forever, saying nothing.
	//
	// The segments are checked first: Bleve would panic on a damaged
	// one, or, opening for writing, skip it and remove it (see
	// checkSegments).
	if err := checkSegments(path); err != nil {
		return nil, err
	}
	start := time.Now()
	b, err := openBleve(path, map[string]any{"bolt_timeout": lockWait.String(), "read_only": readOnly})
	if err != nil {
		// bbolt gives up one 50 ms retry before the timeout, with its
		// ErrTimeout, which Bleve returns as it is: "timeout".
		if time.Since(start) >= lockWait/2 && err.Error() == "timeout" {
			by := "a running semrank serve, index, or a search, run or rerank"
			if readOnly {
				by = "a running semrank serve or index" // readers share it
			}
			return nil, fmt.Errorf("index: %s is locked by another process (%s?); stop it, or work on a copy: %w", path, by, err)
		}
		if noMapping(err) {
			return nil, fmt.Errorf("index: %s: %w", path, ErrNoMapping)
		}
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	return b, nil
}

// TermVectors reports whether the index keeps term vectors for its title
// and text, which phrase queries and highlighting need. Indexes created
// before semrank kept them have none: phrase queries match
// nothing there. Indexing into such an index keeps its mapping; a new
// index (remove the old one first) has them.
func (x *Index) TermVectors() bool {
	im, ok := x.Mapping().(*mapping.IndexMappingImpl)
	if !ok || im.DefaultMapping == nil {
		return false
	}
	for _, name := range []string{FieldTitle, FieldText} {
		dm := im.DefaultMapping.Properties[name]
		if dm == nil || len(dm.Fields) == 0 || !dm.Fields[0].IncludeTermVectors {
			return false
		}
	}
	return true
}

// lockWait is how long Open waits for another process to release an index.
var lockWait = 2 * time.Second

// OpenOrCreate opens the index at path, creating it when absent or an
// empty directory.
func OpenOrCreate(path string) (*Index, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || isEmptyDir(path) {
		return Create(path)
	}
	return Open(path)
}

// isEmptyDir reports whether path is a directory with nothing in it.
func isEmptyDir(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		return false
	}
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// Close closes the Bleve index and the payload store, once the writes in
// flight are done. Closing a closed index returns bleve.ErrorIndexClosed.
func (x *Index) Close() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if x.closed.Load() {
		return bleve.ErrorIndexClosed
	}
	x.closed.Store(true)
	err := x.payloads.close()
	if e := x.bleveIndex.Close(); err == nil {
		err = e
	}
	return err
}

// PayloadEncoder computes a document's payload at index time. Models that
// store per-document data (TWEAK weights, concept vectors) provide one; the
// index sees only this interface, never the models.
type PayloadEncoder interface {
	// PayloadName is the name the payload is stored under (e.g. "tweak").
	PayloadName() string
	// ModelID identifies the model; payloads of one name must all come
	// from one model.
	ModelID() string
	// EncodePayload returns doc's payload. It must be a pure function of
	// doc, safe to call from several goroutines at once: Add computes a
	// batch's payloads on every core.
	EncodePayload(doc dataset.Doc) ([]byte, error)
}

// Progress is told how many of total documents are done.
type Progress func(done, total int)

// Add indexes docs in batches, computing every encoder's payload for each
// document. A document that replaces one with the same id keeps no other
// payloads: those describe its old text. An encoder whose payload name
// already holds payloads from a different model is refused before
// anything is written.
//
// The payloads are computed on GOMAXPROCS workers, a chunk of documents
// ahead of the batch Bleve is indexing; the batches, the payload records
// and their order, the errors (the first failing document, in document
// order) and the progress calls are those of one core, byte for byte. An
// encoder's panic is raised again in Add's goroutine. When the mapping
// analyzes title and text with semrank's analyzer (NewMapping's), the
// workers also analyze them for Bleve, and the encoders find the analysis
// of the full text in the shared cache: a document's text is analyzed
// once, for its postings and its payloads alike.
func (x *Index) Add(ctx context.Context, docs []dataset.Doc, encoders []PayloadEncoder, progress Progress) error {
	models := map[string]string{} // payload name → model, the payloads computed
	var uniq []PayloadEncoder
	for _, enc := range encoders {
		name, id := enc.PayloadName(), enc.ModelID()
		if err := x.payloads.checkModel(name, id); err != nil {
			return err
		}
		// What put would refuse is refused here, before Bleve holds the
		// new text: a refusal after it would leave the old payloads of
		// the names being rewritten beside the new text.
		if err := checkModelID(name, id); err != nil {
			return err
		}
		// Two models cannot share a payload name: the store would hold one
		// model's id over the other's bytes. One model named twice (two
		// stages reading the same payload) is computed once.
		switch m, ok := models[name]; {
		case ok && m != id:
			return fmt.Errorf("index: payload %q asked of two models, %s and %s; give their stages different payload names", name, m, id)
		case ok:
			continue
		}
		models[name] = id
		uniq = append(uniq, enc)
	}
	encoders = uniq
	// The payloads are computed on every core, a chunk ahead (encodeAhead);
	// everything else, the checks, the batches and the records' order,
	// runs here in document order, as it would with one core.
	var chunks <-chan payloadChunk
	var chunk payloadChunk
	var sem analysis.Analyzer // semrank's, when the mapping gives it to title and text
	if len(encoders) > 0 && len(docs) > 0 {
		sem = x.fieldsAnalyzer()
		ectx, cancel := context.WithCancel(ctx)
		var wait func()
		chunks, wait = encodeAhead(ectx, docs, encoders, sem != nil)
		defer wait()
		defer cancel()
	}
	batch := x.NewBatch()
	var ids []string
	pending := map[string][]payloadRec{}
	flush := func(done int) error {
		if batch.Size() == 0 {
			return nil
		}
		if err := x.flushBatch(batch, ids, models, pending); err != nil {
			return err
		}
		batch.Reset()
		ids = ids[:0]
		pending = map[string][]payloadRec{}
		if progress != nil {
			progress(done, len(docs))
		}
		return nil
	}
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.ID == "" {
			return fmt.Errorf("index: document %d has no id", i)
		}
		if len(encoders) > 0 && len(d.ID) > maxIDLen {
			return fmt.Errorf("index: document %d (id %.40q): its id is %d bytes, more than the %d a payload log holds", i, d.ID, len(d.ID), maxIDLen)
		}
		if len(encoders) > 0 && i >= chunk.start+len(chunk.out)/len(encoders) {
			var ok bool
			if chunk, ok = <-chunks; !ok {
				return ctxErr(ctx)
			}
		}
		var fields []analysis.TokenStream
		if k := i - chunk.start; chunk.fields != nil && chunk.out[k*len(encoders)].done {
			fields = chunk.fields[2*k : 2*k+2]
		}
		if err := x.batchIndex(batch, d, fields, sem); err != nil {
			return fmt.Errorf("index: document %q: %w", d.ID, err)
		}
		clear(fields) // the batch holds them now; the chunk need not
		ids = append(ids, d.ID)
		for e, enc := range encoders {
			r := chunk.out[(i-chunk.start)*len(encoders)+e]
			switch {
			case !r.done: // ctx ended while the chunk was computed
				return ctxErr(ctx)
			case r.panicked:
				panic(r.panicVal)
			}
			p, err := r.data, r.err
			if err != nil {
				return fmt.Errorf("index: %s payload of %q: %w", enc.PayloadName(), d.ID, err)
			}
			if len(p) > maxPayload {
				return fmt.Errorf("index: %s payload of %q is %d bytes, more than %d", enc.PayloadName(), d.ID, len(p), maxPayload)
			}
			pending[enc.PayloadName()] = append(pending[enc.PayloadName()], payloadRec{model: enc.ModelID(), id: d.ID, data: p})
		}
		if batch.Size() >= BatchSize {
			if err := flush(i + 1); err != nil {
				return err
			}
		}
	}
	return flush(len(docs))
}

// ctxErr returns ctx's error, which Add's encoders stop for; they stop
// for no other reason while Add runs.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("index: payload encoding stopped before its documents were done")
}

// flushBatch runs one of Add's batches, holding off Close until its
// payloads are written. runBatch, not Batch: the payloads of the batch's
// documents, ids, are dropped here, in one call, for every name but the
// keys of models, those about to be written afresh from pending, which
// would otherwise get a deletion record before each new payload. They are
// hidden from readers until then, so that none pairs the new text with an
// old payload.
func (x *Index) flushBatch(batch *bleve.Batch, ids []string, models map[string]string, pending map[string][]payloadRec) error {
	if err := x.beginWrite(); err != nil {
		return fmt.Errorf("index: batch: %w", err)
	}
	defer x.endWrite()
	hidden := slices.Clone(ids)
	x.payloads.hide(hidden)
	defer x.payloads.unhide(hidden)
	return x.rewrite(ids, models, pending, func() error {
		if err := x.runBatch(batch); err != nil {
			return fmt.Errorf("index: batch: %w", err)
		}
		return nil
	})
}

// Delete removes a document and its payloads; it overrides bleve.Index's
// Delete so payloads never outlive their documents.
func (x *Index) Delete(id string) error { return x.DeleteDocs(id) }

// DeleteDocs removes documents and their payloads.
func (x *Index) DeleteDocs(ids ...string) error {
	if err := x.beginWrite(); err != nil {
		return fmt.Errorf("index: delete: %w", err)
	}
	defer x.endWrite()
	batch := x.NewBatch()
	for _, id := range ids {
		batch.Delete(id)
	}
	return x.rewrite(ids, nil, nil, func() error {
		if err := x.runBatch(batch); err != nil {
			return fmt.Errorf("index: delete: %w", err)
		}
		return nil
	})
}

// batchIndex adds d to batch as batch.Index would. Given fields, the
// streams of its title and text from analyzers.AnalyzeParts, and sem,
// semrank's analyzer as the mapping holds it, the fields that the mapping
// analyzes with sem get those streams, so that Bleve does not analyze the
// text again: the same tokens, from the same analyzer.
func (x *Index) batchIndex(batch *bleve.Batch, d dataset.Doc, fields []analysis.TokenStream, sem analysis.Analyzer) error {
	if fields == nil {
		return batch.Index(d.ID, bleveDoc(d))
	}
	doc := document.NewDocument(d.ID)
	if err := x.Mapping().MapDocument(doc, bleveDoc(d)); err != nil {
		return err
	}
	for k, f := range doc.Fields {
		tf, ok := f.(*document.TextField)
		if !ok || tf.Analyzer() != sem || len(tf.ArrayPositions()) > 0 {
			continue
		}
		var ts analysis.TokenStream
		switch {
		case tf.Name() == FieldTitle && string(tf.Value()) == d.Title:
			ts = fields[0]
		case tf.Name() == FieldText && string(tf.Value()) == d.Text:
			ts = fields[1]
		default:
			continue
		}
		doc.Fields[k] = document.NewTextFieldCustom(tf.Name(), tf.ArrayPositions(), tf.Value(), tf.Options(), analyzed(ts))
	}
	return batch.IndexAdvanced(doc)
}

// analyzed is an analyzer that gives the stream it holds, whatever its
// input: a field analyzed in advance.
type analyzed analysis.TokenStream

func (a analyzed) Analyze([]byte) analysis.TokenStream { return analysis.TokenStream(a) }

// fieldsAnalyzer returns semrank's analyzer as the index's mapping holds
// it, when the mapping analyzes both title and text with it (every index
// NewMapping made), and nil otherwise.
func (x *Index) fieldsAnalyzer() analysis.Analyzer {
	sem := x.Mapping().AnalyzerNamed(analyzers.Name)
	if sem == nil {
		return nil
	}
	doc := document.NewDocument("probe")
	if err := x.Mapping().MapDocument(doc, map[string]any{FieldTitle: "a", FieldText: "a"}); err != nil {
		return nil
	}
	found := 0
	for _, f := range doc.Fields {
		if tf, ok := f.(*document.TextField); ok && (tf.Name() == FieldTitle || tf.Name() == FieldText) {
			if tf.Analyzer() != sem {
				return nil
			}
			found++
		}
	}
	if found != 2 {
		return nil
	}
	return sem
}

func bleveDoc(d dataset.Doc) map[string]any {
	m := map[string]any{FieldTitle: d.Title, FieldText: d.Text}
	if len(d.Metadata) > 0 {
		if raw, err := json.Marshal(d.Metadata); err == nil {
			m[FieldMeta] = string(raw)
		}
	}
	return m
}

// Doc returns a stored document; ok is false when the index lacks id.
func (x *Index) Doc(id string) (d dataset.Doc, ok bool, err error) {
	doc, err := x.Document(id)
	if err != nil {
		return d, false, fmt.Errorf("index: document %q: %w", id, err)
	}
	if doc == nil {
		return d, false, nil
	}
	d.ID = id
	doc.VisitFields(func(f bindex.Field) {
		switch f.Name() {
		case FieldTitle:
			d.Title = string(f.Value())
		case FieldText:
			d.Text = string(f.Value())
		case FieldMeta:
			_ = json.Unmarshal(f.Value(), &d.Metadata)
		}
	})
	return d, true, nil
}

// Payload returns the payload name holds for docID. Payloads are shared
// (the store's own bytes, and those kept for later reads, see
// PayloadsFrom): callers must not modify them.
func (x *Index) Payload(name, docID string) ([]byte, bool, error) {
	return x.payloads.read(name, docID, "", false)
}

// PayloadFrom returns docID's payload under name when the model with ID
// model wrote it, checking the model and reading the payload under one
// lock (rerank.ModelPayloads); as Payload's, it must not be modified.
func (x *Index) PayloadFrom(name, model, docID string) ([]byte, bool, error) {
	return x.payloads.read(name, docID, model, true)
}

// PayloadsFrom returns PayloadFrom's payload of each of ids, nil where it
// finds none, under one lock (rerank.WindowPayloads). A window's
// documents are read again query after query, so what it reads from a
// segment is kept and the same bytes handed to later reads: callers must
// not modify them.
func (x *Index) PayloadsFrom(name, model string, ids []string) ([][]byte, error) {
	return x.payloads.readMany(name, model, true, ids)
}

// PayloadsFromKinds returns PayloadsFrom(names[k], models[k], ids) for
// every k, under one lock (rerank.GroupedPayloads): a window's stages
// read several payloads of the same documents, and each document is
// looked up once for all of them among the payloads kept from earlier
// windows. As PayloadsFrom's, the payloads must not be modified.
func (x *Index) PayloadsFromKinds(names, models, ids []string) ([][][]byte, error) {
	if len(names) != len(models) {
		return nil, fmt.Errorf("index: %d payload names but %d models", len(names), len(models))
	}
	kinds := make([]payloadKind, len(names))
	for k, name := range names {
		kinds[k] = payloadKind{name, models[k], true}
	}
	return x.payloads.readKinds(kinds, ids)
}

// PayloadModel returns the ID of the model whose payloads name holds.
func (x *Index) PayloadModel(name string) string { return x.payloads.model(name) }

// PayloadNames returns the names of the stored payloads.
func (x *Index) PayloadNames() []string { return x.payloads.names() }

// DocCount returns the number of indexed documents.
func (x *Index) DocCount() (uint64, error) { return x.bleveIndex.DocCount() }

// DocFreq returns how many documents contain the analyzed term in any
// searchable field.
func (x *Index) DocFreq(term string) (uint64, error) {
	if x.closed.Load() {
		// Before the cache, which Close leaves as it was.
		return 0, bleve.ErrorIndexClosed
	}
	x.dfMu.RLock()
	df, ok := x.dfCache[term]
	gen := x.dfGen
	x.dfMu.RUnlock()
	if ok {
		return df, nil
	}
	df, err := x.docFreq(term)
	if err != nil {
		return 0, err
	}
	if h := testHookDocFreq; h != nil {
		h()
	}
	x.cacheDocFreqs(gen, []string{term}, []uint64{df})
	return df, nil
}

// DocFreqs returns DocFreq of each of terms, looked up together: the
// cached ones under one lock, the others through one index reader. A
// window's stages weigh thousands of distinct terms; one at a time, the
// lock was most of a peers stage's time.
func (x *Index) DocFreqs(terms []string) ([]uint64, error) {
	if x.closed.Load() {
		return nil, bleve.ErrorIndexClosed
	}
	out := make([]uint64, len(terms))
	var miss []string
	var at []int
	x.dfMu.RLock()
	for i, t := range terms {
		if df, ok := x.dfCache[t]; ok {
			out[i] = df
		} else {
			miss, at = append(miss, t), append(at, i)
		}
	}
	gen := x.dfGen
	x.dfMu.RUnlock()
	if len(miss) == 0 {
		return out, nil
	}
	if x.closed.Load() {
		return nil, bleve.ErrorIndexClosed
	}
	dfs, err := maxDocFreqs(x, miss, FieldAll)
	if err != nil {
		return nil, err
	}
	if h := testHookDocFreq; h != nil {
		h()
	}
	for j, i := range at {
		out[i] = dfs[j]
	}
	x.cacheDocFreqs(gen, miss, dfs)
	return out, nil
}

// cacheDocFreqs keeps dfs, the document frequencies of terms read since
// the cache's generation was gen.
func (x *Index) cacheDocFreqs(gen uint64, terms []string, dfs []uint64) {
	x.dfMu.Lock()
	defer x.dfMu.Unlock()
	// A write since gen was read may have come after the reader the
	// counts came from: they may be stale, so they are returned but not
	// cached.
	if x.dfGen != gen {
		return
	}
	for i, t := range terms {
		// Query terms are anyone's words (a server's users'): start over
		// rather than grow without bound between writes.
		if x.dfCache == nil || len(x.dfCache) >= dfCacheMax {
			x.dfCache = map[string]uint64{}
		}
		x.dfCache[t] = dfs[i]
	}
}

// dfCacheMax bounds the number of terms DocFreq keeps.
var dfCacheMax = 1 << 16

// testHookDocFreq, when set, runs between DocFreq's reading of a
// statistic and its caching.
var testHookDocFreq func()

func (x *Index) docFreq(term string) (uint64, error) {
	if x.closed.Load() {
		return 0, bleve.ErrorIndexClosed
	}
	return maxDocFreq(x, term, FieldAll)
}

// maxDocFreq returns the largest number of documents of idx holding term
// in one of fields.
func maxDocFreq(idx bleve.Index, term string, fields ...string) (uint64, error) {
	dfs, err := maxDocFreqs(idx, []string{term}, fields...)
	if err != nil {
		return 0, err
	}
	return dfs[0], nil
}

// Reader returns a reader of idx's own index (idx.Advanced()), which the
// caller closes. Read outside bleve.Index, nothing stops a Close: scorch
// then gives a nil snapshot and no error, which would panic; Reader
// returns bleve.ErrorIndexClosed.
func Reader(idx bleve.Index) (bindex.IndexReader, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	return readerOf(adv)
}

// readerOf is Reader of an index already in hand.
func readerOf(adv bindex.Index) (bindex.IndexReader, error) {
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	if sn, ok := r.(*scorch.IndexSnapshot); ok && sn == nil {
		return nil, bleve.ErrorIndexClosed
	}
	return r, nil
}

// maxDocFreqs returns maxDocFreq of each of terms, through one reader.
func maxDocFreqs(idx bleve.Index, terms []string, fields ...string) ([]uint64, error) {
	r, err := Reader(idx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]uint64, len(terms))
	for i, term := range terms {
		for _, f := range fields {
			tfr, err := r.TermFieldReader(context.Background(), []byte(term), f, false, false, false)
			if err != nil {
				return nil, err
			}
			out[i] = max(out[i], tfr.Count())
			tfr.Close()
		}
	}
	return out, nil
}

// Compact merges the index into a single segment and waits for it. Bleve's
// BM25 takes the average field length from the field dictionaries'
// cardinalities summed over segments, so first-stage scores depend on the
// segment layout; compacting after bulk indexing makes them reproducible
// from run to run. Compact first folds every payload log holding records
// into its segment (see payloadStore.fold), so that the index serves its
// payloads from disk with none in the heap. A ctx that ends first is reported (the merge is given
// up; every document stays). An in-memory index (Create("")) is left as it is:
// scorch merges only segments it persists, and would wait forever.
func (x *Index) Compact(ctx context.Context) error {
	if x.readOnly {
		return fmt.Errorf("index: compact: %w", ErrReadOnly)
	}
	if x.closed.Load() {
		return fmt.Errorf("index: compact: %w", bleve.ErrorIndexClosed)
	}
	if x.Path == "" {
		return nil
	}
	if err := x.payloads.compact(); err != nil {
		return err
	}
	adv, err := x.Advanced()
	if err != nil {
		return err
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	if err := sc.ForceMerge(ctx, &mergeplan.SingleSegmentMergePlanOptions); err != nil {
		return fmt.Errorf("index: compact: %w", err)
	}
	if err := ctx.Err(); err != nil {
		// scorch gives up a merge whose ctx ends, without an error, too.
		return fmt.Errorf("index: compact: %w before the merge was done (the index holds every document, in more than one segment)", err)
	}
	if x.closed.Load() {
		// scorch gives up a merge, without an error, when closed.
		return fmt.Errorf("index: compact: %w before the merge was done", bleve.ErrorIndexClosed)
	}
	return nil
}
