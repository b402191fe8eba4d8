package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/atomicfile"
)

// attachFile, inside an index directory, records the Source of the
// payloads attached to the index.
const attachFile = "semrank_attach.json"

// sourcePayload is the payload name under which Attach keeps each
// document's fingerprint: a hash of the text its payloads were computed
// from, so that a later Attach recomputes only the documents whose text
// changed. No encoder may use it.
const sourcePayload = "_source"

// sourceModel is the model id of the fingerprints: the hash they are.
const sourceModel = "sha256-128"

// attachPage is how many documents Attach reads, and encodes together,
// at a time.
const attachPage = 1000

// Source says what the payloads attached to an index were computed from:
// the stored fields read as a document's title and as its text (each
// list's values joined one a line, as rerank reads a candidate), and the
// analyzer whose terms the term-count payload counts, as the index's
// mapping names it. A stage is served attached payloads only when it reads
// the same Source: payloads of other text would score it wrongly.
type Source struct {
	Title    []string `json:"title"`
	Text     []string `json:"text"`
	Analyzer string   `json:"analyzer"`
}

// String describes s as the CLI prints it.
func (s Source) String() string {
	return fmt.Sprintf("fields title: [%s], text: [%s], analyzer %s", strings.Join(s.Title, ", "), strings.Join(s.Text, ", "), s.Analyzer)
}

// Equal reports whether s and t name the same fields and analyzer.
func (s Source) Equal(t Source) bool {
	return slices.Equal(s.Title, t.Title) && slices.Equal(s.Text, t.Text) && s.Analyzer == t.Analyzer
}

func (s Source) check() error {
	if len(s.Title)+len(s.Text) == 0 {
		return errors.New("the source names no field")
	}
	if slices.Contains(s.Title, "") || slices.Contains(s.Text, "") {
		return errors.New("the source names an empty field")
	}
	if s.Analyzer == "" {
		return errors.New("the source names no analyzer")
	}
	return nil
}

// termsModel is the model id of the term counts analyzed as s says.
func (s Source) termsModel() string { return TermsEncoder{Analyzer: s.Analyzer}.ModelID() }

// Attached is a Bleve index semrank did not build, whatever its mapping,
// with payloads computed from its stored text and kept beside it in a
// payload side store (Attach), so that stages read them instead of
// loading and analyzing each candidate's text at every query.
//
// It is itself a bleve.Index, and its writes keep the payloads in step as
// Index's do: a document indexed again or deleted through Index, Batch or
// Delete loses its payloads (stages then score it from its text) until the
// next Attach computes them again, or, after Keep, the write itself does.
// Writes made through another handle of the index (the application's own
// bleve.Index, another process) are not seen: a document replaced there
// keeps the payloads of its old text until Attach runs again, which
// recomputes the payloads of every document whose text changed and drops
// those of documents that are gone. An application that keeps writing
// therefore writes through its Attached (NewAttached wraps the handle it
// has), or runs Attach after its writes.
type Attached struct {
	bleveIndex        // x: its writes drop the payloads of what they replace
	x          *Index // the payload store, over the application's index

	// mu is held for reading by a payload read through a SourcePayloads,
	// and for writing while Attach changes the source, so that no read
	// pairs one source's check with another source's payload.
	mu     sync.RWMutex
	source *Source // nil until Attach has run
	keep   *keeper // set by Keep
	// attaching serialises Attach calls.
	attaching sync.Mutex
}

// keeper computes the payloads of documents written through an Attached
// (see Keep).
type keeper struct {
	src      *Source
	encoders []PayloadEncoder
	read     func(ctx context.Context, ids []string) ([]dataset.Doc, error)
}

// Keep makes every write through a that indexes documents (Index, Batch)
// compute their payloads in the same call, once Bleve holds their text, as
// Attach would: read returns those of ids the index holds, their title and
// text as src's fields read them, and encoders are Attach's. src must be
// the attached source (Attach first). Meanwhile readers find no payload
// for them and score them from their text; a write whose payloads cannot
// be computed returns the error, the document written and without
// payloads. A later Attach from another source ends it.
func (a *Attached) Keep(src Source, encoders []PayloadEncoder, read func(ctx context.Context, ids []string) ([]dataset.Doc, error)) error {
	encoders, err := attachEncoders(encoders)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.source == nil || !a.source.Equal(src) {
		return errors.New("index: keep: no payloads are attached from these fields and analyzer: attach them first")
	}
	a.keep = &keeper{src: a.source, encoders: encoders, read: read}
	return nil
}

// Index indexes data under id through Bleve, drops the document's old
// payloads and, after Keep, computes its new ones.
func (a *Attached) Index(id string, data any) error {
	if err := a.x.Index(id, data); err != nil {
		return err
	}
	return a.refresh([]string{id})
}

// Batch runs b through Bleve, drops the payloads of the documents it
// indexes or deletes and, after Keep, computes those of the documents it
// indexes.
func (a *Attached) Batch(b *bleve.Batch) error {
	ids, _ := readBatchIDs(b) // a layout it cannot read, x.Batch refuses
	if err := a.x.Batch(b); err != nil {
		return err
	}
	return a.refresh(ids)
}

// refresh computes the payloads of ids, just written, after Keep.
func (a *Attached) refresh(ids []string) error {
	a.mu.RLock()
	k := a.keep
	current := k != nil && a.source == k.src
	a.mu.RUnlock()
	if !current || len(ids) == 0 {
		return nil
	}
	if err := a.x.beginWrite(); err != nil {
		return err
	}
	defer a.x.endWrite()
	ctx := context.Background()
	docs, err := k.read(ctx, ids)
	if err != nil {
		return fmt.Errorf("index: reading back the documents written: %w", err)
	}
	docs = slices.DeleteFunc(docs, func(d dataset.Doc) bool { return d.ID == "" || len(d.ID) > maxIDLen })
	prints := make([][]byte, len(docs))
	for i, d := range docs {
		prints[i] = fingerprint(d)
	}
	return a.encode(ctx, docs, prints, k.encoders)
}

// NewAttached returns b, a Bleve index opened from path by its
// application, with the payloads attached to it there (none before the
// first Attach). The Attached owns b: its Close closes b. A semrank index
// is refused: its payloads are computed when its documents are added
// (Index.Add).
func NewAttached(b bleve.Index, path string) (*Attached, error) {
	return newAttached(b, path, false)
}

func newAttached(b bleve.Index, path string, readOnly bool) (*Attached, error) {
	if isSemrank(b) {
		return nil, fmt.Errorf("index: %s is a semrank index, whose payloads are computed as documents are added with a pipeline's encoders, not attached", path)
	}
	if path == "" {
		return nil, errors.New("index: attach: the index has no path (payloads are kept in its directory)")
	}
	src, err := readSource(path)
	if err != nil {
		return nil, err
	}
	ps, err := openPayloads(path, readOnly)
	if err != nil {
		return nil, err
	}
	x := &Index{bleveIndex: b, Path: path, payloads: ps, readOnly: readOnly, plain: true}
	return &Attached{bleveIndex: x, x: x, source: src}, nil
}

// OpenAttached opens the Bleve index at path for reading and writing,
// whatever its mapping, with the payloads attached to it. Only one
// process at a time can hold an index so, as with Open.
func OpenAttached(path string) (*Attached, error) {
	b, err := openAt(path, false)
	if err != nil {
		return nil, err
	}
	a, err := NewAttached(b, path)
	if err != nil {
		b.Close()
		return nil, err
	}
	return a, nil
}

// readSource reads the Source recorded in the index directory path, or
// returns nil when nothing was ever attached there.
func readSource(path string) (*Source, error) {
	raw, err := os.ReadFile(filepath.Join(path, attachFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	s, err := parseSource(raw)
	if err != nil {
		return nil, fmt.Errorf("index: %s: %w (remove it and attach again)", filepath.Join(path, attachFile), err)
	}
	return s, nil
}

// parseSource reads a Source as attach records it: one JSON object with
// no other keys, naming at least one field and the analyzer.
func parseSource(raw []byte) (*Source, error) {
	var s Source
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// hasAttachment reports whether the index directory path records attached
// payloads.
func hasAttachment(path string) bool {
	_, err := os.Stat(filepath.Join(path, attachFile))
	return err == nil
}

// Source returns the Source of the attached payloads; ok is false when
// none were attached.
func (a *Attached) Source() (s Source, ok bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.source == nil {
		return Source{}, false
	}
	return *a.source, true
}

// PayloadNames returns the names of the attached payloads, the
// fingerprints' among them.
func (a *Attached) PayloadNames() []string { return a.x.PayloadNames() }

// PayloadModel returns the ID of the model whose payloads name holds.
func (a *Attached) PayloadModel(name string) string { return a.x.PayloadModel(name) }

// AttachReport says what Attach did.
type AttachReport struct {
	Docs     int // documents read from the index
	Computed int // whose payloads were computed: new, changed, or for a new model or source
	Kept     int // whose payloads were up to date
	Skipped  int // whose id is too long for a payload log (scored from their text)
	Dropped  int // documents gone from the index whose payloads were dropped
}

// Attach computes the payloads of encoders for the documents docs yields
// (every document of the index, its title and text read from src's
// fields), and stores them beside the index with src, for the stages
// reading src (PayloadsFor). Run again, it computes only what changed: a
// document whose text still has the fingerprint its payloads were
// computed from, and which holds every encoder's payload from its model,
// is left as it is; a payload name holding another model's payloads, or
// an attachment from another source, is cleared and computed anew; and
// the payloads of documents docs no longer yields are dropped.
//
// The payloads are computed on every core (as Add's are), attachPage
// documents at a time, and progress is told how many of the index's
// documents are done. A document's fingerprint is stored after its
// payloads, so that a run that fails or is killed part way leaves
// payloads of the documents' current text, and the next run computes the
// rest. An encoder's panic is raised again in Attach's goroutine.
func (a *Attached) Attach(ctx context.Context, src Source, encoders []PayloadEncoder, docs iter.Seq2[dataset.Doc, error], progress Progress) (AttachReport, error) {
	var rep AttachReport
	if err := src.check(); err != nil {
		return rep, fmt.Errorf("index: attach: %w", err)
	}
	encoders, err := attachEncoders(encoders)
	if err != nil {
		return rep, err
	}
	if err := a.x.beginWrite(); err != nil {
		return rep, fmt.Errorf("index: attach: %w", err)
	}
	defer a.x.endWrite()
	a.attaching.Lock()
	defer a.attaching.Unlock()
	if err := a.setSource(src); err != nil {
		return rep, err
	}
	ps := a.x.payloads
	for _, enc := range encoders {
		if m := ps.model(enc.PayloadName()); m != "" && m != enc.ModelID() {
			ids, err := ps.ids(enc.PayloadName())
			if err != nil {
				return rep, err
			}
			if err := ps.delete(ids, othersThan(ps.names(), enc.PayloadName(), sourcePayload)); err != nil {
				return rep, err
			}
		}
	}
	total := 0
	if n, err := a.DocCount(); err == nil {
		total = int(n)
	}
	seen := map[string]bool{}
	var stale []dataset.Doc
	var prints [][]byte
	flush := func() error {
		if err := a.encode(ctx, stale, prints, encoders); err != nil {
			return err
		}
		rep.Computed += len(stale)
		stale, prints = stale[:0], prints[:0]
		if progress != nil {
			progress(rep.Docs, max(total, rep.Docs))
		}
		return nil
	}
	for d, err := range docs {
		if err != nil {
			return rep, err
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.Docs++
		seen[d.ID] = true
		if d.ID == "" || len(d.ID) > maxIDLen {
			rep.Skipped++
			continue
		}
		fp := fingerprint(d)
		if a.upToDate(d.ID, fp, encoders) {
			rep.Kept++
			continue
		}
		stale, prints = append(stale, d), append(prints, fp)
		if len(stale) >= attachPage {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	gone := map[string]bool{}
	for _, name := range ps.names() {
		ids, err := ps.ids(name)
		if err != nil {
			return rep, err
		}
		for _, id := range ids {
			if !seen[id] {
				gone[id] = true
			}
		}
	}
	rep.Dropped = len(gone)
	return rep, ps.delete(slices.Sorted(maps.Keys(gone)), nil)
}

// attachEncoders checks encoders as Add does and returns them without
// repeats (one model read by two stages is computed once).
func attachEncoders(encoders []PayloadEncoder) ([]PayloadEncoder, error) {
	models := map[string]string{}
	var out []PayloadEncoder
	for _, enc := range encoders {
		name, id := enc.PayloadName(), enc.ModelID()
		if name == sourcePayload {
			return nil, fmt.Errorf("index: attach: payload name %q is the fingerprints'; give the stage another payload name", name)
		}
		if err := checkModelID(name, id); err != nil {
			return nil, err
		}
		switch m, ok := models[name]; {
		case ok && m != id:
			return nil, fmt.Errorf("index: payload %q asked of two models, %s and %s; give their stages different payload names", name, m, id)
		case ok:
			continue
		}
		models[name] = id
		out = append(out, enc)
	}
	return out, nil
}

// othersThan returns the names of names but those given, as the keep set
// of payloadStore.delete.
func othersThan(names []string, but ...string) map[string]string {
	keep := map[string]string{}
	for _, n := range names {
		if !slices.Contains(but, n) {
			keep[n] = ""
		}
	}
	return keep
}

// setSource records src as the attachment's source. Payloads attached
// from another source describe other text: they are all dropped first,
// with the source unset meanwhile, so that no reader is served them.
func (a *Attached) setSource(src Source) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.source != nil && a.source.Equal(src) {
		return nil
	}
	a.source, a.keep = nil, nil
	ps := a.x.payloads
	var all []string
	for _, name := range ps.names() {
		ids, err := ps.ids(name)
		if err != nil {
			return err
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	if err := ps.delete(slices.Compact(all), nil); err != nil {
		return err
	}
	err := atomicfile.Write(filepath.Join(a.x.Path, attachFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(src)
	})
	if err != nil {
		return fmt.Errorf("index: attach: %w", err)
	}
	s := src
	s.Title, s.Text = slices.Clone(src.Title), slices.Clone(src.Text)
	a.source = &s
	return nil
}

// fingerprint hashes the text a document's payloads are computed from.
func fingerprint(d dataset.Doc) []byte {
	h := sha256.New()
	io.WriteString(h, d.Title)
	h.Write([]byte{0})
	io.WriteString(h, d.Text)
	return h.Sum(nil)[:16]
}

// upToDate reports whether id's payloads were computed from text with
// fingerprint fp, by the models of encoders.
func (a *Attached) upToDate(id string, fp []byte, encoders []PayloadEncoder) bool {
	ps := a.x.payloads
	if have, ok := ps.getFrom(sourcePayload, sourceModel, id); !ok || !bytes.Equal(have, fp) {
		return false
	}
	for _, enc := range encoders {
		if _, ok := ps.getFrom(enc.PayloadName(), enc.ModelID(), id); !ok {
			return false
		}
	}
	return true
}

// encode computes every encoder's payload of docs on every core and
// stores them, then the documents' fingerprints, prints.
func (a *Attached) encode(ctx context.Context, docs []dataset.Doc, prints [][]byte, encoders []PayloadEncoder) error {
	if len(docs) == 0 {
		return nil
	}
	out := encodeDocs(ctx, docs, encoders, nil)
	ps := a.x.payloads
	for e, enc := range encoders {
		recs := make([]payloadRec, 0, len(docs))
		for k, d := range docs {
			r := out[k*len(encoders)+e]
			switch {
			case !r.done:
				return ctxErr(ctx)
			case r.panicked:
				panic(r.panicVal)
			case r.err != nil:
				return fmt.Errorf("index: %s payload of %q: %w", enc.PayloadName(), d.ID, r.err)
			}
			recs = append(recs, payloadRec{model: enc.ModelID(), id: d.ID, data: r.data})
		}
		if err := ps.put(enc.PayloadName(), recs); err != nil {
			return err
		}
	}
	recs := make([]payloadRec, len(docs))
	for k, d := range docs {
		recs[k] = payloadRec{model: sourceModel, id: d.ID, data: prints[k]}
	}
	return ps.put(sourcePayload, recs)
}

// termCounts are the collection statistics of the term counts attached
// from a Source: how many documents hold them, and how many of those hold
// each term.
type termCounts struct {
	n  uint64
	df map[string]uint64
}

// CountTerms gives st, statistics of fields analyzed with another
// analyzer than the index's (NewStatsWith), the counts of that analyzer's
// terms over the term counts attached from src, which must be the
// attached source and name st's analyzer. They are the counts of the
// payloads attached when CountTerms runs: statistics made later see later
// writes. Statistics of the index's own analyzer read the index and are
// left as they are.
func (a *Attached) CountTerms(st *Stats, src Source) error {
	if st.own {
		return nil
	}
	if src.Analyzer != st.analyzer {
		return fmt.Errorf("index: term counts of analyzer %s cannot count the terms of %s", src.Analyzer, st.analyzer)
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.source == nil || !a.source.Equal(src) {
		return st.errNotCounted()
	}
	c := &termCounts{df: map[string]uint64{}}
	err := a.x.payloads.each(TermsPayload, src.termsModel(), func(id string, b []byte) error {
		list, err := DecodeTermList(b)
		if err != nil {
			return damagedErr(fmt.Errorf("term counts of %q: %w", id, err))
		}
		c.n++
		for _, tc := range list {
			c.df[tc.Term]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.counted = c
	return nil
}

// PayloadsFor returns the attached payloads as stages reading src ask for
// them (rerank.Payloads), or nil when none were attached from src.
func (a *Attached) PayloadsFor(src Source) *SourcePayloads {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.source == nil || !a.source.Equal(src) {
		return nil
	}
	return &SourcePayloads{a: a, src: a.source}
}

// SourcePayloads are the payloads attached to an index from one Source,
// read as stages reading that source ask for them. Stages ask for term
// counts under semrank's terms model (TermsEncoder{}); here those are the
// counts of the source's analyzer, which the stages then analyze with
// too. Once the attachment changes source, it serves none.
type SourcePayloads struct {
	a   *Attached
	src *Source
}

// stored returns the model id under which the attachment holds the
// payload a stage asks for as name from model.
func (v *SourcePayloads) stored(name, model string) string {
	if name == TermsPayload && model == (TermsEncoder{}).ModelID() {
		return v.src.termsModel()
	}
	return model
}

// PayloadFrom returns docID's payload under name when the model with ID
// model wrote it.
func (v *SourcePayloads) PayloadFrom(name, model, docID string) ([]byte, bool, error) {
	v.a.mu.RLock()
	defer v.a.mu.RUnlock()
	if v.a.source != v.src || name == sourcePayload {
		return nil, false, nil
	}
	b, ok := v.a.x.payloads.getFrom(name, v.stored(name, model), docID)
	return b, ok, nil
}

// PayloadsFrom returns PayloadFrom's payload of each of ids, nil where it
// finds none, under one lock (rerank.WindowPayloads).
func (v *SourcePayloads) PayloadsFrom(name, model string, ids []string) ([][]byte, error) {
	v.a.mu.RLock()
	defer v.a.mu.RUnlock()
	if v.a.source != v.src || name == sourcePayload {
		return make([][]byte, len(ids)), nil
	}
	return v.a.x.payloads.readMany(name, v.stored(name, model), true, ids)
}

// Payload returns the payload name holds for docID.
func (v *SourcePayloads) Payload(name, docID string) ([]byte, bool, error) {
	return v.PayloadFrom(name, v.PayloadModel(name), docID)
}

// PayloadModel returns the ID of the model whose payloads name holds, as
// stages name it, or "" when it holds none.
func (v *SourcePayloads) PayloadModel(name string) string {
	v.a.mu.RLock()
	defer v.a.mu.RUnlock()
	if v.a.source != v.src || name == sourcePayload {
		return ""
	}
	m := v.a.x.payloads.model(name)
	if name == TermsPayload && m == v.src.termsModel() {
		return (TermsEncoder{}).ModelID()
	}
	return m
}
