// Package tweak implements TWEAK (Yih, 2009, "Learning Term-weighting
// Functions for Similarity Measures"): the weight of a term in a text is a
// learned function of features of the term and the text, and two texts are
// compared by the cosine of their weight vectors. Only the features'
// weights are learned (nine numbers), not one weight per word, so the model
// generalises to words never seen in training.
//
// Features (φ, FeatureNames order) are the paper's plain-text set (Sec.
// 4.1.2) plus its HTML title feature (Sec. 4.2.2): bias, log(tf+1),
// log(df+1), capitalised (any occurrence starts with an upper-case letter,
// read from analyzers.Analysis), log(loc+1) and loc/len (loc = position of the
// first occurrence), log(len+1), in-title, and log(qf+1) when a query log
// is used.
//
// Training (Train) minimises one of the paper's losses — sum of squares
// (Eq. 4), log loss (Eq. 5) or the pairwise preference loss (Eq. 6) — plus
// α/2·‖w‖², with L-BFGS from gonum/optimize. SelectAlpha picks α from the
// paper's grid by dev map@10.
//
// Choices where the paper is silent, or where our data differs:
//
//   - Non-negative term weights. The paper's footnote 2 asks for
//     non-negative term-weighting scores but not how. We reparametrise the
//     score: weight = softplus(w·φ) = log(1+e^{w·φ}), which is the linear
//     score wherever it is clearly positive, is smooth (L-BFGS needs a
//     smooth objective; clipping at 0 makes dead terms and stalls line
//     searches), and never zero, so every text has a non-zero vector and
//     cosines lie in [0, 1]. Constraining the parameters w ≥ 0 instead
//     would forbid the negative log(df+1) weight that IDF needs.
//   - Initialisation: w = (bias 1, log(tf+1) 1, rest 0), a damped term
//     frequency, positive everywhere (the paper asks for initial parameters
//     that keep the log loss defined).
//   - Labels: the metric losses use y = 1 for a candidate graded relevant
//     (grade > 0: SemEval's Relevant and PerfectMatch), else 0, as the paper
//     binarises its four grades. Preference pairs are every two judged
//     candidates of one query with different grades (PerfectMatch above
//     Relevant above Irrelevant); the paper notes the preference setting
//     can use degrees of relevance. Unjudged candidates are not used:
//     to count them not relevant, as the recipe's trainer and semrank
//     train tweak do, give NewSet dataset.Dataset.WithUnjudgedNotRelevant.
//   - Log loss: cosines are clamped to [1e-6, 1−1e-6]; a pair sharing no
//     term has cosine 0 whatever the weights, so it only adds a constant.
//   - Pairs: a query and one of its candidates. Queries and documents are
//     weighted by the same function, as in the paper's query/suggestion
//     task. A query's title is its first line (SplitQuery), so the title
//     feature means the same for a SemEval question (subject, then body)
//     and for a rerank query, which arrives as one string.
//   - loc and len: token positions from the analyzer, which keeps the
//     positions of removed stop words; len is the position of the last
//     index term. Title and body are one text, title first.
//   - Document frequencies are frozen into the model (DFTable), taken from
//     the DocFreqs source it was trained with (an index, or a count over a
//     corpus). A document's weights are then the same whether computed at
//     index time (the payload) or from its text at rerank time, on any index.
//     Terms the table lacks get df 0.
//   - Query log: the training queries, counted as documents (qf = number of
//     training queries holding the term). A training query is featurized
//     with itself left out of the log, since unseen queries are not in it.
//   - Convergence: at most 200 L-BFGS iterations, or until the loss changes
//     by less than 1e-9 over 20 iterations.
//   - TF-IDF baseline: the paper's Eq. 2, tf·log(N/df), with the same terms
//     and df table; an unknown term gets df 1.
package tweak
