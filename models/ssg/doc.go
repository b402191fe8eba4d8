// Package ssg implements the soft-seeded SSL graphs of Srivastava & Datt
// (2017), "Soft Seeded SSL Graphs for Unsupervised Semantic
// Similarity-based Retrieval": for each query, a query-induced subgraph of
// documents joined by Word Mover's Distance edges, feature nodes for shared
// words, n-grams and skip-grams, soft seeds from a thresholded-SVD topic
// model (package topics), and label propagation whose final label is the
// rerank score. SSG-WD propagates without dropout, SSG-D with dropout on
// the seed edges.
//
// Graph (§3.1): the k documents nearest the query by WMD (WCD-prefiltered
// k-NN, package wmd), then the k nearest of each of those (2 hops), joined
// pairwise (a complete graph; edges longer than Config.MaxDist, when set,
// are dropped). Neighbours come from the pool — the candidate list handed
// to the reranker — and, when SetCollection was called, from a collection
// of context documents too (the paper draws them from the whole question
// set); with a collection every pool document is a node. A candidate the
// subgraph does not reach gets a score below every node of the graph,
// ordered by its WMD to the query.
//
// The paper weighs the edges by exact WMD (Config.Edges = EdgesWMD). By
// default (EdgesWCD) they are weighed by WCD, the lower bound Kusner et
// al. prefetch with: on a 100-candidate window of CACM the graph's
// pairwise transport problems were half of the stage's time, and WCD
// edges change no ranking significantly on CACM or SemEval B
// (docs/RESULTS.md). The neighbours, which decide which candidates the
// graph scores, stay exact: choosing the 2-hop neighbours by lower bounds
// instead did lower the unsupervised CACM recipe's MAP.
//
// Feature nodes (§3.2): every unigram, contiguous bigram and trigram, and
// skip-gram (two words one apart; three words with one gap) of
// embed.Tokenize's words that at least two graph nodes share. Its edge
// weight is its IDF; the paper does not say how n-gram IDF is computed, so
// an n-gram's IDF is the sum of its words' IDFs over the topic model's
// collection (the independence estimate of log N/df(ab)).
//
// Soft seeds (§3.3): the query is a hard seed with label 1. Nodes in the
// query's topic cluster are 1-seed candidates; the Seeds with the highest
// cosine between catchword-topic vectors are 1-seeds with that cosine as
// initial label. The topic l' whose word distribution is farthest from
// the query's topic l gives the 0-seeds: among the nodes clustered in l',
// the Seeds with the lowest topic differential score. The paper cites
// Bairi et al. (2016) for that score without defining it; here it is the
// node's share of topic l in its catchword vector divided by the query's
// share, clipped to [0,1] (0: nothing of the query's topic). A seed's
// strength is s_i = max(C_i, 1−C_i).
//
// Propagation (§3.4): each node minimises
//
//	p̂·s_i(Ĉ_i−C_i)² + μpp(Ĉ_i−U)² + μnp(Σ_F w_ij(Ĉ_i−Ĉ_j)² − Σ_R d_ik(Ĉ_i−Ĉ_k)²)
//
// with U = 0.5: feature edges (similarities) pull labels together and WMD
// edges (distances) are subtracted, pushing distant nodes apart. Jacobi
// updates solve each node's quadratic given the others' previous labels,
// over the box [0,1], until the largest change is below Config.Tol. The
// paper leaves the edge scales open; with raw distances the subtracted
// term makes the quadratic concave and labels jump to 0 or 1. Here each
// node's feature weights and distance weights are each normalised to sum
// to 1 and μnp < μpp, so every node's quadratic stays convex.
//
// Convex nodes do not make the paper's plain ("vanilla") Jacobi converge:
// a node's neighbours weigh 2μnp/μpp = 1.8 times its own terms (up to 9
// for a node without feature edges), and on SemEval B dev half the
// queries' labels swung in a two-cycle until Config.MaxIter, so scores
// depended on whether MaxIter was odd or even. Each label therefore moves
// by Config.Damping (ω, default ½) of the way to its Jacobi update:
// damped Jacobi has the same fixed points, and converged on every
// SemEval B query (docs/RESULTS.md); ω = 1 is the paper's update. Dropout
// (SSG-D): in every iteration each soft seed's edge to its seed label is
// dropped with probability Config.Dropout (p̂ = 0); since the labels then
// never settle exactly, SSG-D runs Config.MaxIter iterations and reports
// each label's mean over the iterations after the first 10 (averaging over
// dropout masks, as dropout does at test time).
package ssg
