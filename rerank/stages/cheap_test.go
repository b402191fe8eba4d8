package stages

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/tweak"
	"github.com/semrank/semrank/rerank"
)

// thread is a small forum thread: the asker U1 comments third.
var thread = []rerank.Candidate{
	{Doc: dataset.Doc{ID: "c1", Text: "Try the Doha bank, see www.example.com", Metadata: map[string]any{"position": 1.0, "user_id": "U2", "user_name": "Sam", "question_user_id": "U1", "by_question_author": false}}},
	{Doc: dataset.Doc{ID: "c2", Text: "why do you ask? which city?", Metadata: map[string]any{"position": 2.0, "user_id": "U3", "question_user_id": "U1", "by_question_author": false}}},
	{Doc: dataset.Doc{ID: "c3", Text: "thanks sam, 2 accounts opened", Metadata: map[string]any{"position": 3.0, "user_id": "U1", "question_user_id": "U1", "by_question_author": true}}},
	{Doc: dataset.Doc{ID: "c4", Text: "you are welcome", Metadata: map[string]any{"position": 4.0, "user_id": "U2", "user_name": "Sam", "question_user_id": "U1", "by_question_author": false}}},
}

func TestCheapStages(t *testing.T) {
	tests := []struct {
		typ  string
		opts map[string]any
		want string
	}{
		{"thread", map[string]any{"feature": "asker_after"}, "[1 1 0 0]"},
		{"thread", map[string]any{"feature": "user_repeats"}, "[1 0 0 1]"},
		{"thread", map[string]any{"feature": "relative"}, "[0.25 0.5 0.75 1]"},
		{"thread", map[string]any{"feature": "asker_next"}, "[0 1 0 0]"},
		{"thread", map[string]any{"feature": "asker_thanks"}, "[1 1 0 0]"},
		{"thread", map[string]any{"feature": "asker_names"}, "[1 0 0 0]"},
		{"thread", map[string]any{"feature": "dialogue"}, "[0 0 0 0]"},
		{"surface", map[string]any{"feature": "questions"}, "[0 2 0 0]"},
		{"surface", map[string]any{"feature": "urls"}, "[1 0 0 0]"},
		{"meta", map[string]any{"field": "by_question_author"}, "[0 0 1 0]"},
		{"meta", map[string]any{"field": "position", "transform": "negate"}, "[-1 -2 -3 -4]"},
		{"meta", map[string]any{"field": "missing", "default": 7.0}, "[7 7 7 7]"},
		{"overlap", nil, fmt.Sprint([]float64{2.0 / 3, 0, 0, 0})},
	}
	for _, tt := range tests {
		st, err := rerank.NewStage(rerank.StageSpec{Type: tt.typ, Options: tt.opts}, rerank.Env{})
		if err != nil {
			t.Fatalf("%s %v: %v", tt.typ, tt.opts, err)
		}
		got, err := st.Score(context.Background(), rerank.Query{Text: "best bank in Doha"}, thread)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got); s != tt.want {
			t.Errorf("%s %v = %s, want %s", tt.typ, tt.opts, s, tt.want)
		}
	}
}

// TestThreadDialogue checks the u v u alternation on a thread given out of
// order: by position the users are A B A C D C.
func TestThreadDialogue(t *testing.T) {
	users := []string{"C", "A", "D", "B", "C", "A"}
	pos := []float64{4, 1, 5, 2, 6, 3}
	var cands []rerank.Candidate
	for i, u := range users {
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: fmt.Sprint(i), Metadata: map[string]any{"position": pos[i], "user_id": u}}})
	}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "thread", Options: map[string]any{"feature": "dialogue"}}, rerank.Env{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Score(context.Background(), rerank.Query{}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if s, want := fmt.Sprint(got), "[1 1 1 1 1 1]"; s != want {
		t.Errorf("dialogue = %s, want %s", s, want)
	}
	cands[0].Metadata["user_id"] = "E" // A B A E D C: only the first three alternate
	got, _ = st.Score(context.Background(), rerank.Query{}, cands)
	if s, want := fmt.Sprint(got), "[0 1 0 1 0 1]"; s != want {
		t.Errorf("dialogue = %s, want %s", s, want)
	}
}

// TestMetaNonFinite checks that metadata strings reading as NaN or an
// infinity ("NaN" is how many tools write a missing number) count as
// missing: as scores they would fail every search whose window holds the
// document (rerank refuses non-finite stage scores).
func TestMetaNonFinite(t *testing.T) {
	vals := []any{"NaN", "inf", "-Infinity", "3", 2.0, nil}
	var cands []rerank.Candidate
	for i, v := range vals {
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: fmt.Sprint(i), Metadata: map[string]any{"v": v, "position": v}}})
	}
	tests := []struct {
		typ  string
		opts map[string]any
		want string
	}{
		{"meta", map[string]any{"field": "v", "default": 7.0}, "[7 7 7 3 2 7]"},
		{"meta", map[string]any{"field": "v", "transform": "neglog"}, fmt.Sprint([]float64{0, 0, 0, -math.Log(4), -math.Log(3), 0})},
		{"thread", map[string]any{"feature": "relative"}, "[0 0 0 1 0.6666666666666666 0]"},
	}
	for _, tt := range tests {
		st, err := rerank.NewStage(rerank.StageSpec{Type: tt.typ, Options: tt.opts}, rerank.Env{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Score(context.Background(), rerank.Query{}, cands)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(got); s != tt.want {
			t.Errorf("%s %v = %s, want %s", tt.typ, tt.opts, s, tt.want)
		}
	}
	for _, def := range []float64{math.NaN(), math.Inf(1)} {
		if _, err := rerank.NewStage(rerank.StageSpec{Type: "meta", Options: map[string]any{"field": "v", "default": def}}, rerank.Env{}); err == nil {
			t.Errorf("meta default %v accepted", def)
		}
	}
}

func TestCheapStagesRejectBadOptions(t *testing.T) {
	for _, spec := range []rerank.StageSpec{
		{Type: "thread", Options: map[string]any{"feature": "nope"}},
		{Type: "surface"},
		{Type: "meta"},
		{Type: "meta", Options: map[string]any{"field": "x", "transform": "square"}},
		{Type: "bm25", Options: map[string]any{"k1": "high"}},
		{Type: "tfidf"}, // needs an index
		{Type: "overlap", Options: map[string]any{"nosuch": 3}},
		{Type: "meta", Options: map[string]any{"field": "x", "transfrom": "negate"}},
		{Type: "overlap", Model: "overlap.model"}, // reads no model
		{Type: "length", Model: "length.model"},
		{Type: "thread", Model: "t.model", Options: map[string]any{"feature": "dialogue"}},
	} {
		if _, err := rerank.NewStage(spec, rerank.Env{}); err == nil {
			t.Errorf("%s %v (model %q) accepted", spec.Type, spec.Options, spec.Model)
		}
	}
	_, err := rerank.NewStage(rerank.StageSpec{Type: "overlap", Model: "overlap.model"}, rerank.Env{})
	if want := `stage "overlap" reads no model file, yet its spec names overlap.model: remove it`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want one containing %q", err, want)
	}
}

// TestBM25RejectsBadParameters: a k1 or b that is NaN, infinite or out of
// range gives non-finite (or meaningless) scores, failing every search, so
// building refuses it, naming the option.
func TestBM25RejectsBadParameters(t *testing.T) {
	env := rerank.Env{Stats: tweak.CountDF([]string{"a bank in doha", "a bank"})}
	for _, tc := range []struct {
		opts map[string]any
		want string // "" for success
	}{
		{nil, ""},
		{map[string]any{"k1": 0, "b": 0}, ""},
		{map[string]any{"k1": 2.5, "b": 1}, ""},
		{map[string]any{"k1": "high"}, "option k1: want a number"},
		{map[string]any{"k1": math.NaN()}, "option k1 NaN"},
		{map[string]any{"k1": math.Inf(1)}, "option k1 +Inf"},
		{map[string]any{"k1": -1}, "option k1 -1"},
		{map[string]any{"b": math.NaN()}, "option b NaN"},
		{map[string]any{"b": 1.5}, "option b 1.5"},
		{map[string]any{"b": -0.1}, "option b -0.1"},
	} {
		_, err := rerank.NewStage(rerank.StageSpec{Type: "bm25", Options: tc.opts}, env)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("bm25 %v: err = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestTFIDFTitles checks that option titles compares only the query's
// first line with candidate titles.
func TestTFIDFTitles(t *testing.T) {
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "a", Title: "visa renewal", Text: "where is the bank"}},
		{Doc: dataset.Doc{ID: "b", Title: "best bank", Text: "visa renewal in Doha"}},
	}
	env := rerank.Env{Stats: flatStats{}}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"titles": true}}, env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Score(context.Background(), rerank.Query{Text: "visa renewal\nwhich bank?"}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] <= 0.99 || got[1] != 0 {
		t.Errorf("title scores %v, want [1 0]", got)
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"titles": true, "field": "x"}}, env); err == nil {
		t.Error("titles and field accepted together")
	}
}

// flatStats gives every term the same document frequency.
type flatStats struct{}

func (flatStats) DocCount() (uint64, error)      { return 10, nil }
func (flatStats) DocFreq(string) (uint64, error) { return 1, nil }

// TestTFIDFField checks that option field compares the query with a
// metadata text field instead of the title and text, and names the stage.
func TestTFIDFField(t *testing.T) {
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "a", Text: "visa renewal office", Metadata: map[string]any{"thread_text": "go to the bank"}}},
		{Doc: dataset.Doc{ID: "b", Text: "best bank in Doha", Metadata: map[string]any{"thread_text": "renew your visa online"}}},
		{Doc: dataset.Doc{ID: "c", Text: "visa", Metadata: map[string]any{}}},
	}
	env := rerank.Env{Stats: flatStats{}}
	plain, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf"}, env)
	if err != nil {
		t.Fatal(err)
	}
	field, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Name: "thread", Options: map[string]any{"field": "thread_text"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	if field.Name() != "thread" || plain.Name() != "tfidf" {
		t.Fatalf("names %q, %q", field.Name(), plain.Name())
	}
	q := rerank.Query{Text: "visa renewal"}
	ps, err := plain.Score(context.Background(), q, cands)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := field.Score(context.Background(), q, cands)
	if err != nil {
		t.Fatal(err)
	}
	if !(ps[0] > ps[1]) || !(fs[1] > fs[0]) || fs[2] != 0 {
		t.Errorf("text scores %v, thread scores %v", ps, fs)
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"field": 3}}, env); err == nil {
		t.Error("numeric field option accepted")
	}
}

// TestTFIDFPeers checks that option peers scores each candidate by its
// mean cosine with the candidates by other users, ignoring the query.
func TestTFIDFPeers(t *testing.T) {
	user := func(u string) map[string]any { return map[string]any{"user_id": u} }
	cands := []rerank.Candidate{
		{Doc: dataset.Doc{ID: "a", Text: "renew the visa at the immigration office", Metadata: user("u1")}},
		{Doc: dataset.Doc{ID: "b", Text: "immigration office renews visa quickly", Metadata: user("u2")}},
		{Doc: dataset.Doc{ID: "c", Text: "thanks a lot", Metadata: user("u3")}},
		{Doc: dataset.Doc{ID: "d", Text: "renew the visa at the immigration office", Metadata: user("u1")}}, // a's twin, same user
		{Doc: dataset.Doc{ID: "e", Text: "", Metadata: user("u4")}},
	}
	env := rerank.Env{Stats: flatStats{}}
	st, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"peers": true}}, env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Score(context.Background(), rerank.Query{Text: "thanks"}, cands)
	if err != nil {
		t.Fatal(err)
	}
	// a's peers are b, c, e (d is by the same user): cos(a,b)/3; b's are
	// a, c, d, e: 2cos(a,b)/4. c shares no word with anyone.
	tests := []struct {
		name string
		ok   bool
	}{
		{"a above c", got[0] > got[2]},
		{"b above c", got[1] > got[2]},
		{"c zero", got[2] == 0},
		{"empty e zero", got[4] == 0},
		{"same user not a peer", math.Abs(got[1]-1.5*got[0]) < 1e-12},
		{"a and d alike", got[0] == got[3]},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("%s: scores %v", tt.name, got)
		}
	}
	// Without user ids every other candidate is a peer: a's twin d counts.
	for i := range cands {
		cands[i].Metadata = nil
	}
	anon, err := st.Score(context.Background(), rerank.Query{}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if !(anon[0] > got[0]) || anon[2] != 0 {
		t.Errorf("scores without users %v, with users %v", anon, got)
	}
	if _, err := rerank.NewStage(rerank.StageSpec{Type: "tfidf", Options: map[string]any{"peers": true, "titles": true}}, env); err == nil {
		t.Error("peers and titles accepted together")
	}
}
