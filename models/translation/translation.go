// Package translation scores how well a candidate answers a question with a
// translation-based language model: the likelihood of the question's words
// given the candidate, where a candidate word may "translate" into a
// question word it never equals. The translation probabilities are learned
// with IBM Model 1 (Brown et al., 1993) from judged question–answer pairs,
// as in the translation-based language model of Xue, Jeon and Croft,
// "Retrieval models for question and answer archives" (SIGIR 2008).
//
// Why here: in community question answering a good answer often shares few
// words with its question ("how much is a flat in Doha?" — "about 7000 QR
// for a 2BR"), and bag-of-words overlap cannot tell it from chat that
// repeats the question's words. The translation table learns which answer
// words follow which question words ("much" → "qr", "visa" → "sponsor")
// from the pairs a forum's judges marked good.
//
// The score of a question Q for a candidate C is the mean over Q's tokens w
// of
//
//	log( (1−λ)·(β·Σ_t T(w|t)·P(t|C) + (1−β)·P(w|C)) + λ·P(w|collection) )
//
// where P(·|C) is the maximum-likelihood unigram model of C, T the learned
// table, β the weight of translation against plain word match and λ the
// Jelinek–Mercer smoothing weight. Words are the semrank analyzer's tokens
// (stemmed, stop words removed), recorded in the model so that a model is
// never used with other tokens.
package translation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/semrank/semrank/analyzers"
)

// Method is the model-bundle method name; Version the tensor layout.
const (
	Method  = "translation"
	Version = 1
)

// Config controls training and scoring.
type Config struct {
	Iterations int     `json:"iterations"` // EM iterations of IBM Model 1 (default 10)
	MinCount   int     `json:"min_count"`  // minimum collection frequency of a word (default 2)
	Prune      float64 `json:"prune"`      // drop translation probabilities below this (default 1e-3)
	Lambda     float64 `json:"lambda"`     // weight of the collection model, in (0, 1) (default 0.2)
	Beta       float64 `json:"beta"`       // weight of translation against word match, in [0, 1] (default 0.5)
}

// DefaultConfig returns the defaults: λ = 0.2 and β = 0.5, an even mix of
// translation and word match. On SemEval-2016 subtask A, β = 0.2 and 0.8
// moved the stage's cross-validated MAP by 0.002 and the fused pipeline's
// by less than 0.001 (docs/RESULTS.md, ablations a20–a22); λ was not varied.
func DefaultConfig() Config {
	return Config{Iterations: 10, MinCount: 2, Prune: 1e-3, Lambda: 0.2, Beta: 0.5}
}

// check reports the first setting out of range.
func (c Config) check() error {
	switch {
	case c.Iterations < 1:
		return fmt.Errorf("translation: iterations %d, want ≥ 1", c.Iterations)
	case c.MinCount < 1:
		return fmt.Errorf("translation: min_count %d, want ≥ 1", c.MinCount)
	case !(c.Prune >= 0 && c.Prune < 1):
		return fmt.Errorf("translation: prune %v, want in [0, 1)", c.Prune)
	case !(c.Lambda > 0 && c.Lambda < 1):
		return fmt.Errorf("translation: lambda %v, want in (0, 1)", c.Lambda)
	case !(c.Beta >= 0 && c.Beta <= 1):
		return fmt.Errorf("translation: beta %v, want in [0, 1]", c.Beta)
	}
	return nil
}

// Pair is one training example: a question and a good answer to it.
type Pair struct {
	Question, Answer string
}

// Model is a trained translation table with its collection model.
type Model struct {
	Config Config
	// Vocab lists the words, sorted; a word's index is its position.
	Vocab []string
	// Background holds P(w|collection) for each Vocab word, then, last,
	// the probability given to a word outside Vocab.
	Background []float64
	// Rows holds, for each source (answer) word, the question words it
	// translates into, sorted by word index, with their probabilities.
	Rows []Row
	// Analyzer identifies the tokens the model was trained on.
	Analyzer string

	index map[string]int32
}

// Row is one source word's translations: T(Targets[i] | source) = P[i].
type Row struct {
	Targets []int32
	P       []float64
}

// lookup returns T(w|row's source), 0 when absent.
func (r Row) lookup(w int32) float64 {
	i, ok := slices.BinarySearch(r.Targets, w)
	if !ok {
		return 0
	}
	return r.P[i]
}

// Train learns the translation table from pairs with EM and the collection
// model from collection, the texts of the collection the pairs come from
// (questions and answers alike, each text once; when it is empty, the
// pairs' own texts stand in for it). Words seen fewer than cfg.MinCount
// times in the collection are dropped. It is deterministic: the same input
// gives the same model, bit for bit.
func Train(ctx context.Context, pairs []Pair, collection []string, cfg Config) (*Model, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if len(pairs) == 0 {
		return nil, errors.New("translation: no question–answer pairs to train on")
	}
	qs, as, counts, total := tokenize(pairs, collection)
	m, err := newModel(cfg, counts, total)
	if err != nil {
		return nil, err
	}
	bags := m.pairBags(qs, as)
	if len(bags) == 0 {
		return nil, errors.New("translation: no pair has vocabulary words on both sides")
	}
	rows, err := em(ctx, bags, len(m.Vocab), cfg.Iterations)
	if err != nil {
		return nil, err
	}
	m.Rows = prune(rows[:len(m.Vocab)], cfg.Prune) // the NULL word's row only absorbs mass
	return m, nil
}

// tokenize returns the pairs' question and answer tokens, and the word
// counts and token total of collection, or, when it is empty, of the
// pairs' texts.
func tokenize(pairs []Pair, collection []string) (qs, as [][]string, counts map[string]int, total int) {
	counts = map[string]int{}
	add := func(toks []string) {
		for _, t := range toks {
			counts[t]++
		}
		total += len(toks)
	}
	qs = make([][]string, len(pairs))
	as = make([][]string, len(pairs))
	for i, p := range pairs {
		qs[i] = analyzers.CachedTokens(p.Question) // a question repeats once per good answer
		as[i] = analyzers.CachedTokens(p.Answer)
		if len(collection) == 0 {
			add(qs[i])
			add(as[i])
		}
	}
	for _, text := range collection {
		add(analyzers.CachedTokens(text))
	}
	return qs, as, counts, total
}

// newModel returns a model, without its table, whose vocabulary is the
// words counted cfg.MinCount times or more and whose collection model is
// their counts over total.
func newModel(cfg Config, counts map[string]int, total int) (*Model, error) {
	m := &Model{Config: cfg, Analyzer: analyzers.ID()}
	for w, n := range counts {
		if n >= cfg.MinCount {
			m.Vocab = append(m.Vocab, w)
		}
	}
	if len(m.Vocab) == 0 {
		return nil, fmt.Errorf("translation: no word occurs %d times or more", cfg.MinCount)
	}
	sort.Strings(m.Vocab)
	m.buildIndex()
	m.Background = make([]float64, len(m.Vocab)+1)
	for i, w := range m.Vocab {
		m.Background[i] = float64(counts[w]) / float64(total)
	}
	// A word outside the vocabulary counts as half an occurrence: less
	// likely than any word kept, never impossible.
	m.Background[len(m.Vocab)] = 0.5 / float64(total)
	if err := m.checkFloor(); err != nil {
		return nil, err
	}
	return m, nil
}

// bag is a text's vocabulary words, distinct and sorted, with counts.
type bag struct {
	ids []int32
	n   []float64
}

type pairBag struct{ q, a bag }

// bag returns the vocabulary words of toks with their counts.
func (m *Model) bag(toks []string) bag {
	c := map[int32]float64{}
	for _, t := range toks {
		if i, ok := m.index[t]; ok {
			c[i]++
		}
	}
	var b bag
	for i := range c {
		b.ids = append(b.ids, i)
	}
	slices.Sort(b.ids)
	for _, i := range b.ids {
		b.n = append(b.n, c[i])
	}
	return b
}

// pairBags returns the vocabulary words of each pair's question qs[i] and
// answer as[i], leaving out the pairs without any on a side.
func (m *Model) pairBags(qs, as [][]string) []pairBag {
	bags := make([]pairBag, 0, len(qs))
	for i := range qs {
		b := pairBag{q: m.bag(qs[i]), a: m.bag(as[i])}
		if len(b.q.ids) > 0 && len(b.a.ids) > 0 {
			bags = append(bags, b)
		}
	}
	return bags
}

// em runs IBM Model 1's EM over bags: source words are the answers' words
// plus a NULL word (index v, in every answer once), targets the
// questions' words. Every table entry starts equal, so the first E-step
// aligns a question word to each answer word in proportion to its count.
// Entries exist only for co-occurring pairs; each row is sorted by target,
// and the sums run in a fixed order, so the result is deterministic.
func em(ctx context.Context, bags []pairBag, v, iterations int) ([]Row, error) {
	rows := startingRows(bags, v)
	links := linkBags(bags, rows, int32(v))
	acc := make([][]float64, len(rows))
	for s, r := range rows {
		acc[s] = make([]float64, len(r.Targets))
	}
	for range iterations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for s := range acc {
			clear(acc[s])
		}
		for i, b := range bags {
			expect(b, links[i], rows, acc)
		}
		maximize(rows, acc)
	}
	// Cancelled during the last iteration: the caller must not save a
	// table it asked to stop.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// sources returns b's source words: its answer's words, then NULL.
func sources(b pairBag, null int32) []int32 {
	return append(slices.Clone(b.a.ids), null)
}

// startingRows returns the table EM starts from: a row for each source
// word, the v vocabulary words and NULL, holding every question word it
// meets in bags, sorted, each with the same value.
func startingRows(bags []pairBag, v int) []Row {
	targets := make([]map[int32]bool, v+1)
	for _, b := range bags {
		for _, s := range sources(b, int32(v)) {
			if targets[s] == nil {
				targets[s] = map[int32]bool{}
			}
			for _, w := range b.q.ids {
				targets[s][w] = true
			}
		}
	}
	rows := make([]Row, v+1)
	for s, set := range targets {
		for w := range set {
			rows[s].Targets = append(rows[s].Targets, w)
		}
		slices.Sort(rows[s].Targets)
		rows[s].P = make([]float64, len(rows[s].Targets))
		for i := range rows[s].P {
			rows[s].P[i] = 1
		}
	}
	return rows
}

// link is one source word of a pair (an answer word or NULL) with the
// position of each of the pair's question words in the word's row: found
// once, used every iteration. Links take 4 bytes per (question word,
// answer word) of each pair.
type link struct {
	row  int32
	n    float64 // the source word's count in the answer
	cols []int32 // the position of each question word in the row
}

// linkBags returns the links of each bag's answer words and NULL.
func linkBags(bags []pairBag, rows []Row, null int32) [][]link {
	links := make([][]link, len(bags))
	for i, b := range bags {
		for k, s := range sources(b, null) {
			n := 1.0
			if k < len(b.a.ids) {
				n = b.a.n[k]
			}
			l := link{row: s, n: n, cols: make([]int32, len(b.q.ids))}
			for j, w := range b.q.ids {
				c, _ := slices.BinarySearch(rows[s].Targets, w)
				l.cols[j] = int32(c)
			}
			links[i] = append(links[i], l)
		}
	}
	return links
}

// expect is the E-step for one pair b with links: it adds to acc the
// expected number of times each of b's question words is aligned to each
// of its source words, under the table rows.
func expect(b pairBag, links []link, rows []Row, acc [][]float64) {
	for j := range b.q.ids {
		var z float64
		for _, l := range links {
			z += l.n * rows[l.row].P[l.cols[j]]
		}
		if z == 0 {
			continue
		}
		f := b.q.n[j] / z
		for _, l := range links {
			acc[l.row][l.cols[j]] += f * l.n * rows[l.row].P[l.cols[j]]
		}
	}
}

// maximize is the M-step: each row becomes its expected counts acc
// normalized, or zeros when it has none.
func maximize(rows []Row, acc [][]float64) {
	for s := range rows {
		var sum float64
		for _, c := range acc[s] {
			sum += c
		}
		for k, c := range acc[s] {
			if sum > 0 {
				rows[s].P[k] = c / sum
			} else {
				rows[s].P[k] = 0
			}
		}
	}
}

// prune drops the entries below min from each row.
func prune(rows []Row, min float64) []Row {
	out := make([]Row, len(rows))
	for s, r := range rows {
		for k, p := range r.P {
			if p >= min && p > 0 {
				out[s].Targets = append(out[s].Targets, r.Targets[k])
				out[s].P = append(out[s].P, p)
			}
		}
	}
	return out
}

// checkFloor reports a collection probability whose share λ·P(w|C), the
// least a question word's likelihood can be, is not positive: the word
// would score −∞ for every candidate without it.
func (m *Model) checkFloor() error {
	for i, p := range m.Background {
		if !(m.Config.Lambda*p > 0) {
			return fmt.Errorf("translation: background probability %d is %v, which with lambda %v leaves a question word no likelihood", i, p, m.Config.Lambda)
		}
	}
	return nil
}

func (m *Model) buildIndex() {
	m.index = make(map[string]int32, len(m.Vocab))
	for i, w := range m.Vocab {
		m.index[w] = int32(i)
	}
}

// Score returns the mean log-likelihood of question's words under each
// candidate's translation language model (see the package comment). A
// question without words scores 0 for every candidate.
func (m *Model) Score(question string, candidates []string) []float64 {
	q := analyzers.Tokens(question)
	out := make([]float64, len(candidates))
	if len(q) == 0 {
		return out
	}
	qids := make([]int32, len(q))
	for i, w := range q {
		id, ok := m.index[w]
		if !ok {
			id = -1
		}
		qids[i] = id
	}
	tr := make([]float64, len(q))
	for ci, text := range candidates {
		out[ci] = m.score(q, qids, analyzers.CachedTokens(text), tr)
	}
	return out
}

// score returns the mean log-likelihood of the question's tokens q, of
// vocabulary words qids (-1 outside it), under the model of a candidate
// of tokens toks; tr, of len(q), is room for the translation sums.
func (m *Model) score(q []string, qids []int32, toks []string, tr []float64) float64 {
	counts, distinct := tally(toks)
	m.translate(qids, counts, distinct, len(toks), tr)
	c := m.Config
	var sum float64
	for i, w := range q {
		var ml float64
		if len(toks) > 0 {
			ml = float64(counts[w]) / float64(len(toks))
		}
		bg := m.Background[len(m.Vocab)]
		if qids[i] >= 0 {
			bg = m.Background[qids[i]]
		}
		sum += math.Log((1-c.Lambda)*(c.Beta*tr[i]+(1-c.Beta)*ml) + c.Lambda*bg)
	}
	return sum / float64(len(q))
}

// tally returns the count of each of toks and the distinct tokens in order
// of first appearance: the sums over them run in a fixed order, so a
// candidate scores the same every time.
func tally(toks []string) (map[string]int, []string) {
	counts := make(map[string]int, len(toks))
	var distinct []string
	for _, t := range toks {
		if counts[t] == 0 {
			distinct = append(distinct, t)
		}
		counts[t]++
	}
	return counts, distinct
}

// translate sets tr[i] to Σ_t T(qids[i]|t)·P(t|C) over a candidate's
// distinct tokens t, with counts of n tokens in all; to 0 when β = 0,
// which leaves the table unused.
func (m *Model) translate(qids []int32, counts map[string]int, distinct []string, n int, tr []float64) {
	clear(tr)
	if n == 0 || m.Config.Beta == 0 {
		return
	}
	nf := float64(n)
	for _, t := range distinct {
		s, ok := m.index[t]
		if !ok {
			continue
		}
		row, c := m.Rows[s], float64(counts[t])
		for i, w := range qids {
			if w >= 0 {
				tr[i] += row.lookup(w) * c / nf
			}
		}
	}
}
