package analyzers

import "strconv"

// A learned model's vocabulary holds the terms an analyzer produced when it
// was trained. If a later release analyzes text differently (another
// lower-casing, stop list or stemmer), the model still loads but looks up
// terms it never saw, and results get silently worse. So each analyzer's
// behaviour has a version, models record the identity (ID, WordsID) of the
// analyzer their vocabulary came from, and a model recording another
// identity is refused with a "retrain" error (models.Bundle.CheckAnalyzer).
//
// TestVersionsPinTokens fails when the tokens of either analyzer change
// without its version changing.

// Version is the version of the behaviour of the stemmed analyzer (Name,
// used by Tokens, CachedTokens and Terms). Bump it whenever the tokens it
// produces for some input change.
const Version = 1

// WordsVersion is the version of the behaviour of the unstemmed analyzer
// (WordsName, used by Words). A change to what both analyzers share (the
// tokenizer, possessive removal, lower-casing, the stop list) bumps both
// versions; a stemmer change bumps only Version.
const WordsVersion = 1

// ID identifies the stemmed analyzer's behaviour, e.g. "semrank_en/1": what a
// model whose vocabulary holds Tokens or Terms records.
func ID() string { return identity(Name, Version) }

// WordsID identifies the unstemmed analyzer's behaviour, e.g.
// "semrank_en_words/1": what a model whose vocabulary holds Words records.
func WordsID() string { return identity(WordsName, WordsVersion) }

func identity(name string, version int) string {
	return name + "/" + strconv.Itoa(version)
}
