package recipe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/index/convert"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/rerank"
	"github.com/semrank/semrank/rerank/offline"
	"github.com/semrank/semrank/rerank/stages"
)

// memo is a deliberately overfitting stage: its "model" is the judgments
// it was trained on, so it is perfect on its training queries and knows
// nothing about any other query. A fusion trained on its in-sample scores
// would trust it; cross-fitting must not.
type memo struct{ rel map[string]bool }

func (memo) Name() string { return "memo" }
func (m memo) Score(_ context.Context, q rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		if m.rel[q.ID+"/"+c.ID] {
			out[i] = 1
		}
	}
	return out, nil
}

func init() {
	rerank.RegisterStage("memo", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		raw, err := os.ReadFile(spec.ModelFile(env.Dir))
		if err != nil {
			return nil, err
		}
		m := memo{rel: map[string]bool{}}
		for _, l := range strings.Fields(string(raw)) {
			m.rel[l] = true
		}
		return m, nil
	})
	rerank.RegisterTrainer("memo", func(_ context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
		var lines []string // sorted, so that the same judgments write the same file
		for qid, m := range in.Train.Qrels {
			for did, g := range m {
				if g > 0 {
					lines = append(lines, qid+"/"+did+"\n")
				}
			}
		}
		slices.Sort(lines)
		spec.Model = filepath.Join(in.Dir, "memo.txt")
		return spec, os.WriteFile(spec.Model, []byte(strings.Join(lines, "")), 0o644)
	})
}

// synthetic builds queries whose relevant candidate shares the query's
// topic word, so the lexical overlap stage carries real signal.
func synthetic(nq int) *dataset.Dataset {
	ds := &dataset.Dataset{Qrels: dataset.Qrels{}}
	run := dataset.NewRun()
	topics := []string{"visa", "bank", "school", "driving", "salary", "housing", "doctor", "flight"}
	for q := 0; q < nq; q++ {
		qid := fmt.Sprintf("q%03d", q)
		topic := topics[q%len(topics)]
		ds.Queries = append(ds.Queries, dataset.Query{ID: qid, Text: topic + " question number " + fmt.Sprint(q)})
		for c := 0; c < 6; c++ {
			did := fmt.Sprintf("%s_c%d", qid, c)
			word := topics[(q+c)%len(topics)]
			ds.Corpus = append(ds.Corpus, dataset.Doc{ID: did, Text: word + " answer text " + fmt.Sprint(c)})
			run.Add(qid, dataset.Entry{DocID: did, Rank: c + 1, Score: 1 / float64(c+1)})
			g := 0
			if c == 0 || (c == 3 && q%2 == 0) {
				g = 1 // c0 shares the topic; c3 is relevant at random
			}
			ds.Qrels.Add(qid, did, g)
		}
	}
	// The given order puts the topic-sharing candidate last.
	rev := dataset.NewRun()
	for _, qid := range run.QueryIDs() {
		es := run.Ranking(qid)
		for i := range es {
			e := es[len(es)-1-i]
			rev.Add(qid, dataset.Entry{DocID: e.DocID, Rank: i + 1, Score: 1 / float64(i+1)})
		}
	}
	ds.Candidates = &rev
	return ds
}

func TestFitCrossFitsTheFusion(t *testing.T) {
	ctx := context.Background()
	ds := synthetic(60)
	dir := t.TempDir()
	r := &Recipe{Stages: []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}}, Folds: 3}
	path, err := r.Fit(ctx, ds, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	lin, err := rerank.LoadLinear(filepath.Join(dir, "fusion.model"))
	if err != nil {
		t.Fatal(err)
	}
	// Out of fold, memo scores zero everywhere: it must get no weight.
	if w := lin.Weights["memo"]; w > 0.05 || w < -0.05 {
		t.Errorf("memo weight %.3f: the fusion trusted an overfitted stage", w)
	}
	// The written pipeline loads and reranks an unseen split with a
	// relative model path.
	cfg, err := rerank.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := cfg.Stages[1].Model; filepath.IsAbs(m) {
		t.Errorf("model path %q is absolute", m)
	}
	test := synthetic(20)
	o, err := offline.Open(ctx, path, "", test, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	runs, err := RunAll(ctx, o.Index, test, o.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eval.Evaluate(test.Qrels, runs.Runs["fused pipeline"], eval.MustParseMetrics("map@10"))
	if err != nil {
		t.Fatal(err)
	}
	given, _ := eval.Evaluate(test.Qrels, *test.Candidates, eval.MustParseMetrics("map@10"))
	if res.Mean[0] <= given.Mean[0]+0.1 {
		t.Errorf("fused MAP %.3f not above given order %.3f", res.Mean[0], given.Mean[0])
	}
	var sb strings.Builder
	if err := Table(&sb, test.Qrels, runs, "given order", eval.MustParseMetrics("map@10,mrr@10"), true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "| fused pipeline |") {
		t.Errorf("table lacks the fused row:\n%s", sb.String())
	}
}

func TestFoldsChecked(t *testing.T) {
	ctx := context.Background()
	ds := synthetic(12)
	for _, tc := range []struct {
		folds   int
		wantErr string // substring; "" for success
	}{
		{0, ""},
		{2, ""},
		{1, "folds 1, want at least 2"},
		{-3, "folds -3, want at least 2"},
	} {
		t.Run(fmt.Sprint(tc.folds), func(t *testing.T) {
			r := &Recipe{Stages: []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}}, Folds: tc.folds}
			_, err := r.Fit(ctx, ds, nil, t.TempDir())
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Fit: err = %v, want one containing %q", err, tc.wantErr)
			}
			err = BEIR(ctx, BEIROptions{Data: t.TempDir(), Out: t.TempDir(), Folds: tc.folds})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("BEIR: err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseStages(t *testing.T) {
	tests := []struct {
		names   []string
		want    string // stage display names, joined
		wantErr string
	}{
		{[]string{"lexical"}, "tfidf bm25 overlap length", ""},
		{[]string{"tweak", "quality_context", "quality_words"}, "tweak quality_context quality_words", ""},
		{[]string{"thread_text"}, "thread", ""},
		{[]string{"peers"}, "peers", ""},
		{[]string{"s2net", "s2net:dim=100:pairs=false"}, "s2net s2net_dim100_pairsfalse", ""},
		{[]string{"s2net:dim"}, "", `option "dim" is not KEY=VALUE`},
		{[]string{"shoe:size=9"}, "", `unknown stage type "shoe"`},
		{[]string{"lexical", "shoe"}, "", `unknown stage type "shoe"`},
		// Stages no trainer makes are built once, so their options are
		// checked before any work.
		{[]string{"meta", "tfidf:titles=true"}, "position asker asker_after user_repeats asker_next asker_thanks asker_names dialogue questions urls digits tfidf_titlestrue", ""},
		{[]string{"tfidf:foo=1"}, "", `unknown option foo`},
		{[]string{"surface"}, "", `option "feature" must be`},
		{[]string{"meta:feild=position"}, "", `unknown option feild (accepted: default, field, transform)`},
	}
	for _, tt := range tests {
		specs, err := ParseStages(tt.names)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseStages(%q): err %v, want %q", tt.names, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseStages(%q): %v", tt.names, err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, s.DisplayName(s.Type))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("ParseStages(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
	opt, err := ParseStages([]string{"s2net:dim=100:pairs=false:gamma=2.5:init=random"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"dim": 100, "pairs": false, "gamma": 2.5, "init": "random"}
	if fmt.Sprint(opt[0].Options) != fmt.Sprint(want) {
		t.Errorf("options %v, want %v", opt[0].Options, want)
	}
	specs, err := ParseStages([]string{"meta", "quality_context"})
	if err != nil {
		t.Fatal(err)
	}
	last := specs[len(specs)-1]
	if last.Options["context"] != stages.QualityContextAll {
		t.Errorf("quality_context options %v", last.Options)
	}
	for _, s := range specs[:len(specs)-1] {
		if _, err := rerank.NewStage(s, rerank.Env{}); err != nil {
			t.Errorf("meta stage %s: %v", s.DisplayName(s.Type), err)
		}
	}
}

// TestSemEvalRefit checks the SemEval recipe's two trainings: dev metrics
// from a pipeline trained on the training file alone, and a final
// pipeline trained on training and dev judgments together.
func TestSemEvalRefit(t *testing.T) {
	ctx := context.Background()
	train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
	dev := filepath.Join("..", "..", "testdata", "semeval", "dev-slice.xml")
	fingerprint := func(path string) string {
		t.Helper()
		b, err := models.Load(path, rerank.FusionMethod, 1)
		if err != nil {
			t.Fatal(err)
		}
		return b.Manifest.TrainingFingerprint
	}
	for _, trainOnly := range []bool{false, true} {
		out := t.TempDir()
		var log strings.Builder
		err := SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Dev: dev,
			Out: out, Stages: []string{"lexical"}, TrainOnly: trainOnly, Log: &log})
		if err != nil {
			t.Fatalf("trainOnly=%v: %v", trainOnly, err)
		}
		if _, err := os.Stat(filepath.Join(out, "dev.trec")); err != nil {
			t.Errorf("trainOnly=%v: no dev run: %v", trainOnly, err)
		}
		if !strings.Contains(log.String(), "fused pipeline") {
			t.Errorf("trainOnly=%v: no dev metrics in the log:\n%s", trainOnly, log.String())
		}
		final := fingerprint(filepath.Join(out, "fusion.model"))
		_, statErr := os.Stat(filepath.Join(out, "train", "pipeline.yaml"))
		if trainOnly {
			if statErr == nil {
				t.Error("trainOnly: wrote a second pipeline under train/")
			}
			continue
		}
		if statErr != nil {
			t.Fatalf("refit: no training-only pipeline: %v", statErr)
		}
		if first := fingerprint(filepath.Join(out, "train", "fusion.model")); first == final {
			t.Errorf("refit pipeline trained on the same queries as the training-only one (fingerprint %s)", final)
		}
	}
}

// TestSemEvalWithoutDev checks that the dev file is optional: without
// one, the recipe trains on the training files and writes its pipeline.
func TestSemEvalWithoutDev(t *testing.T) {
	ctx := context.Background()
	train := filepath.Join("..", "..", "testdata", "semeval", "2015-dev-slice.xml")
	for _, trainOnly := range []bool{false, true} {
		t.Run(fmt.Sprint("trainOnly=", trainOnly), func(t *testing.T) {
			out := t.TempDir()
			err := SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train},
				Out: out, Stages: []string{"lexical"}, TrainOnly: trainOnly})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(out, "pipeline.yaml")); err != nil {
				t.Errorf("no pipeline: %v", err)
			}
			if _, err := os.Stat(filepath.Join(out, "train")); err == nil {
				t.Error("wrote a training-only pipeline under train/ without dev metrics to report")
			}
		})
	}
}

// TestBEIROptionsCheckedFirst checks that a negative depth and an unknown
// fusion are refused before anything is trained or written.
func TestBEIROptionsCheckedFirst(t *testing.T) {
	data := retrievalData(t)
	for _, tc := range []struct {
		depth        int
		unsupervised bool
		fusion       string
		wantErr      string // substring; "" for success
	}{
		{0, false, "", ""},
		{20, true, "", ""},
		{-1, false, "", "depth -1, want ≥ 0"},
		{-100, true, "", "depth -100, want ≥ 0"},
		{0, false, "foo", `unknown fusion "foo"`},
	} {
		t.Run(fmt.Sprint(tc.depth, tc.fusion), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := BEIR(context.Background(), BEIROptions{Data: data, Out: out, Folds: 2, Depth: tc.depth,
				Unsupervised: tc.unsupervised, Pseudo: termQueries, Fusion: tc.fusion, Stages: []string{"overlap", "memo"}})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("BEIR: err = %v, want one containing %q", err, tc.wantErr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("BEIR wrote %s before refusing the depth", out)
			}
		})
	}
}

// TestBEIRRerunSaysWhatToDo: a second run into the folder of an earlier
// one is refused before any work, saying which index to remove.
func TestBEIRRerunSaysWhatToDo(t *testing.T) {
	data := retrievalData(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := BEIROptions{Data: data, Out: out, Folds: 2, Unsupervised: true, Pseudo: termQueries, Stages: []string{"overlap"}}
	if err := BEIR(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	err := BEIR(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "earlier run") || !strings.Contains(err.Error(), filepath.Join(out, "index")) {
		t.Fatalf("rerun: err = %v, want one naming the earlier run's index", err)
	}
}

// TestBEIRRefusesLeftoversOfAnotherRun: with the earlier run's index
// removed, a rerun still refuses what it would neither replace nor remove
// and a reader would take for its own: folds beyond the new count, folds
// beside an unsupervised pipeline. A rerun of the same kind goes ahead,
// and so does a supervised run over an unsupervised one, whose
// pipeline.yaml it replaces and whose stages.txt it removes.
func TestBEIRRefusesLeftoversOfAnotherRun(t *testing.T) {
	data := retrievalData(t)
	opts := func(out string, unsupervised bool, folds int) BEIROptions {
		return BEIROptions{Data: data, Out: out, Folds: folds, Unsupervised: unsupervised, Pseudo: termQueries, Stages: []string{"overlap"}}
	}
	for _, tc := range []struct {
		name          string
		first, second BEIROptions
		want          []string // leftovers named; none: the rerun succeeds
	}{
		{"supervised after unsupervised", opts("", true, 2), opts("", false, 2), nil},
		{"fewer folds", opts("", false, 3), opts("", false, 2), []string{"fold3"}},
		{"unsupervised after supervised", opts("", false, 2), opts("", true, 2), []string{"fold1", "fold2"}},
		{"the same again", opts("", false, 2), opts("", false, 2), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			tc.first.Out, tc.second.Out = out, out
			if err := BEIR(context.Background(), tc.first); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(out, "index")); err != nil {
				t.Fatal(err)
			}
			err := BEIR(context.Background(), tc.second)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("rerun: %v", err)
				}
				_, stagesErr := os.Stat(filepath.Join(out, StagesFile))
				if _, err := rerank.ReadConfig(filepath.Join(out, "pipeline.yaml")); err != nil || (stagesErr == nil) == !tc.second.Unsupervised {
					t.Errorf("rerun left pipeline.yaml (%v) and %s (%v), want the pipeline and, unsupervised only, the stages", err, StagesFile, stagesErr)
				}
				return
			}
			if err == nil {
				t.Fatal("rerun: no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), filepath.Join(out, w)) {
					t.Errorf("rerun: err = %v, want one naming %s", err, w)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "index")); err == nil {
				t.Error("the refused rerun built an index")
			}
		})
	}
}

// TestBEIRInterruptedIndexLeavesNone: a run cancelled while it indexes
// removes the partial index it was building, so the next run into the
// same folder goes ahead instead of refusing an earlier run's index.
func TestBEIRInterruptedIndexLeavesNone(t *testing.T) {
	data := retrievalData(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := BEIROptions{Data: data, Out: out, Folds: 2, Unsupervised: true, Pseudo: termQueries, Stages: []string{"overlap"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := BEIR(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(out, "index")); !os.IsNotExist(err) {
		t.Errorf("the cancelled run left its index (stat: %v)", err)
	}
	if err := BEIR(context.Background(), opts); err != nil {
		t.Errorf("the next run: %v", err)
	}
}

// TestBEIRIndexStaged: the index is built under a staging name and
// renamed into place whole, so a run killed while indexing leaves a
// staging directory (which the next run sweeps), never a partial
// Out/index; a finished run leaves the index whole, searchable, and no
// staging directory.
func TestBEIRIndexStaged(t *testing.T) {
	data := retrievalData(t)
	out := filepath.Join(t.TempDir(), "out")
	// What a run killed while indexing now leaves: a partial index under
	// the staging name.
	partial, err := index.Create(filepath.Join(out, ".fit-index"))
	if err != nil {
		t.Fatal(err)
	}
	if err := partial.Close(); err != nil {
		t.Fatal(err)
	}
	// While it is built, the index is not at Out/index.
	hooked := false
	defer func(f func(string)) { testHookIndexed = f }(testHookIndexed)
	testHookIndexed = func(staging string) {
		hooked = true
		if _, err := os.Stat(filepath.Join(out, "index")); !os.IsNotExist(err) {
			t.Errorf("Out/index exists before the index is whole (stat: %v)", err)
		}
		if _, err := os.Stat(filepath.Join(staging, "index_meta.json")); err != nil {
			t.Errorf("no index at the staging path %s: %v", staging, err)
		}
	}
	opts := BEIROptions{Data: data, Out: out, Folds: 2, Unsupervised: true, Pseudo: termQueries, Stages: []string{"overlap"}}
	if err := BEIR(context.Background(), opts); err != nil {
		t.Fatalf("run after a killed one: %v", err)
	}
	if !hooked {
		t.Error("the index was not built under a staging name")
	}
	if _, err := os.Stat(filepath.Join(out, ".fit-index")); !os.IsNotExist(err) {
		t.Errorf("staging index left behind (stat: %v)", err)
	}
	idx, err := index.Open(filepath.Join(out, "index"))
	if err != nil {
		t.Fatalf("published index: %v", err)
	}
	defer idx.Close()
	n, err := idx.DocCount()
	if want := uint64(len(synthetic(12).Corpus)); err != nil || n != want {
		t.Errorf("published index holds %d documents (err %v), want %d", n, err, want)
	}
	if len(idx.PayloadNames()) == 0 {
		t.Error("published index lost its payloads in the rename")
	}
}

// textSeen records the most unlabeled texts the "text_probe" trainer was given.
var textSeen atomic.Int64

func init() {
	rerank.RegisterStage("text_probe", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		spec.ModelFile(env.Dir)
		return memo{}, nil
	})
	rerank.RegisterTrainer("text_probe", func(_ context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
		for n := int64(len(in.Text)); ; {
			old := textSeen.Load()
			if n <= old || textSeen.CompareAndSwap(old, n) {
				break
			}
		}
		spec.Model = "none"
		return spec, nil
	})
}

// TestBEIRText: --text directories add their queries and documents to the
// unlabeled text the trainers get.
func TestBEIRText(t *testing.T) {
	data, extra := beirDirs(t)
	ds, more := synthetic(12), synthetic(4) // what beirDirs saved
	// Text directories' judgments and candidate lists are not read: ones
	// that would not load as a dataset do not stop the run.
	stray := t.TempDir()
	for name, body := range map[string]string{
		dataset.QrelsFile:      "query-id\tcorpus-id\tscore\nnobody\tnothing\t1\n",
		dataset.CandidatesFile: "not a run\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(stray, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stray, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{dataset.CorpusFile, dataset.QueriesFile} {
		b, err := os.ReadFile(filepath.Join(extra, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stray, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		text []string
		want int
	}{
		{nil, len(ds.Corpus)},
		{[]string{extra}, len(ds.Corpus) + len(more.Corpus) + len(more.Queries)},
		{[]string{stray}, len(ds.Corpus) + len(more.Corpus) + len(more.Queries)},
	} {
		textSeen.Store(0)
		err := BEIR(context.Background(), BEIROptions{Data: data, Out: filepath.Join(t.TempDir(), "out"), Folds: 2,
			Stages: []string{"overlap", "text_probe"}, Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if got := int(textSeen.Load()); got != tc.want {
			t.Errorf("text %v: trainer saw %d texts, want %d", tc.text, got, tc.want)
		}
	}
}

// probe controls the "probe" stage's trainer: its call number failAt
// (counting from 1; 0 for none) fails, after cancelling the context when
// cancel is set. Other calls write a model file into in.Dir.
var probe struct {
	sync.Mutex
	calls, failAt int
	cancel        context.CancelFunc
}

// probeStage scores every candidate zero.
type probeStage struct{ memo }

func (probeStage) Name() string { return "probe" }

func init() {
	rerank.RegisterStage("probe", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		spec.ModelFile(env.Dir)
		return probeStage{}, nil
	})
	rerank.RegisterTrainer("probe", func(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
		probe.Lock()
		defer probe.Unlock()
		probe.calls++
		if probe.calls == probe.failAt {
			if probe.cancel == nil {
				return spec, errors.New("probe failed")
			}
			probe.cancel()
		}
		if err := ctx.Err(); err != nil {
			return spec, err
		}
		spec.Model = filepath.Join(in.Dir, "probe.txt")
		return spec, os.WriteFile(spec.Model, []byte(fmt.Sprintln(len(in.Train.Qrels))), 0o644)
	})
}

// cancelOn is a Log writer that cancels a context when a line starting
// with prefix is logged.
type cancelOn struct {
	prefix string
	cancel context.CancelFunc
}

func (c cancelOn) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), c.prefix) {
		c.cancel()
	}
	return len(p), nil
}

// snapshot returns every file under dir and its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFitPublishesOnlyOnSuccess fits over a pipeline already in dir (and
// a file of the user's in dir/models): a Fit that fails or is cancelled,
// even after some final stage models are trained, leaves the old
// pipeline's files as they were; a successful one replaces them with
// exactly what a Fit into an empty folder writes. Neither leaves its
// staging directory behind.
func TestFitPublishesOnlyOnSuccess(t *testing.T) {
	stages := []rerank.StageSpec{{Type: "overlap"}, {Type: "memo"}, {Type: "probe"}}
	const userFile = "models/user-notes.txt"
	for _, tc := range []struct {
		name string
		// failAt is the probe trainer's failing call: with 2 folds,
		// calls 1 and 2 train the folds and call 3 the final models,
		// after memo's final model is written. 0 for none.
		failAt    int
		cancel    bool                           // the failing call cancels the context
		logCancel string                         // cancel when Fit logs a line starting so
		setup     func(t *testing.T, dir string) // prepares the old pipeline's dir
		wantErr   []string                       // substrings; none for success
	}{
		{name: "cancelled during the final training", failAt: 3, cancel: true, wantErr: []string{context.Canceled.Error()}},
		{name: "trainer fails during the final training", failAt: 3, wantErr: []string{"probe failed"}},
		{name: "cancelled during the second fold", failAt: 2, cancel: true, wantErr: []string{context.Canceled.Error()}},
		{name: "cancelled after the first fold", logCancel: "fold 1/", wantErr: []string{context.Canceled.Error()}},
		{name: "cancelled after the final training", logCancel: "final stage models trained", wantErr: []string{context.Canceled.Error()}},
		{name: "a rename fails", setup: func(t *testing.T, dir string) {
			// A directory where the new probe.txt goes: the rename
			// after memo.txt's fails.
			p := filepath.Join(dir, "models", "probe.txt")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantErr: []string{filepath.Join("models", "probe.txt"), "may be inconsistent"}},
		{name: "success"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// The old pipeline, trained on other queries than the new one.
			dir := t.TempDir()
			probe.Lock()
			probe.calls, probe.failAt, probe.cancel = 0, 0, nil
			probe.Unlock()
			old := &Recipe{Stages: stages, Folds: 2}
			if _, err := old.Fit(ctx, synthetic(16), nil, dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, userFile), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			before := snapshot(t, dir)

			// What a Fit into an empty folder writes.
			want := map[string]string{}
			if len(tc.wantErr) == 0 {
				fresh := t.TempDir()
				probe.Lock()
				probe.calls = 0
				probe.Unlock()
				if _, err := (&Recipe{Stages: stages, Folds: 2}).Fit(ctx, synthetic(24), nil, fresh); err != nil {
					t.Fatal(err)
				}
				want = snapshot(t, fresh)
				want[userFile] = before[userFile]
				if want["pipeline.yaml"] == "" || want["models/memo.txt"] == before["models/memo.txt"] {
					t.Fatal("the new pipeline does not differ from the old one")
				}
			}

			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			r := &Recipe{Stages: stages, Folds: 2}
			if tc.logCancel != "" {
				r.Log = cancelOn{prefix: tc.logCancel, cancel: cancel}
			}
			probe.Lock()
			probe.calls, probe.failAt = 0, tc.failAt
			if tc.cancel {
				probe.cancel = cancel
			}
			probe.Unlock()
			path, err := r.Fit(ctx, synthetic(24), nil, dir)
			probe.Lock()
			probe.failAt, probe.cancel = 0, nil
			probe.Unlock()

			if staged, _ := filepath.Glob(filepath.Join(dir, ".fit-*")); len(staged) > 0 {
				t.Errorf("staging left behind: %v", staged)
			}
			after := snapshot(t, dir)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if path != filepath.Join(dir, "pipeline.yaml") {
					t.Errorf("path %s", path)
				}
				if !reflect.DeepEqual(after, want) {
					t.Errorf("files after Fit:\n%q\nwant those of a Fit into an empty folder and the user's:\n%q", after, want)
				}
				return
			}
			for _, w := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("Fit: err = %v, want one containing %q", err, w)
				}
			}
			if tc.setup != nil {
				// The rename failed after memo.txt: only pipeline.yaml
				// and fusion.model are known to be the old ones.
				for _, f := range []string{"pipeline.yaml", "fusion.model", userFile} {
					if after[f] != before[f] {
						t.Errorf("%s changed", f)
					}
				}
				return
			}
			if !reflect.DeepEqual(after, before) {
				t.Errorf("old pipeline changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestSemEvalGuardsInputAndDev checks that the SemEval recipe refuses,
// before it writes anything, a dev file holding training questions (its
// metrics would be measured on training queries) and an output folder
// whose data/ holds what the recipe did not write there (replacing data/
// would delete it: the input files themselves, in the worst case), while
// a data/ left by an earlier run is replaced as before.
func TestSemEvalGuardsInputAndDev(t *testing.T) {
	ctx := context.Background()
	slice := filepath.Join("..", "..", "testdata", "semeval")
	copyFile := func(t *testing.T, from, to string) string {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return to
	}
	tests := []struct {
		name string
		// setup prepares out and returns the train and dev files and
		// the files that must survive the run.
		setup   func(t *testing.T, out string) (train, dev string, keep []string)
		wantErr string // "" when the run must succeed
	}{
		{"dev is a copy of train", func(t *testing.T, out string) (string, string, []string) {
			train := filepath.Join(slice, "2015-dev-slice.xml")
			return train, copyFile(t, train, filepath.Join(t.TempDir(), "dev.xml")), nil
		}, "training queries"},
		{"inputs inside out/data", func(t *testing.T, out string) (string, string, []string) {
			train := copyFile(t, filepath.Join(slice, "2015-dev-slice.xml"), filepath.Join(out, "data", "train.xml"))
			dev := copyFile(t, filepath.Join(slice, "dev-slice.xml"), filepath.Join(out, "data", "dev.xml"))
			return train, dev, []string{train, dev}
		}, "inside"},
		{"input inside an earlier split", func(t *testing.T, out string) (string, string, []string) {
			train := copyFile(t, filepath.Join(slice, "2015-dev-slice.xml"), filepath.Join(out, "data", "split-train", "train.xml"))
			return train, filepath.Join(slice, "dev-slice.xml"), []string{train}
		}, "inside"},
		{"foreign file in out/data", func(t *testing.T, out string) (string, string, []string) {
			notes := filepath.Join(out, "data", "notes.txt")
			copyFile(t, filepath.Join(slice, "README.md"), notes)
			return filepath.Join(slice, "2015-dev-slice.xml"), filepath.Join(slice, "dev-slice.xml"), []string{notes}
		}, "notes.txt"},
		{"earlier run's data", func(t *testing.T, out string) (string, string, []string) {
			copyFile(t, filepath.Join(slice, "README.md"), filepath.Join(out, "data", "split-train", dataset.CorpusFile))
			return filepath.Join(slice, "2015-dev-slice.xml"), filepath.Join(slice, "dev-slice.xml"), nil
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			train, dev, keep := tc.setup(t, out)
			err := SemEval(ctx, SemEvalOptions{Subtask: convert.SubtaskA, Train: []string{train}, Dev: dev,
				Out: out, Stages: []string{"lexical"}, TrainOnly: true})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			for _, f := range keep {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%s is gone: %v", f, err)
				}
			}
			if tc.wantErr != "" {
				if _, err := os.Stat(filepath.Join(out, "pipeline.yaml")); err == nil {
					t.Error("refused, but wrote a pipeline")
				}
			}
		})
	}
}

// TestTableNotesUnrankedQueries checks that the recipes' metric table
// says when judged queries have no ranking (no candidates, or a query
// without searchable words): they count 0 in every row, which eval and
// rerank point out and the recipes' table must not hide.
func TestTableNotesUnrankedQueries(t *testing.T) {
	qrels := dataset.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}}
	ranked := func(qids ...string) dataset.Run {
		r := dataset.NewRun()
		for _, q := range qids {
			r.Add(q, dataset.Entry{DocID: "d1", Rank: 1, Score: 2})
			r.Add(q, dataset.Entry{DocID: "d2", Rank: 2, Score: 1})
		}
		return r
	}
	tests := []struct {
		name     string
		runs     map[string]dataset.Run
		baseline string
		want     string // "" when no note is due
	}{
		{"all ranked", map[string]dataset.Run{"first stage (BM25)": ranked("q1", "q2", "q3"), "fused pipeline": ranked("q1", "q2", "q3")}, "first stage (BM25)", ""},
		{"one unranked", map[string]dataset.Run{"first stage (BM25)": ranked("q1", "q2"), "fused pipeline": ranked("q1", "q2")}, "first stage (BM25)", "note: 1 of 3 judged queries have no ranking in fused pipeline"},
		{"a ranked unjudged query does not hide one", map[string]dataset.Run{"given order": ranked("q1", "q9"), "fused pipeline": ranked("q1", "q9")}, "given order", "note: 2 of 3 judged queries"},
		{"baseline alone", map[string]dataset.Run{"given order": ranked("q2")}, "given order", "note: 2 of 3 judged queries have no ranking in given order"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var runs Runs
			for _, n := range slices.Sorted(maps.Keys(tc.runs)) {
				runs.add(n, tc.runs[n])
			}
			var sb strings.Builder
			if err := Table(&sb, qrels, runs, tc.baseline, eval.MustParseMetrics("map,mrr@10"), false); err != nil {
				t.Fatal(err)
			}
			got := sb.String()
			if tc.want == "" && strings.Contains(got, "note:") || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("table:\n%s\nwant a note %q", got, tc.want)
			}
		})
	}
}

// retrievalData saves synthetic(12) without candidate lists, a collection
// for full retrieval, and returns its directory.
func retrievalData(t *testing.T) string {
	t.Helper()
	ds := synthetic(12)
	ds.Candidates = nil
	data := filepath.Join(t.TempDir(), "data")
	if err := ds.Save(data); err != nil {
		t.Fatal(err)
	}
	return data
}

// termQueries draws the pseudo-queries of unsupervised runs over the
// synthetic corpus, whose documents are too short for sentence queries:
// from 30 of its 72 documents, so that the others keep their words.
var termQueries = PseudoOptions{Kinds: []string{PseudoTerms}, Queries: 30}

// sentenceData is a judged collection of 48 documents with titles and
// sentences, for the default pseudo-queries, on 8 topics.
func sentenceData() *dataset.Dataset {
	ds := &dataset.Dataset{Qrels: dataset.Qrels{}}
	topics := []string{"visa", "bank", "school", "driving", "salary", "housing", "doctor", "flight"}
	other := []string{"office", "form", "price", "week", "friend", "city"}
	for i := range 48 {
		a, b := topics[i%len(topics)], other[i%len(other)]
		ds.Corpus = append(ds.Corpus, dataset.Doc{ID: fmt.Sprintf("d%02d", i), Title: a + " " + b + " question",
			Text: fmt.Sprintf("Where is the %s %s near me. Ask about the %s at the %s desk today. The %s rules changed in year %d. Bring a %s paper.", a, b, a, b, a, 2000+i, b)})
	}
	for q := range 8 {
		qid := fmt.Sprintf("q%d", q)
		ds.Queries = append(ds.Queries, dataset.Query{ID: qid, Text: topics[q] + " " + other[q%len(other)]})
		ds.Qrels.Add(qid, fmt.Sprintf("d%02d", q), 1)
	}
	return ds
}

// TestBEIRWritesServablePipeline: both kinds of run publish a
// pipeline.yaml that loads against the run's index; the self-trained
// unsupervised one ranks every query as run.trec does (the run comes from
// a pipeline that also scores the stages it dropped, at weight zero), and
// says in stages.txt which stages it kept.
func TestBEIRWritesServablePipeline(t *testing.T) {
	ds := sentenceData()
	data := filepath.Join(t.TempDir(), "data")
	if err := ds.Save(data); err != nil {
		t.Fatal(err)
	}
	for _, unsupervised := range []bool{true, false} {
		t.Run(fmt.Sprint("unsupervised=", unsupervised), func(t *testing.T) {
			// A relative output folder, as on the command line.
			t.Chdir(t.TempDir())
			out := "out"
			o := BEIROptions{Data: data, Out: out, Folds: 2, Unsupervised: unsupervised, Pseudo: PseudoOptions{Kinds: DefaultPseudoKinds(), Neighbours: DefaultPseudoNeighbours}, Stages: []string{"tfidf", "overlap", "length", "tweak"}}
			if err := BEIR(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			idx, err := index.Open(filepath.Join(out, "index"))
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			ds, err := dataset.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := runPipeline(context.Background(), filepath.Join(out, "pipeline.yaml"), idx, ds)
			if err != nil {
				t.Fatal(err)
			}
			stages, err := os.ReadFile(filepath.Join(out, StagesFile))
			if !unsupervised {
				if err == nil {
					t.Errorf("a supervised run wrote %s", StagesFile)
				}
				return
			}
			if err != nil || !strings.Contains(string(stages), "fusion:") {
				t.Fatalf("%s: %q, %v", StagesFile, stages, err)
			}
			// Only the kept stages' models are published.
			cfg, err := rerank.ReadConfig(filepath.Join(out, "pipeline.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			published, _ := filepath.Glob(filepath.Join(out, "models", "*"))
			for _, f := range published {
				if !slices.Contains(cfg.Files(out, false), f) {
					t.Errorf("%s published, but the pipeline (stages %v) does not read it", f, stageNames(cfg.Stages))
				}
			}
			want, err := dataset.ReadRunFile(filepath.Join(out, "run.trec"))
			if err != nil {
				t.Fatal(err)
			}
			got := runs.Runs["fused pipeline"]
			for _, q := range ds.Queries {
				g, w := got.Sorted(q.ID), want.Sorted(q.ID)
				if len(g) != len(w) {
					t.Fatalf("query %s: %d results from pipeline.yaml, %d in run.trec", q.ID, len(g), len(w))
				}
				for i := range g {
					if g[i].DocID != w[i].DocID {
						t.Fatalf("query %s, rank %d: pipeline.yaml ranks %s, run.trec %s", q.ID, i+1, g[i].DocID, w[i].DocID)
					}
				}
			}
		})
	}
}
