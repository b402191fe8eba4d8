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
//   - Word distances are computed many at a time: one vector against a
//     list stored transposed, by an FMA kernel on amd64 where the processor
//     has FMA (two partial sums per distance; within a few ulps of a plain
//     loop), an AVX kernel where it has only AVX, else dist4 (both bit for
//     bit a plain loop's). Every path computes a distance the same way
//     whichever side it is on, so Space.Costs, Space.WordDistance, Index
//     searches and WCD agree bit for bit. A search computes each (query word, index word) distance at
//     most once.
//   - The solver is the transportation simplex (least-cost start, Dantzig
//     pricing by rows with a candidate list, spanning-tree basis kept in
//     preorder with incremental re-hanging), with successive shortest paths in
//     primal-dual form as the fallback should degenerate pivots exhaust its
//     budget (see Solver). Both are exact up to floating-point rounding;
//     tests check them against a general LP (gonum), each other, and POT's
//     ot.emd2 to 1e-9. Solver.SolveCutoff may stop early once a dual
//     feasible solution built from the simplex's potentials proves the
//     optimum above a cutoff; otherwise it returns exactly Solve's value.
//   - KNN is exact, by best-first search over lower bounds: WCD for every
//     document, then, for the document of smallest bound while it does not
//     exceed the current k-th distance, a dual bound from two passes over
//     its cost matrix (dualBound: at least RWMD, and on SemEval pairs
//     tighter than the Iterative Constrained Transfers bound of Atasu &
//     Mittelholzer, 2019, which lets about 2.5 times as many documents
//     through), and then the solver with the k-th distance as cutoff,
//     unless the same dual bound seeded with the nearest neighbour's
//     optimal query potentials already rules the document out.
//     Kusner et al. solve in WCD order with RWMD pruning only; on these
//     short, noisy-vector texts RWMD alone let about 17% of a
//     1,000-document collection through to the solver. Options.Prefetch
//     caps how many WCD-nearest documents are considered at all (Kusner's
//     m; the SSG paper uses 10·k), which makes the search approximate. Ties
//     are broken by document index, and both searches use the same cost
//     matrices and solver, so the pruned and exhaustive searches return the
//     same neighbours and distances.
//   - Searches from an index's own documents may share a Pairs: each pair
//     of documents is then solved once, with the lower-numbered one's
//     words as rows, and the other search reads it (WMD is symmetric; the
//     two orientations differ in the last bits only).
//   - Index.Distances solves a query's exact distances to many documents
//     together: each word distance once, the transport problems on every
//     core, each result bit for bit Space.WMD's.
package wmd
