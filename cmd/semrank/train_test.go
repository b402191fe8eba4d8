package main

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/embed"
)

// TestTrainInterrupted checks that a trainer run with a cancelled context
// (Ctrl-C) fails and writes no model: train lsa, whose SVD cannot stop
// midway, went on to write over its --out and exit 0.
func TestTrainInterrupted(t *testing.T) {
	const (
		concepts  = "../../testdata/concepts/semeval-b"
		deepmatch = "../../testdata/deepmatch/semeval-a"
	)
	tests := []struct {
		name string
		args []string
	}{
		{"lsa", []string{"--data", concepts, "--dim", "5"}},
		{"s2net", []string{"--data", concepts, "--dim", "5", "--iter", "2"}},
		{"dse", []string{"--data", concepts, "--dim", "5", "--d", "50", "--pretrain-epochs", "1", "--epochs", "1"}},
		{"tweak", []string{"--data", concepts, "--alpha", "0.1", "--max-iter", "2"}},
		{"bilinear", []string{"--data", deepmatch, "--epochs", "1"}},
		{"quality", []string{"--data", deepmatch}},
		{"translation", []string{"--data", deepmatch}},
		{"embed", []string{"--data", concepts, "--epochs", "1"}},
		{"topics", []string{"--data", concepts, "--topics", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "model")
			args := append([]string{"train", tt.name, "--out", out}, tt.args...)
			cmd, _, err := rootCmd.Find(args)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			// A command keeps the context of its first run; give it this one.
			prev := cmd.Context()
			cmd.SetContext(ctx)
			defer cmd.SetContext(prev)
			if _, err := execute(args...); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written after the interrupt (stat: %v)", out, err)
			}
		})
	}
}

// TestTrainMethodFlags checks that the concept and DeepMatch-family
// trainers take only the flags their method reads: train bilinear --rank 9
// or train dse --max-terms 5 was accepted and ignored (bilinear even saved
// the unused value in its model's configuration).
func TestTrainMethodFlags(t *testing.T) {
	deepmatchOnly := []string{"resolutions", "neurons", "rank", "committee", "patch-words", "lda-iterations", "min-children"}
	tests := []struct {
		method     string
		has, lacks []string
	}{
		{"lsa", []string{"dim", "max-terms"}, nil},
		{"s2net", []string{"dim", "max-terms"}, nil},
		{"dse", []string{"dim", "d"}, []string{"max-terms"}},
		{"deepmatch", deepmatchOnly, []string{"dim", "hidden"}},
		{"bilinear", []string{"dim"}, append([]string{"hidden"}, deepmatchOnly...)},
		{"siamese", []string{"dim", "hidden"}, deepmatchOnly},
	}
	for _, tt := range tests {
		cmd, _, err := rootCmd.Find([]string{"train", tt.method})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range tt.has {
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("train %s has no --%s", tt.method, name)
			}
		}
		for _, name := range tt.lacks {
			if cmd.Flags().Lookup(name) != nil {
				t.Errorf("train %s takes --%s, which it does not read", tt.method, name)
			}
		}
	}
}

// TestTrainTranslationData checks that train translation refuses a --data
// directory it cannot learn from, saying why, and writes no model.
func TestTrainTranslationData(t *testing.T) {
	const (
		corpus  = `{"_id": "d1", "text": "About 5000 riyals a month."}` + "\n" + `{"_id": "d2", "text": "Try Salwa Road."}` + "\n"
		queries = `{"_id": "q1", "text": "How much is the rent?"}` + "\n"
		header  = "query-id\tcorpus-id\tscore\n"
	)
	tests := []struct {
		name  string
		files map[string]string // nil: no directory
		want  string
	}{
		{"missing", nil, "corpus.jsonl: no such file"},
		{"empty", map[string]string{}, "corpus.jsonl: no such file"},
		{"malformed corpus", map[string]string{"corpus.jsonl": "{bad\n", "queries.jsonl": queries}, "corpus.jsonl:1"},
		{"no qrels", map[string]string{"corpus.jsonl": corpus, "queries.jsonl": queries}, "has no judgments"},
		{"nothing relevant", map[string]string{"corpus.jsonl": corpus, "queries.jsonl": queries, "qrels/test.tsv": header + "q1\td1\t0\n"}, "no judgment marks a document relevant"},
		{"relevant outside the candidates", map[string]string{
			"corpus.jsonl": corpus, "queries.jsonl": queries,
			"qrels/test.tsv": header + "q1\td1\t1\nq1\td2\t0\n", "candidates.trec": "q1 Q0 d2 1 1 x\n",
		}, "no query has a candidate judged relevant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			if tt.files != nil {
				writeDataDir(t, data, tt.files)
			}
			out := filepath.Join(dir, "t.model")
			if _, err := execute("train", "translation", "--data", data, "--out", out); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written (stat: %v)", out, err)
			}
		})
	}
}

// TestTrainTopicsFromText fits a topic model to plain text alone, one
// document a line (the SemEval questions of testdata/embed), with no BEIR
// directory or index.
func TestTrainTopicsFromText(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.topics")
	got, err := execute("train", "topics", "--text", "../../testdata/embed/questions.txt", "--topics", "5", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if !strings.Contains(got, "5 topics over") {
		t.Errorf("output: %s", got)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestTrainEmbedVectors trains word vectors on the forum questions from
// the GloVe slice (--vectors, and its earlier name --init) and wants the
// slice's dimension and, after one epoch, vectors still close to the
// slice's for the words it has: fine-tuning starts from them.
func TestTrainEmbedVectors(t *testing.T) {
	const (
		text  = "../../testdata/embed/questions.txt"
		glove = "../../testdata/embed/glove-slice.txt"
	)
	pre, err := embed.LoadFile(glove, embed.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--vectors", "--init"} {
		out := filepath.Join(t.TempDir(), "v.embed")
		if msg, err := execute("train", "embed", "--text", text, flag, glove, "--epochs", "1", "--out", out); err != nil {
			t.Fatalf("%s: %v\n%s", flag, err, msg)
		}
		v, err := embed.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if v.Dim != pre.Dim {
			t.Errorf("%s: %d dimensions, want the slice's %d", flag, v.Dim, pre.Dim)
		}
		shared, kept := 0, 0
		for _, w := range pre.Words {
			a, ok := v.Lookup(w)
			if !ok {
				continue
			}
			b, _ := pre.Lookup(w)
			shared++
			if cosine(a, b) > 0.5 {
				kept++
			}
		}
		if shared < 100 || kept < shared*9/10 {
			t.Errorf("%s: %d of the %d words shared with the slice keep a cosine above 0.5 with its vectors", flag, kept, shared)
		}
	}
	out := filepath.Join(t.TempDir(), "v.embed")
	if _, err := execute("train", "embed", "--text", text, "--vectors", glove, "--dim", "50", "--out", out); err == nil || !strings.Contains(err.Error(), "--dim 50, but the --vectors have 100 dimensions") {
		t.Errorf("--dim 50 with 100-dimensional vectors: %v", err)
	}
}

func cosine(a, b []float64) float64 {
	var dot, aa, bb float64
	for i := range a {
		dot += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return dot / math.Sqrt(aa*bb)
}

// TestTrainEmbedMethod trains counted vectors (--method ppmi) and refuses
// an unknown method and the skip-gram's flags with ppmi.
func TestTrainEmbedMethod(t *testing.T) {
	const concepts = "../../testdata/concepts/semeval-b"
	out := filepath.Join(t.TempDir(), "ppmi.embed")
	if msg, err := execute("train", "embed", "--method", "ppmi", "--data", concepts, "--dim", "5", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	v, err := embed.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if v.Dim != 5 || v.Len() < 10 {
		t.Errorf("%d words × %d dimensions, want 5 dimensions", v.Len(), v.Dim)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--method", "glove"}, `--method "glove": want sgns or ppmi`},
		{[]string{"--method", "ppmi", "--epochs", "2"}, "--epochs applies to --method sgns only"},
		{[]string{"--method", "ppmi", "--negative", "2"}, "--negative applies to --method sgns only"},
		{[]string{"--method", "ppmi", "--vectors", "../../testdata/embed/glove-slice.txt"}, "--vectors applies to --method sgns only"},
	} {
		args := append([]string{"train", "embed", "--data", concepts, "--out", filepath.Join(t.TempDir(), "x")}, tc.flags...)
		if _, err := execute(args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.flags, err, tc.want)
		}
	}
}
