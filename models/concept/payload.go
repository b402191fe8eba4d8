package concept

import (
	"errors"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models"
)

// PayloadEncoder computes a document's concept vector at index time. It
// satisfies index.PayloadEncoder structurally, so model packages need not
// import index.
type PayloadEncoder struct {
	Name    string // payload name in the index, e.g. "s2net"
	Model   string // ID of the model that computes the vectors
	Encoder Embedder
}

// PayloadName returns the name the payload is stored under.
func (p PayloadEncoder) PayloadName() string { return p.Name }

// ModelID returns the ID of the model writing the payload; stages refuse
// payloads written by another model.
func (p PayloadEncoder) ModelID() string { return p.Model }

// EncodePayload returns the document's concept vector, encoded.
func (p PayloadEncoder) EncodePayload(doc dataset.Doc) ([]byte, error) {
	if p.Encoder == nil {
		return nil, errors.New("concept: payload encoder has no model")
	}
	return EncodeVector(p.Encoder.Embed(doc.FullText())), nil
}

// Bundler is a model that can be written as a model bundle.
type Bundler interface {
	Bundle() (*models.Bundle, error)
}

// ModelID returns the ID of a model's bundle (see models.Bundle.ID), or ""
// when the model cannot be serialised.
func ModelID(m Bundler) string {
	b, err := m.Bundle()
	if err != nil {
		return ""
	}
	return b.ID()
}

// Save writes a model's bundle to path.
func Save(m Bundler, path string) error {
	b, err := m.Bundle()
	if err != nil {
		return err
	}
	return b.Save(path)
}

// EncoderFor returns the payload encoder of a model's document vectors,
// stored under name (method when name is empty).
func EncoderFor(name, method string, m interface {
	Bundler
	Embedder
}) PayloadEncoder {
	if name == "" {
		name = method
	}
	return PayloadEncoder{Name: name, Model: ModelID(m), Encoder: m}
}
