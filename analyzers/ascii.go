package analyzers

import (
	"github.com/blevesearch/bleve/v2/analysis"
	bunicode "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// ASCII character classes of Unicode's word-break rules (UAX #29) as the
// segment library behind Bleve's unicode tokenizer implements them.
const (
	asciiOther   = iota // never part of a word
	asciiLetter         // ALetter: A–Z, a–z
	asciiDigit          // Numeric: 0–9
	asciiJoin           // ExtendNumLet: '_'
	asciiMidLet         // MidLetter: ':'
	asciiMidNum         // MidNum: ',' ';'
	asciiMidBoth        // MidNumLet and Single_Quote: '.' '\''
)

var asciiClass = func() (c [128]uint8) {
	for b := 'A'; b <= 'Z'; b++ {
		c[b], c[b+'a'-'A'] = asciiLetter, asciiLetter
	}
	for b := '0'; b <= '9'; b++ {
		c[b] = asciiDigit
	}
	c['_'], c[':'], c[','], c[';'], c['.'], c['\''] = asciiJoin, asciiMidLet, asciiMidNum, asciiMidNum, asciiMidBoth, asciiMidBoth
	return c
}()

// isASCII reports whether every byte of b is below 0x80.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// asciiTokens is Bleve's unicode tokenizer for ASCII input, token for
// token (terms, offsets, positions and types). The segment library behind
// Bleve's decodes and classifies every byte through a general Unicode
// state machine; for ASCII the word-break rules come down to this:
// letters, digits and the underscore run together into a word (WB5,
// WB8–WB10, WB13a–b); a word also spans one colon, full stop or
// apostrophe between two letters (WB6–7), and one comma, semicolon, full
// stop or apostrophe between two digits (WB11–12); everything else
// separates words and is dropped. A word with a digit and no letter is
// Numeric, any other AlphaNumeric. FuzzASCIITokens holds it to Bleve's
// tokenizer.
func asciiTokens(input []byte) analysis.TokenStream {
	rv := make(analysis.TokenStream, 0, min(len(input)/8+1, 256))
	var ta []analysis.Token // tokens are allocated in chunks, as Bleve's tokenizer does
	pos := 1
	for i := 0; i < len(input); {
		c := asciiClass[input[i]]
		if c != asciiLetter && c != asciiDigit && c != asciiJoin {
			i++
			continue
		}
		start, letters, digits := i, false, false
		for i < len(input) {
			switch c = asciiClass[input[i]]; c {
			case asciiLetter:
				letters = true
			case asciiDigit:
				digits = true
			case asciiJoin:
			case asciiMidLet, asciiMidNum, asciiMidBoth:
				if i+1 < len(input) {
					prev, next := asciiClass[input[i-1]], asciiClass[input[i+1]]
					if prev == next && (prev == asciiLetter && c != asciiMidNum || prev == asciiDigit && c != asciiMidLet) {
						i += 2
						continue
					}
				}
				goto end
			default:
				goto end
			}
			i++
		}
	end:
		if len(ta) == 0 {
			ta = make([]analysis.Token, min(max(1, (len(input)-i)/8), 1000))
		}
		t := &ta[0]
		ta = ta[1:]
		t.Term, t.Start, t.End, t.Position, t.Type = input[start:i], start, i, pos, analysis.AlphaNumeric
		if digits && !letters {
			t.Type = analysis.Numeric
		}
		rv = append(rv, t)
		pos++
	}
	return rv
}

// Faster returns a, or, where a is a Bleve analyzer whose tokenizer is
// Bleve's unicode tokenizer (Bleve's standard analyzer, and most that an
// application's mapping defines), a copy of it that tokenizes ASCII text
// through asciiTokens: the same terms for every text, faster. Stages
// analyze a plain Bleve index's candidates with its own analyzers, most
// of them over ASCII text.
func Faster(a analysis.Analyzer) analysis.Analyzer {
	d, ok := a.(*analysis.DefaultAnalyzer)
	if !ok {
		return a
	}
	if _, ok := d.Tokenizer.(*bunicode.UnicodeTokenizer); !ok {
		return a
	}
	c := *d
	c.Tokenizer = asciiFirst{d.Tokenizer}
	return &c
}

// asciiFirst tokenizes ASCII text through asciiTokens, any other through
// the tokenizer it holds (Bleve's unicode tokenizer).
type asciiFirst struct{ analysis.Tokenizer }

func (t asciiFirst) Tokenize(input []byte) analysis.TokenStream {
	if isASCII(input) {
		return asciiTokens(input)
	}
	return t.Tokenizer.Tokenize(input)
}
