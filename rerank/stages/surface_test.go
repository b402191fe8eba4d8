package stages

import (
	"regexp"
	"testing"
)

// urlRE is the definition countURLs implements.
var urlRE = regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`)

func TestCountURLs(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"see http://a.b and HTTPS://c.d/e?f=g", 2},
		{"www.qatarliving.com, Www.x", 2},
		{"xhttp://a _www.b 9www.c", 0},
		{"(http://a) [www.b]", 2},
		{"http:// www. https://", 0},
		{"httpſ://a httpſ:/b", 1},
		{"http://a\vb www.c\u00a0d", 2},
		{"éhttp://a", 1},
		{"www.www.a http://b", 2},
	} {
		if got, want := countURLs(tc.s), len(urlRE.FindAllStringIndex(tc.s, -1)); got != tc.want || want != tc.want {
			t.Errorf("countURLs(%q) = %d, the regexp finds %d; want %d", tc.s, got, want, tc.want)
		}
	}
}

// FuzzCountURLs checks countURLs against the regular expression it
// implements, on any text.
func FuzzCountURLs(f *testing.F) {
	for _, s := range []string{"see http://a.b and www.c", "httpſ://a", "x www.\tb", "HtTpS://\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countURLs(s), len(urlRE.FindAllStringIndex(s, -1)); got != want {
			t.Fatalf("countURLs(%q) = %d, the regexp finds %d", s, got, want)
		}
	})
}
