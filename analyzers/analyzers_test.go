package analyzers

import (
	"reflect"
	"testing"
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
		{"visa", 1, true}, {"rule", 2, false}, {"qatar", 5, true}, {"visa", 6, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %+v, want %+v", got, want)
	}
}
