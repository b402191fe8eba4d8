package deepmatch

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// ModelVersion is the version of the tensors this package writes.
const ModelVersion = 1

// Model is a trained matcher with the vocabularies it reads its inputs in.
type Model struct {
	Config Config
	VX, VY *Vocab
	DevMAP float64    // the dev MAP of the kept weights
	Curve  []Progress // per-epoch training curve
	// Analyzer identifies the analyzer the vocabularies' words (all but
	// the meta tokens) came from: analyzers.ID() for a trained model; for
	// a loaded one, what its bundle recorded ("" when saved before
	// analyzers were recorded), kept so that re-saving it claims nothing
	// unchecked.
	Analyzer string
	arch     Arch // DeepMatch only
	net      matcher
}

// Candidate is one text to match against a query at scoring time.
type Candidate struct {
	Text string
	Meta map[string]any // may be nil; see CandidateTokens
}

// Score returns the matching score of each candidate for query, higher is
// better. It is safe for concurrent use.
func (m *Model) Score(query string, cands []Candidate) []float64 {
	ys := make([]Side, len(cands))
	for i, c := range cands {
		ys[i] = m.CandidateSide(c)
	}
	return m.ScoreSides(query, ys)
}

// Side is a candidate as a model scores it, which depends on the
// candidate alone, so an index may store it (PayloadEncoder): for
// DeepMatch its Input; for the inner-product baselines (bilinear,
// siamese) its vector in the space they share with the query, so that
// scoring a query computes the query's side and inner products alone.
type Side struct {
	In  Input     // the candidate's words, when Vec is nil
	Vec []float64 // the inner-product baselines' candidate vector
}

// CandidateSide returns c as m scores it.
func (m *Model) CandidateSide(c Candidate) Side {
	in := m.VY.Encode(CandidateTokens(c.Text, c.Meta, m.Config.Meta))
	if ip, ok := m.net.(innerProduct); ok {
		return Side{Vec: ip.candidateVector(in)}
	}
	return Side{In: in}
}

// ScoreSides returns the matching score of each candidate, given as
// CandidateSide returns it, for query: the same, to the bit, as Score's.
func (m *Model) ScoreSides(query string, ys []Side) []float64 {
	return m.ScoreAnalyzed(analyzers.Tokens(query), ys)
}

// ScoreAnalyzed is ScoreSides for a query given as its analyzer tokens
// (analyzers.Tokens), which it does not modify: stages of one window
// analyze the query once.
func (m *Model) ScoreAnalyzed(tokens []string, ys []Side) []float64 {
	x := m.VX.Encode(withQueryMeta(tokens, m.Config.Meta))
	ip, ok := m.net.(innerProduct)
	if !ok {
		ins := make([]Input, len(ys))
		for i, y := range ys {
			ins[i] = y.In
		}
		return m.net.ScoreAll(x, ins)
	}
	qv := ip.queryVector(x)
	out := make([]float64, len(ys))
	for i, y := range ys {
		v := y.Vec
		if v == nil {
			v = ip.candidateVector(y.In)
		}
		out[i] = dot(qv, v)
	}
	return out
}

// ScoreQuery scores a query's candidates (for evaluation).
func (m *Model) ScoreQuery(q Query) []float64 {
	cs := make([]Candidate, len(q.Cands))
	for i, c := range q.Cands {
		cs[i] = Candidate{Text: c.Text, Meta: c.Meta}
	}
	return m.Score(q.Text, cs)
}

// Params is the number of weights of the model's network.
func (m *Model) Params() int { return m.net.params().count() }

// Save writes the model as a semrank bundle whose method is Config.Method.
func (m *Model) Save(path string) error {
	b, err := m.Bundle()
	if err != nil {
		return err
	}
	return b.Save(path)
}

// Bundle returns the model as the semrank bundle Save writes.
func (m *Model) Bundle() (*models.Bundle, error) {
	b := models.New(m.Config.Method, ModelVersion)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	b.AddStrings("vocab_x", m.VX.Terms)
	b.AddStrings("vocab_y", m.VY.Terms)
	b.AddTensor("idf_x", []int{m.VX.Len()}, m.VX.IDF)
	b.AddTensor("idf_y", []int{m.VY.Len()}, m.VY.IDF)
	b.Manifest.VocabHash = models.HashStrings(append(append([]string(nil), m.VX.Terms...), m.VY.Terms...))
	b.Manifest.Analyzer = m.Analyzer
	b.SetMetric("dev_map", m.DevMAP)
	curve := make([]float64, 0, 3*len(m.Curve))
	for _, p := range m.Curve {
		curve = append(curve, float64(p.Epoch), p.Loss, p.DevMAP)
	}
	b.AddTensor("curve", []int{len(m.Curve), 3}, curve)
	if m.Config.Method == MethodDeepMatch {
		for l, ps := range m.arch.Levels {
			var xs, ys [][]uint32
			for _, p := range ps {
				xs, ys = append(xs, p.X.ToArray()), append(ys, p.Y.ToArray())
			}
			addLists(b, fmt.Sprintf("level%d_x", l), xs)
			addLists(b, fmt.Sprintf("level%d_y", l), ys)
			if l > 0 {
				var cs [][]uint32
				for _, c := range m.arch.Children[l] {
					row := make([]uint32, len(c))
					for i, v := range c {
						row[i] = uint32(v)
					}
					cs = append(cs, row)
				}
				addLists(b, fmt.Sprintf("level%d_children", l), cs)
			}
		}
	}
	var w []float64
	for _, blk := range m.net.params().blocks {
		w = append(w, blk.w...)
	}
	b.AddTensor("weights", []int{len(w)}, w)
	return b, nil
}

// addLists stores lists of ids as an offsets tensor and a values tensor.
func addLists(b *models.Bundle, name string, lists [][]uint32) {
	off := []float64{0}
	var vals []float64
	for _, l := range lists {
		for _, v := range l {
			vals = append(vals, float64(v))
		}
		off = append(off, float64(len(vals)))
	}
	b.AddTensor(name+"_off", []int{len(off)}, off)
	b.AddTensor(name+"_ids", []int{len(vals)}, vals)
}

// lists reads what addLists stored; every id must be below limit.
func lists(b *models.Bundle, name string, limit int) ([][]uint32, error) {
	off, err := b.Tensor(name+"_off", 1)
	if err != nil {
		return nil, err
	}
	vals, err := b.Tensor(name+"_ids", 1)
	if err != nil {
		return nil, err
	}
	// The offsets run from 0 to the number of ids, each a whole number at
	// least the one before: ids no list covers, or lists that overlap,
	// mean the two tensors are not a pair.
	if n := len(off.Data); n == 0 || off.Data[0] != 0 || off.Data[n-1] != float64(len(vals.Data)) {
		return nil, fmt.Errorf("deepmatch: %s: offsets do not run from 0 to the %d ids", name, len(vals.Data))
	}
	var out [][]uint32
	for i := 0; i+1 < len(off.Data); i++ {
		lo, hi := int(off.Data[i]), int(off.Data[i+1])
		if hi < lo || hi > len(vals.Data) || float64(hi) != off.Data[i+1] {
			return nil, fmt.Errorf("deepmatch: %s: bad offset %v after %v", name, off.Data[i+1], off.Data[i])
		}
		row := make([]uint32, 0, hi-lo)
		for _, v := range vals.Data[lo:hi] {
			if v < 0 || v >= float64(limit) || v != float64(int(v)) {
				return nil, fmt.Errorf("deepmatch: %s: id %g outside 0..%d", name, v, limit-1)
			}
			row = append(row, uint32(v))
		}
		out = append(out, row)
	}
	return out, nil
}

// Load reads a model saved by Save. method, when non-empty, is the method
// the caller expects.
func Load(path, method string) (*Model, error) {
	return models.LoadWith(path, func(r io.Reader, name string) (*Model, error) { return Read(r, name, method) })
}

// Read reads a model saved by Save from r, as Load does; name, the file r
// reads, is for errors.
func Read(r io.Reader, name, method string) (*Model, error) {
	b, err := models.ReadChecked(r, name, method, ModelVersion)
	if err != nil {
		return nil, err
	}
	m, err := fromBundle(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

func fromBundle(b *models.Bundle) (*Model, error) {
	// Query and candidate words from another analyzer would miss the
	// vocabularies.
	if err := b.CheckAnalyzer(analyzers.ID()); err != nil {
		return nil, err
	}
	m := &Model{Analyzer: b.Manifest.Analyzer}
	if err := b.Config(&m.Config); err != nil {
		return nil, err
	}
	if m.Config.Method != b.Manifest.Method {
		return nil, fmt.Errorf("deepmatch: bundle method %q but config method %q", b.Manifest.Method, m.Config.Method)
	}
	if err := m.Config.Validate(); err != nil {
		return nil, err
	}
	var err error
	if m.VX, err = vocabFromBundle(b, "x"); err != nil {
		return nil, err
	}
	if m.VY, err = vocabFromBundle(b, "y"); err != nil {
		return nil, err
	}
	if err := b.CheckVocab(models.HashStrings(append(append([]string(nil), m.VX.Terms...), m.VY.Terms...))); err != nil {
		return nil, err
	}
	m.DevMAP = b.Manifest.Metrics["dev_map"]
	// The training curve is optional, but one that is there must be
	// whole: skipping a damaged one would lose it when the model is saved
	// again.
	if c, err := b.Tensor("curve", 0); err == nil {
		if len(c.Shape) != 2 || c.Shape[1] != 3 {
			return nil, fmt.Errorf("deepmatch: curve has shape %v, want [epochs 3]", c.Shape)
		}
		if err := checkFinite("curve", c.Data); err != nil {
			return nil, err
		}
		for i := range c.Shape[0] {
			e := c.Data[3*i]
			if e < 0 || e != math.Trunc(e) || e > math.MaxInt32 {
				return nil, fmt.Errorf("deepmatch: curve row %d: epoch %v", i, e)
			}
			m.Curve = append(m.Curve, Progress{Epoch: int(e), Loss: c.Data[3*i+1], DevMAP: c.Data[3*i+2]})
		}
	}
	// The network is allocated from the config's sizes: check first that
	// the stored weights can fill it, so a corrupt size cannot make the
	// loader allocate without bound.
	w, err := b.Tensor("weights", 1)
	if err != nil {
		return nil, err
	}
	if err := checkFinite("weights", w.Data); err != nil {
		return nil, err
	}
	cfg := m.Config
	switch cfg.Method {
	case MethodDeepMatch:
		for l := range cfg.levels() {
			xs, err := lists(b, fmt.Sprintf("level%d_x", l), m.VX.Len())
			if err != nil {
				return nil, err
			}
			ys, err := lists(b, fmt.Sprintf("level%d_y", l), m.VY.Len())
			if err != nil {
				return nil, err
			}
			if len(xs) != len(ys) {
				return nil, fmt.Errorf("deepmatch: level %d has %d x and %d y patch sides", l, len(xs), len(ys))
			}
			var ps []Patch
			for i := range xs {
				ps = append(ps, Patch{X: roaring.BitmapOf(xs[i]...), Y: roaring.BitmapOf(ys[i]...)})
			}
			m.arch.Levels = append(m.arch.Levels, ps)
			var children [][]int
			if l > 0 {
				cs, err := lists(b, fmt.Sprintf("level%d_children", l), len(m.arch.Levels[l-1]))
				if err != nil {
					return nil, err
				}
				for _, c := range cs {
					row := make([]int, len(c))
					for i, v := range c {
						row[i] = int(v)
					}
					children = append(children, row)
				}
			}
			m.arch.Children = append(m.arch.Children, children)
		}
		if n := netWeights(m.arch, cfg.shape(), len(w.Data)); n > len(w.Data) {
			return nil, fmt.Errorf("deepmatch: %d weights stored, too few for the architecture's patches, neurons, rank %d and committee %d", len(w.Data), cfg.Rank, cfg.Committee)
		}
		if m.net, err = NewNet(m.arch, cfg.shape(), 0, 0); err != nil {
			return nil, err
		}
	case MethodBilinear:
		v := m.VX.Len() + m.VY.Len()
		if cfg.Dim > len(w.Data)/v {
			return nil, fmt.Errorf("deepmatch: %d weights stored, too few for %d words of dimension %d", len(w.Data), v, cfg.Dim)
		}
		m.net = NewBilinear(m.VX.Len(), m.VY.Len(), cfg.Dim, 0, 0)
	case MethodSiamese:
		v := m.VX.Len() + m.VY.Len()
		if cfg.Hidden > len(w.Data)/(v+2) || cfg.Dim > len(w.Data)/(2*cfg.Hidden+2) {
			return nil, fmt.Errorf("deepmatch: %d weights stored, too few for %d words, %d hidden units and dimension %d", len(w.Data), v, cfg.Hidden, cfg.Dim)
		}
		m.net = NewSiamese(m.VX.Len(), m.VY.Len(), cfg.Hidden, cfg.Dim, 0, 0)
	}
	ps := m.net.params()
	if n := ps.count(); n != len(w.Data) {
		return nil, fmt.Errorf("deepmatch: %d weights stored, the architecture has %d", len(w.Data), n)
	}
	off := 0
	for _, blk := range ps.blocks {
		off += copy(blk.w, w.Data[off:])
	}
	return m, nil
}

func vocabFromBundle(b *models.Bundle, side string) (*Vocab, error) {
	terms, err := b.Strings("vocab_" + side)
	if err != nil {
		return nil, err
	}
	idf, err := b.Tensor("idf_"+side, 1)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, errors.New("deepmatch: empty vocabulary " + side)
	}
	if err := checkFinite("idf_"+side, idf.Data); err != nil {
		return nil, err
	}
	return vocabFrom(terms, idf.Data)
}

// checkFinite returns an error when a stored tensor holds NaN or ±Inf,
// which would make every score it touches NaN.
func checkFinite(name string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("deepmatch: %s value %d is %v", name, i, x)
		}
	}
	return nil
}
