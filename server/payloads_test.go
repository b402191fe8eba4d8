package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// probeEncoder writes one byte per document under "test_probe".
type probeEncoder struct{}

func (probeEncoder) PayloadName() string                       { return "test_probe" }
func (probeEncoder) ModelID() string                           { return "probe-1" }
func (probeEncoder) EncodePayload(dataset.Doc) ([]byte, error) { return []byte{1}, nil }

// probeStage reads test_probe payloads (scores 0: only its encoder matters).
type probeStage struct{}

func (probeStage) Name() string                          { return "probe" }
func (probeStage) PayloadEncoder() rerank.PayloadEncoder { return probeEncoder{} }
func (probeStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	return make([]float64, len(cs)), nil
}

func init() {
	rerank.RegisterStage("test_probe", func(rerank.StageSpec, rerank.Env) (rerank.Stage, error) { return probeStage{}, nil })
}

// TestWarnsOfMissingPayloads: serving an index built without the
// pipeline's payloads works, but slowly; the log says which are missing.
func TestWarnsOfMissingPayloads(t *testing.T) {
	docs := []dataset.Doc{{ID: "d1", Text: "bank account"}, {ID: "d2", Text: "visa"}}
	for _, tc := range []struct {
		name     string
		encoders []index.PayloadEncoder
		warn     bool
	}{
		{"without payloads", nil, true},
		{"with payloads", []index.PayloadEncoder{probeEncoder{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := newIndex(t, nil)
			if err := idx.Add(context.Background(), docs, tc.encoders, nil); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			newServer(t, idx, "stages:\n  - type: test_probe\n", func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			})
			warned := strings.Contains(log.String(), "lacks payloads") && strings.Contains(log.String(), "test_probe")
			if warned != tc.warn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tc.warn, log.String())
			}
		})
	}
}
