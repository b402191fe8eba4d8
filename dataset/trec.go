package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"github.com/semrank/semrank/internal/atomicfile"
)

// Qrels holds relevance judgments: query id → document id → grade
// (0 = not relevant, higher = more relevant).
type Qrels map[string]map[string]int

// Relevant reports the number of documents judged relevant (grade > 0)
// for query qid.
func (q Qrels) Relevant(qid string) int {
	n := 0
	for _, g := range q[qid] {
		if g > 0 {
			n++
		}
	}
	return n
}

// JudgesRelevant reports whether q marks any document relevant (grade
// above 0). Without one, every metric is 0 whatever the ranking.
func (q Qrels) JudgesRelevant() bool {
	for qid := range q {
		if q.Relevant(qid) > 0 {
			return true
		}
	}
	return false
}

// Unranked counts the judged queries of q that run ranks no document
// for. Every metric counts them 0, as the official scorers do: a run
// missing queries looks worse than its rankings are, so tools say so.
func (q Qrels) Unranked(run Run) int {
	n := 0
	for qid := range q {
		if len(run.byQuery[qid]) == 0 {
			n++
		}
	}
	return n
}

// UnrankedNote says how many of q's judged queries run, named name,
// ranks nothing for, or returns "" when it ranks them all.
func (q Qrels) UnrankedNote(run Run, name string) string {
	n := q.Unranked(run)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d judged queries have no ranking in %s; they count 0", n, len(q), name)
}

// JudgesNonRelevant reports whether q judges any document not relevant
// (grade 0 or below). Without such a judgment AUC has no (relevant,
// non-relevant) pair to count, and every ranked query scores 0.5 whatever the
// ranking: CACM's judgments list relevant documents only.
func (q Qrels) JudgesNonRelevant() bool {
	for _, docs := range q {
		for _, g := range docs {
			if g <= 0 {
				return true
			}
		}
	}
	return false
}

func (q Qrels) add(qid, did string, grade int) {
	m := q[qid]
	if m == nil {
		m = map[string]int{}
		q[qid] = m
	}
	m[did] = grade
}

// WriteTSV writes BEIR's qrels/test.tsv form with its header.
func (q Qrels) WriteTSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "query-id\tcorpus-id\tscore")
	for _, qid := range SortedKeys(q) {
		for _, did := range SortedKeys(q[qid]) {
			fmt.Fprintf(bw, "%s\t%s\t%d\n", qid, did, q[qid][did])
		}
	}
	return bw.Flush()
}

// WriteTREC writes the TREC form "qid 0 docid grade".
func (q Qrels) WriteTREC(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, qid := range SortedKeys(q) {
		for _, did := range SortedKeys(q[qid]) {
			fmt.Fprintf(bw, "%s 0 %s %d\n", qid, did, q[qid][did])
		}
	}
	return bw.Flush()
}

// ReadQrels parses judgments in any of the forms semrank meets, told apart
// by their number of fields:
//
//	BEIR TSV        query-id <TAB> corpus-id <TAB> score   (header line allowed)
//	TREC            qid 0 docid grade
//	SemEval gold    qid docid ir_rank ir_score true|false
//
// The first line fixes the form for the whole file: a line cut short in one
// form (a SemEval line without its label, a TREC line without its grade)
// has the field count of another, and would otherwise be read as a
// judgment of the wrong document. A document judged twice for one query
// with different grades is an error.
func ReadQrels(r io.Reader, name string) (Qrels, error) {
	q := Qrels{}
	form, formLine := 0, 0 // field count of the first line, and its number
	err := scanLines(r, name, func(line []byte, n int) error {
		f := fieldsOf(line)
		if form == 0 {
			form, formLine = len(f), n
			if len(f) == 3 && f[0] == "query-id" {
				return nil // BEIR header
			}
		} else if len(f) != form {
			return fmt.Errorf("%d fields, but line %d has %d: a file holds judgments in one form", len(f), formLine, form)
		}
		var qid, did string
		var g int
		var err error
		switch len(f) {
		case 3:
			qid, did = f[0], f[1]
			g, err = parseGrade(f[2])
		case 4:
			qid, did = f[0], f[2]
			g, err = parseGrade(f[3])
		case 5:
			qid, did = f[0], f[1]
			switch f[4] {
			case "true":
				g = 1
			case "false":
				g = 0
			default:
				err = fmt.Errorf("label %q is neither true nor false", f[4])
			}
		default:
			err = fmt.Errorf("%d fields; want 3 (BEIR), 4 (TREC) or 5 (SemEval)", len(f))
		}
		if err != nil {
			return err
		}
		if old, ok := q[qid][did]; ok && old != g {
			return fmt.Errorf("document %q judged again for query %q with relevance %d (was %d)", did, qid, g, old)
		}
		q.add(qid, did, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(q) == 0 {
		return nil, &ParseError{File: name, Err: ErrEmpty}
	}
	return q, nil
}

func parseGrade(s string) (int, error) {
	g, err := strconv.Atoi(s)
	if err != nil {
		return 0, numberError("relevance", s, "an integer", err)
	}
	return g, nil
}

// numberError says why strconv could not read field s: a number too
// large for its type is out of range, not "not a number".
func numberError(field, s, want string, err error) error {
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%s %q is out of range", field, s)
	}
	return fmt.Errorf("%s %q is not %s", field, s, want)
}

// ReadQrelsFile reads judgments from a file.
func ReadQrelsFile(path string) (Qrels, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadQrels(f, path)
}

// Entry is one line of a run: a document, its score, its rank as written.
type Entry struct {
	DocID string
	Score float64
	Rank  int
	Line  int // line in the file it was read from; 0 when built in memory
}

// Run is a ranked list of documents per query, in TREC run form. Query
// order and each query's entry order are kept as given.
type Run struct {
	File    string // file it was read from, for error messages
	order   []string
	byQuery map[string][]Entry
}

// NewRun returns an empty run.
func NewRun() Run { return Run{byQuery: map[string][]Entry{}} }

// Add appends an entry for qid.
func (r *Run) Add(qid string, e Entry) {
	if r.byQuery == nil {
		r.byQuery = map[string][]Entry{}
	}
	if _, ok := r.byQuery[qid]; !ok {
		r.order = append(r.order, qid)
	}
	r.byQuery[qid] = append(r.byQuery[qid], e)
}

// Set replaces the ranking of qid. The run keeps es itself, not a copy,
// but a later Add to qid does not write into es's spare capacity, so runs
// sharing entries (Set from another's Ranking, Filter) can each grow.
func (r *Run) Set(qid string, es []Entry) {
	if r.byQuery == nil {
		r.byQuery = map[string][]Entry{}
	}
	if _, ok := r.byQuery[qid]; !ok {
		r.order = append(r.order, qid)
	}
	r.byQuery[qid] = slices.Clip(es)
}

// QueryIDs returns the run's queries in the order they first appeared.
func (r Run) QueryIDs() []string { return r.order }

// Ranking returns qid's entries in the order they were given. Appending
// to it does not write into the run's spare capacity.
func (r Run) Ranking(qid string) []Entry { return slices.Clip(r.byQuery[qid]) }

// Sorted returns qid's entries by descending score; equal scores keep the
// order they were given, so a run whose scores tie is still evaluated
// deterministically. semrank never writes tied scores.
func (r Run) Sorted(qid string) []Entry {
	es := append([]Entry(nil), r.byQuery[qid]...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].Score > es[j].Score })
	return es
}

// Len returns the number of queries in the run.
func (r Run) Len() int { return len(r.order) }

// Write writes the run in TREC form "qid Q0 docid rank score tag", each
// query's entries sorted by descending score with ranks renumbered.
func (r Run) Write(w io.Writer, tag string) error {
	if tag == "" {
		tag = "semrank"
	}
	bw := bufio.NewWriter(w)
	for _, qid := range r.order {
		for i, e := range r.Sorted(qid) {
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", qid, e.DocID, i+1, formatScore(e.Score), tag)
		}
	}
	return bw.Flush()
}

// WriteSemEval writes the run as predictions for the SemEval-2016 Task 3
// scorer, in the form of the task's gold .relevancy files:
//
//	qid <TAB> docid <TAB> 0 <TAB> score <TAB> true|false
//
// Queries and their entries come in the run's own order (Ranking), not by
// score: the scorer pairs the lines of the predictions and of the gold file
// by position, stops at the first pair whose ids differ, and ranks each
// query by score itself (equal scores in file order). A run for the scorer
// must therefore hold the gold file's order. The third column, the gold
// files' IR rank, the scorer ignores: it is 0. The last is the system's
// relevant-or-not call, which only the scorer's classification measures
// read; relevant gives it for each entry. A run built in memory with a NaN
// score or a document listed twice is refused, as Evaluate refuses it.
func (r Run) WriteSemEval(w io.Writer, relevant func(qid string, e Entry) bool) error {
	if err := r.CheckEntries(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, qid := range r.order {
		for _, e := range r.byQuery[qid] {
			fmt.Fprintf(bw, "%s\t%s\t0\t%s\t%t\n", qid, e.DocID, formatScore(e.Score), relevant(qid, e))
		}
	}
	return bw.Flush()
}

// formatScore writes a score in the fewest digits that read back as the
// same float64, so a run written and read again ranks the same.
func formatScore(s float64) string { return strconv.FormatFloat(s, 'g', -1, 64) }

// WriteFile writes the run to path, atomically (atomicfile).
func (r Run) WriteFile(path, tag string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return r.Write(w, tag) })
}

// ReadRun parses a ranking in either of the forms semrank meets, told
// apart by their number of fields:
//
//	TREC run          qid Q0 docid rank score tag
//	SemEval           qid docid rank score true|false
//
// The SemEval form is the official scorer's predictions (WriteSemEval) and
// its gold .relevancy files, whose scores give the task's IR order. Its
// labels are checked but not kept: a ranking is its scores. As in
// ReadQrels, the first line fixes the form for the whole file.
func ReadRun(rd io.Reader, name string) (Run, error) {
	run := NewRun()
	run.File = name
	seen := map[string]map[string]bool{}
	form, formLine := 0, 0 // field count of the first line, and its number
	err := scanLines(rd, name, func(line []byte, n int) error {
		f := fieldsOf(line)
		if form == 0 {
			form, formLine = len(f), n
		} else if len(f) != form {
			return fmt.Errorf("%d fields, but line %d has %d: a file holds a run in one form", len(f), formLine, form)
		}
		var qid, did, rankField, scoreField string
		switch len(f) {
		case 6:
			qid, did, rankField, scoreField = f[0], f[2], f[3], f[4]
		case 5:
			if f[4] != "true" && f[4] != "false" {
				return fmt.Errorf("label %q is neither true nor false (5 fields: the SemEval form; a TREC run has 6: qid Q0 docid rank score tag)", f[4])
			}
			qid, did, rankField, scoreField = f[0], f[1], f[2], f[3]
		default:
			return fmt.Errorf("%d fields; want 6 (TREC: qid Q0 docid rank score tag) or 5 (SemEval: qid docid rank score true|false)", len(f))
		}
		rank, err := strconv.Atoi(rankField)
		if err != nil {
			return numberError("rank", rankField, "an integer", err)
		}
		score, err := strconv.ParseFloat(scoreField, 64)
		if err == nil && math.IsNaN(score) {
			err = strconv.ErrSyntax
		}
		if err != nil {
			return numberError("score", scoreField, "a number", err)
		}
		if seen[qid] == nil {
			seen[qid] = map[string]bool{}
		}
		if seen[qid][did] {
			return fmt.Errorf("document %q listed twice for query %q", did, qid)
		}
		seen[qid][did] = true
		run.Add(qid, Entry{DocID: did, Score: score, Rank: rank, Line: n})
		return nil
	})
	if err != nil {
		return Run{}, err
	}
	if run.Len() == 0 {
		return Run{}, &ParseError{File: name, Err: ErrEmpty}
	}
	return run, nil
}

// ReadRunFile reads a run from a file: a TREC run or SemEval predictions,
// as ReadRun.
func ReadRunFile(path string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	return ReadRun(f, path)
}

// ErrUnknownQuery is wrapped when a run names a query the judgments lack.
var ErrUnknownQuery = errors.New("query has no judgments")

// CheckQueries returns an error naming the file and line of the first run
// entry whose query the judgments do not contain.
func (r Run) CheckQueries(q Qrels) error {
	for _, qid := range r.order {
		if _, ok := q[qid]; !ok {
			line := 0
			if es := r.byQuery[qid]; len(es) > 0 {
				line = es[0].Line
			}
			name := r.File
			if name == "" {
				name = "run"
			}
			return &ParseError{File: name, Line: line, Err: fmt.Errorf("%w: %q", ErrUnknownQuery, qid)}
		}
	}
	return nil
}

// CheckEntries returns an error naming the first entry that lists a
// document its query already lists, or has a NaN score. ReadRun refuses
// both; a run built in memory gets here unchecked, and Evaluate would
// credit a document twice or sort by a score that orders nothing.
func (r Run) CheckEntries() error {
	seen := map[string]bool{}
	for _, qid := range r.order {
		clear(seen)
		for _, e := range r.byQuery[qid] {
			var err error
			switch {
			case seen[e.DocID]:
				err = fmt.Errorf("document %q listed twice for query %q", e.DocID, qid)
			case math.IsNaN(e.Score):
				err = fmt.Errorf("query %q, document %q: score is NaN", qid, e.DocID)
			}
			if err != nil {
				name := r.File
				if name == "" {
					name = "run"
				}
				return &ParseError{File: name, Line: e.Line, Err: err}
			}
			seen[e.DocID] = true
		}
	}
	return nil
}

// Filter returns the run restricted to queries keep accepts.
func (r Run) Filter(keep func(qid string) bool) Run {
	out := NewRun()
	out.File = r.File
	for _, qid := range r.order {
		if keep(qid) {
			out.Set(qid, r.byQuery[qid])
		}
	}
	return out
}

// Add records a judgment.
func (q Qrels) Add(qid, did string, grade int) { q.add(qid, did, grade) }
