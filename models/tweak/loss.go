package tweak

import (
	"fmt"
	"math"
	"strings"
)

// Loss names a training objective.
type Loss string

// The paper's three losses (Sec. 3).
const (
	// LossSSE is the sum-of-squares error ½Σ(y − cos)² (Eq. 4).
	LossSSE Loss = "sse"
	// LossLog is the log loss −Σ y log cos + (1−y) log(1−cos) (Eq. 5).
	LossLog Loss = "log"
	// LossPreference is the pairwise loss Σ log(1 + exp(−Δ)) over pairs of
	// candidates of one query, Δ the cosine of the preferred one minus the
	// other's (Eq. 6).
	LossPreference Loss = "preference"
)

// Losses lists every loss.
var Losses = []Loss{LossSSE, LossLog, LossPreference}

// ParseLoss checks a loss name.
func ParseLoss(s string) (Loss, error) {
	for _, l := range Losses {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("tweak: unknown loss %q (known: sse, log, preference)", s)
}

// logEps keeps the log loss finite: cosines are clamped to [logEps, 1−logEps]
// (a pair without shared terms has cosine 0 whatever the weights).
const logEps = 1e-6

// forward holds every text's term weights under one parameter vector.
type forwardPass struct {
	s, sig [][]float64 // softplus(z) and its derivative, per text and term
	norm   []float64
}

func (set *Set) forward(w []float64) forwardPass {
	n := len(set.rows) / NumFeatures
	rs, rsig := make([]float64, n), make([]float64, n)
	for r := range n {
		z := dot(w, set.rows[r*NumFeatures:(r+1)*NumFeatures])
		rs[r], rsig[r] = softplus(z), sigmoid(z)
	}
	fw := forwardPass{s: make([][]float64, len(set.texts)), sig: make([][]float64, len(set.texts)), norm: make([]float64, len(set.texts))}
	for i, t := range set.texts {
		s, sig := make([]float64, len(t.row)), make([]float64, len(t.row))
		var sq float64
		for j, r := range t.row {
			s[j], sig[j] = rs[r], rsig[r]
			sq += s[j] * s[j]
		}
		fw.s[i], fw.sig[i], fw.norm[i] = s, sig, math.Sqrt(sq)
	}
	return fw
}

// merge calls fn for every term the two texts share, with its positions.
func merge(a, b setText, fn func(i, j int)) {
	at, bt := a.raw.Terms, b.raw.Terms
	shared(len(at), len(bt), func(i, j int) int { return strings.Compare(at[i].Term, bt[j].Term) }, fn)
}

// eachShared calls fn for every term p's query and candidate share, with
// its positions, in term order (as merge does; see pair.shared).
func (p pair) eachShared(fn func(i, j int)) {
	for k := 0; k < len(p.shared); k += 2 {
		fn(int(p.shared[k]), int(p.shared[k+1]))
	}
}

func (fw forwardPass) cosine(set *Set, p pair) float64 {
	n := fw.norm[p.q] * fw.norm[p.d]
	if n == 0 {
		return 0
	}
	sq, sd := fw.s[p.q], fw.s[p.d]
	var d float64
	p.eachShared(func(i, j int) { d += sq[i] * sd[j] })
	return d / n
}

// label is the metric-learning target of a judged pair: 1 when relevant.
func label(p pair) float64 {
	if p.grade > 0 {
		return 1
	}
	return 0
}

// objective returns the regularised loss at w and, when grad is non-nil,
// stores its gradient there.
func (set *Set) objective(w, grad []float64, loss Loss, alpha float64) float64 {
	fw := set.forward(w)
	f := make([]float64, len(set.pairs))
	for i, p := range set.pairs {
		if p.judged {
			f[i] = fw.cosine(set, p)
		}
	}
	gf := make([]float64, len(set.pairs)) // dL/df per pair
	var L float64
	switch loss {
	case LossSSE:
		for i, p := range set.pairs {
			if p.judged {
				r := label(p) - f[i]
				L += 0.5 * r * r
				gf[i] = -r
			}
		}
	case LossLog:
		for i, p := range set.pairs {
			if !p.judged {
				continue
			}
			y, c := label(p), math.Min(math.Max(f[i], logEps), 1-logEps)
			L -= y*math.Log(c) + (1-y)*math.Log(1-c)
			if c == f[i] {
				gf[i] = (c - y) / (c * (1 - c))
			}
		}
	case LossPreference:
		for _, ab := range set.prefs {
			delta := f[ab[0]] - f[ab[1]]
			L += softplus(-delta)
			g := -sigmoid(-delta)
			gf[ab[0]] += g
			gf[ab[1]] -= g
		}
	default:
		panic("tweak: unknown loss " + string(loss))
	}
	for _, v := range w {
		L += 0.5 * alpha * v * v
	}
	if grad == nil {
		return L
	}
	for k := range grad {
		grad[k] = alpha * w[k]
	}
	// Back-propagate dL/df to the term weights: for f = u·v/(|u||v|),
	// ∂f/∂u_i = v_i/(|u||v|) − f·u_i/|u|². adj holds the first part per
	// term; scale the second, which applies to every term of a text.
	adj := make([][]float64, len(set.texts))
	scale := make([]float64, len(set.texts))
	for i, p := range set.pairs {
		g := gf[i]
		if g == 0 {
			continue
		}
		nq, nd := fw.norm[p.q], fw.norm[p.d]
		if nq == 0 || nd == 0 {
			continue
		}
		if adj[p.q] == nil {
			adj[p.q] = make([]float64, len(fw.s[p.q]))
		}
		if adj[p.d] == nil {
			adj[p.d] = make([]float64, len(fw.s[p.d]))
		}
		sq, sd, aq, ad := fw.s[p.q], fw.s[p.d], adj[p.q], adj[p.d]
		c := g / (nq * nd)
		p.eachShared(func(i, j int) {
			aq[i] += c * sd[j]
			ad[j] += c * sq[i]
		})
		scale[p.q] -= g * f[i] / (nq * nq)
		scale[p.d] -= g * f[i] / (nd * nd)
	}
	// Then to w: ∂s_i/∂w = σ(z_i)·φ_i.
	for t, a := range adj {
		if a == nil {
			continue
		}
		rows := set.texts[t].row
		for j := range a {
			c := (a[j] + scale[t]*fw.s[t][j]) * fw.sig[t][j]
			r := int(rows[j])
			row := set.rows[r*NumFeatures : (r+1)*NumFeatures]
			for k := range grad {
				grad[k] += c * row[k]
			}
		}
	}
	return L
}
