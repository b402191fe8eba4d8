package rerank

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/dataset"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, doc string
		wantErr   string // substring; "" for success
		stages    int
	}{
		{"yaml", "window: 50\nstages:\n  - type: tfidf\n  - type: tweak\n    model: t.model\n", "", 2},
		{"json", `{"stages":[{"type":"tfidf","options":{"field":"text"}}],"fusion":{"method":"rrf","k":60}}`, "", 1},
		{"fusion none needs no stages", "fusion: {method: none}\n", "", 0},
		{"fusion None needs no stages", "fusion: {method: None}\n", "", 0},
		{"empty", "", "empty pipeline document", 0},
		{"no stages", "window: 10\n", "no stages", 0},
		{"stage without type", "stages:\n  - model: x\n", "stage 1 has no type", 0},
		{"typo is an error", "stages:\n  - type: tfidf\nfuison: {method: none}\n", `line 3: unknown key "fuison" in the pipeline (keys: window, fields, first_stage, stages, fusion, sha256)`, 0},
		{"typo in a stage", "stages:\n  - type: tweak\n    modle: t.model\n", `line 3: unknown key "modle" in a stage (keys: type, name, model, options)`, 0},
		{"typo in fusion", "stages:\n  - type: tfidf\nfusion: {metod: rrf}\n", `unknown key "metod" in fusion (keys: method, model, weights, k, regularize)`, 0},
		{"typo in first_stage", "first_stage: {boost: tweak}\nstages:\n  - type: tfidf\n", `unknown key "boost" in first_stage (keys: query_boost, fields, feedback)`, 0},
		{"two typos", "windw: 3\nstages:\n  - type: tfidf\n    nam: x\n", `line 1: unknown key "windw" in the pipeline (keys: window, fields, first_stage, stages, fusion, sha256); line 4: unknown key "nam" in a stage`, 0},
		{"negative window", "window: -5\nstages:\n  - type: tfidf\n", "window -5 is negative", 0},
		{"fractional window", "window: 1.5\nstages:\n  - type: tfidf\n", "window 1.5: want a whole number", 0},
		{"whole window written as a float", "window: 20.0\nstages:\n  - type: tfidf\n", "", 1},
		{"wrong type", "window: big\nstages:\n  - type: tfidf\n", "cannot unmarshal", 0},
		{"second document", "stages:\n  - type: tfidf\n---\nstages:\n  - type: bm25\n", "line 3: a second YAML document", 0},
		{"document after an empty one", "stages:\n  - type: tfidf\n---\n---\nwindow: 5\n", "line 4: a second YAML document", 0},
		{"trailing document marker", "stages:\n  - type: tfidf\n---\n", "", 1},
		{"document end marker", "---\nstages:\n  - type: tfidf\n...\n", "", 1},
		{"damaged second document", "stages:\n  - type: tfidf\n---\nwindow: [\n", "line 4", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.doc))
			if !errMatches(t, err, tt.wantErr) {
				return
			}
			if len(c.Stages) != tt.stages {
				t.Fatalf("%d stages, want %d", len(c.Stages), tt.stages)
			}
		})
	}
}

// constStage scores every candidate 0; registered as "test_const".
type constStage struct{}

func (constStage) Name() string { return "test_const" }
func (constStage) Score(_ context.Context, _ Query, cs []Candidate) ([]float64, error) {
	return make([]float64, len(cs)), nil
}

func init() {
	RegisterStage("test_const", func(spec StageSpec, env Env) (Stage, error) {
		spec.ModelFile(env.Dir) // any model is accepted, and not read
		return constStage{}, nil
	})
}

func TestBuildRefusesFeatureNames(t *testing.T) {
	for _, name := range []string{FeatureFirstScore, FeatureFirstRank, FeatureGivenRank, "raw:first_rank", "raw:x"} {
		cfg := &Config{Stages: []StageSpec{{Type: "test_const", Name: name}}}
		if _, err := cfg.Build(Env{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("stage named %q: err = %v, want an error naming it", name, err)
		}
	}
}

func TestBuildChecksFusion(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, b interface{ Save(string) error }) {
		if err := b.Save(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	save("ok.model", (&Linear{Weights: map[string]float64{FeatureFirstRank: 1, "test_const": 1, FeatureGivenRank: 1}}).Bundle())
	save("other.model", (&Linear{Weights: map[string]float64{FeatureFirstRank: 1, "tweak": 1}}).Bundle())
	save("trees.model", (&LambdaMART{Features: []string{"raw:tweak"}, Rate: 1, Trees: []Tree{{Feature: []int{0}, Threshold: []float64{0}, Left: []int{-1}, Right: []int{-1}, Value: []float64{1}}}}).Bundle())
	tests := []struct {
		name, fusion string
		wantErr      string // substring; "" for success
	}{
		{"default weights", "", ""},
		{"weights", "{weights: {first_rank: 1, test_const: 2}}", ""},
		{"weights typo", "{weights: {first_rank: 1, test_konst: 2}}", `fusion weight for "test_konst"`},
		{"model", "{model: ok.model}", ""},
		{"model for other stages", "{model: other.model}", `fusion weight for "tweak"`},
		{"lambdamart for other stages", "{method: lambdamart, model: trees.model}", `feature "raw:tweak"`},
		{"rrf", "{method: rrf, weights: {test_const: 2}}", ""},
		{"rrf first rank", "{method: rrf, k: 10, weights: {first_rank: 0.5, test_const: 2}}", ""},
		{"rrf weights typo", "{method: rrf, weights: {tweek: 2}}", `fusion weight for "tweek"`},
		{"linear weights unknown stage", "{method: linear, weights: {tweek: 2}}", `fusion weight for "tweek"`},
		{"none", "{method: none}", ""},
		// Non-finite settings would give every candidate a NaN score.
		{"infinite weight", "{weights: {first_rank: .inf, test_const: 1}}", "non-finite"},
		{"NaN weight", "{weights: {first_rank: 1, test_const: .nan}}", "non-finite"},
		{"NaN given_rank weight", "{weights: {first_rank: 1, given_rank: .nan}}", "non-finite"},
		{"infinite given_rank weight", "{weights: {first_rank: 1, given_rank: -.inf}}", "non-finite"},
		{"rrf NaN k", "{method: rrf, k: .nan}", "k NaN"},
		{"rrf infinite weight", "{method: rrf, weights: {test_const: .inf}}", "non-finite"},
		// Settings the method does not read are refused, not dropped.
		{"linear model and weights", "{model: ok.model, weights: {first_rank: 1}}", "both"},
		{"linear k", "{weights: {first_rank: 1}, k: 10}", `"k"`},
		{"rrf model", "{method: rrf, model: ok.model}", `"model"`},
		{"rrf negative k", "{method: rrf, k: -5}", "k -5"},
		{"rrf infinite k", "{method: rrf, k: .inf}", "k +Inf"},
		{"unknown method with k", "{method: rff, k: 10}", `unknown fusion method "rff"`},
		{"lambdamart weights", "{method: lambdamart, model: trees.model, weights: {test_const: 1}}", `"weights"`},
		{"method case", "{method: RRF, weights: {test_const: 2}}", ""},
		{"agreement", "{method: agreement}", ""},
		{"agreement weights", "{method: agreement, weights: {first_rank: 1, test_const: 2}}", ""},
		{"agreement weights typo", "{method: agreement, weights: {tweek: 2}}", `fusion weight for "tweek"`},
		{"agreement infinite weight", "{method: agreement, weights: {test_const: .inf}}", `weight of "test_const" is +Inf`},
		{"agreement model", "{method: agreement, model: ok.model}", `"model"`},
		{"agreement k", "{method: agreement, k: 10}", `"k"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "stages:\n  - type: test_const\n"
			if tt.fusion != "" {
				doc += "fusion: " + tt.fusion + "\n"
			}
			path := filepath.Join(dir, "pipeline.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			p, _, err := LoadPipeline(path, Env{})
			if !errMatches(t, err, tt.wantErr) {
				return
			}
			if _, err := p.Rerank(context.Background(), Query{Text: "q"}, []Candidate{{Doc: dataset.Doc{ID: "a"}, Rank: 1}, {Doc: dataset.Doc{ID: "b"}, Rank: 2}}); err != nil {
				t.Fatalf("a pipeline that builds fails to rerank: %v", err)
			}
		})
	}
}

// FuzzParseConfig checks that any document either is refused with an error
// or parses to a configuration that survives WriteConfig's encoding
// unchanged.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("window: 50\nstages:\n  - type: tfidf\n  - type: tweak\n    name: tw\n    model: t.model\n    options: {alpha: 0.1}\nfusion: {method: linear, weights: {tw: 0.5}}\n"))
	f.Add([]byte(`{"first_stage":{"query_boost":"tweak"},"stages":[{"type":"tweak"}]}`))
	f.Add([]byte("stages: [{type: a}]\nfusion: {method: rrf, k: 60}\n"))
	f.Add([]byte("fields: {title: t, text: [a, b], analyzer: semrank_en}\nstages: [{type: tfidf}]\n"))
	f.Add([]byte("stages: [{type: tfidf}]\nfusion: {regularize: {k: 10, alpha: 0.5}}\n"))
	f.Add([]byte("stages: [{type: tfidf}]\nfusion: {method: none, regularize: {alpha: 1.0}}\n"))
	f.Add([]byte("stages: [{type: tfidf}]\nfusion: {regularize: {}}\n"))
	f.Add([]byte("stages: [{type: tfidf}]\nfusion: {method: agreement, regularize: {adaptive: true}}\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseConfig(raw)
		if err != nil {
			return
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("parsed config does not encode: %v", err)
		}
		back, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("encoded config does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalSpecs(c.Stages), normalSpecs(back.Stages)) {
			t.Fatalf("stages changed in a round trip:\n%#v\n%#v", c.Stages, back.Stages)
		}
		if c.Window != back.Window || c.FirstStage.QueryBoost != back.FirstStage.QueryBoost ||
			!slices.Equal(c.FirstStage.Fields, back.FirstStage.Fields) || !reflect.DeepEqual(c.Fields, back.Fields) {
			t.Fatalf("window, fields or first stage changed in a round trip")
		}
		// Compared as written, where NaN equals NaN.
		if (c.Fusion.Regularize == nil) != (back.Fusion.Regularize == nil) || yamlOf(t, c.Fusion.Regularize) != yamlOf(t, back.Fusion.Regularize) {
			t.Fatalf("fusion.regularize changed in a round trip:\n%v\n%v", yamlOf(t, c.Fusion.Regularize), yamlOf(t, back.Fusion.Regularize))
		}
	})
}

// yamlOf returns v as YAML, with every float kept a float (keepFloats).
func yamlOf(t *testing.T, v *map[string]any) string {
	t.Helper()
	if v == nil {
		return "nil"
	}
	out, err := yaml.Marshal(keepFloats(*v))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// normalSpecs drops the differences an encoding may make without changing
// meaning: empty lists and option maps become nil.
func normalSpecs(specs []StageSpec) []StageSpec {
	if len(specs) == 0 {
		return nil
	}
	out := slices.Clone(specs)
	for i := range out {
		if len(out[i].Options) == 0 {
			out[i].Options = nil
		}
	}
	return out
}

// TestBuildNamesMismatchedFusionModel: weights from a fusion model for a
// stage the pipeline lacks are refused, naming the model file, which is
// what must be retrained.
func TestBuildNamesMismatchedFusionModel(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "fusion.model")
	if err := (&Linear{Weights: map[string]float64{"tweak": 1, FeatureFirstRank: 1}}).Bundle().Save(model); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Stages: []StageSpec{{Type: "test_const"}}, Fusion: FusionSpec{Model: "fusion.model"}}
	_, err := cfg.Build(Env{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "fusion model "+model) || !strings.Contains(err.Error(), `"tweak"`) {
		t.Fatalf("err = %v, want one naming %s and the stage tweak", err, model)
	}
}

// TestBuildChecksConfigsMadeInCode: a Config built in code is checked as a
// parsed one is.
func TestBuildChecksConfigsMadeInCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative window", Config{Window: -1, Stages: []StageSpec{{Type: "test_const"}}}, "window -1 is negative"},
		{"stage without type", Config{Stages: []StageSpec{{Type: "test_const"}, {Name: "x"}}}, "stage 2 has no type"},
		{"no stages", Config{}, "no stages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.cfg.Build(Env{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
