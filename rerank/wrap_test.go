package rerank_test

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// lengthStage prefers shorter documents: a deterministic stage whose
// ordering differs from BM25's, so reranking is visible.
type lengthStage struct{}

func (lengthStage) Name() string { return "short" }
func (lengthStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = -float64(len(c.FullText()))
	}
	return out, nil
}

func docs(prefix string, n int) []dataset.Doc {
	var out []dataset.Doc
	for i := 0; i < n; i++ {
		out = append(out, dataset.Doc{
			ID:    fmt.Sprintf("%s%02d", prefix, i),
			Title: "bank account in Doha",
			Text:  "bank " + strings.Repeat("words about money ", (i*7)%13+1) + strings.Repeat("bank ", i%3),
		})
	}
	return out
}

func newIndex(t *testing.T, ds []dataset.Doc) *index.Index {
	t.Helper()
	idx, err := index.Create(t.TempDir() + "/idx")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(context.Background(), ds, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := idx.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

func shortFirst() *rerank.Pipeline {
	return &rerank.Pipeline{Window: 100, Stages: []rerank.Stage{lengthStage{}}, Fusion: &rerank.Linear{Weights: map[string]float64{"short": 1}}}
}

func ids(hits search.DocumentMatchCollection) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestWrapReranksAndPages(t *testing.T) {
	idx := newIndex(t, docs("d", 30))
	w := rerank.Wrap(idx, shortFirst())
	full, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 30, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Hits) != 30 {
		t.Fatalf("got %d hits, want 30", len(full.Hits))
	}
	for i := 1; i < len(full.Hits); i++ {
		a, b := full.Hits[i-1], full.Hits[i]
		if !(a.Score > b.Score) {
			t.Fatalf("scores not strictly decreasing at %d: %v, %v", i, a.Score, b.Score)
		}
	}
	if full.MaxScore != full.Hits[0].Score {
		t.Errorf("MaxScore = %v, want %v", full.MaxScore, full.Hits[0].Score)
	}
	// Pages concatenate to the full reranked list.
	var paged []string
	for from := 0; from < 30; from += 7 {
		res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 7, from, false))
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(res.Hits)...)
	}
	if fmt.Sprint(paged) != fmt.Sprint(ids(full.Hits)) {
		t.Errorf("paged %v\n  != full %v", paged, ids(full.Hits))
	}
	// The reranked order differs from BM25's.
	plain, _ := idx.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 30, 0, false))
	if fmt.Sprint(ids(plain.Hits)) == fmt.Sprint(ids(full.Hits)) {
		t.Error("reranking did not change the order")
	}
}

func TestWrapNilPipelinePassesThrough(t *testing.T) {
	idx := newIndex(t, docs("d", 10))
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 5, 0, false)
	got, err := rerank.Wrap(idx, nil).Search(req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Search(req)
	if fmt.Sprint(ids(got.Hits)) != fmt.Sprint(ids(want.Hits)) {
		t.Errorf("nil pipeline: %v, want the first stage's %v", ids(got.Hits), ids(want.Hits))
	}
}

func TestWrapHugePages(t *testing.T) {
	idx := newIndex(t, docs("d", 30))
	w := rerank.Wrap(idx, shortFirst())
	full, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 30, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	all := ids(full.Hits)
	for _, tc := range []struct {
		from, size int
		want       []string
	}{
		{0, math.MaxInt, all},
		{1, math.MaxInt, all[1:]},
		{29, math.MaxInt, all[29:]},
		{math.MaxInt, 1, nil},
		{math.MaxInt, math.MaxInt, nil},
		{math.MaxInt - 5, 10, nil},
	} {
		t.Run(fmt.Sprintf("from %d size %d", tc.from, tc.size), func(t *testing.T) {
			res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), tc.size, tc.from, false))
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(res.Hits); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("hits %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWrapFieldsAndExplain(t *testing.T) {
	idx := newIndex(t, docs("d", 5))
	w := rerank.Wrap(idx, shortFirst())
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("money"), 3, 0, true)
	req.Fields = []string{"title"}
	res, err := w.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if _, ok := h.Fields["text"]; ok {
			t.Errorf("hit %s returned unrequested field text", h.ID)
		}
		if h.Fields["title"] != "bank account in Doha" {
			t.Errorf("hit %s title = %v", h.ID, h.Fields["title"])
		}
		if h.Expl == nil || len(h.Expl.Children) != 3 || h.Expl.Children[1].Message != "stage short" {
			t.Fatalf("hit %s explanation = %+v, want first stage, one child per stage, the fusion", h.ID, h.Expl)
		}
		if h.Expl.Value != h.Score {
			t.Errorf("explanation value %v != score %v", h.Expl.Value, h.Score)
		}
		// The linear fusion's terms sum to the score, up to the nudges
		// that keep scores distinct.
		f := h.Expl.Children[2]
		if !strings.HasPrefix(f.Message, "linear fusion") || math.Abs(f.Value-h.Score) > 1e-9*math.Max(1, math.Abs(h.Score)) {
			t.Errorf("hit %s fusion explanation %q = %v, want the score %v", h.ID, f.Message, f.Value, h.Score)
		}
		var sum float64
		for _, c := range f.Children {
			sum += c.Value
		}
		if len(f.Children) != 1 || !strings.HasPrefix(f.Children[0].Message, "short: weight 1 × z ") || sum != f.Value {
			t.Errorf("hit %s fusion terms %+v (sum %v), want one term for short summing to %v", h.ID, f.Children, sum, f.Value)
		}
	}
	req.Fields = nil
	res, _ = w.Search(req)
	if res.Hits[0].Fields != nil {
		t.Errorf("fields returned without a request: %v", res.Hits[0].Fields)
	}
}

// negated is a step after the fusion that reverses the fused order.
type negated struct{}

func (negated) Name() string { return "negated" }
func (negated) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = -c.Score
	}
	return out, nil
}

// TestWrapExplainsSmoothStep: with a step after the fusion, the
// explanation ends with the step, whose value is the hit's score, and
// the linear fusion's terms no longer claim to be the score.
func TestWrapExplainsSmoothStep(t *testing.T) {
	idx := newIndex(t, docs("d", 5))
	p := shortFirst()
	p.Smooth = negated{}
	res, err := rerank.Wrap(idx, p).Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("money"), 5, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rerank.Wrap(idx, shortFirst()).Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("money"), 5, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	want := ids(plain.Hits)
	slices.Reverse(want)
	if got := ids(res.Hits); !slices.Equal(got, want) {
		t.Fatalf("hits %v, want the fused order reversed, %v", got, want)
	}
	for _, h := range res.Hits {
		if h.Expl == nil || len(h.Expl.Children) != 4 {
			t.Fatalf("hit %s explanation %+v, want first stage, stage, fusion, step", h.ID, h.Expl)
		}
		f, st := h.Expl.Children[2], h.Expl.Children[3]
		if !strings.HasPrefix(f.Message, "linear fusion") || !strings.HasSuffix(f.Message, "the score negated starts from") {
			t.Errorf("hit %s fusion explained as %q", h.ID, f.Message)
		}
		if !strings.HasPrefix(st.Message, "negated: ") || st.Value != h.Score || h.Expl.Value != h.Score {
			t.Errorf("hit %s step explained as %q = %v, root %v, want the score %v", h.ID, st.Message, st.Value, h.Expl.Value, h.Score)
		}
	}
}

// TestWrapExplainsPastTheWindow: hits past the rerank window were not
// reranked, and their explanation says so; hits inside it explain the
// rerank, one child per stage after the first stage, then the fusion.
func TestWrapExplainsPastTheWindow(t *testing.T) {
	idx := newIndex(t, docs("d", 30))
	p := shortFirst()
	p.Window = 20
	w := rerank.Wrap(idx, p)
	for _, tc := range []struct {
		name         string
		from, size   int
		wantMessage  string
		wantChildren []string
	}{
		{"inside the window", 0, 5, "semrank rerank of first-stage rank", []string{"first stage", "stage short",
			"linear fusion: sum of weight × feature (z-normalised over the window); the hit's score is this sum, nudged apart from ties"}},
		{"past the window", 25, 5, "below the rerank window of 20, not reranked", []string{"first stage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), tc.size, tc.from, true))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != tc.size {
				t.Fatalf("got %d hits, want %d", len(res.Hits), tc.size)
			}
			for _, h := range res.Hits {
				e := h.Expl
				if e == nil || !strings.Contains(e.Message, tc.wantMessage) || e.Value != h.Score {
					t.Fatalf("hit %s explanation %+v, want value %v and a message containing %q", h.ID, e, h.Score, tc.wantMessage)
				}
				var children []string
				for _, c := range e.Children {
					children = append(children, c.Message)
				}
				if fmt.Sprint(children) != fmt.Sprint(tc.wantChildren) {
					t.Fatalf("hit %s explanation children %q, want %q", h.ID, children, tc.wantChildren)
				}
				if len(e.Children[0].Children) != 1 {
					t.Errorf("hit %s: first stage explained by %d children, want Bleve's explanation", h.ID, len(e.Children[0].Children))
				}
			}
		})
	}
}

// sleepStage scores every candidate 0 after sleeping.
type sleepStage struct{ d time.Duration }

func (sleepStage) Name() string { return "sleep" }
func (s sleepStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	time.Sleep(s.d)
	return make([]float64, len(cs)), nil
}

// TestWrapTookCoversReranking: Took is the whole search's time, not only
// the first stage's.
func TestWrapTookCoversReranking(t *testing.T) {
	const sleep = 50 * time.Millisecond
	idx := newIndex(t, docs("d", 10))
	w := rerank.Wrap(idx, &rerank.Pipeline{Stages: []rerank.Stage{sleepStage{sleep}}})
	res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 10, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Took < sleep {
		t.Errorf("Took = %v, want at least the stage's %v", res.Took, sleep)
	}
}

func TestWrapPassesThroughNonScoreSorts(t *testing.T) {
	idx := newIndex(t, docs("d", 10))
	w := rerank.Wrap(idx, shortFirst())
	for _, tc := range []struct {
		name string
		ctx  context.Context
		sort []string
	}{
		{"sorted by id", context.Background(), []string{"_id"}},
		{"presearch", context.WithValue(context.Background(), search.PreSearchKey, true), nil},
		{"without rerank", rerank.WithoutRerank(context.Background()), nil},
	} {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 10, 0, false)
		if tc.sort != nil {
			req.SortBy(tc.sort)
		}
		got, err := w.SearchInContext(tc.ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		req2 := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 10, 0, false)
		if tc.sort != nil {
			req2.SortBy(tc.sort)
		}
		want, _ := idx.SearchInContext(tc.ctx, req2)
		if fmt.Sprint(ids(got.Hits)) != fmt.Sprint(ids(want.Hits)) {
			t.Errorf("%s: got %v, want untouched %v", tc.name, ids(got.Hits), ids(want.Hits))
		}
	}
}

func TestAliasOverWrappedShards(t *testing.T) {
	shardA := rerank.Wrap(newIndex(t, docs("a", 12)), shortFirst())
	shardB := rerank.Wrap(newIndex(t, docs("b", 12)), shortFirst())
	alias := bleve.NewIndexAlias(shardA, shardB)
	res, err := alias.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 24, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 24 {
		t.Fatalf("alias returned %d hits, want 24", len(res.Hits))
	}
	// Merged by descending fused score.
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i-1].Score < res.Hits[i].Score {
			t.Fatalf("alias hits not merged by score at %d", i)
		}
	}
	// Each shard's own reranked order is kept within the merged list.
	for _, shard := range []*rerank.Index{shardA, shardB} {
		own, err := shard.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 12, 0, false))
		if err != nil {
			t.Fatal(err)
		}
		prefix := own.Hits[0].ID[:1]
		var merged []string
		for _, h := range res.Hits {
			if strings.HasPrefix(h.ID, prefix) {
				merged = append(merged, h.ID)
			}
		}
		if fmt.Sprint(merged) != fmt.Sprint(ids(own.Hits)) {
			t.Errorf("shard %s order in alias %v != shard's reranked order %v", prefix, merged, ids(own.Hits))
		}
	}
	// The shorter documents (the stage's preference) lead across shards.
	top := res.Hits[0].ID
	if top != "a00" && top != "b00" {
		t.Errorf("top merged hit = %s, want a00 or b00 (the shortest)", top)
	}
}

// idStage reads the payload idEncoder writes, the document's id.
type idStage struct{ constScores }

func (idStage) PayloadEncoder() rerank.PayloadEncoder { return idEncoder{} }

type constScores struct{}

func (constScores) Name() string { return "const" }
func (constScores) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	return make([]float64, len(cs)), nil
}

type idEncoder struct{}

func (idEncoder) PayloadName() string                         { return "doc_id" }
func (idEncoder) ModelID() string                             { return "doc_id/1" }
func (idEncoder) EncodePayload(d dataset.Doc) ([]byte, error) { return []byte(d.ID), nil }

// TestPipelineEncodersIndex: a pipeline's payload encoders are index
// encoders, so they go to index.Index.Add as they are.
func TestPipelineEncodersIndex(t *testing.T) {
	p := &rerank.Pipeline{Stages: []rerank.Stage{idStage{}, constScores{}}}
	idx, err := index.Create(t.TempDir() + "/idx")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Add(context.Background(), docs("d", 3), p.Encoders(), nil); err != nil {
		t.Fatal(err)
	}
	if got := idx.PayloadModel("doc_id"); got != "doc_id/1" {
		t.Errorf("payload doc_id from model %q, want doc_id/1", got)
	}
	if b, ok, err := idx.Payload("doc_id", "d01"); err != nil || !ok || string(b) != "d01" {
		t.Errorf("payload of d01 = %q, %v, %v; want d01", b, ok, err)
	}
}

// positionStage prefers a lower metadata "position", which stages read
// from Candidate.Metadata.
type positionStage struct{}

func (positionStage) Name() string { return "position" }
func (positionStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		p, ok := c.Metadata["position"].(float64)
		if !ok {
			return nil, fmt.Errorf("candidate %s has no position in %v", c.ID, c.Metadata)
		}
		out[i] = -p
	}
	return out, nil
}

func TestWrapCandidates(t *testing.T) {
	// Later documents come first by position, last by BM25 (longer text).
	var ds []dataset.Doc
	for i := 0; i < 6; i++ {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("c%d", i), Text: "bank " + strings.Repeat("money ", i),
			Metadata: map[string]any{"position": float64(6 - i)}})
	}
	p := &rerank.Pipeline{Stages: []rerank.Stage{positionStage{}}, Fusion: &rerank.Linear{Weights: map[string]float64{"position": 1}}}
	for _, tc := range []struct {
		name   string
		idx    bleve.Index
		fields []string
		want   []string
	}{
		{"metadata reaches stages", newIndex(t, ds), nil, []string{"c5", "c4", "c3", "c2", "c1", "c0"}},
		{"metadata with fields asked", newIndex(t, ds), []string{"meta", "title"}, []string{"c5", "c4", "c3", "c2", "c1", "c0"}},
		{"alias with an id in two children", bleve.NewIndexAlias(newIndex(t, ds[:3]), newIndex(t, ds[2:])), nil,
			[]string{"c5", "c4", "c3", "c2", "c2", "c1", "c0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 10, 0, false)
			req.Fields = tc.fields
			res, err := rerank.Wrap(tc.idx, p).Search(req)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ids(res.Hits)) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", ids(res.Hits), tc.want)
			}
			for i := 1; i < len(res.Hits); i++ {
				if !(res.Hits[i-1].Score > res.Hits[i].Score) {
					t.Fatalf("scores not strictly decreasing at %d: %v, %v", i, res.Hits[i-1].Score, res.Hits[i].Score)
				}
			}
			for _, h := range res.Hits {
				if len(h.Fields) != len(tc.fields) {
					t.Errorf("hit %s fields %v, want %v", h.ID, h.Fields, tc.fields)
				}
			}
		})
	}
}

// metaSeen is a stage that says whether it reads metadata (reads) and
// records how many candidates came with metadata.
type metaSeen struct {
	reads bool
	with  *atomic.Int64
}

func (metaSeen) Name() string          { return "seen" }
func (s metaSeen) ReadsMetadata() bool { return s.reads }
func (s metaSeen) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	for _, c := range cs {
		if c.Metadata != nil {
			s.with.Add(1)
		}
	}
	return make([]float64, len(cs)), nil
}

// metaFusion is a fusion that does not say whether it reads candidates'
// metadata; saysMetaFusion says it reads none.
type metaFusion struct{}

func (metaFusion) Fuse(in rerank.FusionInput) ([]float64, error) {
	return make([]float64, len(in.Candidates)), nil
}

type saysMetaFusion struct{ metaFusion }

func (saysMetaFusion) ReadsMetadata() bool { return false }

// TestMetadataOnlyForReaders: a search over semrank's index decodes the
// window's metadata only when a stage, the Smooth step or the fusion may
// read it, and a stage or fusion that does not say is given it.
func TestMetadataOnlyForReaders(t *testing.T) {
	var ds []dataset.Doc
	for i := range 4 {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("m%d", i), Text: "bank money", Metadata: map[string]any{"user": "u"}})
	}
	idx := newIndex(t, ds)
	for _, tc := range []struct {
		name   string
		stages []bool // each stage's answer to ReadsMetadata
		other  bool   // a stage that does not say
		smooth bool   // a Smooth step that does not say
		fusion rerank.Fusion
		want   bool
	}{
		{name: "none reads", stages: []bool{false}, want: false},
		{name: "two read none", stages: []bool{false, false}, fusion: &rerank.Linear{}, want: false},
		{name: "one reads", stages: []bool{false, true}, want: true},
		{name: "a stage that does not say", stages: []bool{false}, other: true, want: true},
		{name: "a smooth step that does not say", stages: []bool{false}, smooth: true, want: true},
		{name: "a fusion that does not say", stages: []bool{false}, fusion: metaFusion{}, want: true},
		{name: "a fusion that reads none", stages: []bool{false}, fusion: saysMetaFusion{}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var with atomic.Int64
			p := &rerank.Pipeline{Window: 4, Fusion: tc.fusion}
			for _, r := range tc.stages {
				p.Stages = append(p.Stages, metaSeen{reads: r, with: &with})
			}
			var other atomic.Int64
			if tc.other {
				p.Stages = append(p.Stages, silentStage{&other})
			}
			if tc.smooth {
				p.Smooth = silentStage{&other}
			}
			if _, err := rerank.Wrap(idx, p).Search(bleve.NewSearchRequest(bleve.NewMatchQuery("bank"))); err != nil {
				t.Fatal(err)
			}
			want := int64(0)
			if tc.want {
				want = int64(len(ds) * len(tc.stages))
			}
			if got := with.Load(); got != want {
				t.Errorf("%d candidates scored with metadata, want %d", got, want)
			}
		})
	}
}

// silentStage is a stage that does not say whether it reads metadata.
type silentStage struct{ n *atomic.Int64 }

func (silentStage) Name() string { return "other" }
func (s silentStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	s.n.Add(int64(len(cs)))
	return make([]float64, len(cs)), nil
}

func TestWrapPagesWithTies(t *testing.T) {
	// Every document scores the same, so only tie-breaking orders them.
	var ds []dataset.Doc
	for i := 0; i < 23; i++ {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("d%02d", (i*7)%23), Text: "bank money"})
	}
	idx := newIndex(t, ds)
	for _, tc := range []struct{ window, page int }{{5, 4}, {5, 3}, {5, 5}, {10, 7}, {100, 6}, {1, 2}} {
		t.Run(fmt.Sprintf("window %d page %d", tc.window, tc.page), func(t *testing.T) {
			p := shortFirst()
			p.Window = tc.window
			w := rerank.Wrap(idx, p)
			full, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 23, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			var paged []string
			for from := 0; from < 23; from += tc.page {
				res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), tc.page, from, false))
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, ids(res.Hits)...)
			}
			if fmt.Sprint(paged) != fmt.Sprint(ids(full.Hits)) {
				t.Errorf("paged %v\n  != full %v", paged, ids(full.Hits))
			}
			// The window is index.TopN's.
			hits, err := idx.TopN(context.Background(), bleve.NewMatchQuery("bank"), tc.window)
			if err != nil {
				t.Fatal(err)
			}
			var top []string
			for _, h := range hits {
				top = append(top, h.ID)
			}
			if got := ids(full.Hits[:len(top)]); fmt.Sprint(got) != fmt.Sprint(top) {
				t.Errorf("window %v, want index.TopN's %v", got, top)
			}
			// The detailed result's first-stage list is that window, in
			// that order.
			res, err := w.SearchDetailed(context.Background(), bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 3, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, f := range res.First {
				seen = append(seen, f.ID)
			}
			if len(seen) < len(top) || fmt.Sprint(seen[:len(top)]) != fmt.Sprint(top) {
				t.Errorf("FirstStage saw %v, want index.TopN's %v first", seen, top)
			}
		})
	}
}

// TestWrapPagesWithLargeTies pages through more tied documents than
// index.SearchTiesByID orders by ID (1024 past the window): the first
// stage fetches more hits for later pages, and the pages must still be
// those of one list, without repeats.
func TestWrapPagesWithLargeTies(t *testing.T) {
	// Added with the lowest ids last, past the 1024 Bleve puts first.
	const n = 1100
	var ds []dataset.Doc
	for i := range n {
		ds = append(ds, dataset.Doc{ID: fmt.Sprintf("d%04d", n-1-i), Text: "bank money"})
	}
	w := rerank.Wrap(newIndex(t, ds), shortFirst())
	seen := map[string]bool{}
	for _, page := range []struct{ from, size int }{{0, 10}, {10, 10}, {20, 300}, {320, 10}} {
		res, err := w.Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), page.size, page.from, false))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids(res.Hits) {
			if seen[id] {
				t.Errorf("from %d size %d: %s again", page.from, page.size, id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 330 {
		t.Errorf("%d distinct hits in pages covering 330", len(seen))
	}
}

// countStage counts the lists it scores.
type countStage struct{ calls *atomic.Int64 }

func (countStage) Name() string { return "count" }
func (c countStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	c.calls.Add(1)
	return make([]float64, len(cs)), nil
}

// TestWrapSkipsWhatNeedsNoRerank: a request for no hits (facets or a count)
// and an unscored one pass through without reranking, and answer as Bleve
// does.
func TestWrapSkipsWhatNeedsNoRerank(t *testing.T) {
	idx := newIndex(t, docs("d", 10))
	var calls atomic.Int64
	w := rerank.Wrap(idx, &rerank.Pipeline{Window: 5, Stages: []rerank.Stage{countStage{&calls}}})
	for _, tc := range []struct {
		name   string
		req    func() *bleve.SearchRequest
		reruns bool
	}{
		{"size 0 with a facet", func() *bleve.SearchRequest {
			r := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 0, 0, false)
			r.AddFacet("titles", bleve.NewFacetRequest(index.FieldTitle, 3))
			return r
		}, false},
		{"score none", func() *bleve.SearchRequest {
			r := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 5, 0, false)
			r.Score = bleve.ScoreNone
			return r
		}, false},
		{"no words: doc ids", func() *bleve.SearchRequest {
			return bleve.NewSearchRequestOptions(bleve.NewDocIDQuery([]string{"d01", "d02"}), 5, 0, false)
		}, false},
		{"no words: a query string with a wildcard only", func() *bleve.SearchRequest {
			return bleve.NewSearchRequestOptions(bleve.NewQueryStringQuery("ban*"), 5, 0, false)
		}, false},
		{"a query string with words reranks", func() *bleve.SearchRequest {
			return bleve.NewSearchRequestOptions(bleve.NewQueryStringQuery("title:bank"), 5, 0, false)
		}, true},
		{"an ordinary request reranks", func() *bleve.SearchRequest {
			return bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 5, 0, false)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			got, err := w.Search(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			if reranked := calls.Load() > 0; reranked != tc.reruns {
				t.Fatalf("reranked %v, want %v", reranked, tc.reruns)
			}
			if tc.reruns {
				return
			}
			want, err := idx.Search(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != want.Total || fmt.Sprint(ids(got.Hits)) != fmt.Sprint(ids(want.Hits)) || len(got.Facets) != len(want.Facets) {
				t.Errorf("got total %d hits %v facets %d, want Bleve's %d %v %d", got.Total, ids(got.Hits), len(got.Facets), want.Total, ids(want.Hits), len(want.Facets))
			}
		})
	}
}

// TestWrapHighlightsPhrases checks that a phrase query through the wrapper
// matches word order and that each reranked hit keeps its highlighted
// fragments, which Bleve computes from the index's term vectors.
func TestWrapHighlightsPhrases(t *testing.T) {
	idx := newIndex(t, docs("d", 30))
	w := rerank.Wrap(idx, shortFirst())
	for _, tc := range []struct {
		phrase string
		hits   int
	}{
		{"words about money", 30},
		{"money about words", 0},
	} {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchPhraseQuery(tc.phrase), 10, 0, false)
		req.Highlight = bleve.NewHighlight()
		res, err := w.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		if int(res.Total) != tc.hits {
			t.Errorf("%q: %d hits, want %d", tc.phrase, res.Total, tc.hits)
		}
		for _, h := range res.Hits {
			if frags := h.Fragments[index.FieldText]; len(frags) == 0 || !strings.Contains(frags[0], "<mark>words</mark>") {
				t.Errorf("%q: hit %s has fragments %v, want the phrase marked", tc.phrase, h.ID, h.Fragments)
			}
		}
	}
}

// orderStage scores a candidate by its "order" field, as a metadata
// stage reads a plain Bleve index's stored fields.
type orderStage struct{}

func (orderStage) Name() string { return "order" }
func (orderStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i], _ = c.Metadata["order"].(float64)
	}
	return out, nil
}

// TestWrapPlainIndexFields: over a plain Bleve index the stages read
// every stored field as the candidates' fields, whether or not the
// request asks for them, and hits come back with the requested fields
// only.
func TestWrapPlainIndexFields(t *testing.T) {
	plain, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i := range 8 {
		// BM25 alike; "order" reverses the ids.
		if err := plain.Index(fmt.Sprintf("d%d", i), map[string]any{"text": "bank money", "order": float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	p := &rerank.Pipeline{Window: 8, Stages: []rerank.Stage{orderStage{}}, Fusion: &rerank.Linear{Weights: map[string]float64{"order": 1}}}
	w := rerank.Wrap(plain, p)
	for _, fields := range [][]string{nil, {"order"}, {"text"}, {"*"}} {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), 8, 0, false)
		req.Fields = fields
		res, err := w.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ids(res.Hits)); got != "[d7 d6 d5 d4 d3 d2 d1 d0]" {
			t.Errorf("fields %v: hits %s, want them by order, highest first", fields, got)
		}
		for _, h := range res.Hits {
			want := len(fields)
			if slices.Contains(fields, "*") {
				want = 2
			}
			if len(h.Fields) != want {
				t.Errorf("fields %v: hit %s has fields %v", fields, h.ID, h.Fields)
			}
		}
	}
}

type textStage struct{ seen *sync.Map }

func (textStage) Name() string { return "text" }
func (s textStage) Score(_ context.Context, _ rerank.Query, cs []rerank.Candidate) ([]float64, error) {
	for _, c := range cs {
		s.seen.Store(c.ID, [2]string{c.Title, c.Text})
	}
	return make([]float64, len(cs)), nil
}

// TestWrapPlainIndexTextFields: over a plain Bleve index the stages read
// the pipeline's Fields as stored, a field indexed from several
// strings (Bleve returns its values as a []any) included: it read as
// empty, so the stages silently saw no text.
func TestWrapPlainIndexTextFields(t *testing.T) {
	plain, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, tc := range []struct {
		id            string
		subject, body any
		title, text   string
	}{
		{"one", "bank", "a bank in Doha", "bank", "a bank in Doha"},
		{"body array", "bank", []string{"first bank paragraph", "second"}, "bank", "first bank paragraph\nsecond"},
		{"subject array", []string{"bank", "loans"}, "bank text", "bank\nloans", "bank text"},
		{"number", "bank", 3.0, "bank", ""},
	} {
		if err := plain.Index(tc.id, map[string]any{"subject": tc.subject, "body": tc.body}); err != nil {
			t.Fatal(err)
		}
		var seen sync.Map
		w := rerank.Wrap(plain, &rerank.Pipeline{Stages: []rerank.Stage{textStage{&seen}},
			Fields: rerank.Fields{Title: rerank.FieldList{"subject"}, Text: rerank.FieldList{"body"}}})
		if _, err := w.Search(bleve.NewSearchRequest(bleve.NewMatchQuery("bank"))); err != nil {
			t.Fatal(err)
		}
		got, _ := seen.Load(tc.id)
		if want := [2]string{tc.title, tc.text}; got != want {
			t.Errorf("%s: stages saw title and text %q, want %q", tc.id, got, want)
		}
	}
}

// TestWrapExplainsAgreement: a hit's explanation under the agreement
// fusion names it and sums the terms of the weights it used in that
// window, which give the hit's score.
func TestWrapExplainsAgreement(t *testing.T) {
	p := shortFirst()
	p.Fusion = &rerank.Agreement{Weights: map[string]float64{"short": 1, rerank.FeatureFirstRank: 1}}
	for h, f := range explainedFusions(t, p, 8) {
		if !strings.HasPrefix(f.Message, "agreement fusion") {
			t.Fatalf("hit %s fusion explained as %q", h.ID, f.Message)
		}
		sum := 0.0
		for _, c := range f.Children {
			sum += c.Value
		}
		if math.Abs(sum-f.Value) > 1e-12 || math.Abs(f.Value-h.Score) > 1e-6*max(1, math.Abs(h.Score)) {
			t.Errorf("hit %s: terms sum to %v, fusion %v, score %v", h.ID, sum, f.Value, h.Score)
		}
	}
}

// TestWrapExplainsStagelessFusion: a pipeline without stages still fuses
// the first-stage rank, and each reranked hit's explanation gives that
// term.
func TestWrapExplainsStagelessFusion(t *testing.T) {
	p := &rerank.Pipeline{Window: 100, Fusion: &rerank.Linear{Weights: map[string]float64{rerank.FeatureFirstRank: 1}}}
	for h, f := range explainedFusions(t, p, 6) {
		if !strings.HasPrefix(f.Message, "linear fusion") || len(f.Children) != 1 || !strings.HasPrefix(f.Children[0].Message, rerank.FeatureFirstRank) {
			t.Errorf("hit %s fusion explained as %q with %d terms", h.ID, f.Message, len(f.Children))
		}
	}
}

// explainedFusions searches n documents of docs for "bank" through p with
// explanations and yields each hit with its explanation's last child, the
// fusion's; it fails the test when nothing is found.
func explainedFusions(t *testing.T, p *rerank.Pipeline, n int) iter.Seq2[*search.DocumentMatch, *search.Explanation] {
	t.Helper()
	res, err := rerank.Wrap(newIndex(t, docs("d", n)), p).Search(bleve.NewSearchRequestOptions(bleve.NewMatchQuery("bank"), n, 0, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	return func(yield func(*search.DocumentMatch, *search.Explanation) bool) {
		for _, h := range res.Hits {
			if !yield(h, h.Expl.Children[len(h.Expl.Children)-1]) {
				return
			}
		}
	}
}
