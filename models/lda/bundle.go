package lda

import (
	"fmt"

	"github.com/semrank/semrank/models"
)

// AddTo stores the model's topic–word tables in b under names starting
// with prefix, so a method that uses topics can save them in its own bundle.
func (m *Model) AddTo(b *models.Bundle, prefix string) {
	flat := func(rows [][]float64, v int) []float64 {
		out := make([]float64, 0, len(rows)*v)
		for _, r := range rows {
			out = append(out, r...)
		}
		return out
	}
	b.AddTensor(prefix+"phi_x", []int{m.Topics, m.VX}, flat(m.PhiX, m.VX))
	b.AddTensor(prefix+"phi_y", []int{m.Topics, m.VY}, flat(m.PhiY, m.VY))
}

// FromBundle reads a model stored by AddTo with the same prefix.
func FromBundle(b *models.Bundle, prefix string) (*Model, error) {
	px, err := b.Tensor(prefix+"phi_x", 2)
	if err != nil {
		return nil, err
	}
	py, err := b.Tensor(prefix+"phi_y", 2)
	if err != nil {
		return nil, err
	}
	if px.Shape[0] != py.Shape[0] || px.Shape[0] < 1 {
		return nil, fmt.Errorf("lda: %sphi_x has %d topics, %sphi_y %d", prefix, px.Shape[0], prefix, py.Shape[0])
	}
	if px.Shape[1] < 1 {
		// Fit needs x words; and with none, nothing bounds the topic count.
		return nil, fmt.Errorf("lda: %sphi_x has no words", prefix)
	}
	// Topic–word probabilities: a NaN, infinite or negative one would make
	// every likelihood and patch ranking that reads it meaningless.
	for _, t := range []struct {
		name string
		v    []float64
	}{{"phi_x", px.Data}, {"phi_y", py.Data}} {
		for i, x := range t.v {
			if !(x >= 0 && x <= 1) {
				return nil, fmt.Errorf("lda: %s%s value %d is %v, want a probability in [0, 1]", prefix, t.name, i, x)
			}
		}
	}
	m := &Model{Topics: px.Shape[0], VX: px.Shape[1], VY: py.Shape[1]}
	for k := range m.Topics {
		m.PhiX = append(m.PhiX, px.Data[k*m.VX:(k+1)*m.VX])
		m.PhiY = append(m.PhiY, py.Data[k*m.VY:(k+1)*m.VY])
	}
	return m, nil
}
