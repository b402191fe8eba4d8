package stages

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/semrank/semrank/rerank"
)

// threadFeatures are the features Thread documents.
var threadFeatures = []string{"asker_after", "asker_names", "asker_next", "asker_thanks", "dialogue", "relative", "user_repeats"}

// thankWords are the words asker_thanks looks for at the start of a word.
var thankWords = []string{"thank", "thanx", "thnx", "thx", "appreciate"}

// saysThanks reports whether s holds one of thankWords at the start of a word,
// in any case: whether the regular expression
// (?i)\b(?:thank|thanx|thnx|thx|appreciate) matches (Go's \b is ASCII's),
// found by one scan instead of the regexp engine.
func saysThanks(s string) bool {
	for i := 0; i < len(s); i++ {
		// Only t, T, a and A fold to the words' first letters.
		if c := s[i] | 0x20; c != 't' && c != 'a' || i > 0 && isWordByte(s[i-1]) {
			continue
		}
		for _, w := range thankWords {
			if hasFoldPrefix(s[i:], w) {
				return true
			}
		}
	}
	return false
}

// hasFoldPrefix reports whether s starts with word, lower-case ASCII
// letters, under (?i)'s case folding: each letter in either case, and k
// also as the Kelvin sign (U+212A), the one other rune folding to one of
// the words' letters.
func hasFoldPrefix(s, word string) bool {
	for j := 0; j < len(word); j++ {
		switch {
		case s == "":
			return false
		case s[0] < utf8.RuneSelf && s[0]|0x20 == word[j]: // '|0x20' lower-cases letters and maps no other byte to one
			s = s[1:]
		case word[j] == 'k' && strings.HasPrefix(s, "\u212a"):
			s = s[len("\u212a"):]
		default:
			return false
		}
	}
	return true
}

func init() {
	rerank.RegisterStage("thread", func(spec rerank.StageSpec, env rerank.Env) (rerank.Stage, error) {
		var o FeatureOptions
		if err := spec.DecodeOptions(&o); err != nil {
			return nil, err
		}
		f := o.Feature
		if !slices.Contains(threadFeatures, f) {
			return nil, fmt.Errorf(`thread: option "feature" must be one of %s, not %q`, strings.Join(threadFeatures, ", "), f)
		}
		return &Thread{name: spec.DisplayName("thread:" + f), Feature: f}, nil
	})
}

// Thread computes one thread feature per candidate, chosen by option
// "feature". Thread features describe a candidate by its place in a
// conversation: the candidates of a SemEval subtask A query are the
// comments of one forum thread, so their metadata (position, user_id,
// user_name, question_user_id) shows who answered whom. Following Barrón-Cedeño et
// al. (2015, "Thread-level information for comment classification"),
// the asker's reactions and back-and-forth dialogue say much about whether
// a comment answers the question. Features:
//
//	asker_after    1 when the question's author comments later in the thread
//	               (askers come back to thank or follow up on useful answers)
//	asker_next     1 when the very next comment is the asker's
//	asker_thanks   1 when the asker's next comment after this one thanks
//	               someone (thank, thx, appreciate)
//	asker_names    1 when a later comment by the asker names this
//	               comment's author (user_name), as in "thanks aamirjaved"
//	dialogue       1 when the comment is part of an alternation between two
//	               users (u v u): talk between users is rarely an answer
//	user_repeats   how many other comments in the thread the same user wrote
//	               (long back-and-forths are chat, not answers)
//	relative       position / number of comments (0 first … 1 last)
type Thread struct {
	name    string
	Feature string
}

// Name implements rerank.Stage.
func (t *Thread) Name() string { return t.name }

// comment is what the thread features read of a candidate.
type comment struct {
	i           int // index in the candidate list
	pos         float64
	user, asker string
	name, text  string
}

// conversation is a window's candidates as the comments of one thread,
// which every thread stage scoring the window reads (rerank.WindowMemo).
type conversation struct {
	byPos  []comment // in thread order; ties keep the candidate order
	maxPos float64
	// askerNext[k] is the index in byPos of the first comment after k by
	// the author of k's question, and userNext[k] of the first after k by
	// k's own author; -1 where there is none. Following them visits the
	// later comments a feature looks for without scanning the thread
	// from every comment.
	askerNext, userNext []int
	posts               map[string]int // comments per known user
}

// conversationOf returns cands as a conversation, made once per window.
func conversationOf(ctx context.Context, cands []rerank.Candidate) *conversation {
	type key struct{}
	v, _ := rerank.WindowMemoOf(ctx).Do(key{}, func() (any, error) {
		th := &conversation{byPos: make([]comment, len(cands))}
		for i, c := range cands {
			p, _ := numeric(c.Metadata["position"])
			u, _ := c.Metadata["user_id"].(string)
			a, _ := c.Metadata["question_user_id"].(string)
			n, _ := c.Metadata["user_name"].(string)
			th.byPos[i] = comment{i: i, pos: p, user: u, asker: a, name: strings.ToLower(n), text: c.FullText()}
			th.maxPos = max(th.maxPos, p)
		}
		sort.SliceStable(th.byPos, func(a, b int) bool { return th.byPos[a].pos < th.byPos[b].pos })
		n := len(th.byPos)
		th.askerNext, th.userNext = make([]int, n), make([]int, n)
		th.posts = map[string]int{}
		last := map[string]int{} // each user's first comment after k
		for k := n - 1; k >= 0; k-- {
			c := th.byPos[k]
			th.askerNext[k], th.userNext[k] = -1, -1
			if j, ok := last[c.asker]; ok && c.asker != "" {
				th.askerNext[k] = j
			}
			if c.user != "" {
				if j, ok := last[c.user]; ok {
					th.userNext[k] = j
				}
				last[c.user] = k
				th.posts[c.user]++
			}
		}
		return th, nil
	})
	return v.(*conversation)
}

// Score implements rerank.Stage.
func (t *Thread) Score(ctx context.Context, q rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	th := conversationOf(ctx, cands)
	byPos := th.byPos
	thanks := map[int]bool{} // asker_thanks: whether byPos[i] thanks, by i
	var lower []string       // asker_names: byPos[i]'s text in lower case, once read
	out := make([]float64, len(cands))
	for k, c := range byPos {
		var v float64
		switch t.Feature {
		case "asker_after":
			v = b2f(th.askerNext[k] >= 0)
		case "asker_next":
			v = b2f(k+1 < len(byPos) && c.byAsker(byPos[k+1]))
		case "asker_thanks":
			if next := th.askerNext[k]; next >= 0 {
				// Most comments before one of the asker's ask about it.
				t, ok := thanks[next]
				if !ok {
					t = saysThanks(byPos[next].text)
					thanks[next] = t
				}
				v = b2f(t)
			}
		case "asker_names":
			if c.name != "" && c.user != c.asker {
				if lower == nil {
					lower = make([]string, len(byPos))
				}
				for j := th.askerNext[k]; j >= 0; j = th.userNext[j] {
					if lower[j] == "" {
						lower[j] = strings.ToLower(byPos[j].text)
					}
					if strings.Contains(lower[j], c.name) {
						v = 1
						break
					}
				}
			}
		case "dialogue":
			v = b2f(inDialogue(byPos, k))
		case "user_repeats":
			if c.user != "" {
				v = float64(th.posts[c.user] - 1)
			}
		case "relative":
			if th.maxPos > 0 {
				v = c.pos / th.maxPos
			}
		}
		out[c.i] = v
	}
	return out, nil
}

// byAsker reports whether o was written by the author of c's question.
func (c comment) byAsker(o comment) bool { return c.asker != "" && o.user == c.asker }

// inDialogue reports whether comment k of the ordered thread is part of a
// u v u alternation of two known users.
func inDialogue(th []comment, k int) bool {
	alt := func(a, b, c int) bool {
		if a < 0 || c >= len(th) {
			return false
		}
		u, v, w := th[a].user, th[b].user, th[c].user
		return u != "" && v != "" && u == w && u != v
	}
	return alt(k-2, k-1, k) || alt(k-1, k, k+1) || alt(k, k+1, k+2)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
