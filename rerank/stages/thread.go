package stages

import (
	"context"
	"fmt"

	"github.com/semrank/semrank/rerank"
)

// Thread features describe a candidate by its place in a conversation:
// the candidates of a SemEval subtask A query are the comments of one
// forum thread, so their metadata (position, user_id, question_user_id)
// shows who answered whom. Features:
//
//	asker_after   1 when the question's author comments later in the thread
//	              (askers come back to thank or follow up on useful answers)
//	user_repeats  how many other comments in the thread the same user wrote
//	              (long back-and-forths are chat, not answers)
//	relative      position / number of comments (0 first … 1 last)
var threadFeatures = map[string]bool{"asker_after": true, "user_repeats": true, "relative": true}

func init() {
	rerank.RegisterStage("thread", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		f, err := spec.Str("feature", "")
		if err != nil {
			return nil, err
		}
		if !threadFeatures[f] {
			return nil, fmt.Errorf(`thread: option "feature" must be asker_after, user_repeats or relative, not %q`, f)
		}
		return &Thread{name: spec.DisplayName("thread:" + f), Feature: f}, nil
	})
}

// Thread computes one thread feature (see threadFeatures) per candidate.
type Thread struct {
	name    string
	Feature string
}

// Name implements rerank.Stage.
func (t *Thread) Name() string { return t.name }

// Score implements rerank.Stage.
func (t *Thread) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	type info struct {
		pos         float64
		user, asker string
	}
	infos := make([]info, len(cands))
	maxPos := 0.0
	for i, c := range cands {
		p, _ := numeric(c.Fields["position"])
		u, _ := c.Fields["user_id"].(string)
		a, _ := c.Fields["question_user_id"].(string)
		infos[i] = info{p, u, a}
		maxPos = max(maxPos, p)
	}
	out := make([]float64, len(cands))
	for i, in := range infos {
		switch t.Feature {
		case "asker_after":
			for _, o := range infos {
				if in.asker != "" && o.user == in.asker && o.pos > in.pos {
					out[i] = 1
					break
				}
			}
		case "user_repeats":
			for j, o := range infos {
				if j != i && in.user != "" && o.user == in.user {
					out[i]++
				}
			}
		case "relative":
			if maxPos > 0 {
				out[i] = in.pos / maxPos
			}
		}
	}
	return out, nil
}
