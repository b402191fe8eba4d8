package convert

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/semrank/semrank/dataset"
)

// smartRecord is one ".I id" record of a SMART file: its fields by their
// one-letter tag (T, W, B, A, N, X, K, C).
type smartRecord struct {
	id     string
	line   int
	fields map[string]string
}

// readSMART parses a SMART-format file. Records start with ".I <id>"; a
// field starts with a line holding only ".<letter>" (white space may
// follow it) and runs to the next such line; a tag repeated in one record
// adds to its field. The collections end with an empty record (CACM's
// query file ends with ".I 0"), which is dropped.
func readSMART(r io.Reader, name string) ([]smartRecord, error) {
	sc := newLineScanner(r)
	var recs []smartRecord
	var cur *smartRecord
	field := ""
	var sb strings.Builder
	flush := func() {
		if cur != nil && field != "" {
			// A tag may repeat within a record (one .A per author);
			// every part is kept.
			v := strings.TrimSpace(sb.String())
			if prev := cur.fields[field]; prev != "" && v != "" {
				v = prev + "\n" + v
			} else if prev != "" {
				v = prev
			}
			cur.fields[field] = v
		}
		sb.Reset()
	}
	n := 0
	for sc.Scan() {
		n++
		line := lineText(sc, n)
		if strings.HasPrefix(line, ".I") && (len(line) == 2 || line[2] == ' ' || line[2] == '\t') {
			flush()
			id := strings.TrimSpace(line[2:])
			if id == "" {
				return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf(".I record without an id")}
			}
			if _, err := strconv.Atoi(id); err != nil {
				return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("record id %q is not a number", id)}
			}
			recs = append(recs, smartRecord{id: normalizeID(id), line: n, fields: map[string]string{}})
			cur = &recs[len(recs)-1]
			field = ""
			continue
		}
		// A tag line with trailing white space is still a tag: read as
		// text, it would join the next field to the one before.
		if tag := strings.TrimRight(line, " \t"); len(tag) == 2 && tag[0] == '.' && tag[1] >= 'A' && tag[1] <= 'Z' {
			flush()
			if cur == nil {
				return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("field %s before the first .I record", tag)}
			}
			field = tag[1:]
			continue
		}
		if cur == nil {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("text before the first .I record")}
		}
		if field == "" {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("text outside any field in record %s", cur.id)}
		}
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, &dataset.ParseError{File: name, Line: n + 1, Err: err}
	}
	flush()
	// Drop empty records (the trailing ".I 0").
	out := recs[:0]
	for _, r := range recs {
		empty := true
		for _, v := range r.fields {
			if v != "" {
				empty = false
			}
		}
		if !empty {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, &dataset.ParseError{File: name, Err: dataset.ErrEmpty}
	}
	return out, nil
}

// normalizeID strips leading zeros: CACM's qrels say "01" for query ".I 1".
func normalizeID(id string) string {
	t := strings.TrimLeft(id, "0")
	if t == "" {
		return "0"
	}
	return t
}

// SMART reads a SMART collection: documents (.T title; .W abstract and .K
// keywords as text; .B date and .A authors kept as metadata; .C, .N and
// the .X citations dropped), queries (.W text) and qrels lines
// "qid docid ..." (each listed pair is relevant, grade 1). Judgments for
// unknown queries or documents are an error naming the line.
func SMART(docsPath, queriesPath, qrelsPath string) (*dataset.Dataset, error) {
	docRecs, err := readSMARTFile(docsPath)
	if err != nil {
		return nil, err
	}
	qRecs, err := readSMARTFile(queriesPath)
	if err != nil {
		return nil, err
	}
	ds := &dataset.Dataset{}
	docIDs := map[string]bool{}
	for _, r := range docRecs {
		if docIDs[r.id] {
			return nil, &dataset.ParseError{File: docsPath, Line: r.line, Err: fmt.Errorf("duplicate document id %s", r.id)}
		}
		docIDs[r.id] = true
		meta := map[string]any{}
		if v := r.fields["B"]; v != "" {
			meta["date"] = oneLine(v)
		}
		if v := r.fields["A"]; v != "" {
			meta["authors"] = strings.Split(v, "\n")
		}
		if len(meta) == 0 {
			meta = nil
		}
		ds.Corpus = append(ds.Corpus, dataset.Doc{ID: r.id, Title: oneLine(r.fields["T"]), Text: docText(r), Metadata: meta})
	}
	qIDs := map[string]bool{}
	for _, r := range qRecs {
		if qIDs[r.id] {
			return nil, &dataset.ParseError{File: queriesPath, Line: r.line, Err: fmt.Errorf("duplicate query id %s", r.id)}
		}
		qIDs[r.id] = true
		text := oneLine(r.fields["W"])
		if text == "" {
			return nil, &dataset.ParseError{File: queriesPath, Line: r.line, Err: fmt.Errorf("query %s has no .W text", r.id)}
		}
		ds.Queries = append(ds.Queries, dataset.Query{ID: r.id, Text: text})
	}
	f, err := os.Open(qrelsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ds.Qrels, err = readSMARTQrels(f, qrelsPath, qIDs, docIDs); err != nil {
		return nil, err
	}
	return ds, nil
}

// readSMARTQrels parses SMART judgments, lines "qid docid ..." (further
// fields ignored), each listed pair relevant with grade 1. A query or
// document not in queries or docs is an error naming the line.
func readSMARTQrels(r io.Reader, name string, queries, docs map[string]bool) (dataset.Qrels, error) {
	qrels := dataset.Qrels{}
	sc := newLineScanner(r)
	n := 0
	form, formLine := 0, 0 // field count of the first line, and its number
	for sc.Scan() {
		n++
		fs := strings.Fields(lineText(sc, n))
		if len(fs) == 0 {
			continue
		}
		if len(fs) < 2 {
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("want \"qid docid ...\"")}
		}
		// A line with more fields than the first is most likely two run
		// together (a file without its final newline, then another
		// appended): the second judgment would be dropped unseen.
		if form == 0 {
			form, formLine = len(fs), n
		} else if len(fs) != form {
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("%d fields, but line %d has %d: a file holds judgments in one form (two lines run together?)", len(fs), formLine, form)}
		}
		qid, did := normalizeID(fs[0]), normalizeID(fs[1])
		if !queries[qid] {
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("unknown query %s", fs[0])}
		}
		if !docs[did] {
			return nil, &dataset.ParseError{File: name, Line: n, Err: fmt.Errorf("unknown document %s", fs[1])}
		}
		qrels.Add(qid, did, 1)
	}
	if err := sc.Err(); err != nil {
		return nil, &dataset.ParseError{File: name, Line: n + 1, Err: err}
	}
	if len(qrels) == 0 {
		return nil, &dataset.ParseError{File: name, Err: dataset.ErrEmpty}
	}
	return qrels, nil
}

// newLineScanner returns a scanner of r's lines, each up to
// dataset.MaxLineBytes long.
func newLineScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), dataset.MaxLineBytes)
	return sc
}

// lineText returns the line sc has just read, line n of its file, without
// a carriage return ending it or a byte order mark opening the file (an
// editor's mark would otherwise read as text before the first record, or
// as part of the first query id).
func lineText(sc *bufio.Scanner, n int) string {
	line := strings.TrimRight(sc.Text(), "\r")
	if n == 1 {
		line = strings.TrimPrefix(line, "\ufeff")
	}
	return line
}

func readSMARTFile(path string) ([]smartRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSMART(f, path)
}

// docText is a document's searchable text: its abstract (.W), then its
// keywords (.K). The keywords are index terms the authors assigned, part
// of what a document is about, and for some the only text beside the
// title (in CACM, 1,429 of the 3,204 documents have keywords, 1,617 have
// no abstract, and 423 of those have keywords).
func docText(r smartRecord) string {
	return oneLine(r.fields["W"] + "\n" + r.fields["K"])
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
