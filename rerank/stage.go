// Package rerank rescores the top candidates of a Bleve search with learned
// and unsupervised stages, fuses the stage scores with the first-stage
// score, and hands back ordinary Bleve results.
//
// A Stage gives one score per candidate. A Pipeline runs its stages over a
// window of candidates and combines their scores with a Fusion (a
// pipeline file that names none gets a linear fusion weighing every stage
// and the first-stage rank equally; see FusionSpec). Wrap puts a Pipeline
// behind a bleve.Index, so code that already calls idx.Search gets
// reranked hits without other changes.
//
// A pipeline works over any Bleve index: it names the stored fields its
// stages read (Config.Fields), and built against the index (EnvOf), its
// lexical stages analyze text with those fields' analyzers and read
// document frequencies from the index. The learned stages tweak, lsa,
// s2net, dse, quality, deepmatch, bilinear and siamese read the
// per-document payloads a semrank index
// stores at index time (Env.Payloads, Pipeline.Encoders); without them
// they compute the same values from each candidate's text at every query,
// which is several times slower. Searcher and Wrap run the one query path:
// first stage, window, stages, fusion.
//
// Stages for the models in semrank's models/ packages live in package
// rerank/stages, which registers them by type name so a pipeline file can
// name them; rerank itself imports no model package, only package models'
// bundle format, in which its fusion models are saved. What trains and runs
// pipelines lives beside it and imports it: rerank/learn fits fusions,
// rerank/offline runs pipelines over datasets, rerank/publish writes
// pipeline files' checksums, and rerank/recipe trains whole pipelines.
package rerank

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
)

// Query is what a stage knows about the query.
type Query struct {
	ID   string // empty for ad-hoc queries
	Text string // the full query text (title and body joined)
}

// Candidate is one first-stage hit handed to the stages: the document
// (its Metadata decoded from the index's stored meta field, or the hit's
// stored fields when it has none), its first-stage score and 1-based
// rank, and its position in a given candidate list (e.g. SemEval's
// search-engine order), 0 when candidates were retrieved.
type Candidate = index.Hit

// Stage scores candidates for a query: one score per candidate, in
// candidate order, higher is better. Scores need not be normalised;
// fusion normalises them per query. A Stage must be safe for concurrent use.
type Stage interface {
	Name() string
	Score(ctx context.Context, q Query, cands []Candidate) ([]float64, error)
}

// Payloads gives stages the per-document data (learned term weights,
// concept vectors) computed at index time. index.Index implements it.
type Payloads interface {
	// Payload returns the bytes stored under name for docID; ok is false
	// when the document has none.
	Payload(name, docID string) (b []byte, ok bool, err error)
	// PayloadModel returns the ID of the model that wrote payload name, or
	// "" when the index has no such payload.
	PayloadModel(name string) string
}

// ModelPayloads is implemented by Payloads that read a payload only if a
// given model wrote it, in one step: between a PayloadModel call and a
// Payload call, a name whose payloads were all removed may pass to
// another model (index.Index does both steps under one lock).
type ModelPayloads interface {
	// PayloadFrom returns the bytes stored under name for docID when the
	// model with ID model wrote them; ok is false otherwise.
	PayloadFrom(name, model, docID string) (b []byte, ok bool, err error)
}

var _ ModelPayloads = (*index.Index)(nil)

// ReadPayload returns docID's payload under name when the model with ID
// model wrote it, through ModelPayloads when p implements it; ok is false
// when p is nil or holds none from that model.
func ReadPayload(p Payloads, name, model, docID string) (b []byte, ok bool, err error) {
	switch mp := p.(type) {
	case nil:
		return nil, false, nil
	case ModelPayloads:
		return mp.PayloadFrom(name, model, docID)
	}
	if p.PayloadModel(name) != model {
		return nil, false, nil
	}
	return p.Payload(name, docID)
}

// WindowPayloads is implemented by Payloads that read many documents'
// payloads in one step, as a window's stages read them: one lock and one
// check of the model for the window, not one per document.
type WindowPayloads interface {
	// PayloadsFrom returns, for each of ids, its payload under name when
	// the model with ID model wrote it, and nil where it holds none.
	PayloadsFrom(name, model string, ids []string) ([][]byte, error)
}

var _ WindowPayloads = (*index.Index)(nil)

// ReadWindowPayloads returns the payload under name from the model with
// ID model (see ReadPayload) of each of ids, a window's candidates, nil
// where it has none. A window's search reads each payload once however
// many stages ask (WindowMemoOf), so callers must not modify what it
// returns.
func ReadWindowPayloads(ctx context.Context, p Payloads, name, model string, ids []string) ([][]byte, error) {
	read := func() (any, error) {
		if wp, ok := p.(WindowPayloads); ok {
			return wp.PayloadsFrom(name, model, ids)
		}
		out := make([][]byte, len(ids))
		for i, id := range ids {
			b, ok, err := ReadPayload(p, name, model, id)
			if err != nil {
				return nil, err
			}
			if ok {
				out[i] = b
			}
		}
		return out, nil
	}
	if p == nil || len(ids) == 0 {
		return make([][]byte, len(ids)), nil
	}
	v, err := windowMemoFor(ctx, p).Do(windowPayloadKey(p, PayloadKind{name, model}, ids), read)
	if err != nil {
		return nil, err
	}
	return v.([][]byte), nil
}

// windowMemoFor returns the window's memo (WindowMemoOf) where p can key
// it, nil where it cannot.
func windowMemoFor(ctx context.Context, p Payloads) *WindowMemo {
	if !reflect.TypeOf(p).Comparable() {
		return nil
	}
	return WindowMemoOf(ctx)
}

// windowPayloadKey keys a window's read of kind from p in the window's
// memo: its candidates' count and first and last ids tell a stage
// reading a part of the window apart.
func windowPayloadKey(p Payloads, kind PayloadKind, ids []string) any {
	type key struct {
		p           Payloads
		kind        PayloadKind
		n           int
		first, last string
	}
	return key{p, kind, len(ids), ids[0], ids[len(ids)-1]}
}

// PayloadKind is a payload a stage reads: the name it is stored under
// and the ID of the model that must have written it.
type PayloadKind struct {
	Name, Model string
}

// PayloadReader is implemented by stages that read stored payloads, so
// that a pipeline reads a window's payloads of every stage together
// before they score (ReadWindowPayloadKinds).
type PayloadReader interface {
	// WindowPayloads returns where the stage reads payloads from and
	// which it reads; p is nil when it reads none.
	WindowPayloads() (p Payloads, kinds []PayloadKind)
}

// GroupedPayloads is implemented by Payloads that read several payloads
// of a window's documents in one step cheaper than one payload at a time
// (index.Index: each document is looked up once for all of them).
type GroupedPayloads interface {
	// PayloadsFromKinds returns, for each k, WindowPayloads'
	// PayloadsFrom(names[k], models[k], ids).
	PayloadsFromKinds(names, models, ids []string) ([][][]byte, error)
}

var _ GroupedPayloads = (*index.Index)(nil)

// ReadWindowPayloadKinds reads kinds of each of ids, a window's
// candidates, from p in one step where p is a GroupedPayloads, and leaves
// them in the window's memo, where ReadWindowPayloads finds them. Where p
// is not, or the window has no memo, it reads nothing: each
// ReadWindowPayloads call reads its own.
func ReadWindowPayloadKinds(ctx context.Context, p Payloads, kinds []PayloadKind, ids []string) error {
	gp, ok := p.(GroupedPayloads)
	memo := windowMemoFor(ctx, p)
	if !ok || memo == nil || len(ids) == 0 || len(kinds) == 0 {
		return nil
	}
	names, models := make([]string, len(kinds)), make([]string, len(kinds))
	for k, kind := range kinds {
		names[k], models[k] = kind.Name, kind.Model
	}
	read, err := gp.PayloadsFromKinds(names, models, ids)
	if err != nil {
		return err
	}
	for k, kind := range kinds {
		if _, err := memo.Do(windowPayloadKey(p, kind, ids), func() (any, error) { return read[k], nil }); err != nil {
			return err
		}
	}
	return nil
}

// IDs returns the candidates' ids, in order.
func IDs(cands []Candidate) []string {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return ids
}

// TermStats gives stages collection statistics of the indexed terms.
// index.Index implements it.
type TermStats interface {
	DocCount() (uint64, error)
	// DocFreq returns the number of documents containing the analyzed term
	// in any searchable field.
	DocFreq(term string) (uint64, error)
}

// BatchStats is implemented by TermStats that look up many terms'
// document frequencies at once cheaper than one by one (index.Index: one
// lock, one index reader). DocFreqs uses it.
type BatchStats interface {
	DocFreqs(terms []string) ([]uint64, error)
}

// DocFreqs returns s's DocFreq of each of terms, in one call where s is
// a BatchStats.
func DocFreqs(s TermStats, terms []string) ([]uint64, error) {
	if b, ok := s.(BatchStats); ok {
		return b.DocFreqs(terms)
	}
	out := make([]uint64, len(terms))
	for i, t := range terms {
		df, err := s.DocFreq(t)
		if err != nil {
			return nil, err
		}
		out[i] = df
	}
	return out, nil
}

// Preparer is implemented by TermStats read from elsewhere (a sharded
// collection's coordinator, package cluster): Pipeline.Rerank calls
// Prepare with the query and the window's candidates before the stages
// run, so that it can fetch the statistics of their terms in one round
// trip, which the stages then read term by term.
type Preparer interface {
	Prepare(ctx context.Context, q Query, cands []Candidate) error
}

// FieldStatser is implemented by an index that holds semrank's fields
// (Env.Semrank) and also gives the statistics of others, read from
// elsewhere (a sharded collection's coordinator, package cluster):
// StatsFor returns the statistics over fields, as index.Stats counts
// them, and a text's terms as the index analyzes those fields. A
// pipeline whose stages read fields of its own gets them; its payloads
// are computed from the fields' text.
type FieldStatser interface {
	StatsFor(fields []string) (TermStats, func(text string) []string, error)
}

// PayloadFetcher is implemented by Payloads read from elsewhere (a
// sharded collection's coordinator, package cluster): a search calls
// FetchPayloads with the window's documents once its first stage has
// found them, so that their payloads come in one round trip before the
// search asks which documents the stages read (DocReader) and the stages
// read the payloads one at a time. A payload it could not fetch is
// missing, and computed from the document's text.
type PayloadFetcher interface {
	FetchPayloads(ctx context.Context, ids []string) error
}

// EnvIndex is implemented by indexes that give the stages an environment
// of their own (a sharded collection's coordinator, package cluster):
// EnvOf returns it.
type EnvIndex interface {
	bleve.Index
	StageEnv() Env
}

// StageSpec is how a pipeline file describes one stage.
type StageSpec struct {
	Type    string         `json:"type" yaml:"type"`                       // registered stage type, e.g. "tweak"
	Name    string         `json:"name,omitempty" yaml:"name,omitempty"`   // display name; defaults to Type
	Model   string         `json:"model,omitempty" yaml:"model,omitempty"` // model file, relative to the pipeline file; factories read it through ModelFile
	Options map[string]any `json:"options,omitempty" yaml:"options,omitempty"`

	// read, when set, records the options DecodeOptions accepted and
	// whether the model was asked for; NewStage sets it to find options
	// and a model that the factory never read. Copies of the spec record
	// into the same set.
	read optionSet
}

// label names the spec in errors: its quoted name, and its type when
// that differs.
func (s StageSpec) label() string {
	if s.Name == "" || s.Name == s.Type {
		return fmt.Sprintf("%q", s.Type)
	}
	return fmt.Sprintf("%q (type %s)", s.Name, s.Type)
}

// optionSet is a set of option names, and modelRead when the model was
// read.
type optionSet map[string]bool

// modelRead marks, in a spec's read set, that the factory asked for the
// spec's model file (ModelFile). No option can be named so.
const modelRead = "\x00model"

// ModelFile returns the stage's model file resolved against dir (the
// pipeline file's folder, Env.Dir), or "" when the spec names none.
// Stage factories ask for the model through it, so that NewStage can
// refuse a model given to a stage type that reads none, as it refuses
// unknown options: a pipeline's author would otherwise believe the stage
// uses it. They then read the file with LoadModel, which parses what the
// pipeline's checksums vouch for.
func (s StageSpec) ModelFile(dir string) string {
	if s.read != nil {
		s.read[modelRead] = true
	}
	return Resolve(dir, s.Model)
}

// track returns a copy of s that records the options it reads into a new
// set, and that set.
func (s StageSpec) track() (StageSpec, optionSet) {
	s.read = optionSet{}
	return s, s.read
}

// unknownOptions returns an error naming the options of s not in known
// (sorted), or nil when there are none.
func (s StageSpec) unknownOptions(known optionSet) error {
	var unknown []string
	for name := range s.Options {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	names := make([]string, 0, len(known))
	for n := range known {
		if n != modelRead {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return fmt.Errorf("%w; a factory of your own reads its options with StageSpec.DecodeOptions", unknownOptionsError(unknown, names))
}

// Env is what a stage factory may use to build its stage.
type Env struct {
	Dir      string      // directory relative model paths resolve against
	Index    bleve.Index // the searched index; may be nil
	Payloads Payloads    // may be nil when the index has no payload store
	Stats    TermStats   // may be nil
	// Analyze returns a text's terms as the index analyzed the fields the
	// stages read, the terms Stats counts; nil means semrank's analyzer
	// (analyzers.CachedTokens), a semrank index's own. Stages call it
	// from several goroutines at once.
	Analyze func(text string) []string
	// Semrank says that Index, though not an *index.Index, holds
	// semrank's fields analyzed as a semrank index analyzes them (a
	// sharded collection's coordinator, package cluster): a pipeline's
	// first stage from text is semrank's query, as over an *index.Index.
	Semrank bool

	// verified, set by Config.Build for a pipeline file that lists
	// checksums, holds the listed files' content as Build verified it,
	// until Build returns.
	verified *verifiedFiles
	// shared holds what the stages of one Config.Build load alike (see
	// Shared).
	shared *sharedLoads
}

// sharedLoads is what the stages of one pipeline build loaded, by key.
type sharedLoads struct {
	mu sync.Mutex
	m  map[any]any
}

// Shared returns load's value for key, calling load once for all the
// stages of one pipeline (Config.Build): two stages naming the same word
// vectors share one copy in memory, and what they compute from it (see
// WindowMemo) can be shared too. key must be comparable and name
// everything load's value depends on. Outside a build it calls load.
func (e Env) Shared(key any, load func() (any, error)) (any, error) {
	s := e.shared
	if s == nil {
		return load()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[key]; ok {
		return v, nil
	}
	v, err := load()
	if err == nil {
		s.m[key] = v
	}
	return v, err
}

// Tokens returns text's terms as the index analyzes the fields stages
// read (see Env.Analyze). The slice may be shared: callers must not
// modify it.
func (e Env) Tokens(text string) []string {
	if e.Analyze != nil {
		return e.Analyze(text)
	}
	return analyzers.CachedTokens(text)
}

// forFields returns e for stages reading fields of e.Index. A semrank
// index read through its own fields keeps what e has (its statistics and
// payloads, EnvFor; its statistics when e has none); an index of
// semrank's fields read from elsewhere (Env.Semrank), read through other
// fields, gets its FieldStatser's; any other index, or other fields,
// gets statistics and analysis from the index and its mapping
// (index.Stats), and the payloads attached to the index from
// those fields (index.Attached.PayloadsFor), if any: none of a semrank
// index's, which semrank computed from its own fields. With another
// analyzer than the index's (Fields.Analyzer) the statistics are counted
// from the attached term counts; before they are attached, stages reading
// statistics fail with an error saying so (the pipeline still builds, to
// compute them: Attach). Without stages (read false) nothing reads the
// fields, and e is kept.
func (e Env) forFields(f Fields, read bool) (Env, error) {
	if e.Index == nil || !read {
		return e, nil
	}
	if e.Semrank && !f.IsDefault() {
		// Its statistics and payloads are those of semrank's own fields:
		// other fields' statistics come from the index, if it gives them.
		fs, ok := e.Index.(FieldStatser)
		if !ok {
			return e, errors.New("this index reads semrank's title and text alone: remove the pipeline's fields")
		}
		if f.Analyzer != "" {
			return e, fmt.Errorf("fields: analyzer %s: this index analyzes each field as its shards do; remove the pipeline's analyzer", f.Analyzer)
		}
		st, analyze, err := fs.StatsFor(f.All())
		if err != nil {
			return e, err
		}
		e.Stats, e.Analyze, e.Payloads = st, analyze, nil
		return e, nil
	}
	if si, ok := e.Index.(*index.Index); ok && f.IsDefault() {
		if e.Stats == nil {
			e.Stats = si
		}
		return e, nil
	}
	if e.Stats != nil && e.Analyze != nil {
		return e, nil // the caller's own
	}
	st, err := f.stats(e.Index)
	if err != nil {
		return e, err
	}
	e.Stats, e.Analyze, e.Payloads = st, st.Tokens, nil
	if a, ok := e.Index.(*index.Attached); ok {
		src := f.source(st)
		if p := a.PayloadsFor(src); p != nil {
			e.Payloads = p
			if err := a.CountTerms(st, src); err != nil {
				return e, err
			}
		}
	}
	return e, nil
}

// stats returns the statistics and analysis of idx over the fields f
// names, which must be indexed and stored.
func (f Fields) stats(idx bleve.Index) (*index.Stats, error) {
	r := f.resolved()
	fields := slices.Concat([]string(r.Text), []string(r.Title))
	st, err := index.NewStatsWith(idx, fields, f.Analyzer)
	if err != nil {
		return nil, err
	}
	if err := index.CheckStored(idx, fields...); err != nil {
		return nil, err
	}
	return st, nil
}

// source is the index.Source of payloads computed from the fields f
// names, analyzed as st analyzes them.
func (f Fields) source(st *index.Stats) index.Source {
	r := f.resolved()
	return index.Source{Title: r.Title, Text: r.Text, Analyzer: st.Analyzer()}
}

// StageFactory builds a stage from its spec. A factory of one's own (see
// RegisterStage) decodes its options, its trainer's among them, into
// one struct with DecodeOptions (NewStage refuses options it never
// decodes), asks for a model file through ModelFile and reads it with LoadModel,
// and refuses what the stage cannot work without (env.Stats and
// env.Payloads are nil over a plain bleve.Index). The stage it returns
// must be safe for concurrent use and give one finite score per
// candidate (Pipeline checks, and turns a panic into a *StagePanic). Its
// Name is the one fusion weights and Explain use, unless the pipeline
// file gives the stage a name, which replaces it; by convention it is the
// type. A stage reading payloads computed at index time implements
// PayloadStage; one trained by recipes has a Trainer (RegisterTrainer).
type StageFactory func(spec StageSpec, env Env) (Stage, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]StageFactory{}
)

// RegisterStage makes a stage type available to pipeline files. It panics
// when typ is registered twice or f is nil, which are programming errors.
// Call it from an init function, so that the type is registered before
// any pipeline names it.
func RegisterStage(typ string, f StageFactory) {
	if f == nil {
		panic("rerank: nil factory for stage type " + typ)
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[typ]; dup {
		panic("rerank: stage type registered twice: " + typ)
	}
	registry[typ] = f
}

// StageTypes returns the registered stage types, sorted.
func StageTypes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// NewStage builds the stage a spec describes. An option the stage's
// factory does not decode (DecodeOptions) is an error, so a misspelt
// option is not silently ignored; so is a model the factory never asks
// for through ModelFile.
func NewStage(spec StageSpec, env Env) (Stage, error) {
	registryMu.RLock()
	f, ok := registry[spec.Type]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("rerank: unknown stage type %q (known: %v)", spec.Type, StageTypes())
	}
	spec, read := spec.track()
	st, err := f(spec, env)
	if err != nil {
		return nil, fmt.Errorf("rerank: stage %s: %w", spec.label(), err)
	}
	if st == nil {
		return nil, fmt.Errorf("rerank: stage %q: its factory returned no stage and no error", spec.Type)
	}
	if err := spec.unknownOptions(read); err != nil {
		return nil, fmt.Errorf("rerank: stage %s: %w", spec.label(), err)
	}
	if spec.Model != "" && !read[modelRead] {
		return nil, fmt.Errorf("rerank: stage %s reads no model file, yet its spec names %s: remove it (a factory of your own must ask for its model through StageSpec.ModelFile)", spec.label(), spec.Model)
	}
	return st, nil
}

// PayloadEncoder is index.PayloadEncoder under rerank's name, so that
// stages need not import package index: the encoders of
// Pipeline.Encoders go to index.Index.Add as they are.
type PayloadEncoder = index.PayloadEncoder

// PayloadStage is implemented by stages that read per-document payloads
// computed at index time; PayloadEncoder computes them (nil when the
// stage, as configured, reads none).
type PayloadStage interface {
	PayloadEncoder() PayloadEncoder
}

// NeedsModelError is the error of building a stage type, or a fusion,
// without the model it reads.
type NeedsModelError struct {
	Type string // the stage type, or "fusion lambdamart"
	What string // what it needs; empty for a model file
}

func (e *NeedsModelError) Error() string {
	what := e.What
	if what == "" {
		what = "a model file"
	}
	return e.Type + " needs " + what
}

// DisplayName returns the stage's name: Name when set, else def.
func (s StageSpec) DisplayName(def string) string {
	if s.Name != "" {
		return s.Name
	}
	return def
}

// RelativeTo returns a copy of s for a pipeline file written in dir: the
// model path, and every string option naming a file inside dir (such as
// the ssg stage's topics model), become relative to dir, so the pipeline
// keeps working when dir is moved or copied. Other options are kept as
// they are.
func (s StageSpec) RelativeTo(dir string) StageSpec {
	if s.Model != "" {
		// A model may live outside dir (a shared file): it becomes
		// relative all the same, "../..."-style, as pipelines resolve it.
		if d, err := absFor(dir, s.Model); err == nil && filepath.IsAbs(s.Model) == filepath.IsAbs(d) {
			if rel, err := filepath.Rel(d, s.Model); err == nil {
				s.Model = rel
			}
		}
	}
	s.Options = s.mapStringOptions(func(p string) string {
		if rel, ok := inside(dir, p); ok {
			return rel
		}
		return p
	})
	return s
}

// Rebase returns a copy of s whose model path and string options naming
// a file inside from name the same file under to instead: a recipe that
// trains into a staging directory and then moves the files into place
// rebases its specs from the one to the other. A path keeps its form: an
// absolute one stays absolute (to made absolute), a relative one is
// joined to to as given. Other paths and options are kept as they are.
func (s StageSpec) Rebase(from, to string) StageSpec {
	move := func(p string) string {
		rel, ok := inside(from, p)
		if !ok {
			return p
		}
		d, err := absFor(to, p)
		if err != nil {
			return p
		}
		return filepath.Join(d, rel)
	}
	if s.Model != "" {
		s.Model = move(s.Model)
	}
	s.Options = s.mapStringOptions(move)
	return s
}

// mapStringOptions returns s's options with f applied to every non-empty
// string value, in a new map (s's own is shared with the spec it was
// copied from); s.Options itself when it holds none.
func (s StageSpec) mapStringOptions(f func(string) string) map[string]any {
	if len(s.Options) == 0 {
		return s.Options
	}
	opts := make(map[string]any, len(s.Options))
	for k, v := range s.Options {
		if p, ok := v.(string); ok && p != "" {
			v = f(p)
		}
		opts[k] = v
	}
	return opts
}

// absFor returns dir made absolute when p is absolute and dir is not, so
// that the two can be compared, and dir as it is otherwise.
func absFor(dir, p string) (string, error) {
	if filepath.IsAbs(p) && !filepath.IsAbs(dir) {
		return filepath.Abs(dir)
	}
	return dir, nil
}

// inside returns path p relative to dir when p names a file inside dir.
// An absolute p is compared with dir made absolute (trainers may write
// absolute paths into a pipeline written under a relative --out); a
// relative p only with a relative dir, since other relative strings are
// option values, not paths.
func inside(dir, p string) (string, bool) {
	dir, err := absFor(dir, p)
	if err != nil || filepath.IsAbs(p) != filepath.IsAbs(dir) {
		return "", false
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}
