package server

import (
	"context"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"github.com/semrank/semrank/rerank"
)

// A probe watches one search through rerank.Wrap from both sides: the
// first-stage search underneath (probeIndex) and the fusion of stage
// scores (recordFusion). It lets the API report each hit's first-stage rank
// and stage scores while the reranking itself stays rerank.Wrap's, the
// same code library users run. A probe belongs to one request.
type probe struct {
	metrics *metrics

	firstErr  error               // the first stage's error, if any
	firstTook time.Duration       // the first stage's time, over all its searches
	firstRan  bool                // whether a first-stage search succeeded
	firstHits []firstHit          // the first-stage list, in order
	first     map[string]firstHit // by id
	// The last search underneath and its offset, kept (not recorded) in
	// case Wrap passes the request through; see settle.
	last     search.DocumentMatchCollection
	lastFrom int
	hooked   bool     // Wrap's FirstStage hook recorded its list
	names    []string // stage names
	scores   map[string][]float64
	fused    map[string]float64 // fused scores of the window
}

type firstHit struct {
	id        string
	rank      int
	score     float64
	fields    map[string]any
	fragments search.FieldFragmentMap
}

// bleveIndex lets probeIndex embed bleve.Index: embedding the interface
// directly would clash with its Index method.
type bleveIndex = bleve.Index

// probeIndex is the index rerank.Wrap searches: it times the first stage
// and keeps its error. Wrap's first-stage lists are recorded through its
// FirstStage hook (record), which sees them ordered and cut as Wrap
// reranks them; a search Wrap passes through is the first stage alone,
// recorded here.
type probeIndex struct {
	bleveIndex
	probe *probe
}

func (x probeIndex) Search(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	return x.SearchInContext(context.Background(), req)
}

func (x probeIndex) SearchInContext(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	start := time.Now()
	res, err := x.bleveIndex.SearchInContext(ctx, req)
	p := x.probe
	p.firstTook += time.Since(start) // a tie at the window's edge searches again
	if err != nil {
		p.firstErr = err
		return nil, err
	}
	p.firstRan = true
	p.last, p.lastFrom = res.Hits, req.From
	return res, nil
}

// hook is Wrap's FirstStage hook: its first-stage list, complete.
func (p *probe) hook(hits search.DocumentMatchCollection) {
	p.record(hits, 0)
	p.hooked = true
}

// settle records the first-stage list of a search Wrap passed through:
// the search underneath alone, in Bleve's order, as Bleve paged it. Wrap's
// own first-stage searches (reranked or WithoutRerank) are recorded by its
// hook once the list is complete, so their several searches underneath
// are never recorded.
func (p *probe) settle() {
	if !p.hooked && p.last != nil {
		p.record(p.last, p.lastFrom)
	}
}

// record keeps hits as the first-stage list, the first at rank from+1.
func (p *probe) record(hits search.DocumentMatchCollection, from int) {
	p.first = make(map[string]firstHit, len(hits))
	p.firstHits = make([]firstHit, len(hits))
	for i, h := range hits {
		// Wrap replaces h.Fields and h.Score afterwards; keep ours.
		f := firstHit{id: h.ID, rank: from + i + 1, score: h.Score, fields: h.Fields, fragments: h.Fragments}
		p.firstHits[i] = f
		p.first[h.ID] = f
	}
}

// observe records the first stage's time in the metrics, once per request
// whose first stage succeeded.
func (p *probe) observe() {
	if p.firstRan && p.firstErr == nil {
		p.metrics.observeStage("first_stage", p.firstTook)
	}
}

// recordFusion is the pipeline's fusion with the stage scores and fused
// scores recorded. With no inner fusion it keeps the first-stage scores,
// as Pipeline.Rerank does without one.
type recordFusion struct {
	inner rerank.Fusion
	probe *probe
}

// Unwrap returns the pipeline's own fusion, so that rerank.Index explains
// a linear fusion's terms through the recorder.
func (f *recordFusion) Unwrap() rerank.Fusion { return f.inner }

func (f *recordFusion) Fuse(in rerank.FusionInput) ([]float64, error) {
	start := time.Now()
	var out []float64
	if f.inner != nil {
		var err error
		if out, err = f.inner.Fuse(in); err != nil {
			return nil, err
		}
		f.probe.metrics.observeStage("fusion", time.Since(start))
	} else {
		out = make([]float64, len(in.Candidates))
		for i, c := range in.Candidates {
			out[i] = c.Score
		}
	}
	p := f.probe
	p.names = in.Names
	p.scores = make(map[string][]float64, len(in.Candidates))
	p.fused = make(map[string]float64, len(in.Candidates))
	for i, c := range in.Candidates {
		s := make([]float64, len(in.Scores))
		for j := range in.Scores {
			s[j] = in.Scores[j][i]
		}
		p.scores[c.ID] = s
		p.fused[c.ID] = out[i]
	}
	return out, nil
}

// stageScores returns id's stage scores by stage name, nil outside the
// window.
func (p *probe) stageScores(id string) map[string]float64 {
	s, ok := p.scores[id]
	if !ok {
		return nil
	}
	out := make(map[string]float64, len(s))
	for j, name := range p.names {
		out[name] = s[j]
	}
	return out
}

// rerankedRank returns where the pipeline put the first-stage hit f: inside
// the window, one plus the number of window candidates fused above it (ties
// broken by first-stage rank, as Pipeline.Rerank does); outside, its own
// rank, since the tail keeps first-stage order.
func (p *probe) rerankedRank(f firstHit) int {
	mine, ok := p.fused[f.id]
	if !ok {
		return f.rank
	}
	r := 1
	for id, v := range p.fused {
		if v > mine || (v == mine && p.first[id].rank < f.rank) {
			r++
		}
	}
	return r
}

// firstPage returns the first-stage hits at positions from+1..from+size.
func (p *probe) firstPage(from, size int, fields []string) []Hit {
	var out []Hit
	for _, f := range p.firstHits {
		if f.rank <= from || f.rank > from+size {
			continue
		}
		h := Hit{ID: f.id, Rank: f.rank, Score: f.score, FirstStageRank: f.rank, FirstStageScore: f.score,
			RerankedRank: p.rerankedRank(f), StageScores: p.stageScores(f.id), Fields: pick(f.fields, fields), Fragments: f.fragments}
		out = append(out, h)
	}
	return out
}

// pick returns the wanted stored fields of have ("*": all).
func pick(have map[string]any, want []string) map[string]any {
	if slices.Contains(want, "*") {
		return have
	}
	var out map[string]any
	for _, k := range want {
		if v, ok := have[k]; ok {
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}
