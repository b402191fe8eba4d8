package embed

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
)

func TestTokenize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Which is the best Bank in Doha?", "best bank doha"},
		{"see http://www.qatarliving.com/x?y=1 for visa", "see visa"},
		{"use <code>printf</code> here www.example.org", "use printf"},
		{"", ""},
		{"Visit WWW.Example.com today", "visit today"},
		{"FTP://files.example.org/a.txt mirror", "mirror"},
		{"a wwwx.b and ww.c stay", "wwwx.b ww.c stay"},
		{"x < y and y > z", "x z"},
	}
	for _, tc := range tests {
		if got := strings.Join(Tokenize(tc.in), " "); got != tc.want {
			t.Errorf("Tokenize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzTokenize checks that skipping the regular expressions where they
// cannot match changes nothing: Tokenize against both always applied.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"see http://x.y/z now", "WwW.a.b", "<b>x</b>", "a.b.www", "ftp:/x", "<\n>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		want := analyzers.Words(tagRE.ReplaceAllString(urlRE.ReplaceAllString(text, " "), " "))
		if got := Tokenize(text); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q", text, got, want)
		}
	})
}

func TestVocabularyPrunesMostFrequent(t *testing.T) {
	s := [][]string{{"a", "a", "a", "b", "b", "c", "c", "d"}, {"a", "b", "e", "e"}}
	tests := []struct {
		min, top    int
		words, gone []string
	}{
		{1, 0, []string{"a", "b", "c", "e", "d"}, nil},
		{2, 0, []string{"a", "b", "c", "e"}, nil},
		{2, 1, []string{"b", "c", "e"}, []string{"a"}},
		{2, 10, []string{}, []string{"a", "b", "c", "e"}},
	}
	for _, tc := range tests {
		w, c, p := Vocabulary(s, tc.min, tc.top)
		if !reflect.DeepEqual(w, tc.words) || !reflect.DeepEqual(p, tc.gone) || len(c) != len(w) {
			t.Errorf("Vocabulary(min %d, top %d) = %v %v %v", tc.min, tc.top, w, c, p)
		}
	}
}

func cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// Two topics with disjoint vocabularies: words that share contexts must end
// up closer to each other than to the other topic's words.
// separatedTopics are two topics' words; topicSentences draws 600
// sentences of 8 words, each from one topic's words.
var separatedTopics = [][]string{
	{"bank", "loan", "salary", "account", "transfer", "credit"},
	{"beach", "desert", "camping", "sand", "dunes", "sea"},
}

func topicSentences() [][]string {
	r := rng(7)
	var sents [][]string
	for i := 0; i < 600; i++ {
		tp := separatedTopics[i%2]
		s := make([]string, 8)
		for j := range s {
			s[j] = tp[r.next()%uint64(len(tp))]
		}
		sents = append(sents, s)
	}
	return sents
}

// checkSeparated fails t unless the mean cosine of two words of one topic
// exceeds that of two words of different topics by 0.3.
func checkSeparated(t *testing.T, v *Vectors) {
	t.Helper()
	var within, across float64
	var nw, na int
	all := slices.Concat(separatedTopics...)
	for _, a := range all {
		for _, b := range all {
			if a >= b {
				continue
			}
			va, _ := v.Lookup(a)
			vb, _ := v.Lookup(b)
			if slices.Contains(separatedTopics[0], a) == slices.Contains(separatedTopics[0], b) {
				within += cosine(va, vb)
				nw++
			} else {
				across += cosine(va, vb)
				na++
			}
		}
	}
	within /= float64(nw)
	across /= float64(na)
	if within < across+0.3 {
		t.Errorf("mean cosine within topics %.3f, across %.3f: topics not separated", within, across)
	}
}

func TestTrainSeparatesTopics(t *testing.T) {
	sents := topicSentences()
	var epochs []int
	v, err := TrainWithProgress(context.Background(), sents, Config{Dim: 20, Epochs: 5, PruneTop: -1, Sample: 0.1},
		func(epoch, of int) { epochs = append(epochs, epoch*10+of) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(epochs) != "[15 25 35 45 55]" {
		t.Errorf("progress reported %v, want epochs 1..5 of 5", epochs)
	}
	// A negative Sample turns sub-sampling off, which the default (1e-3)
	// applies to these frequent words: other draws, other vectors.
	vecs := func(sample float64) []float64 {
		w, err := Train(context.Background(), sents, Config{Dim: 20, Epochs: 1, PruneTop: -1, Sample: sample})
		if err != nil {
			t.Fatal(err)
		}
		x, _ := w.Lookup("bank")
		return x
	}
	if slices.Equal(vecs(-1), vecs(0)) {
		t.Error("Sample -1 trained the same vectors as the default sub-sampling")
	}
	checkSeparated(t, v)
}

// sliceSentences returns the sentences of the SemEval questions slice
// in testdata.
func sliceSentences(tb testing.TB) [][]string {
	tb.Helper()
	raw, err := os.ReadFile("../../testdata/embed/questions.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return Sentences(strings.Split(string(raw), "\n"))
}

func TestTrainOnSemEvalSlice(t *testing.T) {
	sents := sliceSentences(t)
	cfg := Config{Dim: 16, Epochs: 2, Seed: 3}
	v, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, pruned := Vocabulary(sents, 2, 30)
	for _, w := range pruned {
		if _, ok := v.Lookup(w); ok {
			t.Errorf("pruned word %q has a vector", w)
		}
	}
	if _, ok := v.Lookup("the"); ok {
		t.Error("stop word has a vector")
	}
	again, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Data, again.Data) {
		t.Error("training is not deterministic for a fixed seed")
	}
	path := t.TempDir() + "/v.model"
	if err := v.Save(path, cfg); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || !reflect.DeepEqual(back.Data, v.Data) || !reflect.DeepEqual(back.Counts, v.Counts) {
		t.Fatalf("bundle round trip: %v", err)
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	tests := []struct {
		sents [][]string
		cfg   Config
		want  string
	}{
		{nil, Config{}, "vocabulary has 0 words"},
		{[][]string{{"a", "b"}, {"a", "b"}}, Config{PruneTop: -1, Dim: -1}, "dim"},
		{[][]string{{"a", "b"}, {"a", "b"}}, Config{PruneTop: -1, Init: &Vectors{Dim: 3}}, "dimensions"},
		{[][]string{{"a", "b"}, {"a", "b"}}, Config{PruneTop: -1, Sample: math.NaN()}, "sample NaN must be a number"},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := Train(context.Background(), tc.sents, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTrainSameBitsEverywhere pins the vectors trained on a synthetic
// corpus. The reference implementation's float32 arithmetic must give the
// same bits on every platform: run it also with GOAMD64=v3 (where, like on
// arm64, the compiler may fuse x*y+z into one FMA instruction unless each
// product is rounded explicitly).
func TestTrainSameBitsEverywhere(t *testing.T) {
	words := strings.Fields("bank loan salary account transfer credit beach desert camping sand dunes sea visa doha")
	r := rng(11)
	var sents [][]string
	for range 300 {
		s := make([]string, 10)
		for j := range s {
			s[j] = words[r.next()%uint64(len(words))]
		}
		sents = append(sents, s)
	}
	v, err := Train(context.Background(), sents, Config{Dim: 12, Epochs: 3, PruneTop: -1, MinCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, x := range v.Data {
		binary.Write(h, binary.LittleEndian, math.Float64bits(x))
	}
	const want = "00aa3ee66579d6b0"
	if got := hex.EncodeToString(h.Sum(nil))[:16]; got != want {
		t.Errorf("trained vectors hash to %s, want %s", got, want)
	}
}

// TestTrainInitKeepsRareWords checks that words below the minimum count
// stay in the vocabulary when the initial vectors have them, starting from
// their values, and that other rare words are still left out.
func TestTrainInitKeepsRareWords(t *testing.T) {
	var sents [][]string
	for range 20 {
		sents = append(sents, []string{"visa", "office", "doha"})
	}
	sents = append(sents, []string{"visa", "renewal", "sponsor"})
	pre, err := NewVectors([]string{"renewal", "visa"}, 2, []float64{0.5, -0.5, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dim: 2, MinCount: 5, PruneTop: -1, Epochs: 1, Sample: -1, Init: pre}
	v, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Lookup("renewal"); !ok {
		t.Error("renewal, seen once but in the initial vectors, is not in the vocabulary")
	}
	if _, ok := v.Lookup("sponsor"); ok {
		t.Error("sponsor, seen once and not in the initial vectors, is in the vocabulary")
	}
	cfg.Init = nil
	if v, err = Train(context.Background(), sents, cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Lookup("renewal"); ok {
		t.Error("renewal is in the vocabulary without initial vectors")
	}
}

// TestDots: dots gives every row's dot product with in bit for bit as
// dot does, for any number of rows and any length.
func TestDots(t *testing.T) {
	r := rng(5)
	for _, n := range []int{1, 2, 3, 7, 100, 101} {
		in := make([]float32, n)
		for j := range in {
			in[j] = r.float() - 0.5
		}
		for k := range 8 {
			rows := make([][]float32, k)
			for i := range rows {
				rows[i] = make([]float32, n+i) // rows may be longer than in
				for j := range rows[i] {
					rows[i][j] = r.float() - 0.5
				}
			}
			got := dots(in, rows, nil)
			if len(got) != k {
				t.Fatalf("n %d, %d rows: %d dot products", n, k, len(got))
			}
			for i, row := range rows {
				if want := dot(in, row); math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Errorf("n %d, %d rows: row %d: %v, want %v", n, k, i, got[i], want)
				}
			}
		}
	}
}
