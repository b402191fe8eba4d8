package tweak

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/models"
)

// Method is the bundle method name of TWEAK models.
const Method = "tweak"

// ModelVersion is the version of what a tweak bundle's sections mean.
const ModelVersion = 1

// Bundle sections.
const (
	secWeights  = "w"        // tensor [NumFeatures]
	secFeatures = "features" // FeatureNames
	secDFTerms  = "df_terms" // sorted terms
	secDF       = "df"       // tensor [len(df_terms)+1]: counts, then N
	secQFTerms  = "qf_terms"
	secQF       = "qf"
)

// Bundle returns the model in the shared bundle format.
func (m *Model) Bundle() (*models.Bundle, error) {
	if len(m.W) != NumFeatures || m.DF == nil {
		return nil, fmt.Errorf("tweak: incomplete model (%d weights, df table %v)", len(m.W), m.DF != nil)
	}
	b := models.New(Method, ModelVersion)
	if err := b.SetConfig(m.Config); err != nil {
		return nil, err
	}
	b.AddTensor(secWeights, []int{NumFeatures}, m.W)
	b.AddStrings(secFeatures, FeatureNames)
	terms := addTable(b, secDFTerms, secDF, m.DF)
	b.Manifest.VocabHash = models.HashStrings(terms)
	if m.Config.QueryLog {
		if m.QF == nil {
			return nil, fmt.Errorf("tweak: config enables the query log but the model has none")
		}
		addTable(b, secQFTerms, secQF, m.QF)
	}
	b.Manifest.TrainingFingerprint = m.Fingerprint
	b.Manifest.Analyzer = m.Analyzer
	for k, v := range m.Metrics {
		b.SetMetric(k, v)
	}
	return b, nil
}

func addTable(b *models.Bundle, termsSec, countSec string, t *DFTable) []string {
	terms := t.Terms()
	counts := make([]float64, len(terms)+1)
	for i, term := range terms {
		counts[i] = float64(t.Count[term])
	}
	counts[len(terms)] = float64(t.N)
	b.AddStrings(termsSec, terms)
	b.AddTensor(countSec, []int{len(counts)}, counts)
	return terms
}

// Save writes the model to path and records its ID.
func (m *Model) Save(path string) error {
	b, err := m.Bundle()
	if err != nil {
		return err
	}
	if err := b.Save(path); err != nil {
		return err
	}
	m.id = b.ID()
	return nil
}

// ID returns the model's bundle ID, which indexes record with its payloads.
func (m *Model) ID() string {
	if m.id == "" {
		if b, err := m.Bundle(); err == nil {
			m.id = b.ID()
		}
	}
	return m.id
}

// Load reads a model saved by Save, refusing a corrupt file, another
// method's model, or one whose features this build does not compute or
// whose terms came from another analyzer.
func Load(path string) (*Model, error) { return models.LoadWith(path, Read) }

// Read reads a model saved by Save from r, as Load does; name, the file r
// reads, is for errors.
func Read(r io.Reader, name string) (*Model, error) {
	b, err := models.ReadChecked(r, name, Method, ModelVersion)
	if err != nil {
		return nil, err
	}
	m, err := FromBundle(b)
	if err != nil {
		return nil, fmt.Errorf("tweak: %s: %w", name, err)
	}
	return m, nil
}

// FromBundle rebuilds a model from its bundle.
func FromBundle(b *models.Bundle) (*Model, error) {
	// Terms from another analyzer would miss the frequency tables.
	if err := b.CheckAnalyzer(analyzers.ID()); err != nil {
		return nil, err
	}
	m := &Model{Metrics: b.Manifest.Metrics, Fingerprint: b.Manifest.TrainingFingerprint, Analyzer: b.Manifest.Analyzer}
	if err := b.Config(&m.Config); err != nil {
		return nil, err
	}
	if _, err := ParseLoss(string(m.Config.Loss)); err != nil {
		return nil, err
	}
	names, err := b.Strings(secFeatures)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(names, FeatureNames) {
		return nil, fmt.Errorf("model features %v, this build computes %v", names, FeatureNames)
	}
	w, err := b.Tensor(secWeights, 1)
	if err != nil {
		return nil, err
	}
	if w.Shape[0] != NumFeatures {
		return nil, fmt.Errorf("weights tensor has %d values, want %d", w.Shape[0], NumFeatures)
	}
	for i, v := range w.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("weight %s is %v", FeatureNames[i], v)
		}
	}
	m.W = w.Data
	if m.DF, err = readTable(b, secDFTerms, secDF); err != nil {
		return nil, err
	}
	if err := b.CheckVocab(models.HashStrings(m.DF.Terms())); err != nil {
		return nil, err
	}
	if m.Config.QueryLog {
		if m.QF, err = readTable(b, secQFTerms, secQF); err != nil {
			return nil, err
		}
	}
	m.id = b.ID()
	return m, nil
}

func readTable(b *models.Bundle, termsSec, countSec string) (*DFTable, error) {
	terms, err := b.Strings(termsSec)
	if err != nil {
		return nil, err
	}
	counts, err := b.Tensor(countSec, 1)
	if err != nil {
		return nil, err
	}
	if counts.Shape[0] != len(terms)+1 {
		return nil, fmt.Errorf("%s has %d counts for %d terms", countSec, counts.Shape[0], len(terms))
	}
	t := &DFTable{Count: make(map[string]uint64, len(terms))}
	for i, c := range counts.Data {
		if c < 0 || c != math.Trunc(c) || c > 1<<53 {
			return nil, fmt.Errorf("%s: count %v is not a non-negative integer", countSec, c)
		}
		if i == len(terms) {
			t.N = uint64(c)
		} else {
			if i > 0 && terms[i] <= terms[i-1] {
				return nil, fmt.Errorf("%s: terms not sorted at %q", termsSec, terms[i])
			}
			t.Count[terms[i]] = uint64(c)
		}
	}
	return t, nil
}
