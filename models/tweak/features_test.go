package tweak

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
)

// From SemEval-2016 Task 3 train-part2, question Q202 (testdata/tweak).
const (
	q202Title = "Driving through when green signal is blinking; will get fine?"
	q202Body  = "I am new lady driver and today is my first drive from home to office. When I was driving home"
)

func TestAnalyze(t *testing.T) {
	text := Analyze(q202Title, q202Body)
	if text.Len != 30 {
		t.Errorf("Len = %d, want 30 tokens (stop words keep their positions)", text.Len)
	}
	byTerm := map[string]Occurrence{}
	for i, o := range text.Terms {
		if i > 0 && text.Terms[i-1].Term >= o.Term {
			t.Fatalf("terms not sorted at %q", o.Term)
		}
		byTerm[o.Term] = o
	}
	tests := []struct {
		term string
		want Occurrence
	}{
		// "Driving" (title, capitalised), "drive", "driving": one stem.
		{"drive", Occurrence{Term: "drive", TF: 3, First: 1, Capital: true, InTitle: true}},
		{"driver", Occurrence{Term: "driver", TF: 1, First: 15}},
		{"home", Occurrence{Term: "home", TF: 2, First: 23}},
		{"blink", Occurrence{Term: "blink", TF: 1, First: 7, InTitle: true}},
		{"offic", Occurrence{Term: "offic", TF: 1, First: 25}},
	}
	for _, tt := range tests {
		if got := byTerm[tt.term]; got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.term, got, tt.want)
		}
	}
	for _, stop := range []string{"i", "when", "is", "the"} {
		if _, ok := byTerm[stop]; ok {
			t.Errorf("stop word %q kept", stop)
		}
	}
}

func TestFeatures(t *testing.T) {
	text := Analyze(q202Title, q202Body)
	df := &DFTable{N: 100, Count: map[string]uint64{"drive": 9, "home": 3}}
	qf := &DFTable{N: 10, Count: map[string]uint64{"drive": 2}}
	tests := []struct {
		name string
		st   Stats
		term string
		want [NumFeatures]float64
	}{
		{"drive", Stats{DF: df, QF: qf}, "drive",
			[NumFeatures]float64{1, math.Log(4), math.Log(10), 1, math.Log(2), 1.0 / 30, math.Log(31), 1, math.Log(3)}},
		{"drive leave-one-out", Stats{DF: df, QF: qf, QFLeaveOut: map[string]bool{"drive": true}}, "drive",
			[NumFeatures]float64{1, math.Log(4), math.Log(10), 1, math.Log(2), 1.0 / 30, math.Log(31), 1, math.Log(2)}},
		{"home no log", Stats{DF: df}, "home",
			[NumFeatures]float64{1, math.Log(3), math.Log(4), 0, math.Log(24), 23.0 / 30, math.Log(31), 0, 0}},
		{"unknown df", Stats{DF: df, QF: qf}, "driver",
			[NumFeatures]float64{1, math.Log(2), 0, 0, math.Log(16), 15.0 / 30, math.Log(31), 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phi := tt.st.Features(nil, text)
			if len(phi) != len(text.Terms)*NumFeatures {
				t.Fatalf("%d values for %d terms", len(phi), len(text.Terms))
			}
			for i, o := range text.Terms {
				if o.Term != tt.term {
					continue
				}
				got := phi[i*NumFeatures : (i+1)*NumFeatures]
				for k := range got {
					if math.Abs(got[k]-tt.want[k]) > 1e-12 {
						t.Errorf("%s = %v, want %v", FeatureNames[k], got[k], tt.want[k])
					}
				}
				return
			}
			t.Fatalf("term %q not found", tt.term)
		})
	}
}

func TestSplitQuery(t *testing.T) {
	tests := []struct{ in, title, body string }{
		{"subject\nbody\nmore", "subject", "body\nmore"},
		{"one line", "one line", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if ti, b := SplitQuery(tt.in); ti != tt.title || b != tt.body {
			t.Errorf("SplitQuery(%q) = %q, %q", tt.in, ti, b)
		}
	}
}

func TestCountDFAndSnapshot(t *testing.T) {
	df := CountDF([]string{q202Title, q202Body, "Green cars, green lights"})
	if df.N != 3 {
		t.Fatalf("N = %d", df.N)
	}
	for term, want := range map[string]uint64{"green": 2, "drive": 2, "home": 1, "car": 1, "absent": 0} {
		if got := df.Freq(term); got != want {
			t.Errorf("df(%s) = %d, want %d", term, got, want)
		}
	}
	snap, err := Snapshot(df, []string{"green", "home", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	if snap.N != 3 || len(snap.Count) != 2 || snap.Count["green"] != 2 {
		t.Errorf("snapshot = %+v", snap)
	}
}

// analyzeTwice is Analyze as two analyses: the title alone for the title
// feature, and the joined text for the rest. Analyze reads the title's
// terms off the joined text's analysis instead; FuzzAnalyzeOnePass holds
// it to this.
func analyzeTwice(title, body string) Text {
	full := dataset.Doc{Title: title, Text: body}.FullText()
	inTitle := map[string]bool{}
	if title != "" {
		for _, t := range analyzers.Terms(title) {
			inTitle[t.Term] = true
		}
	}
	byTerm := map[string]int{}
	var out Text
	for _, t := range analyzers.Terms(full) {
		i, ok := byTerm[t.Term]
		if !ok {
			i = len(out.Terms)
			byTerm[t.Term] = i
			out.Terms = append(out.Terms, Occurrence{Term: t.Term, First: t.Position, InTitle: inTitle[t.Term]})
		}
		o := &out.Terms[i]
		o.TF++
		o.Capital = o.Capital || t.Capital
		out.Len = max(out.Len, t.Position)
	}
	slices.SortFunc(out.Terms, func(x, y Occurrence) int { return strings.Compare(x.Term, y.Term) })
	return out
}

// FuzzAnalyzeOnePass: Analyze, one analysis of the joined text, finds the
// terms, counts, positions, capitals and title terms that analyzing the
// title on its own as well finds, whatever the title ends with (a stop
// word, a possessive, punctuation, an invalid or a combining rune).
func FuzzAnalyzeOnePass(f *testing.F) {
	for _, s := range [][2]string{
		{q202Title, q202Body}, {"", q202Body}, {q202Title, ""}, {"", ""},
		{"The bank's", "bank rates"}, {"Visa for the", "the visa"}, {"rate.", ".rate"},
		{"caf\xc3", "\xa9 café"}, {"e\u0301", "\u0301e"}, {"Doha's'", "'s Doha"},
		{"x\r", "\ny"}, {"3.", "5 3.5"}, {"a\u200d", "\u200db"}, {"🇶", "🇦 flag"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, title, body string) {
		if got, want := Analyze(title, body), analyzeTwice(title, body); !reflect.DeepEqual(got, want) {
			t.Fatalf("Analyze(%q, %q) =\n%+v\nanalyzing the title apart gives\n%+v", title, body, got, want)
		}
	})
}
