package stages

import (
	"context"

	"github.com/semrank/semrank/models/deepmatch"
	"github.com/semrank/semrank/rerank"
)

func init() {
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		rerank.RegisterTrainer(method, func(ctx context.Context, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
			return fitDeepMatch(ctx, method, spec, in)
		})
	}
}

// fitDeepMatch trains a matching model of package deepmatch for recipes,
// with the method's defaults (deepmatch.DefaultConfig). Options: epochs
// (maximum epochs), dim (latent dimension of bilinear and Siamese), hidden
// (Siamese units per tower), meta (candidate meta tokens, default true).
// Early stopping watches in.Dev's judged lists, or every tenth training
// query without them.
func fitDeepMatch(ctx context.Context, method string, spec rerank.StageSpec, in rerank.TrainInput) (rerank.StageSpec, error) {
	cfg := deepmatch.DefaultConfig(method)
	cfg.Seed = max(in.Seed, 1)
	var err error
	for _, o := range []struct {
		name string
		dst  *int
	}{{"epochs", &cfg.Epochs}, {"dim", &cfg.Dim}, {"hidden", &cfg.Hidden}} {
		if *o.dst, err = positiveInt(spec, o.name, *o.dst); err != nil {
			return spec, err
		}
	}
	if cfg.Meta, err = spec.Bool("meta", cfg.Meta); err != nil {
		return spec, err
	}
	train, err := deepmatch.FromDataset(in.Train)
	if err != nil {
		return spec, err
	}
	var dev []deepmatch.Query
	if in.Dev != nil && in.Dev.Qrels != nil {
		if dev, err = deepmatch.FromDataset(in.Dev); err != nil {
			return spec, err
		}
	}
	m, err := deepmatch.Train(ctx, train, dev, cfg, nil)
	if err != nil {
		return spec, err
	}
	return saveModel(spec, in, method, m.Save)
}
