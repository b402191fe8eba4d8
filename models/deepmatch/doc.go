// Package deepmatch implements DeepMatch (Lu and Li, "A Deep Architecture
// for Matching Short Texts", NIPS 2013) and the paper's two inner-product
// baselines, as scorers of (query, candidate) pairs.
//
// DeepMatch works directly on the interaction space of a pair. Topic models
// fitted at several resolutions on joint documents (package lda, separate
// vocabularies per side) give patches: each topic's high-probability words
// on each side, kept as roaring bitmaps. A layered DAG assigns each coarser
// patch to the finer patches it shares most words with. The network is
//
//	interaction space → p-layerI: K₁ low-rank bilinear decisions per finest
//	patch, f(x_pᵀ L_x L_yᵀ y_p + b) → one sparse layer per coarser
//	resolution, each neuron wired to the neurons of its DAG children →
//	dense committee layer → logistic output unit,
//
// with linear and sigmoid units mixed in every hidden layer, and overlap
// gating: the neurons of a patch output zero unless the query hits one of
// its X words and the candidate one of its Y words, so neither signal nor
// gradient passes through a patch the pair does not overlap. Training
// minimises max(0, m + s(x,y⁻) − s(x,y⁺)) with m = 0.1 over triples whose
// negatives are other candidates of the same query and random documents, in
// mini-batches of 50; back-propagation visits only the overlapped patches and
// the update touches only the parameter blocks it reached. Early stopping
// keeps the epoch with the best dev MAP.
//
// Baselines: Bilinear (xᵀP_xP_yᵀy, PLS/RMLS form) and Siamese (one MLP per
// side into a shared space, inner product), trained with the same loss.
//
// Choices where the paper is silent, and departures from it:
//   - Inputs are bag-of-words vectors over analyzer tokens (stemmed, stop
//     words dropped), weighted (1 + log tf)·idf and L2-normalised; each side
//     keeps words in at least MinDF texts of that side.
//   - Joint documents for the topic models are a query with all its
//     candidates (each distinct word once per text), not one document per
//     matched pair: every comment in a SemEval thread answers its question,
//     and negatives' words need patches too.
//   - Trimming keeps at most PatchWords words per side per topic, and only
//     words more probable under the topic than under a uniform distribution.
//   - The DAG takes, for each coarser patch, the MinChildren finer patches
//     sharing most words (ties kept), then gives every finer patch no one
//     took to the coarser patch it overlaps most. With more than two
//     resolutions there is one sparse patch layer per resolution (the paper
//     draws two: p-layerI and p-layerII).
//   - overlap((x,y),p) is used as a 0/1 indicator (the paper calls it one
//     but writes a product of counts).
//   - In each layer, even-numbered neurons are linear and odd-numbered ones
//     sigmoid.
//   - Optimiser: AdaGrad on mini-batches (the paper: stochastic
//     sub-gradient descent); the ℓ2 penalty is applied to touched blocks
//     only, as sparse SGD does.
//   - Optional meta tokens (Config.Meta): the candidate side gets a length
//     bucket and, for SemEval comments, "#asker" when the asker wrote it; the
//     query side gets "#q". They are ordinary words to the topic models and
//     networks; they let the models see the strongest non-lexical evidence
//     of answer quality.
//   - Bilinear is fitted with the margin loss and ℓ2 rather than PLS's
//     orthonormality constraint; the Siamese towers have one tanh hidden
//     layer each.
package deepmatch
