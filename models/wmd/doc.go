// Package wmd implements Word Mover's Distance (Kusner et al., 2015) as
// used by the soft-seeded SSL graphs of Srivastava & Datt (2017): documents
// as normalised bags of words (nBOW) over a word-vector vocabulary, the
// Word Centroid Distance (WCD) and Relaxed WMD (RWMD) lower bounds, exact
// WMD as a transportation problem solved by this package's own exact
// min-cost-flow solver (Solver), and k-nearest-neighbour search by
// prefetch and prune.
//
// Choices where the papers are silent:
//   - Word-to-word cost is the Euclidean distance between word vectors, as
//     in both papers; a word pair with the same vocabulary id costs exactly 0.
//   - A document's words are embed.Tokenize's words that have a vector;
//     the rest (stop words, the pruned most-frequent words, unknown words)
//     are dropped before the counts are normalised. A document left with no
//     word is empty: its distance to anything is +Inf.
//   - The solver is the transportation simplex (least-cost start, block
//     search pricing, spanning-tree basis), with successive shortest paths
//     in primal-dual form as the fallback should degenerate pivots exhaust
//     its budget (see Solver). Both are exact up to floating-point rounding;
//     tests check them against a general LP (gonum), each other, and POT's
//     ot.emd2 to 1e-9. On real SemEval pairs the simplex is about 2.8×
//     faster than the shortest-path solver (docs/RESULTS.md).
//   - KNN is exact: documents are sorted by WCD and the k nearest solved,
//     which gives a k-th distance; every document whose WCD does not
//     exceed it gets its RWMD and, unless that rules it out, the tighter
//     Iterative Constrained Transfers bound (Atasu & Mittelholzer, 2019;
//     RWMD ≤ ICT ≤ WMD), and these are solved in increasing ICT until the
//     bound passes the current k-th distance. Kusner et al. solve in WCD
//     order with RWMD pruning only; on these short, noisy-vector texts RWMD
//     alone let about 17% of a 1,000-document collection through to the
//     solver. Options.Prefetch caps how many
//     WCD-nearest documents are considered at all (Kusner's m; the SSG
//     paper uses 10·k), which makes the search approximate. Ties are broken
//     by document index, so the pruned and exhaustive searches return the
//     same neighbours.
package wmd
