package quality

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/semrank/semrank/models/internal/modeltest"
)

// tokenTexts exercise every rule of Tokens: links, addresses, mentions,
// smileys, numbers, apostrophes, "?" and "!" runs, case and other scripts.
var tokenTexts = []string{
	"Try the Doha bank, see www.example.com or https://x.org/a?b=c",
	"mail me@example.com or @sam :-) ;) :P",
	"it's 3,500 QAR (3.5k) for 2 BR?? really!!! ok",
	"'quoted' words'' and don't İstanbul ẞtraße",
	"日本語 العربية \x00 nul and \xff bad bytes",
}

// pinnedTokens maps TokensID to a fingerprint of Tokens and of the
// features (bigrams and character n-grams) built from them on tokenTexts.
var pinnedTokens = map[string]string{
	"quality_tokens/1": "7fd2fb2c50a5e974",
}

// TestTokensVersionPinsTokens fails when the tokens or features change
// while TokensVersion stays the same: models trained before would load and
// miss their features. The fix is to bump TokensVersion and add the new
// fingerprint here, never to edit an existing one.
func TestTokensVersionPinsTokens(t *testing.T) {
	h := sha256.New()
	for _, text := range tokenTexts {
		h.Write([]byte(strings.Join(Tokens(text), "\x00") + "\n"))
		h.Write([]byte(strings.Join(Features(text, true, true), "\x00") + "\n"))
	}
	got := hex.EncodeToString(h.Sum(nil))[:16]
	want, ok := pinnedTokens[TokensID()]
	if !ok || got != want {
		t.Fatalf("Tokens/Features of %s fingerprint %s, pinned %q: if the change is meant, bump TokensVersion and pin the new fingerprint", TokensID(), got, want)
	}
}

// TestRecordsTokenizer: a model whose features came from another version
// of Tokens is refused; one saved before versions were recorded loads.
func TestRecordsTokenizer(t *testing.T) {
	m, err := Train(t.Context(), chatAndAnswers(20), Config{Bigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	modeltest.Analyzer(t, m, TokensID(), Load, (*Model).Save)
}
