package quality

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"Thanks!! See www.qatarliving.com :)", "thanks ! see <url> <smiley>"},
		{"Call 4455 6677, or mail info@qtel.qa ?", "call <num> <num> or mail <email> ?"},
		{"@Sam it's 'OK'", "<at> it's ok"},
		{"Doha?? Doha? ", "doha ? doha ?"},
		{"", ""},
		{"Über café", "über café"},
		{"see WwW.qatar.qa or HTTP://x.qa", "see <url> or <url>"},
	}
	for _, tt := range tests {
		if got := strings.Join(Tokens(tt.in), " "); got != tt.want {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFeatures(t *testing.T) {
	got := Features("you can you can", true, false)
	want := []string{"you", "can", "you can", "can you"}
	if !slices.Equal(got, want) {
		t.Errorf("Features = %q, want %q", got, want)
	}
	if got := Features("you can you can", false, false); !slices.Equal(got, []string{"you", "can"}) {
		t.Errorf("unigram Features = %q", got)
	}
	if got, want := Features("Ab", false, true), []string{"ab", "# ab", "#ab ", "# ab "}; !slices.Equal(got, want) {
		t.Errorf("character Features = %q, want %q", got, want)
	}
}

// chatAndAnswers are texts whose class shows in their words: answers give
// a place or a number to call, chat thanks or asks back.
func chatAndAnswers(n int) []Example {
	answers := []string{"you can visit the office in %s", "call the embassy on 4455 in %s", "go to the %s branch, they renew it"}
	chat := []string{"thanks %s lol", "why do you ask? %s", "same question here %s :)"}
	places := []string{"doha", "wakra", "khor", "rayyan", "lusail"}
	var ex []Example
	for i := range n {
		p := places[i%len(places)]
		ex = append(ex, Example{Text: fmt.Sprintf(answers[i%3], p), Good: true})
		ex = append(ex, Example{Text: fmt.Sprintf(chat[i%3], p), Good: false})
	}
	return ex
}

func TestTrainSeparates(t *testing.T) {
	m, err := Train(context.Background(), chatAndAnswers(30), Config{Bigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	good := m.Score("you can visit the embassy")
	bad := m.Score("thanks lol, why do you ask?")
	if good <= 0 || bad >= 0 {
		t.Errorf("answer scores %.3f, chat %.3f: want > 0 and < 0", good, bad)
	}
	// Context features are learned like words.
	ex := chatAndAnswers(30)
	for i := range ex {
		ex[i].Text = "same text"
		if ex[i].Good {
			ex[i].Context = []string{"ctx:first"}
		}
	}
	m, err = Train(context.Background(), ex, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if with, without := m.Score("same text", "ctx:first"), m.Score("same text"); with <= without {
		t.Errorf("score with the good context %.3f ≤ without %.3f", with, without)
	}
}

func TestTrainErrors(t *testing.T) {
	oneClass := []Example{{Text: "a b", Good: true}, {Text: "a c", Good: true}}
	rare := []Example{{Text: "a", Good: true}, {Text: "b", Good: false}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		ex   []Example
		cfg  Config
		want string
	}{
		{"no examples", context.Background(), nil, Config{}, "good and bad"},
		{"one class", context.Background(), oneClass, Config{}, "0 bad"},
		{"no frequent feature", context.Background(), rare, Config{MinCount: 2}, "no feature"},
		{"bad l2", context.Background(), chatAndAnswers(3), Config{L2: -1}, "l2"},
		{"cancelled", cancelled, chatAndAnswers(10), Config{}, "context canceled"},
	}
	for _, tt := range tests {
		_, err := Train(tt.ctx, tt.ex, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	m, err := Train(context.Background(), chatAndAnswers(20), Config{Bigrams: true, Context: []string{"asker"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "q.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Config.Context, []string{"asker"}) || !got.Config.Bigrams {
		t.Errorf("config %+v, want %+v", got.Config, m.Config)
	}
	for _, s := range []string{"you can visit", "thanks lol", ""} {
		if a, b := m.Score(s), got.Score(s); a != b {
			t.Errorf("Score(%q) = %v after loading, %v before", s, b, a)
		}
	}

	// A damaged file fails with an error, not a model.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.model")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil {
		t.Error("loaded a corrupted model")
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.model")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// Well-formed bundles whose contents are wrong: the error names the file.
	dup := *m
	dup.Features = append([]string(nil), m.Features...)
	dup.Features[1] = dup.Features[0]
	noCfg, _ := m.Bundle()
	noCfg.Manifest.Config = nil
	for name, save := range map[string]func(string) error{
		"duplicate feature": dup.Save,
		"no config":         noCfg.Save,
	} {
		if err := save(bad); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: err = %v, want an error naming %s", name, err, bad)
		}
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"Thanks!! www.x.com :)", "@a b@c.de 12", "'''", "\x00url"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokens(s) {
			if tok == "" || strings.ContainsAny(tok, " \t\n\x00") {
				t.Fatalf("Tokens(%q) has token %q", s, tok)
			}
		}
	})
}

// TestScoreMatchesFeatures checks Score's buffer-reusing path against the
// definition: bias plus the weights of the text's distinct in-vocabulary
// Features, scaled by 1/√n.
func TestScoreMatchesFeatures(t *testing.T) {
	ex := chatAndAnswers(20)
	ex = append(ex, Example{Text: "Thanks!! visit www.x.qa :) call 4455 you can", Good: true})
	m, err := Train(context.Background(), ex, Config{Bigrams: true, Chars: true, MinCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(ex, Example{Text: "brand new words"}, Example{Text: ""}) {
		x := m.vector(append(Features(e.Text, true, true), "ctx:none"))
		want := m.Bias
		for _, j := range x.idx {
			want += m.W[j] * x.val
		}
		if got := m.Score(e.Text, "ctx:none"); math.Abs(got-want) > 1e-12 {
			t.Errorf("Score(%q) = %v, want %v", e.Text, got, want)
		}
	}
}

// TestTrainCountsRepeatedFeaturesOnce: Score counts a feature once however
// often a text and its context repeat it, so training must too; otherwise
// the model learns from vectors it never sees when scoring (and a feature
// of a single text passes min_count by being repeated).
func TestTrainCountsRepeatedFeaturesOnce(t *testing.T) {
	ex := chatAndAnswers(20)
	once := slices.Clone(ex)
	twice := slices.Clone(ex)
	for i := range ex {
		if i%3 == 0 {
			once[i].Context = []string{"ctx:asker"}
			// Repeated, and naming a feature the text already has.
			twice[i].Context = []string{"ctx:asker", "ctx:asker", Tokens(ex[i].Text)[0]}
		}
	}
	// A context feature of one text only must not reach min_count 2.
	once[1].Context = []string{"ctx:lone"}
	twice[1].Context = []string{"ctx:lone", "ctx:lone"}
	want, err := Train(context.Background(), once, Config{Bigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Train(context.Background(), twice, Config{Bigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Features, want.Features) || !slices.Equal(got.W, want.W) || got.Bias != want.Bias {
		t.Errorf("repeated features changed the model: %d features (want %d), has ctx:lone %v",
			len(got.Features), len(want.Features), slices.Contains(got.Features, "ctx:lone"))
	}
}
