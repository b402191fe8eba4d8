package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sample() *Bundle {
	b := New("tweak", 1)
	if err := b.SetConfig(map[string]any{"loss": "preference", "alpha": 0.1}); err != nil {
		panic(err)
	}
	b.Manifest.VocabHash = HashStrings([]string{"a", "b"})
	b.SetMetric("dev_map", 0.75)
	b.AddTensor("w", []int{2, 3}, []float64{1, 2, 3, 4, 5, -6.5})
	b.AddStrings("vocab", []string{"bank", "", "doha ü"})
	return b
}

func TestRoundTrip(t *testing.T) {
	b := sample()
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, "tweak", 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := got.Tensor("w", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Data, []float64{1, 2, 3, 4, 5, -6.5}) || !reflect.DeepEqual(w.Shape, []int{2, 3}) {
		t.Errorf("tensor = %+v", w)
	}
	v, _ := got.Strings("vocab")
	if !reflect.DeepEqual(v, []string{"bank", "", "doha ü"}) {
		t.Errorf("vocab = %q", v)
	}
	var cfg struct{ Loss string }
	if err := got.Config(&cfg); err != nil || cfg.Loss != "preference" {
		t.Errorf("config = %+v, %v", cfg, err)
	}
	if got.ID() != b.ID() {
		t.Errorf("ID changed across save/load")
	}
}

func TestRefusesDamage(t *testing.T) {
	var buf bytes.Buffer
	if _, err := sample().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := append([]byte(nil), good...)
	flip[len(flip)/2] ^= 0x40
	tests := []struct {
		name string
		raw  []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"truncated", good[:len(good)-5], ErrCorrupt},
		{"bit flip", flip, ErrCorrupt},
		// Not a damaged model but another file: a pipeline given as a model.
		{"bad magic", append([]byte("NOTAMODL"), good[8:]...), ErrNotBundle},
		{"short, bad magic", []byte("stages:\n  - x\n"), ErrNotBundle},
	}
	for _, tt := range tests {
		_, err := Parse(tt.raw)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestLoadChecksMethodAndVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := sample().Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, "s2net", 0); err == nil || !strings.Contains(err.Error(), `"tweak" model`) {
		t.Errorf("wrong method: err = %v", err)
	}
	b := sample()
	b.Manifest.ModelVersion = 9
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, "tweak", 1); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("newer version: err = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), "tweak", 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestCheckVocab(t *testing.T) {
	b := sample()
	if err := b.CheckVocab(HashStrings([]string{"a", "b"})); err != nil {
		t.Error(err)
	}
	if err := b.CheckVocab(HashStrings([]string{"b", "a"})); err == nil {
		t.Error("mismatched vocabulary accepted")
	}
}

func TestCheckAnalyzer(t *testing.T) {
	const this = "semrank_en/2"
	for _, tc := range []struct {
		name, recorded string
		ok             bool
	}{
		{"same", "semrank_en/2", true},
		{"older version", "semrank_en/1", false},
		{"other analyzer", "semrank_en_words/2", false},
		{"absent (saved before analyzers were recorded)", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := sample()
			b.Manifest.Analyzer = tc.recorded
			// The record survives a save and load.
			var buf bytes.Buffer
			if _, err := b.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			got, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if got.Manifest.Analyzer != tc.recorded {
				t.Fatalf("analyzer %q after a round trip, want %q", got.Manifest.Analyzer, tc.recorded)
			}
			err = got.CheckAnalyzer(this)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrAnalyzerMismatch) {
				t.Fatalf("error %v does not wrap ErrAnalyzerMismatch", err)
			}
			for _, want := range []string{"tweak", tc.recorded, this, "retrain"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestNoAnalyzerKeepsID: a bundle recording no analyzer serialises exactly
// as before the field existed, so the IDs that indexes and dependent
// models recorded for existing models do not change.
func TestNoAnalyzerKeepsID(t *testing.T) {
	var buf bytes.Buffer
	if _, err := sample().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`"analyzer"`)) {
		t.Error("an unset analyzer is written to the manifest")
	}
}

func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if _, err := sample().WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := Parse(raw)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := b.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
	})
}

// rawBundle frames a manifest and body as a bundle with a valid checksum,
// so tests can reach the structural checks behind it.
func rawBundle(manifest string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(manifest))))
	b.WriteString(manifest)
	b.Write(body)
	sum := sha256.Sum256(b.Bytes())
	return append(b.Bytes(), sum[:]...)
}

func TestRefusesBadShapes(t *testing.T) {
	eight := make([]byte, 8)
	tests := []struct {
		name, sections string
		body           []byte
	}{
		// 2^61+1 values of 8 bytes wrap around to 8 bytes.
		{"overflow 1-d", `[{"name":"w","kind":"f64","shape":[2305843009213693953],"bytes":8}]`, eight},
		// (2^61+1)·8 wraps around to 8 values.
		{"overflow 2-d", `[{"name":"w","kind":"f64","shape":[2305843009213693953,8],"bytes":64}]`, make([]byte, 64)},
		{"overflow 3-d", `[{"name":"w","kind":"f64","shape":[4294967296,4294967296,1],"bytes":0}]`, nil},
		{"short", `[{"name":"w","kind":"f64","shape":[2],"bytes":8}]`, eight},
		{"negative", `[{"name":"w","kind":"f64","shape":[-1,-1],"bytes":8}]`, eight},
	}
	for _, tt := range tests {
		raw := rawBundle(`{"method":"x","format_version":1,"sections":`+tt.sections+`}`, tt.body)
		if b, err := Parse(raw); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt (bundle %+v)", tt.name, err, b)
		}
	}
	valid := []struct {
		sections string
		body     []byte
	}{
		{`[{"name":"w","kind":"f64","shape":[0,5],"bytes":0}]`, nil},
		{`[{"name":"w","kind":"f64","shape":[4294967296,0],"bytes":0}]`, nil},
		{`[{"name":"w","kind":"f64","bytes":8}]`, eight},
	}
	for _, tt := range valid {
		if _, err := Parse(rawBundle(`{"method":"x","format_version":1,"sections":`+tt.sections+`}`, tt.body)); err != nil {
			t.Errorf("%s: %v", tt.sections, err)
		}
	}
}

// FuzzParseStructure fuzzes the manifest and body behind a valid checksum
// (FuzzParse's inputs almost never get past it).
func FuzzParseStructure(f *testing.F) {
	var buf bytes.Buffer
	if _, err := sample().WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	raw := buf.Bytes()
	ml := binary.LittleEndian.Uint32(raw[len(magic):])
	f.Add(string(raw[len(magic)+4:len(magic)+4+int(ml)]), raw[len(magic)+4+int(ml):len(raw)-sha256.Size])
	f.Add(`{"format_version":1,"sections":[{"name":"w","kind":"f64","shape":[2305843009213693953],"bytes":8}]}`, make([]byte, 8))
	f.Fuzz(func(t *testing.T, manifest string, body []byte) {
		b, err := Parse(rawBundle(manifest, body))
		if err != nil {
			return
		}
		for name, tn := range b.tensors {
			n := 1.0
			for _, d := range tn.Shape {
				n *= float64(d)
			}
			if n != float64(len(tn.Data)) {
				t.Fatalf("tensor %q: shape %v but %d values", name, tn.Shape, len(tn.Data))
			}
		}
		var out bytes.Buffer
		if _, err := b.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRefusesDuplicateSections: a manifest that lists a section twice is
// corrupt; keeping either copy would load weights the writer may not have
// meant, and the bundle would not re-serialise to the same ID.
func TestRefusesDuplicateSections(t *testing.T) {
	eight := make([]byte, 8)
	tests := []struct {
		name, sections string
		body           []byte
	}{
		{"tensor twice", `[{"name":"w","kind":"f64","shape":[1],"bytes":8},{"name":"w","kind":"f64","shape":[1],"bytes":8}]`, make([]byte, 16)},
		{"strings twice", `[{"name":"v","kind":"strings","shape":[1],"bytes":1},{"name":"v","kind":"strings","shape":[1],"bytes":1}]`, []byte{0, 0}},
	}
	for _, tt := range tests {
		raw := rawBundle(`{"method":"x","format_version":1,"sections":`+tt.sections+`}`, tt.body)
		if _, err := Parse(raw); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tt.name, err)
		}
	}
	// A tensor and a string list may share a name: they are kept apart.
	ok := `[{"name":"w","kind":"f64","shape":[1],"bytes":8},{"name":"w","kind":"strings","shape":[1],"bytes":1}]`
	if _, err := Parse(rawBundle(`{"method":"x","format_version":1,"sections":`+ok+`}`, append(eight, 0))); err != nil {
		t.Errorf("tensor and string list named alike: %v", err)
	}
}

// TestLoadVersionErrorNamesMethod: a loader that accepts any method still
// gets an error naming the model's method.
func TestLoadVersionErrorNamesMethod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.bin")
	b := sample()
	b.Manifest.ModelVersion = 9
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, "", 1); err == nil || !strings.Contains(err.Error(), "tweak model version 9") {
		t.Errorf("err = %v, want it to name the tweak model's version", err)
	}
}
