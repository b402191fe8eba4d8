// Package embed provides the word vectors behind Word Mover's Distance and
// the soft-seeded SSL graphs of Srivastava & Datt (2017): a skip-gram with
// negative sampling trainer (Mikolov et al., 2013), a count-based trainer
// (the truncated SVD of positive PMI, Levy, Goldberg & Dagan, 2015;
// Config.Method MethodPPMI, see ppmi.go), loaders for pre-trained
// word2vec (text and binary) and GloVe text files, and the vocabulary
// pruning the paper applies before embedding.
//
// The paper prunes "the 30 highest frequency words" and removes stop words,
// URLs and code tags. Tokenize implements the second half (URLs and
// <tags> are cut before analysis; stop words are dropped by the analyzer
// analyzers.Words, which lowercases but does not stem, because word vectors
// are looked up by surface form). Config.PruneTop (default 30) implements
// the first half: the most frequent words are left out of the trained
// vocabulary, so they get no vector and later drop out of every nBOW.
//
// Choices where the paper is silent, taken from the word2vec reference
// implementation: dimension 100, window 5 (shrunk uniformly at random per
// centre word), 5 negative samples from the unigram distribution raised to
// 0.75, sub-sampling of frequent words with t=1e-3 (Config.Sample; a
// negative value turns it off), learning rate 0.025
// decaying linearly to 0.0001·0.025, minimum count 2, 5 epochs, and the
// input vectors as the word vectors. The paper initialises from pre-trained
// word2vec and continues training on its corpus; Train starts from random
// vectors, and Config.Init lets a caller with pre-trained vectors start
// from them instead (words present in Init take its values and stay in the
// vocabulary below the minimum count; its dimension must match).
// scripts/wink_glove.py writes a public GloVe-derived set (341,479 words ×
// 100 dimensions) as a GloVe text file. Training is single-threaded and
// deterministic for a given Seed.
//
// Vectors are saved only through the models bundle format (method "embed").
package embed
