package stages

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
	"github.com/semrank/semrank/models/dse"
	"github.com/semrank/semrank/models/lsa"
	"github.com/semrank/semrank/models/s2net"
	"github.com/semrank/semrank/rerank"
)

// memPayloads is an in-memory rerank.Payloads.
type memPayloads struct {
	model string
	name  string
	data  map[string][]byte
}

func (p memPayloads) Payload(name, id string) ([]byte, bool, error) {
	if name != p.name {
		return nil, false, nil
	}
	b, ok := p.data[id]
	return b, ok, nil
}

func (p memPayloads) PayloadModel(name string) string {
	if name != p.name {
		return ""
	}
	return p.model
}

// conceptModels trains a tiny model of every concept type on the SemEval
// slice and saves them in dir.
func conceptModels(t *testing.T, dir string) (*dataset.Dataset, map[string]string) {
	t.Helper()
	data, ds, err := concept.LoadDir("../../testdata/concepts/semeval-b", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	paths := map[string]string{}
	lm, err := lsa.Train(data.Texts, lsa.Config{Dim: 6})
	if err != nil {
		t.Fatal(err)
	}
	sm, _, err := s2net.Train(ctx, data, s2net.Config{Dim: 6, MaxIter: 3}, s2net.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dm, _, err := dse.Train(ctx, data, dse.Config{D: 30, C: 5, PretrainEpochs: 1, FineTuneEpochs: 2, Mix: 0.5}, dse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for typ, m := range map[string]interface{ Save(string) error }{"lsa": lm, "s2net": sm, "dse": dm} {
		paths[typ] = typ + ".model"
		if err := m.Save(filepath.Join(dir, paths[typ])); err != nil {
			t.Fatal(err)
		}
	}
	return ds, paths
}

func TestConceptStagesPayloadsAndText(t *testing.T) {
	dir := t.TempDir()
	ds, paths := conceptModels(t, dir)
	q := rerank.Query{ID: "Q201", Text: "which mobile is best under 2000QR"}
	var cands []rerank.Candidate
	for _, d := range ds.Corpus[:10] {
		cands = append(cands, rerank.Candidate{Doc: dataset.Doc{ID: d.ID, Title: d.Title, Text: d.Text}})
	}
	for typ, path := range paths {
		t.Run(typ, func(t *testing.T) {
			spec := rerank.StageSpec{Type: typ, Model: path}
			fromText, err := rerank.NewStage(spec, rerank.Env{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			want, err := fromText.Score(context.Background(), q, cands)
			if err != nil {
				t.Fatal(err)
			}
			enc := fromText.(rerank.PayloadStage).PayloadEncoder()
			store := memPayloads{model: enc.ModelID(), name: enc.PayloadName(), data: map[string][]byte{}}
			for _, d := range ds.Corpus[:5] { // half the candidates have stored vectors
				if store.data[d.ID], err = enc.EncodePayload(d); err != nil {
					t.Fatal(err)
				}
			}
			stored, err := rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: store})
			if err != nil {
				t.Fatal(err)
			}
			got, err := stored.Score(context.Background(), q, cands)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				// Stored vectors are float32: equal to a few parts in 10⁶.
				if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
					t.Errorf("candidate %d: stored %v, from text %v", i, got[i], want[i])
				}
			}

			other := store
			other.model = typ + "-0000000000000000"
			if _, err := rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: other}); err == nil || !strings.Contains(err.Error(), "written by model") {
				t.Errorf("payload from another model accepted: %v", err)
			}
			bad := memPayloads{model: store.model, name: store.name, data: map[string][]byte{cands[0].ID: {1, 2, 3}}}
			st, err := rerank.NewStage(spec, rerank.Env{Dir: dir, Payloads: bad})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Score(context.Background(), q, cands); err == nil {
				t.Error("corrupt payload accepted")
			}
			if _, err := rerank.NewStage(rerank.StageSpec{Type: typ}, rerank.Env{Dir: dir}); err == nil {
				t.Error("stage without a model accepted")
			}
			if _, err := rerank.NewStage(rerank.StageSpec{Type: typ, Model: "missing.model"}, rerank.Env{Dir: dir}); err == nil {
				t.Error("missing model file accepted")
			}
		})
	}
}

// TestConceptPayloadNames: two stages of one type (an ablation's second
// S2Net) store their vectors under their own names; an explicit payload
// option wins.
func TestConceptPayloadNames(t *testing.T) {
	dir := t.TempDir()
	_, paths := conceptModels(t, dir)
	for _, tc := range []struct {
		spec rerank.StageSpec
		want string
	}{
		{rerank.StageSpec{Type: "s2net", Model: paths["s2net"]}, "s2net"},
		{rerank.StageSpec{Type: "s2net", Name: "s2net_dim100", Model: paths["s2net"]}, "s2net_dim100"},
		{rerank.StageSpec{Type: "lsa", Name: "topics", Model: paths["lsa"], Options: map[string]any{"payload": "lsa"}}, "lsa"},
	} {
		st, err := rerank.NewStage(tc.spec, rerank.Env{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.(rerank.PayloadStage).PayloadEncoder().PayloadName(); got != tc.want {
			t.Errorf("%+v: payload %q, want %q", tc.spec, got, tc.want)
		}
	}
}
