package recipe

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

func TestParseAfterFusion(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]any // nil: no step
		wantErr string         // substring; "" for success
	}{
		{"none", nil, ""},
		{"", nil, ""},
		{"regularize", map[string]any{}, ""},
		{"regularize:k=5:alpha=0.7", map[string]any{"k": 5, "alpha": 0.7}, ""},
		{"regularize:alpha=0", map[string]any{"alpha": 0}, ""},
		{"regularize:alpha=1", nil, "option alpha 1"},
		{"regularize:k=0", nil, "option k 0"},
		{"regularize:mu=1", nil, "unknown option mu"},
		{"regularize:k", nil, `option "k" is not KEY=VALUE`},
		{"tfidf", nil, "want none or regularize"},
		{"rrf:k=60", nil, "want none or regularize"},
	}
	for _, tc := range tests {
		got, err := ParseAfterFusion(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if (got == nil) != (tc.want == nil) || got != nil && !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseAfterFusion: any flag value is refused with an error or gives
// options a pipeline builds its step from.
func FuzzParseAfterFusion(f *testing.F) {
	for _, s := range []string{"none", "regularize", "regularize:k=5:alpha=0.7", "regularize:alpha=.5:k=1e3", "regularize:k=x", "tfidf:k=1", ":"} {
		f.Add(s)
	}
	idx, err := index.Create("")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { idx.Close() })
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := ParseAfterFusion(s)
		if err != nil {
			return
		}
		cfg := &rerank.Config{Stages: []rerank.StageSpec{{Type: "bm25"}}, Fusion: rerank.FusionSpec{Regularize: opts}}
		p, err := cfg.Build(rerank.EnvFor(idx))
		if err != nil {
			t.Fatalf("%q parsed, yet its pipeline does not build: %v", s, err)
		}
		if (p.Smooth != nil) != (opts != nil) {
			t.Fatalf("%q: step %v for options %v", s, p.Smooth, opts)
		}
	})
}

// TestBEIRAfterFusion: a run with a step after the fusion publishes it in
// pipeline.yaml, whose pipeline, served over the run's index, ranks as
// run.trec does; the baseline stays BM25's.
func TestBEIRAfterFusion(t *testing.T) {
	ctx := context.Background()
	data := retrievalData(t)
	plain, smoothed := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "smoothed")
	if err := BEIR(ctx, BEIROptions{Data: data, Out: plain, Unsupervised: true, Stages: []string{"overlap", "bm25"}, AfterFusion: "none"}); err != nil {
		t.Fatal(err)
	}
	if err := BEIR(ctx, BEIROptions{Data: data, Out: smoothed, Unsupervised: true, Stages: []string{"overlap", "bm25"}, AfterFusion: "regularize:k=3"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := rerank.ReadConfig(filepath.Join(smoothed, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Fusion.Regularize; r == nil || !reflect.DeepEqual(*r, map[string]any{"k": 3}) {
		t.Fatalf("pipeline.yaml's fusion.regularize: %v, want {k: 3}", r)
	}
	if plainCfg, err := rerank.ReadConfig(filepath.Join(plain, "pipeline.yaml")); err != nil || plainCfg.Fusion.Regularize != nil {
		t.Fatalf("the run without the step published fusion.regularize %v (%v)", plainCfg.Fusion.Regularize, err)
	}
	if !sameRanking(readRun(t, filepath.Join(plain, "baseline.trec")), readRun(t, filepath.Join(smoothed, "baseline.trec"))) {
		t.Error("the baseline with the step differs from the one without: want BM25 in both")
	}
	served, p := servedRun(t, smoothed, data)
	if p.Smooth == nil {
		t.Fatal("the published pipeline has no step after its fusion")
	}
	if !sameRanking(readRun(t, filepath.Join(smoothed, "run.trec")), served) {
		t.Error("run.trec is not the published pipeline's run")
	}
}

// TestBEIRUnsupervisedFusion: an unsupervised run publishes the agreement
// fusion and the regularize step unless told otherwise, and refuses
// fusions it cannot use.
func TestBEIRUnsupervisedFusion(t *testing.T) {
	ctx := context.Background()
	data := retrievalData(t)
	tests := []struct {
		name        string
		fusion      string
		afterFusion string
		wantMethod  string
		wantStep    bool
	}{
		{"defaults", "", "", "agreement", true},
		{"equal, no step", "equal", "none", "", false},
	}
	for _, tc := range tests {
		out := filepath.Join(t.TempDir(), "out")
		var report strings.Builder
		o := BEIROptions{Data: data, Out: out, Unsupervised: true, Stages: []string{"overlap", "bm25"}, Fusion: tc.fusion, AfterFusion: tc.afterFusion, Log: &report}
		if err := BEIR(ctx, o); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if says := strings.Contains(report.String(), "agreement fusion, mean weight"); says != (tc.wantMethod == "agreement") {
			t.Errorf("%s: the report says the agreement weights: %v, want %v", tc.name, says, !says)
		}
		cfg, err := rerank.ReadConfig(filepath.Join(out, "pipeline.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Fusion.Method != tc.wantMethod || (cfg.Fusion.Regularize != nil) != tc.wantStep {
			t.Errorf("%s: published fusion %+v, want method %q, step %v", tc.name, cfg.Fusion, tc.wantMethod, tc.wantStep)
		}
		served, _ := servedRun(t, out, data)
		if !sameRanking(readRun(t, filepath.Join(out, "run.trec")), served) {
			t.Errorf("%s: run.trec is not the published pipeline's run", tc.name)
		}
	}
	for _, o := range []BEIROptions{
		{Unsupervised: true, Fusion: "linear"},
		{Unsupervised: true, Fusion: "lambdamart"},
		{Unsupervised: true, Fusion: "equal", Pseudo: PseudoOptions{Kinds: []string{PseudoTitle}}},
		{Fusion: "agreement"},
		{Unsupervised: true, AfterFusion: "rrf"},
	} {
		o.Data, o.Out = data, filepath.Join(t.TempDir(), "refused")
		if err := BEIR(ctx, o); err == nil {
			t.Errorf("fusion %q, after fusion %q, unsupervised %v, pseudo %v: ran", o.Fusion, o.AfterFusion, o.Unsupervised, o.Pseudo.Kinds)
		}
	}
}

// TestAgreementWeights: the report's mean weights are the agreement
// fusion's weights in each window, averaged over the windows, for the
// features it weighs.
func TestAgreementWeights(t *testing.T) {
	down, up := []float64{4, 3, 2, 1}, []float64{1, 2, 3, 4}
	in := rerank.FusionInput{
		Names:      []string{"a", "b", "c"},
		Candidates: []rerank.Candidate{{Rank: 1}, {Rank: 2}, {Rank: 3}, {Rank: 4}},
		Scores:     [][]float64{down, up, down},
	}
	// a and c agree and keep their priors; b, against them, weighs 0
	// (rerank's TestAgreement); a window where a, b and c are all alike
	// keeps b's prior too.
	alike := in
	alike.Scores = [][]float64{down, down, down}
	a := agreementWeights{fusion: &rerank.Agreement{Weights: map[string]float64{"a": 2, "b": 1, "c": 2}}}
	if got := a.means(); got != nil {
		t.Fatalf("means before any window: %v", got)
	}
	for _, w := range []rerank.FusionInput{in, alike} {
		if err := a.add(w); err != nil {
			t.Fatal(err)
		}
	}
	want := []FeatureWeight{{"a", 2, 2}, {"b", 1, 0.5}, {"c", 2, 2}}
	got := a.means()
	if len(got) != len(want) {
		t.Fatalf("means %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Prior != want[i].Prior || math.Abs(got[i].Mean-want[i].Mean) > 1e-12 {
			t.Errorf("means %v, want %v", got, want)
		}
	}
	if note, want := WeightsNote(got), "a 2.00 (2), b 0.50 (1), c 2.00 (2)"; !strings.HasSuffix(note, want) {
		t.Errorf("note %q, want one ending %q", note, want)
	}
	if WeightsNote(nil) != "" {
		t.Error("a note without weights")
	}
}
