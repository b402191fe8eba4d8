package dataset

import (
	"strings"
	"testing"
)

// TestMerge checks that merged datasets keep every set's records in order,
// a shared identical document once, and refuse conflicting content.
func TestMerge(t *testing.T) {
	set := func(dir string, docs []Doc, qids ...string) *Dataset {
		ds := &Dataset{Dir: dir, Corpus: docs, Qrels: Qrels{}}
		run := NewRun()
		ds.Candidates = &run
		for _, q := range qids {
			ds.Queries = append(ds.Queries, Query{ID: q, Text: q})
			ds.Qrels.Add(q, docs[0].ID, 1)
			ds.Candidates.Add(q, Entry{DocID: docs[0].ID, Rank: 1, Score: 1})
		}
		return ds
	}
	a, b := Doc{ID: "a", Text: "alpha"}, Doc{ID: "b", Text: "beta"}
	other := Doc{ID: "a", Text: "another alpha"}
	noCands := set("n", []Doc{b}, "q9")
	noCands.Candidates = nil
	tests := []struct {
		name    string
		sets    []*Dataset
		docs    string // ids of the merged corpus
		queries string
		wantErr string
	}{
		{"two sets", []*Dataset{set("x", []Doc{a}, "q1"), set("y", []Doc{b, a}, "q2", "q3")}, "a b", "q1 q2 q3", ""},
		{"document differs", []*Dataset{set("x", []Doc{a}, "q1"), set("y", []Doc{other}, "q2")}, "", "", `document "a" differs`},
		{"query twice", []*Dataset{set("x", []Doc{a}, "q1"), set("y", []Doc{b}, "q1")}, "", "", `both hold query "q1"`},
		{"candidates in one only", []*Dataset{set("x", []Doc{a}, "q1"), noCands}, "", "", "candidate lists"},
		{"none", nil, "", "", "no datasets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := Merge(tt.sets...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var docs, queries []string
			for _, d := range ds.Corpus {
				docs = append(docs, d.ID)
			}
			for _, q := range ds.Queries {
				queries = append(queries, q.ID)
				if len(ds.Candidates.Ranking(q.ID)) != 1 || ds.Qrels[q.ID] == nil {
					t.Errorf("query %s lost its list or judgments", q.ID)
				}
			}
			if got := strings.Join(docs, " "); got != tt.docs {
				t.Errorf("corpus %s, want %s", got, tt.docs)
			}
			if got := strings.Join(queries, " "); got != tt.queries {
				t.Errorf("queries %s, want %s", got, tt.queries)
			}
		})
	}
}
