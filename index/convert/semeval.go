// Package convert turns the collections semrank is evaluated on into BEIR
// directories (see package eval): SemEval-2016 Task 3 XML for subtasks A
// and B, and SMART-format collections such as CACM.
//
// Ids stay the collections' own, so runs written by semrank can be scored
// by the collections' official tools.
package convert

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/semrank/semrank/dataset"
)

// Subtask selects which SemEval-2016 Task 3 ranking task to convert.
type Subtask string

// The two subtasks semrank converts.
const (
	// SubtaskA: query = related question, candidates = its thread's comments.
	SubtaskA Subtask = "A"
	// SubtaskB: query = original question, candidates = its related questions.
	SubtaskB Subtask = "B"
)

// ParseSubtask accepts "A", "B" (any case).
func ParseSubtask(s string) (Subtask, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "A":
		return SubtaskA, nil
	case "B":
		return SubtaskB, nil
	}
	return "", fmt.Errorf("unknown subtask %q (want A or B)", s)
}

type xmlThread struct {
	Seq      string         `xml:"THREAD_SEQUENCE,attr"`
	Skip     string         `xml:"SubtaskA_Skip_Because_Same_As_RelQuestion_ID,attr"`
	RelQ     xmlRelQuestion `xml:"RelQuestion"`
	Comments []xmlComment   `xml:"RelComment"`
}

type xmlRelQuestion struct {
	ID        string  `xml:"RELQ_ID,attr"`
	Order     string  `xml:"RELQ_RANKING_ORDER,attr"`
	Category  string  `xml:"RELQ_CATEGORY,attr"`
	Date      string  `xml:"RELQ_DATE,attr"`
	UserID    string  `xml:"RELQ_USERID,attr"`
	UserName  string  `xml:"RELQ_USERNAME,attr"`
	Relevance string  `xml:"RELQ_RELEVANCE2ORGQ,attr"`
	Subject   xmlText `xml:"RelQSubject"`
	Body      xmlText `xml:"RelQBody"`
}

type xmlComment struct {
	ID           string  `xml:"RELC_ID,attr"`
	Date         string  `xml:"RELC_DATE,attr"`
	UserID       string  `xml:"RELC_USERID,attr"`
	UserName     string  `xml:"RELC_USERNAME,attr"`
	Relevance2Q  string  `xml:"RELC_RELEVANCE2RELQ,attr"`
	Relevance2OQ string  `xml:"RELC_RELEVANCE2ORGQ,attr"`
	Text         xmlText `xml:"RelCText"`
}

type xmlOrgQuestion struct {
	ID      string      `xml:"ORGQ_ID,attr"`
	Subject xmlText     `xml:"OrgQSubject"`
	Body    xmlText     `xml:"OrgQBody"`
	Threads []xmlThread `xml:"Thread"`
}

// xmlText is an element's text. Markup inside it (a <br/>, a <b>…</b>
// that a file left unescaped) counts as a word break and its text is
// kept: decoding into a plain string would drop what nested elements
// hold and join the words either side of an empty one.
type xmlText string

func (t *xmlText) UnmarshalXML(dec *xml.Decoder, start xml.StartElement) error {
	var b strings.Builder
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.CharData:
			b.Write(tok)
		case xml.StartElement:
			depth++
			b.WriteByte(' ')
		case xml.EndElement:
			depth--
			if depth > 0 {
				b.WriteByte(' ')
			}
		}
	}
	*t = xmlText(b.String())
	return nil
}

// SemEval accumulates SemEval-2016 Task 3 XML files into one BEIR dataset
// for a subtask. Add each file, then call Dataset.
type SemEval struct {
	Subtask Subtask

	docs      []dataset.Doc
	docSeen   map[string]string // id → full text, to tell a repeat from a clash
	queries   []dataset.Query
	querySeen map[string]string
	clashes   []string // ids seen twice with different texts or labels
	qrels     dataset.Qrels
	cands     map[string][]rankedID // qid → candidates with their given order
	candOrder []string
	read      int // query records read, repeats included
	// keepSkipped keeps the threads subtask A skips, for SemEvalText: their
	// comments appear nowhere else in the files.
	keepSkipped bool
}

type rankedID struct {
	id    string
	order float64
	seq   int
}

// NewSemEval returns an empty converter for subtask st.
func NewSemEval(st Subtask) *SemEval {
	return &SemEval{
		Subtask:   st,
		docSeen:   map[string]string{},
		querySeen: map[string]string{},
		qrels:     dataset.Qrels{},
		cands:     map[string][]rankedID{},
	}
}

// AddFile reads one XML file.
func (c *SemEval) AddFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.Add(f, path)
}

// Add reads one XML document from r; name is used in errors, which carry the
// line where parsing failed.
func (c *SemEval) Add(r io.Reader, name string) error {
	dec := xml.NewDecoder(r)
	dec.Strict = true
	// The files are XML, but their texts come from HTML forum pages: an
	// HTML entity left unescaped (&nbsp;) is read as HTML reads it rather
	// than failing the whole file.
	dec.Entity = xml.HTMLEntity
	before := c.read
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line, _ := dec.InputPos()
			return xmlError(name, line, "malformed XML", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			line, _ := dec.InputPos()
			var perr error
			switch {
			case t.Name.Local == "OrgQuestion":
				var oq xmlOrgQuestion
				if err := dec.DecodeElement(&oq, &t); err != nil {
					return xmlError(name, line, "malformed OrgQuestion", err)
				}
				depth--
				perr = c.addOrgQuestion(oq)
			case t.Name.Local == "Thread" && depth == 2:
				// SemEval-2015 reformatted files: threads without an original question.
				var th xmlThread
				if err := dec.DecodeElement(&th, &t); err != nil {
					return xmlError(name, line, "malformed Thread", err)
				}
				depth--
				perr = c.addThread(th)
			}
			if perr != nil {
				return &dataset.ParseError{File: name, Line: line, Err: perr}
			}
		case xml.EndElement:
			depth--
		}
	}
	// A file may repeat queries an earlier one introduced (an original
	// question's threads split over files), so count records, not new ids.
	if c.read == before {
		return &dataset.ParseError{File: name, Err: fmt.Errorf("no subtask %s queries in file", c.Subtask)}
	}
	return nil
}

// xmlError reports err at the line the XML decoder failed on when it says
// (a truncated file fails at its end, not where the element began), else at
// line.
func xmlError(name string, line int, what string, err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line = se.Line
	}
	return &dataset.ParseError{File: name, Line: line, Err: fmt.Errorf("%s: %v", what, err)}
}

func clean(s xmlText) string { return strings.TrimSpace(string(s)) }

// An id repeats by design (an original question once per thread, a
// thread in two files merged); the first record is kept. An id repeated
// with another text is a clash the files should not hold, reported by
// Clashes.

func (c *SemEval) addQuery(q dataset.Query) {
	if text, ok := c.querySeen[q.ID]; ok {
		c.clash("query", q.ID, text, q.FullText())
		return
	}
	c.querySeen[q.ID] = q.FullText()
	c.queries = append(c.queries, q)
	c.candOrder = append(c.candOrder, q.ID)
}

func (c *SemEval) addDoc(d dataset.Doc) {
	if text, ok := c.docSeen[d.ID]; ok {
		c.clash("document", d.ID, text, d.FullText())
		return
	}
	c.docSeen[d.ID] = d.FullText()
	c.docs = append(c.docs, d)
}

func (c *SemEval) clash(what, id, kept, dropped string) {
	if kept != dropped {
		c.clashes = append(c.clashes, fmt.Sprintf("%s %s appears twice with different texts; the first is kept", what, id))
	}
}

// Clashes returns a line for each id read twice with different texts
// (queries, documents), and for each document judged twice for one query
// with different labels: the second record, or label, was dropped.
func (c *SemEval) Clashes() []string { return c.clashes }

// Unjudged returns a line for each query that has labelled candidates
// and unlabelled ("?") ones too: the unlabelled are left out of the
// judgments, so evaluation counts them as not relevant. The task's files
// label all of a split or none of it; a mix is a file edited by hand or
// cut from two sources.
func (c *SemEval) Unjudged() []string {
	var out []string
	for _, qid := range c.candOrder {
		judged := c.qrels[qid]
		if len(judged) == 0 {
			continue
		}
		n := 0
		for _, r := range c.cands[qid] {
			if _, ok := judged[r.id]; !ok {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("query %s: %d of its %d candidates are unlabelled (\"?\") while the others are labelled; they are left out of the judgments, so evaluation counts them as not relevant", qid, n, len(c.cands[qid])))
		}
	}
	return out
}

// judge records the grade of document did for query qid. As with the
// records, the first label read is kept; another one is a clash.
func (c *SemEval) judge(qid, did string, grade int) {
	if old, ok := c.qrels[qid][did]; ok {
		if old != grade {
			c.clashes = append(c.clashes, fmt.Sprintf("document %s judged twice for query %s with different labels; the first is kept", did, qid))
		}
		return
	}
	c.qrels.Add(qid, did, grade)
}

func (c *SemEval) addCandidate(qid, did string, order float64) {
	for _, r := range c.cands[qid] {
		if r.id == did {
			return
		}
	}
	c.cands[qid] = append(c.cands[qid], rankedID{id: did, order: order, seq: len(c.cands[qid])})
}

func relQuestionMeta(rq xmlRelQuestion) map[string]any {
	return map[string]any{
		"category":  rq.Category,
		"date":      rq.Date,
		"user_id":   rq.UserID,
		"user_name": rq.UserName,
	}
}

func (c *SemEval) addOrgQuestion(oq xmlOrgQuestion) error {
	if err := dataset.CheckID(oq.ID); err != nil {
		return fmt.Errorf("OrgQuestion ORGQ_ID: %v", err)
	}
	// The task's files repeat an OrgQuestion once per thread; one holding
	// several threads gives each of them.
	threads := oq.Threads
	if len(threads) == 0 {
		threads = []xmlThread{{}} // no related question: an error for B
	}
	for _, th := range threads {
		var err error
		if c.Subtask == SubtaskA {
			err = c.addThread(th)
		} else {
			err = c.addRelQuestion(oq, th)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addRelQuestion adds a thread for subtask B: the original question is the
// query, the thread's related question a candidate.
func (c *SemEval) addRelQuestion(oq xmlOrgQuestion, th xmlThread) error {
	rq := th.RelQ
	if err := dataset.CheckID(rq.ID); err != nil {
		return fmt.Errorf("OrgQuestion %s: RelQuestion RELQ_ID: %v", oq.ID, err)
	}
	order, err := strconv.ParseFloat(rq.Order, 64)
	if err != nil || math.IsNaN(order) || math.IsInf(order, 0) {
		return fmt.Errorf("RelQuestion %s: RELQ_RANKING_ORDER %q is not a number", rq.ID, rq.Order)
	}
	grade, labelled, err := gradeB(rq.Relevance)
	if err != nil {
		return fmt.Errorf("RelQuestion %s: %v", rq.ID, err)
	}
	c.read++
	c.addQuery(dataset.Query{ID: oq.ID, Title: clean(oq.Subject), Text: clean(oq.Body)})
	meta := relQuestionMeta(rq)
	meta["ranking_order"] = order
	meta["comments"] = len(th.Comments)
	// The answers in the related question's thread, for rerankers that
	// compare the original question with what the thread says.
	if t := threadText(th.Comments); t != "" {
		meta["thread_text"] = t
	}
	c.addDoc(dataset.Doc{ID: rq.ID, Title: clean(rq.Subject), Text: clean(rq.Body), Metadata: meta})
	c.addCandidate(oq.ID, rq.ID, order)
	if labelled {
		c.judge(oq.ID, rq.ID, grade)
	}
	return nil
}

// threadText joins a thread's cleaned comment texts, one per line.
func threadText(cs []xmlComment) string {
	var b strings.Builder
	for _, cm := range cs {
		if t := clean(cm.Text); t != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

func gradeB(label string) (grade int, labelled bool, err error) {
	switch label {
	case "PerfectMatch":
		return 2, true, nil
	case "Relevant":
		return 1, true, nil
	case "Irrelevant":
		return 0, true, nil
	case "?", "":
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("unknown RELQ_RELEVANCE2ORGQ label %q", label)
}

func gradeA(label string) (grade int, labelled bool, err error) {
	switch label {
	case "Good":
		return 1, true, nil
	case "PotentiallyUseful", "Bad":
		return 0, true, nil
	case "?", "":
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("unknown RELC_RELEVANCE2RELQ label %q", label)
}

// addThread adds a thread for subtask A: the related question is the query,
// its comments the candidates in thread order.
func (c *SemEval) addThread(th xmlThread) error {
	if c.Subtask != SubtaskA {
		return nil // 2015 threads carry no subtask B data
	}
	if th.Skip != "" && !c.keepSkipped {
		return nil // a repeated related question; the task skips it
	}
	if len(th.Comments) == 0 {
		return nil // nothing to rank (one 2015 dev thread), so no query
	}
	rq := th.RelQ
	if err := dataset.CheckID(rq.ID); err != nil {
		return fmt.Errorf("Thread RELQ_ID: %v", err)
	}
	c.read++
	q := dataset.Query{ID: rq.ID, Title: clean(rq.Subject), Text: clean(rq.Body)}
	if text, ok := c.querySeen[rq.ID]; ok {
		// The thread again (in a second file): its comments are there.
		c.clash("query", rq.ID, text, q.FullText())
		return nil
	}
	q.Metadata = relQuestionMeta(rq)
	q.Metadata["comments"] = len(th.Comments)
	c.addQuery(q)
	for i, cm := range th.Comments {
		if err := dataset.CheckID(cm.ID); err != nil {
			return fmt.Errorf("thread %s: RelComment RELC_ID: %v", rq.ID, err)
		}
		grade, labelled, err := gradeA(cm.Relevance2Q)
		if err != nil {
			return fmt.Errorf("RelComment %s: %v", cm.ID, err)
		}
		c.addDoc(dataset.Doc{ID: cm.ID, Text: clean(cm.Text), Metadata: map[string]any{
			"date":               cm.Date,
			"user_id":            cm.UserID,
			"user_name":          cm.UserName,
			"position":           i + 1,
			"thread_size":        len(th.Comments),
			"question_id":        rq.ID,
			"question_user_id":   rq.UserID,
			"question_date":      rq.Date,
			"category":           rq.Category,
			"by_question_author": cm.UserID != "" && cm.UserID == rq.UserID,
		}})
		c.addCandidate(rq.ID, cm.ID, float64(i+1))
		if labelled {
			c.judge(rq.ID, cm.ID, grade)
		}
	}
	return nil
}

// Dataset returns everything added so far as a BEIR dataset. Candidates are
// ranked in the given order (RELQ_RANKING_ORDER for B, thread order for A)
// with score 1/rank, as in the task's IR baseline. Qrels is nil when no
// input carried labels.
func (c *SemEval) Dataset() *dataset.Dataset {
	run := dataset.NewRun()
	for _, qid := range c.candOrder {
		rs := append([]rankedID(nil), c.cands[qid]...)
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].order != rs[j].order {
				return rs[i].order < rs[j].order
			}
			return rs[i].seq < rs[j].seq
		})
		for i, r := range rs {
			run.Add(qid, dataset.Entry{DocID: r.id, Rank: i + 1, Score: 1 / float64(i+1)})
		}
	}
	ds := &dataset.Dataset{Corpus: c.docs, Queries: c.queries, Candidates: &run}
	if len(c.qrels) > 0 {
		ds.Qrels = c.qrels
	}
	return ds
}
