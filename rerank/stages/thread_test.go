package stages

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// thanksRE is the definition saysThanks implements.
var thanksRE = regexp.MustCompile(`(?i)\b(?:thank|thanx|thnx|thx|appreciate)`)

func TestThanks(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", false},
		{"Thanks a lot", true},
		{"THX!", true},
		{"many thnx", true},
		{"I appreciate it", true},
		{"I Appreciated it", true},
		{"unthankful", false},
		{"_thanks 9thx", false},
		{"(thanks)", true},
		{"\u00e9thanks", true},
		{"than\u212a you", true},
		{"than\u212a", true},
		{"tha\u212ank", false},
		{"th", false},
		{"thx\xff", true},
		{"\xffthx", true},
	} {
		if got, want := saysThanks(tc.s), thanksRE.MatchString(tc.s); got != tc.want || want != tc.want {
			t.Errorf("saysThanks(%q) = %v, the regexp says %v; want %v", tc.s, got, want, tc.want)
		}
	}
}

// FuzzThanks checks saysThanks against the regular expression it implements,
// on any text.
func FuzzThanks(f *testing.F) {
	for _, s := range []string{"Thanks a lot", "than\u212a", "xthx appreciate", "THNX\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := saysThanks(s), thanksRE.MatchString(s); got != want {
			t.Fatalf("saysThanks(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}

// threadFeature computes a feature of candidate i straight from its
// definition (Thread's doc), scanning the whole window: Thread, which
// follows links made once per window, must agree.
func threadFeature(feature string, cands []rerank.Candidate, i int) float64 {
	meta := func(j int, key string) string { s, _ := cands[j].Metadata[key].(string); return s }
	pos := func(j int) float64 { p, _ := numeric(cands[j].Metadata["position"]); return p }
	// after reports whether j comes after i in the thread: a later
	// position, or the same one later in the window.
	after := func(j int) bool { return pos(j) > pos(i) || (pos(j) == pos(i) && j > i) }
	user, asker := meta(i, "user_id"), meta(i, "question_user_id")
	var v float64
	first := -1 // the asker's first comment after i
	for j := range cands {
		if j == i {
			continue
		}
		if u := meta(j, "user_id"); user != "" && u == user && feature == "user_repeats" {
			v++
		}
		if asker == "" || meta(j, "user_id") != asker || !after(j) {
			continue
		}
		if first < 0 || pos(j) < pos(first) || (pos(j) == pos(first) && j < first) {
			first = j
		}
		name := strings.ToLower(meta(i, "user_name"))
		if feature == "asker_names" && name != "" && user != asker && strings.Contains(strings.ToLower(cands[j].FullText()), name) {
			v = 1
		}
	}
	switch feature {
	case "asker_after":
		v = b2f(first >= 0)
	case "asker_thanks":
		v = b2f(first >= 0 && thanksRE.MatchString(cands[first].FullText()))
	}
	return v
}

// TestThreadFeatures checks Thread's linked features against
// threadFeature on random threads with shared positions, unknown users
// and askers, and comments naming their authors.
func TestThreadFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	texts := []string{"ok", "Thanks a lot", "try the souq", "thx U2name", "ask u1NAME about it"}
	for trial := range 300 {
		cands := make([]rerank.Candidate, 1+rng.IntN(10))
		for i := range cands {
			m := map[string]any{"position": float64(rng.IntN(6))}
			if u := rng.IntN(4); u > 0 {
				m["user_id"] = "u" + strconv.Itoa(u)
				m["user_name"] = "U" + strconv.Itoa(u) + "name"
			}
			if a := rng.IntN(3); a > 0 {
				m["question_user_id"] = "u" + strconv.Itoa(a)
			}
			cands[i] = rerank.Candidate{Doc: dataset.Doc{ID: strconv.Itoa(i), Text: texts[rng.IntN(len(texts))], Metadata: m}}
		}
		ctx := context.Background()
		for _, f := range []string{"asker_after", "asker_thanks", "asker_names", "user_repeats"} {
			got, err := (&Thread{Feature: f}).Score(ctx, rerank.Query{}, cands)
			if err != nil {
				t.Fatal(err)
			}
			for i := range cands {
				if want := threadFeature(f, cands, i); got[i] != want {
					t.Fatalf("trial %d, %s of candidate %d: %v, want %v", trial, f, i, got[i], want)
				}
			}
		}
	}
}
