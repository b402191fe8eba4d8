package embed

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models/internal/modeltest"
)

func sampleVectors(t testing.TB) *Vectors {
	v, err := NewVectors([]string{"bank", "doha", "visa"}, 3, []float64{0.5, -1, 2, 0, 0.25, 0.0009765625, -3, 4, 0.125})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWriteReadRoundTrip(t *testing.T) {
	v := sampleVectors(t)
	var text, bin bytes.Buffer
	if err := v.WriteWord2VecText(&text); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteWord2VecBinary(&bin); err != nil {
		t.Fatal(err)
	}
	glove := strings.SplitN(text.String(), "\n", 2)[1]
	dir := t.TempDir()
	tests := []struct {
		name   string
		data   []byte
		format Format
	}{
		{"text", text.Bytes(), FormatWord2VecText},
		{"text-auto", text.Bytes(), FormatAuto},
		{"bin", bin.Bytes(), FormatWord2VecBin},
		{"bin-auto", bin.Bytes(), FormatAuto},
		{"glove", []byte(glove), FormatGloVe},
		{"glove-auto", []byte(glove), FormatAuto},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadFile(p, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Words, v.Words) || got.Dim != v.Dim {
				t.Fatalf("got %v dim %d", got.Words, got.Dim)
			}
			// All sample values are exact in float32.
			if !reflect.DeepEqual(got.Data, v.Data) {
				t.Errorf("data = %v, want %v", got.Data, v.Data)
			}
		})
	}
	p := filepath.Join(dir, "bundle")
	if err := v.Save(p, Config{Dim: 3}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatBundle, FormatAuto} {
		got, err := LoadFile(p, f)
		if err != nil || !reflect.DeepEqual(got.Data, v.Data) {
			t.Errorf("bundle via %s: %v", f, err)
		}
	}
}

func TestLoadersRejectBadInput(t *testing.T) {
	tests := []struct {
		name, in string
		read     func(*bytes.Reader) (*Vectors, error)
		want     string
	}{
		{"text no header", "bank 1 2\n", text, "header"},
		{"text short row", "2 3\nbank 1 2 3\ndoha 1 2\n", text, "has 2 values, want 3"},
		{"text count", "3 2\nbank 1 2\n", text, "promises 3"},
		{"text extra", "1 2\nbank 1 2\ndoha 1 2\n", text, "more vectors"},
		{"text nan", "1 2\nbank NaN 2\n", text, "not a finite"},
		{"text junk", "1 2\nbank 1 x\n", text, "not a finite"},
		{"text huge dim", "1 999999\n", text, "dimensions"},
		{"glove ragged", "bank 1 2\ndoha 1\n", glove, "want 2"},
		{"glove empty", "\n\n", glove, "no vectors"},
		{"glove word only", "bank\n", glove, "want a word"},
		{"glove given word2vec text", "2 3\nbank 1 2 3\ndoha 1 2 3\n", glove, "line 1 reads as a word2vec header"},
		{"glove ragged after a numeric word", "7 1\nbank 1 2\n", glove, "want 1"},
		{"bin truncated", "2 2\nbank \x00\x00\x80\x3f", bin, "truncated"},
		{"bin no header", "", bin, "truncated"},
		{"bin inf", "1 1\nbank \x00\x00\x80\x7f", bin, "not finite"},
		{"bin empty word", "1 1\n \x00\x00\x80\x3f", bin, "empty word"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.read(bytes.NewReader([]byte(tc.in)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestReadWord2VecBinaryRecords checks the binary reader's record
// boundaries: records ending in LF, CRLF or nothing all give the header's
// words (a CR kept in the next word would match no token), and a header
// counting fewer records than the file holds is an error, as in the text
// form, rather than the rest dropped unsaid.
func TestReadWord2VecBinaryRecords(t *testing.T) {
	one, two := "\x00\x00\x80\x3f", "\x00\x00\x00\x40" // 1.0, 2.0 as float32
	tests := []struct {
		name, in string
		words    []string
		wantErr  string
	}{
		{"LF", "2 1\nbank " + one + "\ndoha " + two + "\n", []string{"bank", "doha"}, ""},
		{"CRLF", "2 1\r\nbank " + one + "\r\ndoha " + two + "\r\n", []string{"bank", "doha"}, ""},
		{"no separator", "2 1\nbank " + one + "doha " + two, []string{"bank", "doha"}, ""},
		{"trailing blank lines", "1 1\nbank " + one + "\n\r\n \n", []string{"bank"}, ""},
		{"header counts fewer", "1 1\nbank " + one + "\ndoha " + two + "\n", nil, "more data after the header's 1 vectors"},
		{"header counts more", "3 1\nbank " + one + "\ndoha " + two + "\n", nil, "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ReadWord2VecBinary(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.Words, tc.words) {
				t.Errorf("words %q, want %q", v.Words, tc.words)
			}
		})
	}
}

// TestLoadFileSkipsBOM checks that a text vector file starting with a
// UTF-8 byte order mark loads: the mark once made the word2vec header a
// GloVe word and the error blamed line 2.
func TestLoadFileSkipsBOM(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data string
		format     Format
	}{
		{"word2vec auto", "2 2\nbank 1 2\ndoha 3 4\n", FormatAuto},
		{"word2vec", "2 2\nbank 1 2\ndoha 3 4\n", FormatWord2VecText},
		{"glove auto", "bank 1 2\ndoha 3 4\n", FormatAuto},
		{"glove", "bank 1 2\ndoha 3 4\n", FormatGloVe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := os.WriteFile(p, []byte("\xef\xbb\xbf"+tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			v, err := LoadFile(p, tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.Words, []string{"bank", "doha"}) || v.Dim != 2 {
				t.Errorf("words %q dim %d", v.Words, v.Dim)
			}
		})
	}
}

func text(r *bytes.Reader) (*Vectors, error)  { return ReadWord2VecText(r) }
func glove(r *bytes.Reader) (*Vectors, error) { return ReadGloVe(r) }
func bin(r *bytes.Reader) (*Vectors, error)   { return ReadWord2VecBinary(r) }

func TestDuplicateWordsKeepFirst(t *testing.T) {
	v, err := ReadGloVe(strings.NewReader("a 1\nb 2\na 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Lookup("a"); got[0] != 1 || v.Len() != 2 {
		t.Errorf("a = %v, len %d", got, v.Len())
	}
}

func TestFromBundleRejectsMismatch(t *testing.T) {
	v := sampleVectors(t)
	b, err := v.Bundle(Config{})
	if err != nil {
		t.Fatal(err)
	}
	b.Manifest.VocabHash = "0000"
	if _, err := FromBundle(b); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("err = %v", err)
	}
}

// TestRecordsAnalyzer: trained vectors are looked up by embed.Tokenize's
// words (analyzers.Words), so vectors from another version of that
// analyzer are refused. Pre-trained vectors record no analyzer: no semrank
// analyzer produced their words.
func TestRecordsAnalyzer(t *testing.T) {
	var sents [][]string
	for range 50 {
		sents = append(sents, []string{"bank", "loan", "salary"}, []string{"beach", "desert", "sand"})
	}
	cfg := Config{Dim: 4, Epochs: 1, PruneTop: -1}
	v, err := Train(context.Background(), sents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	save := func(v *Vectors, p string) error { return v.Save(p, cfg) }
	modeltest.Analyzer(t, v, analyzers.WordsID(), Load, save)

	b, err := sampleVectors(t).Bundle(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b.Manifest.Analyzer != "" {
		t.Errorf("pre-trained vectors record analyzer %q", b.Manifest.Analyzer)
	}
}

func checkLoaded(t *testing.T, v *Vectors, err error) {
	if err != nil {
		return
	}
	if v.Len() == 0 || len(v.Data) != v.Len()*v.Dim {
		t.Fatalf("inconsistent vectors: %d words, dim %d, %d values", v.Len(), v.Dim, len(v.Data))
	}
	for i, w := range v.Words {
		if j, ok := v.Index(w); !ok || j != i {
			t.Fatalf("index of %q = %d, %v", w, j, ok)
		}
	}
}

func FuzzReadWord2VecText(f *testing.F) {
	f.Add([]byte("2 3\nbank 1 2 3\ndoha -1 0.5 1e-3\n"))
	f.Add([]byte("1 1\nx 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadWord2VecText(bytes.NewReader(data))
		checkLoaded(t, v, err)
	})
}

func FuzzReadGloVe(f *testing.F) {
	f.Add([]byte("bank 1 2 3\ndoha -1 0.5 1e-3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadGloVe(bytes.NewReader(data))
		checkLoaded(t, v, err)
	})
}

func FuzzReadWord2VecBinary(f *testing.F) {
	var buf bytes.Buffer
	if err := sampleVectors(f).WriteWord2VecBinary(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("1 1\nbank \x00\x00\x80\x3f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadWord2VecBinary(bytes.NewReader(data))
		checkLoaded(t, v, err)
	})
}

// TestWordsWithUnicodeSpaces checks that only ASCII spaces and tabs
// separate fields: published files (e.g. GloVe 840B) have words holding
// U+00A0 and other Unicode spaces.
func TestWordsWithUnicodeSpaces(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(*bytes.Reader) (*Vectors, error)
		data string
	}{
		{"glove", glove, "a\u00a0b 1 2\nc\u2009d 3 4\ne\t5\t6\n"},
		{"word2vec text", text, "3 2\na\u00a0b 1 2\nc\u2009d 3 4\ne 5 6\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.read(bytes.NewReader([]byte(tc.data)))
			if err != nil {
				t.Fatal(err)
			}
			for w, want := range map[string]float64{"a\u00a0b": 1, "c\u2009d": 3, "e": 5} {
				if got, ok := v.Lookup(w); !ok || got[0] != want {
					t.Errorf("%q = %v, %v; want first value %g", w, got, ok, want)
				}
			}
		})
	}
}

// TestBundleRecordsTrainedConfig checks that the manifest records the
// settings training used, not the zero fields that stood for them
// (semrank train embed has no --alpha flag: its bundles said alpha 0).
func TestBundleRecordsTrainedConfig(t *testing.T) {
	b, err := sampleVectors(t).Bundle(Config{Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got Config
	if err := b.Config(&got); err != nil {
		t.Fatal(err)
	}
	if want := (Config{Dim: 3}).withDefaults(); got != want {
		t.Errorf("manifest config %+v, want %+v", got, want)
	}
}

// TestDetectBinaryWithEarlyNewline checks format detection on a binary
// file whose first value begins with the byte 0x0a (about one file in 256):
// it was taken for word2vec text and failed with "want a word and its
// values". A text file whose first line is short stays text, so its error
// names the line.
func TestDetectBinaryWithEarlyNewline(t *testing.T) {
	first := float64(math.Float32frombits(0x3f80000a)) // little endian: 0a 00 80 3f
	v, err := NewVectors([]string{"bank", "doha"}, 3, []float64{first, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	var bin bytes.Buffer
	if err := v.WriteWord2VecBinary(&bin); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "v.bin")
	if err := os.WriteFile(p, bin.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(p, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Data, v.Data) {
		t.Errorf("data = %v, want %v", got.Data, v.Data)
	}
	short := filepath.Join(dir, "short.txt")
	if err := os.WriteFile(short, []byte("2 3\nbank 1 2\ndoha 1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(short, FormatAuto); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("short text line: err = %v, want one naming line 2", err)
	}
}
