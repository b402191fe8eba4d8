package analyzers

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"The bank's RATES are rising", []string{"bank", "rate", "rise"}},
		{"Which is a good bank in Doha?", []string{"good", "bank", "doha"}},
		{"running runners ran", []string{"run", "runner", "ran"}},
	}
	for _, tt := range tests {
		got := Tokens(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWordsKeepSurfaceForms(t *testing.T) {
	got := Words("Running the Banks' rates")
	want := []string{"running", "banks", "rates"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
}

func TestTermsPositionsAndCapitals(t *testing.T) {
	got := Terms("Visa rules for the Qatar visa")
	want := []Term{
		{"visa", 1, true, 0}, {"rule", 2, false, 5}, {"qatar", 5, true, 19}, {"visa", 6, false, 25},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %+v, want %+v", got, want)
	}
}

func TestCachedTokensMatchTokens(t *testing.T) {
	ResetCache()
	texts := []string{"The bank's RATES are rising", "", "Which is a good bank in Doha?"}
	for round := 0; round < 2; round++ {
		for _, s := range texts {
			if got, want := CachedTokens(s), Tokens(s); !reflect.DeepEqual(got, want) {
				t.Errorf("round %d: CachedTokens(%q) = %q, want %q", round, s, got, want)
			}
		}
	}
	// Fill past two generations: evicted entries are recomputed correctly.
	for i := 0; i < 2*CacheSize+10; i++ {
		CachedTokens(string(rune('a'+i%26)) + " bank " + string(rune(i)))
	}
	if got := CachedTokens(texts[0]); !reflect.DeepEqual(got, Tokens(texts[0])) {
		t.Errorf("after eviction: %q", got)
	}
}

// TestUnicodeRepairs: an invalid UTF-8 byte no longer ends the text's
// tokens, and lowercasing a rune whose lower case is shorter (İ, ẞ, the
// Kelvin sign) no longer leaves an invalid, truncated term. Offsets, and
// so capitals in Terms, stay those of the text.
func TestUnicodeRepairs(t *testing.T) {
	tests := []struct {
		in    string
		words []string
	}{
		{"good bank \xff in Doha", []string{"good", "bank", "doha"}},
		{"good \xc3 bank", []string{"good", "bank"}},
		{"\xffgood caf\xe9 ok", []string{"good", "caf", "ok"}},
		{"İstanbul bank", []string{"istanbul", "bank"}},
		{"ẞtraße", []string{"ßtraße"}},
		{"\u212Aelvin", []string{"kelvin"}},
		{"Ⱥlpha ΟΔΟΣ", []string{"ⱥlpha", "οδος"}},
		{"The BANK's RATES", []string{"bank", "rates"}},
	}
	for _, tt := range tests {
		got := Words(tt.in)
		if !reflect.DeepEqual(got, tt.words) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.words)
		}
		for _, w := range append(got, Tokens(tt.in)...) {
			if !utf8.ValidString(w) {
				t.Errorf("%q: invalid term %q", tt.in, w)
			}
		}
	}
	got := Terms("x \xff Visa İstanbul")
	want := []Term{{"x", 1, false, 0}, {"visa", 2, true, 4}, {"istanbul", 3, true, 9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %+v, want %+v", got, want)
	}
}

// TestToLower checks the lower-casing filter against the standard
// library's mapping (with Bleve's final sigma), and that terms whose lower
// case keeps its width are lowered in place, without allocating.
func TestToLower(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		inPlace  bool
	}{
		{"bank", "bank", true},
		{"The", "the", true},
		{"DOHA", "doha", true},
		{"Café", "café", true},
		{"ΟΔΟΣ", "οδος", true},
		{"ΣΟΦΟΣ", "σοφος", true},
		{"İstanbul", "istanbul", false},
		{"ẞtraße", "ßtraße", false},
		{"Ⱥlpha", "ⱥlpha", false},
		{"caf\xe9", "caf\xe9", true},
	} {
		if got := string(toLower([]byte(tc.in))); got != tc.want {
			t.Errorf("toLower(%q) = %q, want %q", tc.in, got, tc.want)
		}
		b := []byte(tc.in)
		allocs := testing.AllocsPerRun(10, func() { copy(b, tc.in); _ = toLower(b) })
		if (allocs == 0) != tc.inPlace {
			t.Errorf("toLower(%q): %v allocations, in place = %v", tc.in, allocs, tc.inPlace)
		}
	}
}
