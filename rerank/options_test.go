package rerank

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// optsSample has an option of every kind DecodeOptions checks.
type optsSample struct {
	Name   string   `yaml:"name"`
	N      int      `yaml:"n"`
	X      float64  `yaml:"x"`
	On     bool     `yaml:"on"`
	List   []int    `yaml:"list"`
	Opt    *int     `yaml:"opt,omitempty"`
	Nested optsMore `yaml:",inline"`
}

type optsMore struct {
	Extra string `yaml:"extra"`
}

func TestDecodeOptions(t *testing.T) {
	def := optsSample{Name: "def", N: 1, X: 0.5, On: true}
	three := 3
	for _, tc := range []struct {
		name    string
		opts    map[string]any
		want    optsSample
		wantErr string // substring; "" for success
	}{
		{"none: the defaults", nil, def, ""},
		{"every kind", map[string]any{"name": "a", "n": 2, "x": 1.5, "on": false, "list": []any{1, 2}, "opt": 3, "extra": "e"},
			optsSample{Name: "a", N: 2, X: 1.5, List: []int{1, 2}, Opt: &three, Nested: optsMore{Extra: "e"}}, ""},
		{"an int for a float", map[string]any{"x": 2}, optsSample{Name: "def", N: 1, X: 2, On: true}, ""},
		{"a whole float for an int", map[string]any{"n": 4.0}, optsSample{Name: "def", N: 4, X: 0.5, On: true}, ""},
		{"Go numeric types", map[string]any{"n": uint8(5), "x": float32(0.25)}, optsSample{Name: "def", N: 5, X: 0.25, On: true}, ""},
		{"unknown", map[string]any{"nosuch": 1}, def, "unknown option nosuch (accepted: extra, list, n, name, on, opt, x)"},
		{"unknowns", map[string]any{"b": 1, "a": 2}, def, "unknown options a, b (accepted:"},
		{"a string for an int", map[string]any{"n": "many"}, def, "option n: want a number, got many (str)"},
		{"a fraction for an int", map[string]any{"n": 2.5}, def, "option n: want an integer, got 2.5"},
		{"a number for a string", map[string]any{"name": 7}, def, "option name: want a string, got 7 (int)"},
		{"a string for a bool", map[string]any{"on": "yes"}, def, "option on: want true or false, got yes (str)"},
		{"a number for a list", map[string]any{"list": 3}, def, "option list: want a list, got 3 (int)"},
		{"a list of strings", map[string]any{"list": []any{"a"}}, def, "option list: want a number, got a (str)"},
		{"a map for a float", map[string]any{"x": map[string]any{"a": 1}}, def, "option x: want a number, got a map"},
		{"overflow", map[string]any{"n": "1e999"}, def, "option n: want a number"},
		{"no YAML value", map[string]any{"n": func() {}}, def, "option n:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := def
			err := StageSpec{Type: "t", Options: tc.opts}.DecodeOptions(&got)
			if !errMatches(t, err, tc.wantErr) || tc.wantErr != "" {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeOptionsWantsAStructPointer(t *testing.T) {
	var n int
	for _, dst := range []any{nil, optsSample{}, &n, (*optsSample)(nil)} {
		if err := (StageSpec{}).DecodeOptions(dst); err == nil || !strings.Contains(err.Error(), "pointer to a struct") {
			t.Errorf("DecodeOptions(%T): %v, want an error", dst, err)
		}
	}
}

func TestOptionsOfRoundTrip(t *testing.T) {
	three := 3
	in := optsSample{Name: "a", N: 2, X: 1, On: true, List: []int{4}, Opt: &three, Nested: optsMore{Extra: "e"}}
	opts, err := OptionsOf(in)
	if err != nil {
		t.Fatal(err)
	}
	var out optsSample
	if err := (StageSpec{Options: opts}).DecodeOptions(&out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("decoded %+v, want %+v", out, in)
	}
}

// FuzzDecodeOptions decodes the options of any pipeline stage: it returns
// an error or a value, and never panics; what it accepts has the field's
// kind, and decodes to the same value once written by WriteConfig's
// formatting and read back.
func FuzzDecodeOptions(f *testing.F) {
	for _, s := range []string{
		"{}", "{name: a, n: 2, x: 1.5, on: true, list: [1, 2], opt: 3, extra: e}",
		"{n: 2.5}", "{n: many}", "{x: .inf}", "{x: .nan}", "{list: 3}", "{list: [a]}", "{nosuch: 1}",
		"{name: 7}", "{on: yes}", "{n: 0x10}", "{n: 1e999}", "{opt: null}", "{x: {a: 1}}", "{n: !!binary aGk=}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var opts map[string]any
		if yaml.Unmarshal([]byte(src), &opts) != nil {
			return
		}
		var got optsSample
		spec := StageSpec{Type: "t", Options: opts}
		if err := spec.DecodeOptions(&got); err != nil {
			return
		}
		raw, err := yaml.Marshal(spec)
		if err != nil {
			t.Fatalf("accepted options do not marshal: %v", err)
		}
		var back StageSpec
		if err := yaml.Unmarshal(raw, &back); err != nil {
			t.Fatalf("written options do not read back: %v\n%s", err, raw)
		}
		var again optsSample
		if err := back.DecodeOptions(&again); err != nil {
			t.Fatalf("written options no longer decode: %v\n%s", err, raw)
		}
		if got.X == got.X && !reflect.DeepEqual(got, again) { // NaN ≠ NaN
			t.Fatalf("decoded %+v, then %+v after writing\n%s", got, again, raw)
		}
	})
}
