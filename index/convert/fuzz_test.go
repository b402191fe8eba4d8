package convert

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// addSeedFile adds the bytes of a testdata file to f's seed corpus.
func addSeedFile(f *testing.F, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

func FuzzSemEval(f *testing.F) {
	addSeedFile(f, devSlice)
	addSeedFile(f, slice2015)
	f.Add([]byte(`<xml><OrgQuestion ORGQ_ID="Q1"><OrgQSubject>s</OrgQSubject><OrgQBody>b</OrgQBody>` +
		`<Thread THREAD_SEQUENCE="Q1_R1"><RelQuestion RELQ_ID="Q1_R1" RELQ_RANKING_ORDER="1" RELQ_USERID="U1" RELQ_RELEVANCE2ORGQ="Relevant">` +
		`<RelQSubject>a</RelQSubject><RelQBody>x</RelQBody></RelQuestion>` +
		`<RelComment RELC_ID="Q1_R1_C1" RELC_USERID="U1" RELC_RELEVANCE2RELQ="Good"><RelCText>t</RelCText></RelComment></Thread></OrgQuestion></xml>`))
	f.Add([]byte(`<xml><Thread THREAD_SEQUENCE="Q2"><RelQuestion RELQ_ID="Q2"></RelQuestion><RelComment RELC_ID="Q2_C1" RELC_RELEVANCE2RELQ="?"/></Thread></xml>`))
	f.Add([]byte(`<xml><OrgQuestion ORGQ_ID="Q1"><Thread><RelQuestion RELQ_ID="R" RELQ_RANKING_ORDER="1e999"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, st := range []Subtask{SubtaskA, SubtaskB} {
			c := NewSemEval(st)
			if err := c.Add(bytes.NewReader(data), "in.xml"); err != nil {
				var pe *dataset.ParseError
				if !errors.As(err, &pe) || pe.File != "in.xml" {
					t.Fatalf("subtask %s: error %v (%T) is not a *dataset.ParseError naming in.xml", st, err, err)
				}
				continue
			}
			// Whatever converts must save as a BEIR directory that loads
			// back: ids fit TREC files, candidates and judgments name
			// known queries and documents.
			ds := c.Dataset()
			dir := t.TempDir()
			if err := ds.Save(dir); err != nil {
				t.Fatalf("subtask %s: %v", st, err)
			}
			if _, err := dataset.Load(dir); err != nil {
				t.Fatalf("subtask %s: converted dataset does not load back: %v", st, err)
			}
		}
	})
}

func FuzzReadSMART(f *testing.F) {
	addSeedFile(f, cacmQueries)
	addSeedFile(f, cacmQrels)
	f.Add([]byte(".I 1\n.T\nTitle\n.W\nabstract\n.B\nCACM December, 1958\n.A\nPerlis, A. J.\n.X\n1\t5\t1\n.I 0"))
	f.Add([]byte(".I 01\r\n.W\r\n\r\n.I\t2\r\n.K\r\nk\r\n"))
	f.Add([]byte("\n.W\n.I x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readSMART(bytes.NewReader(data), "in")
		if err != nil {
			var pe *dataset.ParseError
			if !errors.As(err, &pe) || pe.File != "in" {
				t.Fatalf("error %v (%T) is not a *dataset.ParseError naming in", err, err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatal("no error and no records")
		}
		for _, r := range recs {
			empty := true
			for _, v := range r.fields {
				empty = empty && v == ""
			}
			if r.id == "" || empty || r.line < 1 {
				t.Fatalf("record %+v: empty id or fields, or no line", r)
			}
		}
	})
}

func FuzzReadSMARTQrels(f *testing.F) {
	addSeedFile(f, cacmQrels)
	f.Add([]byte("\ufeff01 1 0 0\r\n\n2\t3 0\t0\n"))
	f.Add([]byte("1 4 0 01 5 0 0\n"))
	f.Add([]byte("1\n"))
	f.Add([]byte("1 4 0 0\n"))
	// The ids of the CACM slice, whose judgments are a seed.
	ds, err := SMART(cacmDocs, cacmQueries, cacmQrels)
	if err != nil {
		f.Fatal(err)
	}
	queries, docs := map[string]bool{}, map[string]bool{}
	for _, q := range ds.Queries {
		queries[q.ID] = true
	}
	for _, d := range ds.Corpus {
		docs[d.ID] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := readSMARTQrels(bytes.NewReader(data), "in", queries, docs)
		if err != nil {
			var pe *dataset.ParseError
			if !errors.As(err, &pe) || pe.File != "in" {
				t.Fatalf("error %v (%T) is not a *dataset.ParseError naming in", err, err)
			}
			return
		}
		if len(q) == 0 {
			t.Fatal("no error and no judgments")
		}
		for qid, m := range q {
			for did, g := range m {
				if !queries[qid] || !docs[did] || g != 1 {
					t.Fatalf("judgment %s %s %d: unknown id or grade other than 1", qid, did, g)
				}
			}
		}
	})
}
