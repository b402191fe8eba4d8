package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/embed"
	"github.com/semrank/semrank/models/ssg/ssgtest"
)

// TestPaperExperimentBadFlags checks that the paper experiments refuse bad
// flag values before loading anything, with an error naming the flag,
// rather than panicking, running for minutes first, or printing a table
// that silently lacks what was asked for.
func TestPaperExperimentBadFlags(t *testing.T) {
	nowhere := filepath.Join(t.TempDir(), "absent")
	speed := func(flags ...string) []string {
		return append([]string{"experiment", "wmd-speed", "--data", nowhere, "--vectors", nowhere}, flags...)
	}
	unsup := func(flags ...string) []string {
		return append([]string{"experiment", "unsup", "--data", nowhere, "--vectors", nowhere, "--topics", nowhere}, flags...)
	}
	concepts := func(flags ...string) []string {
		return append([]string{"experiment", "concepts"}, flags...)
	}
	deepmatch := func(flags ...string) []string {
		return append([]string{"experiment", "deepmatch"}, flags...)
	}
	tweak := func(flags ...string) []string {
		return append([]string{"experiment", "tweak"}, flags...)
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	tests := []struct {
		args []string
		want string
	}{
		{speed("--queries", "0"), "--queries 0: want a positive number"},
		{speed("--docs", "-1"), "--docs -1: want a positive number"},
		{speed("--k", "0"), "--k 0: want a positive number"},
		{speed("--repeat", "0"), "--repeat 0: want a positive number"},
		{speed("--pot-values", filepath.Join(nowhere, "pot.bin")), "pot.bin"},
		{unsup("--base", "IR ordr"), `--base "IR ordr"`},
		{unsup("--index", nowhere, "--depth", "0"), "--depth 0: want a positive number"},
		{unsup("--depth", "20"), "--depth applies to --index only"},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--folds", "1"), "--folds 1: want at least 2"},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--ks", "50,0"), "--ks 0"},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--cs", "-3"), "--cs -3"},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--train", nowhere), "give either --cv DIR or both"},
		{concepts("--cv", nowhere), "--cv needs a --corpus"},
		{deepmatch("--cv", nowhere, "--train", nowhere), "give either --cv DIR or both"},
		{deepmatch("--cv", nowhere, "--folds", "1"), "--folds 1: want at least 2"},
		{deepmatch("--cv", nowhere, "--epochs", "-2"), "--epochs -2"},
		// Refused before minutes of vocabulary, LSA and DSE pretraining.
		{concepts("--cv", nowhere, "--corpus", nowhere, "--init", "lsaa"), `--init "lsaa": want lsa or random`},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--dse-input", "tfidf"), `--dse-input "tfidf": want binary or tfidf-l2`},
		{concepts("--cv", "../../testdata/concepts/semeval-b", "--corpus", "../../testdata/tweak", "--folds", "9"),
			"--folds 9: ../../testdata/concepts/semeval-b has only 8 judged queries"},
		// Trained twice, reported twice under one name.
		{concepts("--cv", nowhere, "--corpus", nowhere, "--ks", "50,100,50"), "--ks 50,100,50: 50 given twice"},
		{concepts("--cv", nowhere, "--corpus", nowhere, "--cs", "10,10"), "--cs 10,10: 10 given twice"},
		// --folds without cross-validation would be silently ignored.
		{concepts("--train", nowhere, "--test", elsewhere, "--folds", "3"), "--folds applies to --cv only"},
		{deepmatch("--train", nowhere, "--test", elsewhere, "--folds", "3"), "--folds applies to --cv only"},
		{tweak("--train", nowhere, "--dev", elsewhere, "--folds", "3"), "--folds applies to --all only"},
		// The boosted-tree fusion has no L2 penalty to set.
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--fusion", "lambdamart", "--fusion-l2", "0.01"}, "--fusion-l2 applies to the linear fusion"},
		{[]string{"experiment", "semeval2016", "--subtask", "B", "--train", nowhere, "--dev", elsewhere, "--out", elsewhere, "--fusion", "LambdaMART", "--fusion-l2", "0.01"}, "--fusion-l2 applies to the linear fusion"},
		// auto chooses between feedback and none, and reads its settings.
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--unsupervised", "--feedback", "auto,none"}, "auto chooses between feedback and none"},
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--unsupervised", "--feedback", "auto,min_overlap=2"}, "min_overlap 2"},
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--unsupervised", "--feedback", "automatic"}, "want none, rm3"},
		// The step after the fusion is checked before any data is read.
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--unsupervised", "--after-fusion", "tfidf"}, "--after-fusion: recipe: step after fusion \"tfidf\": want none or regularize"},
		{[]string{"experiment", "beir", "--data", nowhere, "--out", elsewhere, "--unsupervised", "--after-fusion", "regularize:alpha=1"}, "option alpha 1"},
		// Refused before the --train/--dev part, whose report it would lose.
		{tweak("--train", nowhere, "--dev", elsewhere, "--all", nowhere, "--folds", "1"), "--folds 1: want at least 2"},
	}
	for _, tt := range tests {
		t.Run(tt.args[1]+" "+tt.want, func(t *testing.T) {
			if _, err := execute(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestWMDSpeedChecksPOTValuesFirst checks that a --pot-values file that
// cannot match the pairs is refused before the timings run, not after.
func TestWMDSpeedChecksPOTValuesFirst(t *testing.T) {
	dir := t.TempDir()
	words := []string{"bank", "good", "best", "qatar", "doha", "place", "car", "visa"}
	data := make([]float64, 2*len(words))
	for i := range words {
		data[2*i], data[2*i+1] = math.Cos(float64(i)), math.Sin(float64(i))
	}
	v, err := embed.NewVectors(words, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	vectors := filepath.Join(dir, "v.embed")
	if err := v.Save(vectors, embed.Config{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	pot := filepath.Join(dir, "pot.bin")
	if err := os.WriteFile(pot, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute("experiment", "wmd-speed", "--data", "../../testdata/demo", "--vectors", vectors,
		"--queries", "2", "--docs", "3", "--repeat", "1", "--pot-values", pot)
	if err == nil || !strings.Contains(err.Error(), "1 values for 6 pairs") {
		t.Fatalf("err = %v, want one saying the file has 1 value for 6 pairs", err)
	}
	if strings.Contains(out, "exact WMD") {
		t.Errorf("timings ran before the values were checked:\n%s", out)
	}
}

// TestEmbedInitDim checks that --dim contradicting the --vectors is
// refused before training, rather than silently replaced by their size.
// It names the flags by their earlier names, --init and --init-format,
// which still work.
func TestEmbedInitDim(t *testing.T) {
	dir := t.TempDir()
	v, err := embed.NewVectors([]string{"bank", "visa"}, 2, []float64{1, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	vectors := filepath.Join(dir, "v.embed")
	if err := v.Save(vectors, embed.Config{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte("bank visa bank\nvisa bank visa\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.embed")
	_, err = execute("train", "embed", "--text", text, "--init", vectors, "--dim", "50", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "--dim 50, but the --vectors have 2 dimensions") {
		t.Fatalf("err = %v, want one naming both sizes", err)
	}
	// Without --vectors, --vectors-format was silently ignored.
	_, err = execute("train", "embed", "--text", text, "--init-format", "glove", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "--vectors-format applies to --vectors only") {
		t.Fatalf("err = %v, want a refusal of --vectors-format", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s written: %v", out, err)
	}
}

// TestTWEAKExperimentRelevantOnlyJudgments: with judgments that name the
// relevant documents alone, as CACM's and most BEIR sets' do, the TWEAK
// experiment counts the other candidates not relevant, as train tweak
// does; the preference loss had no pair to learn from and stopped it.
func TestTWEAKExperimentRelevantOnlyJudgments(t *testing.T) {
	src := "../../testdata/tweak"
	qrels, err := os.ReadFile(filepath.Join(src, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var relevant strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(qrels)), "\n") {
		switch f := strings.Split(line, "\t"); {
		case i == 0:
			relevant.WriteString(line + "\n")
		case len(f) == 3 && f[2] != "0":
			// One grade, as CACM's: relevant.
			relevant.WriteString(f[0] + "\t" + f[1] + "\t1\n")
		}
	}
	files := map[string]string{"qrels/test.tsv": relevant.String()}
	for _, name := range []string{"corpus.jsonl", "queries.jsonl", "candidates.trec"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	data := writeDataDir(t, filepath.Join(t.TempDir(), "data"), files)
	out, err := execute("experiment", "tweak", "--all", data, "--folds", "2")
	if err != nil {
		t.Fatalf("experiment tweak: %v\n%s", err, out)
	}
	if !strings.Contains(out, "| tweak-preference |") {
		t.Errorf("no preference-loss row:\n%s", out)
	}
}

// TestUnsupIndexListsError checks that experiment unsup --index stops at
// unsupexp.IndexLists' error (here: the given candidates of --data are
// not in an index of another corpus) rather than compare the systems over
// no candidates at all, as it did when the error went to a shadowed
// variable.
func TestUnsupIndexListsError(t *testing.T) {
	dir := t.TempDir()
	v, tm := ssgtest.Fixture(t)
	vectors, topicsPath := filepath.Join(dir, "v.embed"), filepath.Join(dir, "t.model")
	if err := v.Save(vectors, embed.Config{Dim: 2}); err != nil {
		t.Fatal(err)
	}
	if err := tm.Save(topicsPath); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	corpus := `{"_id":"x1","title":"bank","text":"which bank for a loan"}` + "\n" + `{"_id":"x2","title":"visa","text":"bank visa salary"}` + "\n"
	if err := os.WriteFile(filepath.Join(other, "corpus.jsonl"), []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "other.idx")
	if _, err := execute("index", "--data", other, "--index", idx); err != nil {
		t.Fatal(err)
	}
	_, err := execute("experiment", "unsup", "--data", "../../testdata/demo", "--vectors", vectors, "--topics", topicsPath, "--index", idx)
	if err == nil || !strings.Contains(err.Error(), `candidate "Q268_R4" is not in the index`) {
		t.Fatalf("err = %v, want IndexLists' error for a candidate not in the index", err)
	}
}
