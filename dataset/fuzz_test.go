package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// checkReadError fails unless err is a *ParseError naming file.
func checkReadError(t *testing.T, err error, file string) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != file {
		t.Fatalf("error %v (%T) is not a *ParseError naming %s", err, err, file)
	}
}

func FuzzReadQrels(f *testing.F) {
	f.Add("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
	f.Add("q1 0 d1 1\r\nq2 0 d3 2\n")
	f.Add("Q268\tQ268_R4\t4\t0.25\ttrue\nQ268\tQ268_R5\t5\t0.2\tfalse\n")
	f.Add("q1 0 d1 x\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ReadQrels(bytes.NewReader([]byte(in)), "q.tsv")
		if err != nil {
			checkReadError(t, err, "q.tsv")
			return
		}
		if len(q) == 0 {
			t.Fatal("no error and no judgments")
		}
		// What was read writes and reads back unchanged in both forms.
		for _, write := range []func(*bytes.Buffer) error{
			func(b *bytes.Buffer) error { return q.WriteTSV(b) },
			func(b *bytes.Buffer) error { return q.WriteTREC(b) },
		} {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := ReadQrels(&buf, "back")
			if err != nil {
				t.Fatalf("reading back %q: %v", buf.String(), err)
			}
			if !reflect.DeepEqual(back, q) {
				t.Fatalf("round trip = %v, want %v", back, q)
			}
		}
	})
}

func FuzzReadRun(f *testing.F) {
	f.Add("q1 Q0 d1 1 0.5 run\nq1 Q0 d2 2 0.25 run\n")
	f.Add("q1 Q0 d1 1 +Inf run\r\n\nq2 Q0 d1 1 -0 run\n")
	f.Add("q1 Q0 d1 1 NaN run\n")
	f.Add("q1 Q0 d1 1 0.5 run\nq1 Q0 d1 2 0.5 run\n")
	f.Add("Q268\tQ268_R4\t0\t0.25\ttrue\nQ268\tQ268_R5\t0\t0.25\tfalse\nQ269\tQ269_R1\t3\t-Inf\tfalse\n")
	f.Add("Q1 Q1_R1 0 1 true\nQ1 Q0 Q1_R2 2 0.5 run\n")
	f.Fuzz(func(t *testing.T, in string) {
		run, err := ReadRun(bytes.NewReader([]byte(in)), "r.trec")
		if err != nil {
			checkReadError(t, err, "r.trec")
			return
		}
		if run.Len() == 0 {
			t.Fatal("no error and no queries")
		}
		// What was read writes and reads back to the same ranking in both
		// forms: TREC sorted by score, SemEval in the run's order.
		for _, form := range []struct {
			write  func(*bytes.Buffer) error
			sorted bool
		}{
			{func(b *bytes.Buffer) error { return run.Write(b, "t") }, true},
			{func(b *bytes.Buffer) error {
				return run.WriteSemEval(b, func(_ string, e Entry) bool { return e.Score > 0 })
			}, false},
		} {
			var buf bytes.Buffer
			if err := form.write(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := ReadRun(&buf, "back")
			if err != nil {
				t.Fatalf("reading back %q: %v", buf.String(), err)
			}
			checkReadBack(t, run, back, form.sorted)
		}
	})
}

// fuzzJSONL checks one JSONL reader: bad input gives a *ParseError, good
// input writes and reads back unchanged (metadata normalised by norm).
func fuzzJSONL[T any](t *testing.T, in string, read func(io.Reader, string) ([]T, error), norm func(*T)) {
	recs, err := read(bytes.NewReader([]byte(in)), "in.jsonl")
	if err != nil {
		checkReadError(t, err, "in.jsonl")
		return
	}
	if len(recs) == 0 {
		t.Fatal("no error and no records")
	}
	for _, line := range bytes.Split([]byte(in), []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 && !json.Valid(line) {
			t.Fatalf("accepted a line that is not one JSON value: %q", line)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, recs); err != nil {
		t.Fatal(err)
	}
	back, err := read(&buf, "back")
	if err != nil {
		t.Fatalf("reading back %q: %v", buf.String(), err)
	}
	for i := range recs {
		norm(&recs[i])
	}
	if !reflect.DeepEqual(back, recs) {
		t.Fatalf("round trip = %#v, want %#v", back, recs)
	}
}

// normMeta makes an empty metadata map nil, as omitempty writes it.
func normMeta(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func FuzzReadCorpus(f *testing.F) {
	f.Add(`{"_id":"d1","title":"T","text":"x","metadata":{"user_id":"U1","position":2,"tags":["a",null]}}` + "\n" + `{"_id":"d2","text":"y"}`)
	f.Add(`{"_id":"d1","text":"x"}` + "\n" + `{"_id":"d1","text":"y"}`)
	f.Add(`{"_id":"d1","text":"x"` + "\n")
	f.Add(`{"_ID":"d\u00e91","TEXT":"x\ud800","metadata":{}}`)
	f.Fuzz(func(t *testing.T, in string) {
		fuzzJSONL(t, in, ReadCorpus, func(d *Doc) { d.Metadata = normMeta(d.Metadata) })
	})
}

func FuzzReadQueries(f *testing.F) {
	f.Add(`{"_id":"Q268","title":"Good Bank","text":"Which bank"}` + "\n" + `{"_id":"Q269","text":"visa","metadata":{"n":1.5e3}}`)
	f.Add(`{"_id":"q 1","text":"x"}`)
	f.Add("\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		fuzzJSONL(t, in, ReadQueries, func(q *Query) { q.Metadata = normMeta(q.Metadata) })
	})
}
