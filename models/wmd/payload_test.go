package wmd

import (
	"bufio"
	"encoding/binary"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/embed"
)

// questionSpace returns the space of testdata/embed's GloVe slice and its
// SemEval questions.
func questionSpace(t testing.TB) (*Space, []string) {
	t.Helper()
	v, err := embed.LoadFile("../../testdata/embed/glove-slice.txt", embed.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../testdata/embed/questions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var texts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		texts = append(texts, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return NewSpace(v), texts
}

// TestPayloadDoc: a document's nBOW payload gives the nBOW of its text
// bit for bit, words, weights and centroid, on real questions.
func TestPayloadDoc(t *testing.T) {
	s, texts := questionSpace(t)
	enc := Encoder{Space: s}
	words := 0
	for _, text := range append(texts, "", "zzzqqq") {
		b, err := enc.EncodePayload(dataset.Doc{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.DecodeDoc(b)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		want := s.Doc(text)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: payload's nBOW %v, text's %v", text, got, want)
		}
		words += len(want.Words)
	}
	if words < 5*len(texts) {
		t.Errorf("%d words in %d texts: the slice misses the questions' words", words, len(texts))
	}
	if id := enc.ModelID(); !strings.HasPrefix(id, "wmd-") || id != (Encoder{Space: NewSpace(s.Vectors())}).ModelID() {
		t.Errorf("model id %q: want wmd- and the vectors' fingerprint, the same for the same vectors", id)
	}
}

// TestDecodeDocRefuses: malformed payloads and words outside the space
// are errors naming the problem.
func TestDecodeDocRefuses(t *testing.T) {
	s, _ := questionSpace(t)
	n := s.Vectors().Len()
	uv := func(xs ...uint64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.AppendUvarint(b, x)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "word count"},
		{"too many words", uv(5, 1, 1), "words in"},
		{"truncated", uv(2, 1, 1, 1), "words in"},
		{"zero step", uv(2, 1, 1, 0, 1), "id step"},
		{"zero count", uv(1, 1, 0), "count"},
		{"word outside", uv(1, uint64(n)+1, 1), "outside the vocabulary"},
		{"trailing", append(uv(1, 1, 1), 7), "after the last word"},
		{"huge count", uv(1, 1, 1<<33), "count"},
	} {
		if _, err := s.DecodeDoc(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := s.DocFromCounts([]int32{3, 2}, []uint32{1, 1}); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("words out of order: error %v", err)
	}
}

// FuzzDecodeDoc: any payload decodes or is refused, never panics; one
// that decodes is an nBOW (weights summing to 1) whose words encode again.
func FuzzDecodeDoc(f *testing.F) {
	s, texts := questionSpace(f)
	for _, text := range texts[:20] {
		b, _ := Encoder{Space: s}.EncodePayload(dataset.Doc{Text: text})
		f.Add(b)
	}
	f.Add([]byte{0x80, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := s.DecodeDoc(b)
		if err != nil {
			return
		}
		var sum float64
		for _, w := range d.Weights {
			sum += w
		}
		if len(d.Words) > 0 && (sum < 1-1e-9 || sum > 1+1e-9) || len(d.Centroid) != s.Vectors().Dim {
			t.Fatalf("decoded nBOW with weights summing to %v, centroid of %d", sum, len(d.Centroid))
		}
		counts := make([]uint32, len(d.Words))
		for k := range counts {
			counts[k] = 1
		}
		if _, err := s.DecodeDoc(AppendCounts(nil, d.Words, counts)); err != nil {
			t.Fatalf("its words re-encoded refused: %v", err)
		}
	})
}
