package analyzers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	bunicode "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
)

// sameTokens returns a description of the first difference between
// asciiTokens and Bleve's unicode tokenizer on input, or "".
func sameTokens(input []byte) string {
	want := bunicode.NewUnicodeTokenizer().Tokenize(input)
	got := asciiTokens(input)
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("stream nil %t, want nil %t", got == nil, want == nil)
	}
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) {
			return fmt.Sprintf("%d tokens, want %d", len(got), len(want))
		}
		g, w := got[i], want[i]
		if string(g.Term) != string(w.Term) || g.Start != w.Start || g.End != w.End || g.Position != w.Position || g.Type != w.Type {
			return fmt.Sprintf("token %d: %s, want %s", i, show(g), show(w))
		}
	}
	return ""
}

func show(t *analysis.Token) string {
	return fmt.Sprintf("%q [%d,%d) pos %d type %d", t.Term, t.Start, t.End, t.Position, t.Type)
}

// TestASCIITokens: the word-break cases of ASCII text, each as Bleve's
// unicode tokenizer splits it.
func TestASCIITokens(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "_", "___", "1", "The bank's RATES are rising.", "U.S . POLICY", "e.g. i.e. a.b.c.",
		"3.14 1,000,000.50 1;2 1:2 1'2 1..2 1,,2 1.a a.1 a:b a:1 a,b a;b a'b a''b 'a a' .5 5.",
		"a1 1a a1.2 1.2a a.b1 1a:b a1:b a_:b a_.b 1_.2 _1 1_ _a_ a__b x_1,2 __1__ 2_a",
		"line\r\nnext\rthird\nfourth\v\f\x00\x01\x7f end", "don&#39;t #hashtag @user e-mail (parens) [x] {y}",
		"ALGOL-60 FORTRAN IV's IBM 7090/7094 O(n log n) x=y+1;", "a:", ":a", "a.", "1,", "a_", "a'", "''", "...",
	} {
		if diff := sameTokens([]byte(s)); diff != "" {
			t.Errorf("%q: %s", s, diff)
		}
	}
}

// TestASCIITokensRealText holds asciiTokens to Bleve's tokenizer on every
// ASCII line of the bundled SemEval and CACM slices and the demo corpus.
func TestASCIITokensRealText(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "semeval", "*.xml"))
	files = append(files, filepath.Join("..", "testdata", "cacm", "cacm.all"), filepath.Join("..", "testdata", "demo", "corpus.jsonl"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Line by line, so that a non-ASCII line leaves the rest in.
		for line := range splitLines(b) {
			if !isASCII(line) {
				continue
			}
			n++
			if diff := sameTokens(line); diff != "" {
				t.Fatalf("%s: %q: %s", f, line, diff)
			}
		}
	}
	if n == 0 {
		t.Fatal("no text read")
	}
}

func splitLines(b []byte) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			i := 0
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if !yield(b[:i]) {
				return
			}
			b = b[min(i+1, len(b)):]
		}
	}
}

// FuzzASCIITokens holds asciiTokens to Bleve's unicode tokenizer on any
// ASCII text, each byte of the fuzzer's input folded below 0x80 and most
// of them onto the characters the word-break rules treat specially.
func FuzzASCIITokens(f *testing.F) {
	for _, s := range []string{"a.b 1,2 x_y:z 'q' 3a a3 1.2.3 ..", "The IBM 7090's O(n) cost; e.g. 1,000.5", "\r\n\x00\x7f"} {
		f.Add([]byte(s))
	}
	const special = "aZ09_:,;.' \r\n-\"@"
	f.Fuzz(func(t *testing.T, b []byte) {
		in := make([]byte, len(b))
		for i, c := range b {
			if c&0x80 != 0 {
				in[i] = special[int(c&0x7f)%len(special)]
			} else {
				in[i] = c
			}
		}
		if diff := sameTokens(in); diff != "" {
			t.Fatalf("%q: %s", in, diff)
		}
	})
}

// BenchmarkTokenizer times, text by text and interleaved, Bleve's unicode
// tokenizer and semrank's (which takes asciiTokens for ASCII text) over
// the ASCII lines of the bundled SemEval and CACM slices and the demo
// corpus, and reports each one's time a text and the ratio.
func BenchmarkTokenizer(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "semeval", "*.xml"))
	files = append(files, filepath.Join("..", "testdata", "cacm", "cacm.all"), filepath.Join("..", "testdata", "demo", "corpus.jsonl"))
	var texts [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for line := range splitLines(data) {
			if len(line) > 0 && isASCII(line) {
				texts = append(texts, line)
			}
		}
	}
	bleve, ours := bunicode.NewUnicodeTokenizer(), validTokenizer{asciiFirst{bunicode.NewUnicodeTokenizer()}}
	var spent [2]time.Duration
	n := 0
	for b.Loop() {
		text := texts[n%len(texts)]
		n++
		start := time.Now()
		bleve.Tokenize(text)
		mid := time.Now()
		ours.Tokenize(text)
		spent[0], spent[1] = spent[0]+mid.Sub(start), spent[1]+time.Since(mid)
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "ns/bleve")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(n), "ns/semrank")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "semrank/bleve")
}

// TestFaster: Bleve's standard analyzer made Faster analyzes ASCII text,
// other text and invalid UTF-8 as the standard analyzer does; analyzers
// without Bleve's unicode tokenizer come back as they are.
func TestFaster(t *testing.T) {
	cache := registry.NewCache()
	std, err := cache.AnalyzerNamed(standard.Name)
	if err != nil {
		t.Fatal(err)
	}
	fast := Faster(std)
	if fast == std {
		t.Fatal("Faster(standard) returned the standard analyzer itself")
	}
	for _, s := range []string{
		"The IBM 7090's O(n log n) cost; e.g. 1,000.5 a:b x_y", "İstanbul STRAẞE naïve café 東京", "a\xffb\xfe", "",
	} {
		want, got := std.Analyze([]byte(s)), fast.Analyze([]byte(s))
		if len(got) != len(want) {
			t.Fatalf("%q: %d tokens, want %d", s, len(got), len(want))
		}
		for i := range got {
			if show(got[i]) != show(want[i]) {
				t.Errorf("%q: token %d %s, want %s", s, i, show(got[i]), show(want[i]))
			}
		}
	}
	kw, err := cache.AnalyzerNamed(keyword.Name)
	if err != nil {
		t.Fatal(err)
	}
	if Faster(kw) != kw {
		t.Error("Faster(keyword) is not the keyword analyzer")
	}
}
