// Package concept holds what the concept-vector models (models/lsa,
// models/s2net, models/dse) share: the term space their inputs live in
// (vocabulary, document frequencies, term weighting), sparse term vectors,
// dense concept vectors and their payload encoding, the training data they
// learn from (judged candidate lists and comparable text pairs), and the
// ranking evaluation used for early stopping.
//
// Choices the papers leave open, made here:
//
//   - Terms are analyzers.Tokens (the stemmed index terms), so a model sees
//     exactly what Bleve indexes. A saved space records the analyzer's
//     identity (analyzers.ID), and a model whose terms came from another
//     version of the analyzer is refused when loaded: it must be retrained.
//     Texts go through analyzers.CachedTokens: a recipe builds a space and
//     vectors from the same texts once per fold and stage, and a stage
//     vectorises the same candidates query after query, so analysis would
//     otherwise be repeated (about 9% of the CACM recipe's CPU).
//   - The vocabulary keeps terms with document frequency ≥ MinDF, drops terms
//     in more than MaxDFRatio of the documents, and keeps the MaxTerms most
//     frequent of the rest (ties broken alphabetically, so it is
//     deterministic).
//   - TF-IDF is tf·log(N/df) as in the S2Net paper's ad-relevance setup; a
//     term vector may be L2-normalised (DSE's "normalised TF-IDF").
//   - Concept vectors travel as payloads in little-endian float32: half the
//     bytes of float64 and far more precision than a cosine needs.
package concept
