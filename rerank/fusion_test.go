package rerank

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
)

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestRRF(t *testing.T) {
	in := FusionInput{
		Names:      []string{"s"},
		Candidates: []Candidate{{Doc: dataset.Doc{ID: "x"}, Rank: 1}, {Doc: dataset.Doc{ID: "y"}, Rank: 2}, {Doc: dataset.Doc{ID: "z"}, Rank: 3}},
		Scores:     [][]float64{{0.1, 0.9, 0.5}},
	}
	got, err := (&RRF{K: 1}).Fuse(in)
	if err != nil {
		t.Fatal(err)
	}
	// x: 1/2 + 1/4; y: 1/3 + 1/2; z: 1/4 + 1/3.
	want := []float64{0.75, 5.0 / 6, 7.0 / 12}
	for i := range want {
		if abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("RRF[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestLoadLambdaMARTRefusesMalformed(t *testing.T) {
	// One tree: a split on feature 0 into two leaves.
	good := map[string][]float64{"feature": {0, 0, 0}, "threshold": {0.5, 0, 0}, "left": {1, -1, -1}, "right": {2, -1, -1}, "value": {0, -1, 1}}
	for _, tc := range []struct {
		name    string
		change  func(arrs map[string][]float64)
		wantErr string // "" for success
	}{
		{"valid", func(map[string][]float64) {}, ""},
		{"short left", func(a map[string][]float64) { a["left"] = a["left"][:1] }, "left entries"},
		{"short feature", func(a map[string][]float64) { a["feature"] = a["feature"][:1] }, "entries for 1 nodes"},
		{"child out of the tree", func(a map[string][]float64) { a["right"][0] = 7 }, "malformed tree node"},
		{"child loops back", func(a map[string][]float64) { a["left"][0] = 0 }, "malformed tree node"},
		// A NaN reached only by some candidates: checkFusion's dummy
		// candidate goes left.
		{"NaN leaf", func(a map[string][]float64) { a["value"][2] = math.NaN() }, "non-finite value, NaN"},
		{"infinite leaf", func(a map[string][]float64) { a["value"][2] = math.Inf(-1) }, "non-finite value, -Inf"},
		{"NaN threshold", func(a map[string][]float64) { a["threshold"][0] = math.NaN() }, "malformed tree node"},
		{"NaN rate", func(a map[string][]float64) { a["rate"] = []float64{math.NaN()} }, "bad rate"},
		{"infinite rate", func(a map[string][]float64) { a["rate"] = []float64{math.Inf(1)} }, "bad rate"},
		{"negative rate", func(a map[string][]float64) { a["rate"] = []float64{-1} }, "bad rate"},
		{"fractional tree size", func(a map[string][]float64) { a["sizes"] = []float64{2.5} }, "tree size 2.5"},
		// A size whose sum with the offset before it wraps around must
		// not move the offset below 0 (it indexed the arrays there).
		{"tree size wraps around", func(a map[string][]float64) {
			const n = 1026
			for k, v := range map[string]float64{"feature": 0, "threshold": 0, "left": -1, "right": -1, "value": 0} {
				a[k] = make([]float64, n)
				for i := range a[k] {
					a[k][i] = v
				}
			}
			a["sizes"] = []float64{n - 1, 1<<63 - 1024, 1}
		}, "sizes exceed the node arrays"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrs := map[string][]float64{}
			for k, v := range good {
				arrs[k] = append([]float64(nil), v...)
			}
			b := models.New(LambdaMARTMethod, 1)
			b.AddStrings("features", []string{"a"})
			arrs["rate"], arrs["sizes"] = []float64{1}, []float64{3}
			tc.change(arrs)
			for k, v := range arrs {
				b.AddTensor(k, []int{len(v)}, v)
			}
			path := filepath.Join(t.TempDir(), "m.model")
			if err := b.Save(path); err != nil {
				t.Fatal(err)
			}
			m, err := LoadLambdaMART(path)
			if !errMatches(t, err, tc.wantErr) {
				return
			}
			s, err := m.Fuse(FusionInput{Names: []string{"a"}, Candidates: []Candidate{{Rank: 1}, {Rank: 2}}, Scores: [][]float64{{1, 0}}})
			if err != nil || !(s[0] > s[1]) {
				t.Fatalf("fused %v, %v", s, err)
			}
		})
	}
}

// nanFusion stands for a damaged fusion model: it scores one candidate NaN.
type nanFusion struct{}

func (nanFusion) Fuse(in FusionInput) ([]float64, error) {
	out := make([]float64, len(in.Candidates))
	for i := range out {
		out[i] = float64(i)
	}
	out[len(out)/2] = math.NaN()
	return out, nil
}

// A non-finite fused score sorts nowhere and cannot be encoded as JSON:
// Rerank refuses it, naming the candidate, as it does a stage's.
func TestRerankRefusesNonFiniteFusion(t *testing.T) {
	for _, n := range []int{1, 3, 10} {
		var cands []Candidate
		for i := 0; i < n; i++ {
			cands = append(cands, Candidate{Doc: dataset.Doc{ID: string(rune('a' + i))}, Rank: i + 1, Score: float64(n - i)})
		}
		p := &Pipeline{Stages: []Stage{constStage{}}, Fusion: nanFusion{}}
		out, err := p.Rerank(context.Background(), Query{Text: "q"}, cands)
		if err == nil {
			t.Fatalf("%d candidates: no error, scores %v", n, out)
		}
		if want := "non-finite"; !strings.Contains(err.Error(), want) {
			t.Errorf("%d candidates: err = %v, want one containing %q", n, err, want)
		}
	}
}

// TestZNormalizeHugeScores: a stage may give any finite score, and scores
// near ±math.MaxFloat64 whose sum or squares overflow normalise as the
// same scores scaled down do, rather than to NaN (failing the query) or
// to zeros (dropping the stage).
func TestZNormalizeHugeScores(t *testing.T) {
	const big = math.MaxFloat64
	for _, tc := range []struct {
		huge, small []float64
	}{
		{[]float64{1e308, 1e308, 0}, []float64{1, 1, 0}},
		{[]float64{big, 1, 2}, []float64{1, 0, 0}},
		{[]float64{1e200, -1e200, 0}, []float64{1, -1, 0}},
		{[]float64{big, -big, big, -big}, []float64{1, -1, 1, -1}},
		{[]float64{-big, -big}, []float64{0, 0}},
	} {
		got := slices.Clone(tc.huge)
		ZNormalize(got)
		want := slices.Clone(tc.small)
		ZNormalize(want)
		for i := range want {
			if !(abs(got[i]-want[i]) < 1e-9) {
				t.Errorf("ZNormalize(%v) = %v, want %v", tc.huge, got, want)
				break
			}
		}
	}
}

// TestReadLinearRefusesMalformed: a linear fusion file whose weights are
// not finite, or that lists a feature twice (one weight would be dropped),
// is refused naming the file and the feature.
func TestReadLinearRefusesMalformed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		features []string
		weights  []float64
		wantErr  string // "" for success
	}{
		{"valid", []string{"a", FeatureFirstRank}, []float64{0.5, 1}, ""},
		{"NaN weight", []string{"a", FeatureFirstRank}, []float64{math.NaN(), 1}, `feature "a" is NaN`},
		{"infinite weight", []string{"a", FeatureFirstRank}, []float64{0.5, math.Inf(-1)}, `feature "first_rank" is -Inf`},
		{"feature twice", []string{"a", "a"}, []float64{0.5, 1}, `feature "a" has two weights`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := models.New(FusionMethod, 1)
			b.AddStrings("features", tc.features)
			b.AddTensor("weights", []int{len(tc.weights)}, tc.weights)
			var buf bytes.Buffer
			if _, err := b.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			l, err := ReadLinear(&buf, "fusion.model")
			if errMatches(t, err, tc.wantErr) {
				if len(l.Weights) != len(tc.features) {
					t.Errorf("weights %v", l.Weights)
				}
				return
			}
			if !strings.Contains(err.Error(), "fusion.model") {
				t.Errorf("err = %v, does not name the file", err)
			}
		})
	}
}

// FuzzReadLambdaMART builds LambdaMART bundles from fuzzed arrays (a
// bundle's checksum keeps byte-level fuzzing from reaching the loader) and
// checks that loading never panics and a model that loads fuses to finite
// scores, unless it holds a value so large (above 1e100) that summing
// trees may overflow, which Pipeline refuses per query.
func FuzzReadLambdaMART(f *testing.F) {
	enc := func(v ...float64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	// rate, 1 size (3), 3 nodes: a split on feature 0 into two leaves.
	f.Add(enc(0.1, 1, 3, 3, 0, 0.5, 1, 2, 0, 0, -1, -1, -1, 0, 0, -1, -1, 1))
	f.Add(enc(0.1, 3, 1025, 1<<63-1024, 1, 1026))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Past the end of data every value reads as 0, and every node as
		// a leaf.
		next := func() float64 {
			if len(data) < 8 {
				data = nil
				return 0
			}
			x := math.Float64frombits(binary.LittleEndian.Uint64(data))
			data = data[8:]
			return x
		}
		huge := false
		val := func() float64 {
			x := next()
			huge = huge || (math.Abs(x) > 1e100 && !math.IsInf(x, 0))
			return x
		}
		count := func(limit int) int {
			x := next()
			if !(x >= 0) {
				return 0
			}
			return int(math.Min(x, float64(limit)))
		}
		b := models.New(LambdaMARTMethod, 1)
		b.AddStrings("features", []string{"a", FeatureFirstRank})
		b.AddTensor("rate", []int{1}, []float64{val()})
		sizes := make([]float64, count(8))
		for i := range sizes {
			sizes[i] = next()
		}
		b.AddTensor("sizes", []int{len(sizes)}, sizes)
		n := count(2048)
		arrs := map[string][]float64{}
		for _, name := range []string{"feature", "threshold", "left", "right", "value"} {
			arrs[name] = make([]float64, n)
		}
		for i := range n {
			for _, name := range []string{"feature", "threshold", "left", "right", "value"} {
				arrs[name][i] = val()
			}
			if data == nil {
				arrs["left"][i], arrs["right"][i] = -1, -1
			}
		}
		for name, v := range arrs {
			b.AddTensor(name, []int{len(v)}, v)
		}
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		m, err := ReadLambdaMART(&buf, "fuzz.model")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.model") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		s, err := m.Fuse(FusionInput{Names: []string{"a"}, Candidates: []Candidate{{Rank: 1}, {Rank: 2}}, Scores: [][]float64{{1, -1}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s {
			if (math.IsNaN(v) || math.IsInf(v, 0)) && !huge {
				t.Fatalf("loaded, then fused to %v", s)
			}
		}
	})
}

// FuzzReadLinear builds linear fusion bundles from fuzzed feature names,
// weights and manifest (a bundle's checksum keeps byte-level fuzzing from
// reaching the loader), and also reads the fuzzed bytes as a file: loading
// never panics, an error names the file, and a model that loads fuses
// two candidates to finite scores unless a weight is above 1e100.
func FuzzReadLinear(f *testing.F) {
	f.Add("first_rank\ntweak", []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, "linear_fusion", 1)
	f.Add("a\na", []byte{}, "linear_fusion", 1)
	f.Add("", []byte{1, 2, 3}, "tweak", 2)
	f.Fuzz(func(t *testing.T, names string, weights []byte, method string, version int) {
		features := strings.Split(names, "\n")
		w := make([]float64, len(weights)/8)
		huge := false
		for i := range w {
			w[i] = math.Float64frombits(binary.LittleEndian.Uint64(weights[8*i:]))
			huge = huge || math.Abs(w[i]) > 1e100 && !math.IsInf(w[i], 0)
		}
		b := models.New(method, version)
		b.AddStrings("features", features)
		b.AddTensor("weights", []int{len(w)}, w)
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		for _, raw := range [][]byte{buf.Bytes(), weights} {
			l, err := ReadLinear(bytes.NewReader(raw), "fuzz.model")
			if err != nil {
				if !strings.Contains(err.Error(), "fuzz.model") {
					t.Errorf("error %q does not name the file", err)
				}
				continue
			}
			in := FusionInput{Names: features, Candidates: []Candidate{{Rank: 1}, {Rank: 2}}, Scores: make([][]float64, len(features))}
			for i := range in.Scores {
				in.Scores[i] = []float64{1, -1}
			}
			s, err := l.Fuse(in)
			if err != nil {
				continue
			}
			for _, v := range s {
				if (math.IsNaN(v) || math.IsInf(v, 0)) && !huge {
					t.Fatalf("weights %v fused to %v", l.Weights, s)
				}
			}
		}
	})
}

// TestAgreement checks the agreement fusion on windows worked by hand:
// weights scaled by each term's correlation with the others' sum, cut at
// zero.
func TestAgreement(t *testing.T) {
	cands := []Candidate{{Rank: 1}, {Rank: 2}, {Rank: 3}, {Rank: 4}}
	down, up := []float64{4, 3, 2, 1}, []float64{1, 2, 3, 4}
	z := []float64{3, 1, -1, -3} // down, z-normalised, times √5
	for i := range z {
		z[i] /= math.Sqrt(5)
	}
	r2 := math.Sqrt2
	tests := []struct {
		name    string
		weights map[string]float64
		names   []string
		scores  [][]float64
		want    []float64
	}{
		// a and c agree (r = 1) and keep their weights; b, against
		// them (r = −1), weighs nothing.
		{"against the rest", map[string]float64{"a": 2, "b": 1, "c": 2}, []string{"a", "b", "c"}, [][]float64{down, up, down},
			[]float64{4 * z[0], 4 * z[1], 4 * z[2], 4 * z[3]}},
		// a = (1, 0, 0, −1) and b = (1, −1, 0, 0), both of standard
		// deviation 1/√2, correlate at 1/2: each weighs 1/2.
		{"half agreement", map[string]float64{"a": 1, "b": 1}, []string{"a", "b"}, [][]float64{{1, 0, 0, -1}, {1, -1, 0, 0}},
			[]float64{r2, -r2 / 2, 0, -r2 / 2}},
		// A negative prior weighs its reversed feature: reversed, b
		// agrees with a.
		{"negative prior", map[string]float64{"a": 1, "b": -1}, []string{"a", "b"}, [][]float64{down, up},
			[]float64{2 * z[0], 2 * z[1], 2 * z[2], 2 * z[3]}},
		// Alone, a feature has nothing to agree with.
		{"alone", map[string]float64{"a": 1}, []string{"a"}, [][]float64{down}, []float64{0, 0, 0, 0}},
	}
	for _, tc := range tests {
		in := FusionInput{Names: tc.names, Candidates: cands, Scores: tc.scores}
		got, err := (&Agreement{Weights: tc.weights}).Fuse(in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range tc.want {
			if abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: fused %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// A window of one candidate, or of two, has no agreement to measure
	// beyond its size: it fuses to zeros (one), or to finite scores (two).
	for n := 1; n <= 2; n++ {
		in := FusionInput{Names: []string{"a", "b"}, Candidates: cands[:n], Scores: [][]float64{down[:n], up[:n]}}
		got, err := (&Agreement{Weights: map[string]float64{"a": 1, "b": 1, FeatureFirstRank: 1}}).Fuse(in)
		if err != nil || len(got) != n {
			t.Fatalf("window of %d: %v, %v", n, got, err)
		}
		for _, v := range got {
			if math.IsNaN(v) || math.IsInf(v, 0) || n == 1 && v != 0 {
				t.Errorf("window of %d fused to %v", n, got)
			}
		}
	}
	in := FusionInput{Names: []string{"a"}, Candidates: cands, Scores: [][]float64{down}}
	for _, w := range []map[string]float64{{"a": math.Inf(1)}, {"a": math.NaN()}, {"nosuch": 1}} {
		if _, err := (&Agreement{Weights: w}).Fuse(in); err == nil {
			t.Errorf("weights %v fused", w)
		}
	}
}

// TestAgreementConfig checks that a pipeline file's fusion method
// agreement takes equal weights by default and its own when given
// (TestBuildChecksFusion checks what it refuses).
func TestAgreementConfig(t *testing.T) {
	env := Env{}
	build := func(f FusionSpec) (*Pipeline, error) {
		c := &Config{Stages: []StageSpec{{Type: "length"}}, Fusion: f}
		return c.Build(env)
	}
	p, err := build(FusionSpec{Method: "agreement"})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := p.Fusion.(*Agreement); !ok || len(a.Weights) != 2 || a.Weights[FeatureFirstRank] != 1 || a.Weights["length"] != 1 {
		t.Errorf("default agreement fusion %#v, want equal weights on first_rank and length", p.Fusion)
	}
	if p, err = build(FusionSpec{Method: "agreement", Weights: map[string]float64{"length": 2}}); err != nil {
		t.Fatal(err)
	} else if a := p.Fusion.(*Agreement); a.Weights["length"] != 2 || len(a.Weights) != 1 {
		t.Errorf("agreement weights %v, want the file's", a.Weights)
	}
}
