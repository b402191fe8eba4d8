// Package dataset holds the data rankings are made from and measured
// against, and the files it travels in: documents (Doc) and queries in
// BEIR's JSONL, judgments (Qrels) and rankings (Run) in TREC's forms and
// in the SemEval gold (.relevancy) form, in which the task's scorer also
// reads predictions, and a BEIR directory of them all in memory
// (Dataset), with given candidate lists (candidates.trec).
package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/semrank/semrank/internal/atomicfile"
)

// Doc is one corpus record in BEIR's corpus.jsonl.
type Doc struct {
	ID       string         `json:"_id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Query is one record in BEIR's queries.jsonl. Title is optional; SemEval
// questions have a subject (title) and a body (text).
type Query struct {
	ID       string         `json:"_id"`
	Text     string         `json:"text"`
	Title    string         `json:"title,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// FullText returns the query's title and text joined, the form most
// scorers should see.
func (q Query) FullText() string { return joinNonEmpty(q.Title, q.Text) }

// FullText returns the document's title and text joined.
func (d Doc) FullText() string { return joinNonEmpty(d.Title, d.Text) }

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// MaxLineBytes bounds one JSONL or TSV line; longer lines are an error
// rather than an unbounded allocation.
const MaxLineBytes = 64 << 20

// ParseError reports malformed input with the file and 1-based line.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ErrEmpty is wrapped when an input file holds no records.
var ErrEmpty = errors.New("no records")

// utf8BOM is the byte order mark some editors write at the start of a
// UTF-8 file.
var utf8BOM = []byte("\ufeff")

// scanLines calls fn for each non-blank line of r, with 1-based numbers.
// A byte order mark opening the file is skipped; one opening a later line
// (files joined with cat) is an error, as it would otherwise become part of
// that line's first id.
func scanLines(r io.Reader, name string, fn func(line []byte, n int) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if bytes.HasPrefix(line, utf8BOM) {
			if n > 1 {
				return &ParseError{File: name, Line: n, Err: errors.New("byte order mark not at the start of the file (files joined?)")}
			}
			line = line[len(utf8BOM):]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(line, n); err != nil {
			return &ParseError{File: name, Line: n, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d MiB (MaxLineBytes): %w", MaxLineBytes>>20, err)
		}
		return &ParseError{File: name, Line: n + 1, Err: err}
	}
	return nil
}

// ReadCorpus parses corpus.jsonl records from r; name is used in errors.
func ReadCorpus(r io.Reader, name string) ([]Doc, error) {
	return readRecords(r, name, "document", func(d Doc) (string, string) { return d.ID, d.FullText() })
}

// ReadQueries parses queries.jsonl records from r.
func ReadQueries(r io.Reader, name string) ([]Query, error) {
	return readRecords(r, name, "query", func(q Query) (string, string) { return q.ID, q.FullText() })
}

// readRecords parses JSONL records from r, each with an id of its own
// (kind names what they are in the error for a repeated one); name is
// used in errors. idText returns a record's id and its title and text. No
// record at all is an error too, and so is a file that names the text
// otherwise ("contents", "query"): its records read with empty texts and
// would rank silently by nothing. Such a file is told by records none of
// which has any text, the first of them without a "title" or "text" key
// (empty texts under those keys are the file's own, and are kept).
func readRecords[T any](r io.Reader, name, kind string, idText func(T) (string, string)) ([]T, error) {
	var recs []T
	seen := map[string]bool{}
	var first []byte // the first record's line, for the keys it has
	hasText := false
	err := scanLines(r, name, func(line []byte, _ int) error {
		var rec T
		if err := strictJSON(line, &rec); err != nil {
			return err
		}
		rid, text := idText(rec)
		if first == nil {
			first = bytes.Clone(line)
		}
		hasText = hasText || text != ""
		if err := checkRecordID(rid, line); err != nil {
			return fmt.Errorf(`"_id": %v`, err)
		}
		if seen[rid] {
			return fmt.Errorf("duplicate %s id %q", kind, rid)
		}
		seen[rid] = true
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &ParseError{File: name, Err: ErrEmpty}
	}
	if keys := recordKeys(first); !hasText && !slices.ContainsFunc(keys, isTextKey) {
		return nil, &ParseError{File: name, Err: fmt.Errorf(`no %s has any text: the first record's keys are %s, without "title" or "text" (BEIR's keys: "_id", "title", "text", "metadata")`, kind, quoteAll(keys))}
	}
	return recs, nil
}

// isTextKey reports whether a record key fills a Doc's or Query's title
// or text; encoding/json matches keys to fields without regard to case.
func isTextKey(k string) bool { return strings.EqualFold(k, "title") || strings.EqualFold(k, "text") }

// recordKeys returns the keys of the JSON object on line, sorted.
func recordKeys(line []byte) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(obj))
}

// quoteAll returns keys quoted and joined by commas, or "none".
func quoteAll(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}

// strictJSON decodes exactly one JSON value from line. json.Unmarshal, unlike
// a Decoder, rejects anything after the value (a stray "]" or "}" too).
func strictJSON(line []byte, v any) error {
	if err := json.Unmarshal(line, v); err != nil {
		// encoding/json names the Go struct field ("Go struct field
		// Doc._id of type string"); say it in the file's terms. Ids are
		// strings in BEIR, also where they look like numbers.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			hint := ""
			if te.Field == "_id" && te.Value == "number" {
				hint = ` (write it as a string: "_id": "123")`
			}
			return fmt.Errorf("invalid JSON: %q is a JSON %s, want %s%s", te.Field, te.Value, jsonKind(te.Type), hint)
		}
		return fmt.Errorf("invalid JSON: %v", err)
	}
	return nil
}

// jsonKind names the JSON value that decodes into t, as a reader of the
// file knows it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	}
	return t.String()
}

// CheckID rejects a query or document id that cannot travel through the
// white-space separated TREC runs and qrels: an empty one, or one holding
// white space.
func CheckID(id string) error {
	if id == "" {
		return errors.New("empty id")
	}
	if strings.IndexFunc(id, unicode.IsSpace) >= 0 {
		return fmt.Errorf("id %q contains white space, which TREC runs and qrels cannot hold", id)
	}
	return nil
}

// checkRecordID is CheckID for an id read from the JSON record line. JSON
// decoding turns bytes that are not UTF-8 into U+FFFD, silently: the id
// would then match no run or judgment line naming the original bytes.
func checkRecordID(id string, line []byte) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if !strings.ContainsRune(id, utf8.RuneError) || utf8.Valid(line) {
		return nil
	}
	// A U+FFFD in the id, and bad bytes somewhere in the line: are they
	// in the id itself?
	var raw struct {
		ID json.RawMessage `json:"_id"`
	}
	if json.Unmarshal(line, &raw) == nil && !utf8.Valid(raw.ID) {
		return fmt.Errorf("id %q is not valid UTF-8 (its bad bytes read as U+FFFD, so the runs and judgments naming it would not match)", id)
	}
	return nil
}

// WriteJSONL writes one JSON record per line.
func WriteJSONL[T any](w io.Writer, recs []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Dataset is a BEIR directory in memory: corpus, queries, optional
// judgments and optional given candidate lists (candidates.trec).
type Dataset struct {
	Dir        string
	Corpus     []Doc
	Queries    []Query
	Qrels      Qrels // nil when the directory has no qrels/test.tsv
	Candidates *Run  // nil when the directory has no candidates.trec

	docIndex   map[string]int // document id → place in Corpus
	indexedLen int            // len(Corpus) when docIndex was built
}

// File names inside a BEIR directory.
const (
	CorpusFile     = "corpus.jsonl"
	QueriesFile    = "queries.jsonl"
	QrelsFile      = "qrels/test.tsv"
	CandidatesFile = "candidates.trec"
)

// Load reads a BEIR directory. corpus.jsonl and queries.jsonl are
// required; qrels/test.tsv and candidates.trec are read when present. A
// candidate list or judgment naming an unknown query or document is an error.
func Load(dir string) (*Dataset, error) {
	return loadDataset(osFS{}, dir, filepath.Join)
}

// LoadFS is Load reading the directory dir of fsys, such as
// data built into the binary with go:embed.
func LoadFS(fsys fs.FS, dir string) (*Dataset, error) {
	return loadDataset(fsys, dir, path.Join)
}

// osFS opens names as package os does, relative to the working directory
// or absolute, which os.DirFS does not allow.
type osFS struct{}

func (osFS) Open(name string) (fs.File, error)     { return os.Open(name) }
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// LoadWith reads the BEIR directory dir as Load does, with
// corpus as its documents: its corpus.jsonl, which need not exist, is not
// read. Trainers learning from an index take the documents from the
// index. A nil corpus stands for documents that are not known here (a
// run over an index): the judgments and candidate lists are then not
// checked against them.
func LoadWith(dir string, corpus []Doc) (*Dataset, error) {
	return readDataset(osFS{}, dir, filepath.Join, func() ([]Doc, error) { return corpus, nil })
}

// loadDataset reads the BEIR directory dir of fsys, joining names with join.
func loadDataset(fsys fs.FS, dir string, join func(...string) string) (*Dataset, error) {
	return readDataset(fsys, dir, join, func() ([]Doc, error) {
		docs, err := readOne(fsys, join(dir, CorpusFile), ReadCorpus)
		if docs == nil && err == nil {
			docs = []Doc{} // an empty corpus is known: nothing is in it
		}
		return docs, err
	})
}

// readDataset reads the BEIR directory dir of fsys, its documents from
// corpus.
func readDataset(fsys fs.FS, dir string, join func(...string) string, corpus func() ([]Doc, error)) (*Dataset, error) {
	ds := &Dataset{Dir: dir}
	var err error
	if ds.Corpus, err = corpus(); err != nil {
		return nil, err
	}
	if ds.Queries, err = readOne(fsys, join(dir, QueriesFile), ReadQueries); err != nil {
		return nil, err
	}
	// Only a file that does not exist is absent: one that cannot be
	// reached (no permission, a link loop) is an error, or the dataset
	// would load without its judgments or candidates and say nothing.
	qp := join(dir, QrelsFile)
	if _, err := fs.Stat(fsys, qp); err == nil {
		if ds.Qrels, err = readOne(fsys, qp, ReadQrels); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	cp := join(dir, CandidatesFile)
	if _, err := fs.Stat(fsys, cp); err == nil {
		run, err := readOne(fsys, cp, ReadRun)
		if err != nil {
			return nil, err
		}
		ds.Candidates = &run
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := ds.check(); err != nil {
		return nil, err
	}
	return ds, nil
}

// LoadCorpus reads the documents of a BEIR directory (corpus.jsonl), and
// nothing else: what indexing needs.
func LoadCorpus(dir string) ([]Doc, error) {
	return readFile(filepath.Join(dir, CorpusFile), ReadCorpus)
}

// LoadQueries reads the queries of a BEIR directory (queries.jsonl), and
// nothing else: what a command that only searches needs.
func LoadQueries(dir string) ([]Query, error) {
	return readFile(filepath.Join(dir, QueriesFile), ReadQueries)
}

// LoadText reads the documents of a BEIR directory and, when it has
// queries.jsonl, its queries (nil otherwise): the text that unsupervised
// models learn from. Judgments and candidate lists are not read, so a
// directory given for its text alone loads whatever else it holds.
func LoadText(dir string) ([]Doc, []Query, error) {
	docs, err := LoadCorpus(dir)
	if err != nil {
		return nil, nil, err
	}
	qs, err := readFile(filepath.Join(dir, QueriesFile), ReadQueries)
	if errors.Is(err, os.ErrNotExist) {
		return docs, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return docs, qs, nil
}

func readFile[T any](name string, parse func(io.Reader, string) ([]T, error)) ([]T, error) {
	return readOne(osFS{}, name, parse)
}

// readOne opens name in fsys and parses it, naming it name in errors.
func readOne[T any](fsys fs.FS, name string, parse func(io.Reader, string) (T, error)) (T, error) {
	f, err := fsys.Open(name)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(f, name)
}

func (ds *Dataset) check() error {
	ds.indexDocs()
	qids := map[string]bool{}
	for _, q := range ds.Queries {
		qids[q.ID] = true
	}
	// Walked in sorted order, so the same bad file gives the same message;
	// the count says whether one id is off or the files do not belong
	// together (a truncated corpus).
	var unknownQ, unknownD []string
	firstD := ""
	for _, qid := range slices.Sorted(maps.Keys(ds.Qrels)) {
		if !qids[qid] {
			unknownQ = append(unknownQ, qid)
			continue
		}
		if ds.Corpus == nil {
			continue // documents not known here
		}
		for _, did := range slices.Sorted(maps.Keys(ds.Qrels[qid])) {
			if _, ok := ds.Doc(did); !ok {
				if firstD == "" {
					firstD = fmt.Sprintf("%q (query %q)", did, qid)
				}
				unknownD = append(unknownD, did)
			}
		}
	}
	if len(unknownQ) > 0 {
		return fmt.Errorf("%s: judgments for unknown query %q (%d unknown queries)", filepath.Join(ds.Dir, QrelsFile), unknownQ[0], len(unknownQ))
	}
	if len(unknownD) > 0 {
		return fmt.Errorf("%s: judgment for unknown document %s; %d judgments name documents the corpus lacks", filepath.Join(ds.Dir, QrelsFile), firstD, len(unknownD))
	}
	if ds.Candidates != nil {
		for _, qid := range ds.Candidates.QueryIDs() {
			if !qids[qid] {
				return fmt.Errorf("%s: candidates for unknown query %q", filepath.Join(ds.Dir, CandidatesFile), qid)
			}
			for _, e := range ds.Candidates.Ranking(qid) {
				if _, ok := ds.Doc(e.DocID); !ok && ds.Corpus != nil {
					return fmt.Errorf("%s: unknown document %q (query %q)", filepath.Join(ds.Dir, CandidatesFile), e.DocID, qid)
				}
			}
		}
	}
	return nil
}

// Doc returns the corpus document with the given id. It indexes the corpus
// on first use, and again when it sees that Corpus has changed since: its
// length differs, or the id found is no longer at its place. A document
// replaced in place under a new id is not seen; a caller that edits Corpus
// that way should set a new slice. Load indexes the corpus, so
// lookups in a loaded dataset that nobody edits only read and may run
// concurrently.
func (ds *Dataset) Doc(id string) (Doc, bool) {
	if ds.docIndex == nil || ds.indexedLen != len(ds.Corpus) {
		ds.indexDocs()
	}
	i, ok := ds.docIndex[id]
	if ok && (i >= len(ds.Corpus) || ds.Corpus[i].ID != id) {
		ds.indexDocs()
		i, ok = ds.docIndex[id]
	}
	if !ok {
		return Doc{}, false
	}
	return ds.Corpus[i], true
}

func (ds *Dataset) indexDocs() {
	ds.docIndex = make(map[string]int, len(ds.Corpus))
	for i, d := range ds.Corpus {
		ds.docIndex[d.ID] = i
	}
	ds.indexedLen = len(ds.Corpus)
}

// Query returns the query with the given id.
func (ds *Dataset) Query(id string) (Query, bool) {
	for _, q := range ds.Queries {
		if q.ID == id {
			return q, true
		}
	}
	return Query{}, false
}

// Save writes the dataset as a BEIR directory, creating it if needed. Each
// file is replaced atomically (atomicfile), so a dataset rewritten in place
// is never left half-written.
func (ds *Dataset) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, CorpusFile), func(w io.Writer) error { return WriteJSONL(w, ds.Corpus) }); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, QueriesFile), func(w io.Writer) error { return WriteJSONL(w, ds.Queries) }); err != nil {
		return err
	}
	// An empty qrels or candidates file would not load back (ErrEmpty), so
	// empty ones are not written, as Load reads absent ones as nil;
	// one left by an earlier dataset saved to dir is removed, or it would be
	// read back as this dataset's.
	if len(ds.Qrels) > 0 {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, QrelsFile)), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(dir, QrelsFile), ds.Qrels.WriteTSV); err != nil {
			return err
		}
	} else if err := removeIfExists(filepath.Join(dir, QrelsFile)); err != nil {
		return err
	}
	if ds.Candidates != nil && ds.Candidates.Len() > 0 {
		if err := atomicfile.Write(filepath.Join(dir, CandidatesFile), func(w io.Writer) error { return ds.Candidates.Write(w, "given") }); err != nil {
			return err
		}
	} else if err := removeIfExists(filepath.Join(dir, CandidatesFile)); err != nil {
		return err
	}
	return nil
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// SortedKeys returns the keys of m in order; used wherever output must be
// deterministic.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func fieldsOf(line []byte) []string { return strings.Fields(string(line)) }
