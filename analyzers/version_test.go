package analyzers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestIDs(t *testing.T) {
	if got, want := ID(), "semrank_en/1"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	if got, want := WordsID(), "semrank_en_words/1"; got != want {
		t.Errorf("WordsID() = %q, want %q", got, want)
	}
	if ID() == WordsID() {
		t.Error("the two analyzers share an identity")
	}
}

// pinTexts exercise every stage of the chains: tokenizer (and its repair of
// invalid UTF-8), possessives, lower-casing (and its repairs), stop words,
// stemming, numbers and scripts other than Latin.
var pinTexts = []string{
	"The bank's RATES are rising",
	"Which is a good bank in Doha?",
	"running runners ran; generously generalized relational conditional",
	"Visa rules for the Qatar visa, 2024-05-01: 3.5% fee (QAR 200)",
	"good bank \xff in Doha \xc3 caf\xe9",
	"İstanbul ẞtraße \u212Aelvin Ⱥlpha ΟΔΟΣ ΣΟΦΟΣ",
	"don't can't won't it's they're James' Jones's",
	"e-mail me@example.com or see https://example.com/a?b=c #tag @user",
	"日本語のテキスト 中文文本 한국어 텍스트 العربية",
	"and or but if then else when at by for with about against between into through",
}

// pinned maps each analyzer identity to a fingerprint of its tokens of
// pinTexts.
var pinned = map[string]string{
	"semrank_en/1":       "7d9ef0c4e286fcad",
	"semrank_en_words/1": "2609ee40741ee3d1",
}

// TestVersionsPinTokens fails when an analyzer's tokens change while its
// identity stays the same: models trained on the old tokens would then load
// without complaint and match terms they never saw. The fix is to bump
// Version and/or WordsVersion and add the new fingerprint here, never to
// edit an existing one.
func TestVersionsPinTokens(t *testing.T) {
	for _, a := range []struct {
		id     string
		tokens func(string) []string
	}{{ID(), Tokens}, {WordsID(), Words}} {
		h := sha256.New()
		for _, text := range pinTexts {
			h.Write([]byte(strings.Join(a.tokens(text), "\x00") + "\n"))
		}
		got := hex.EncodeToString(h.Sum(nil))[:16]
		want, ok := pinned[a.id]
		switch {
		case !ok:
			t.Errorf("no fingerprint pinned for %s: add %q", a.id, got)
		case got != want:
			t.Errorf("%s: tokens changed (fingerprint %s, pinned %s): bump the analyzer's version and pin the new fingerprint", a.id, got, want)
		}
	}
}
