package rerank

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/semrank/semrank/internal/runs"
)

// DefaultWindow is the number of first-stage candidates reranked when a
// pipeline does not say.
const DefaultWindow = 100

// Pipeline reranks a window of first-stage candidates: every stage scores
// every candidate, and Fusion combines the stage scores with the
// first-stage score and rank into the final score.
type Pipeline struct {
	Window int     // candidates reranked; <= 0 means DefaultWindow
	Stages []Stage // run in order
	Fusion Fusion  // nil means the first stage's order is kept
	// Smooth, when set, rescores the window after the fusion: it scores
	// the candidates with each one's Score set to its fused score (the
	// first-stage score without a fusion), and its scores become the
	// hits' scores. A pipeline file's fusion.regularize sets it to the
	// regularize stage, which then smooths the fused scores over the
	// window's nearest-neighbour graph rather than the first stage's.
	// Its scores are not among Scored.StageScores.
	Smooth Stage
	// Observe, when set, is told how long each stage took, the fusion
	// (as "fusion") and the Smooth step (by its name), for metrics. Concurrent searches call it
	// concurrently.
	Observe func(stage string, d time.Duration)
	// Fields names the stored fields read as candidates' title and text;
	// the zero value reads semrank's own.
	Fields Fields

	first    firstStage     // see Query
	feedback *feedback      // first-stage feedback (see Feedback), or nil
	prepare  Preparer       // the stages' statistics, when a Preparer
	fetch    PayloadFetcher // the stages' payloads, when a PayloadFetcher
	// costs holds each stage's recent time a window, in nanoseconds (a
	// moving average), so that concurrent windows hand the costliest
	// stages out first (see stageOrder); nil for a Pipeline built by hand.
	costs []atomic.Int64
}

// Scored is a candidate after reranking.
type Scored struct {
	Candidate
	// StageScores holds each stage's raw score, in Pipeline.Stages order.
	StageScores []float64
	// Score is the fused score (smoothed, when the pipeline has a
	// Smooth step); scores within one result are distinct.
	Score float64
}

// DocReader is implemented by stages that read a candidate's stored
// document (its Title, Text and Metadata) for some candidates only: a stage
// that scores from payloads stored at index time reads the document only
// where its payload is missing. A search loads the stored fields of the
// candidates some stage reads and of no other, so a stage without this
// method is given every candidate's document. ReadsDocs tells for the
// window's candidates at once, and what it reads to tell (such as their
// payloads, ReadWindowPayloads) the stage's scoring finds again in ctx's
// WindowMemo. It must be safe for concurrent use.
type DocReader interface {
	// ReadsDocs sets reads[i] when the stage reads the stored document of
	// ids[i], and leaves the others as they are.
	ReadsDocs(ctx context.Context, ids []string, reads []bool) error
}

// MetadataReader is implemented by stages (and fusions) that tell whether
// they read candidates' Metadata. Over semrank's own index a candidate's
// metadata is stored as JSON, and a search decodes it only when some stage
// reads it (a stage without this method is taken to), else leaving
// Metadata nil, so that stages reading text alone do not pay for decoding
// a window's metadata. Over other indexes Metadata is the hit's stored
// fields, given as they are.
type MetadataReader interface {
	ReadsMetadata() bool
}

// readsMetadata reports whether a stage of p, its Smooth step or its
// fusion reads candidates' Metadata (see MetadataReader; the package's
// fusions read none).
func (p *Pipeline) readsMetadata() bool {
	for _, st := range p.windowStages() {
		if r, ok := unwrapStage(st).(MetadataReader); !ok || r.ReadsMetadata() {
			return true
		}
	}
	switch f := unwrapFusion(p.Fusion).(type) {
	case nil, *Linear, *Agreement, *RRF, *LambdaMART:
		return false
	case MetadataReader:
		return f.ReadsMetadata()
	}
	return true
}

// QueryPreparer is implemented by stages whose scoring begins with work
// on the query alone, such as weighing its terms or embedding it:
// PrepareQuery does that work and leaves its result in ctx's WindowMemo,
// where Score finds it (a Score without it does the same work itself). A
// search calls it while its first-stage search runs (prepareQueries),
// so that on a machine of several cores the work is off the window's
// path. It must be safe for concurrent use.
type QueryPreparer interface {
	PrepareQuery(ctx context.Context, q Query)
}

// prepareQueries starts, on a goroutine of its own, the query work of p's
// stages that prepare it (QueryPreparer) for q, whose window ctx's
// WindowMemo holds; on one processor it does nothing, the stages doing
// the work as they score. Nor does it when the stages' statistics are
// fetched for each window (Preparer, as a sharded collection's
// coordinator's): before the window's one fetch, weighing the query's
// terms would fetch them one by one, and before the first-stage search
// the shards' state it reads is not yet the window's.
func (p *Pipeline) prepareQueries(ctx context.Context, q Query) {
	if runtime.GOMAXPROCS(0) < 2 || WindowMemoOf(ctx) == nil || p.prepare != nil {
		return
	}
	var preps []QueryPreparer
	for _, st := range p.Stages {
		if qp, ok := unwrapStage(st).(QueryPreparer); ok {
			preps = append(preps, qp)
		}
	}
	if len(preps) == 0 {
		return
	}
	go func() {
		for _, qp := range preps {
			if ctx.Err() != nil {
				return
			}
			prepareQuery(ctx, qp, q)
		}
	}()
}

// prepareQuery calls qp.PrepareQuery, whose panic is not let crash the
// process from a goroutine of its own: the stage's Score meets the same
// failure, and reports it.
func prepareQuery(ctx context.Context, qp QueryPreparer, q Query) {
	defer func() { _ = recover() }()
	qp.PrepareQuery(ctx, q)
}

// windowDocs fetches the payloads of ids, the window's candidates, when
// they are read from elsewhere (PayloadFetcher), and reports which of
// their stored documents the stages read and which stages read none
// (readsDocs).
func (p *Pipeline) windowDocs(ctx context.Context, ids []string) (reads, docless []bool, err error) {
	if p.fetch != nil && len(p.windowStages()) > 0 && len(ids) > 0 {
		if err := p.fetch.FetchPayloads(ctx, ids); err != nil {
			return nil, nil, err
		}
	}
	if err := p.readPayloads(ctx, ids); err != nil {
		return nil, nil, err
	}
	return p.readsDocs(ctx, ids)
}

// readPayloads reads the payloads of ids that p's stages read
// (PayloadReader), each store's together (ReadWindowPayloadKinds), for
// the stages to find in the window's memo: one lookup of a document for
// all of them rather than one a payload.
func (p *Pipeline) readPayloads(ctx context.Context, ids []string) error {
	var stores []Payloads
	kinds := map[Payloads][]PayloadKind{}
	for _, st := range p.windowStages() {
		r, ok := unwrapStage(st).(PayloadReader)
		if !ok {
			continue
		}
		store, ks := r.WindowPayloads()
		if store == nil || !reflect.TypeOf(store).Comparable() {
			continue
		}
		if _, seen := kinds[store]; !seen {
			stores = append(stores, store)
		}
		for _, k := range ks {
			if !slices.Contains(kinds[store], k) {
				kinds[store] = append(kinds[store], k)
			}
		}
	}
	for _, store := range stores {
		if len(kinds[store]) < 2 {
			continue // read by the stage alone as cheaply
		}
		if err := ReadWindowPayloadKinds(ctx, store, kinds[store], ids); err != nil {
			return err
		}
	}
	return nil
}

// readsDocs reports, for each of ids, whether a stage of p reads its
// stored document (DocReader; a stage that cannot tell reads them all),
// and, for each of p.Stages, whether it reads none of them. The stages
// tell concurrently, as they score (see runs.Each).
func (p *Pipeline) readsDocs(ctx context.Context, ids []string) (reads, docless []bool, err error) {
	reads = make([]bool, len(ids))
	stages := p.windowStages()
	readers := make([]DocReader, len(stages))
	for i, st := range stages {
		readers[i], _ = unwrapStage(st).(DocReader)
	}
	// In the order the stages score (stageOrder): the costliest first,
	// which read different payloads, so that the workers read them at
	// once rather than one wait on another's read of the same.
	// When several fail, the error is the first failing stage's in
	// pipeline order. The Smooth step, if any, tells last.
	order := p.stageOrder()
	if len(stages) > len(order) {
		order = append(order, len(order))
	}
	each := make([][]bool, len(readers))
	errs := make([]error, len(readers))
	_ = runs.Each(len(order), func(k int) error {
		i := order[k]
		each[i] = make([]bool, len(ids))
		if readers[i] == nil {
			for j := range each[i] {
				each[i][j] = true
			}
			return nil
		}
		errs[i] = readers[i].ReadsDocs(ctx, ids, each[i])
		return errs[i]
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	docless = make([]bool, len(p.Stages))
	for s, r := range each {
		if s < len(docless) {
			docless[s] = !slices.Contains(r, true)
		}
		for i, x := range r {
			reads[i] = reads[i] || x
		}
	}
	return reads, docless, nil
}

// windowStages returns p's stages and then its Smooth step, if any: what
// reads the window's documents and payloads.
func (p *Pipeline) windowStages() []Stage {
	if p.Smooth == nil {
		return p.Stages
	}
	return append(slices.Clip(p.Stages), p.Smooth)
}

// WindowSize returns the effective window.
func (p *Pipeline) WindowSize() int {
	if p.Window <= 0 {
		return DefaultWindow
	}
	return p.Window
}

// StageNames returns the stages' names in order.
func (p *Pipeline) StageNames() []string {
	out := make([]string, len(p.Stages))
	for i, s := range p.Stages {
		out[i] = s.Name()
	}
	return out
}

// equalWeights returns a weight of 1 for every stage and the first-stage
// rank: a linear fusion's weights when the pipeline gives none.
func (p *Pipeline) equalWeights() map[string]float64 {
	w := map[string]float64{FeatureFirstRank: 1}
	for _, st := range p.Stages {
		w[st.Name()] = 1
	}
	return w
}

// stage returns the stage called name, or nil; Build gives no two stages
// one name.
func (p *Pipeline) stage(name string) Stage {
	for _, st := range p.Stages {
		if st.Name() == name {
			return st
		}
	}
	return nil
}

// ranked returns cands with each unset Rank (0 or less) set to the
// candidate's place, i+1: cands itself when every Rank is set, else a copy.
func ranked(cands []Candidate) []Candidate {
	for i, c := range cands {
		if c.Rank > 0 {
			continue
		}
		out := slices.Clone(cands)
		for j := i; j < len(out); j++ {
			if out[j].Rank <= 0 {
				out[j].Rank = j + 1
			}
		}
		return out
	}
	return cands
}

// ScoreStages runs every stage over cands and returns scores[stage][cand].
// The stages run concurrently, up to GOMAXPROCS at once (each is safe for
// concurrent use, and each one's scores depend on nothing the others do);
// when several fail, the error is the first failing stage's in pipeline
// order. Statistics read from elsewhere (Preparer) are fetched first.
func (p *Pipeline) ScoreStages(ctx context.Context, q Query, cands []Candidate) ([][]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.prepare != nil && len(p.windowStages()) > 0 {
		if err := p.prepare.Prepare(ctx, q, cands); err != nil {
			return nil, err
		}
	}
	scores := make([][]float64, len(p.Stages))
	errs := make([]error, len(p.Stages))
	if WindowMemoOf(ctx) == nil {
		ctx = withWindowMemo(ctx)
	}
	order := p.stageOrder()
	a := aheadOf(ctx, cands)
	_ = runs.Each(len(order), func(k int) error {
		i := order[k]
		if a != nil && !a.state[i].CompareAndSwap(unclaimed, scoreClaimed) {
			return nil // being scored ahead: taken below
		}
		scores[i], errs[i] = p.scoreCosted(ctx, i, q, cands)
		return errs[i]
	})
	if a != nil {
		for i := range p.Stages {
			if a.state[i].Load() == aheadClaimed {
				<-a.done[i]
				scores[i], errs[i] = a.scores[i], a.errs[i]
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return scores, nil
}

// stageOrder returns the order in which ScoreStages hands p's stages to
// its workers: on several processors the costliest first (by their recent
// times, less what they waited for results other stages computed for
// them, WindowMemo; ties in pipeline order), so that a long stage is not
// left to start last while the other workers idle, nor a stage that
// waits on another's result started early to hold a worker idle; on one,
// pipeline order.
func (p *Pipeline) stageOrder() []int {
	order := make([]int, len(p.Stages))
	for i := range order {
		order[i] = i
	}
	if len(p.costs) != len(p.Stages) || runtime.GOMAXPROCS(0) <= 1 {
		return order
	}
	cost := make([]int64, len(order))
	for i := range cost {
		cost[i] = p.costs[i].Load()
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	return order
}

// observeCost folds d, stage i's time for one window, into its moving
// average (weight 1/8). Windows scored at once may overwrite each other's
// update, which only slows the average.
func (p *Pipeline) observeCost(i int, d time.Duration) {
	if len(p.costs) != len(p.Stages) {
		return
	}
	c := &p.costs[i]
	old := c.Load()
	c.Store(old + (int64(d)-old)/8)
}

// scoreStage runs one stage over cands and checks its scores: one finite
// score per candidate.
func (p *Pipeline) scoreStage(ctx context.Context, st Stage, q Query, cands []Candidate) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	s, err := score(ctx, st, q, cands)
	if err != nil {
		return nil, err
	}
	if len(s) != len(cands) {
		return nil, fmt.Errorf("rerank: stage %s returned %d scores for %d candidates", st.Name(), len(s), len(cands))
	}
	for j, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("rerank: stage %s gave candidate %q a non-finite score", st.Name(), cands[j].ID)
		}
	}
	if p.Observe != nil {
		p.Observe(st.Name(), time.Since(start))
	}
	return s, nil
}

// StagePanic is the error for a stage whose Score panicked. A stage is
// code a pipeline file names, often a user's own: its panic becomes an
// error naming it, which a server answers and logs (with Stack), rather
// than a crash far from the stage or a dropped connection.
type StagePanic struct {
	Stage string
	Value any    // what the stage panicked with
	Stack []byte // the stage's goroutine stack at the panic
}

func (e *StagePanic) Error() string {
	return fmt.Sprintf("rerank: stage %s panicked: %v", e.Stage, e.Value)
}

// score runs st over cands, turning a panic into a *StagePanic.
func score(ctx context.Context, st Stage, q Query, cands []Candidate) (s []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, &StagePanic{Stage: st.Name(), Value: r, Stack: debug.Stack()}
		}
	}()
	s, err = st.Score(ctx, q, cands)
	if err != nil {
		return nil, fmt.Errorf("rerank: stage %s: %w", st.Name(), err)
	}
	return s, nil
}

// WindowInput returns what p's fusion fused for a window that Rerank
// returned as scored: the candidates the stages scored (those with
// StageScores), back in first-stage order, with their stage scores. The
// fusion's features and terms (Linear's and Agreement's Terms) come out
// of it as the search computed them, to the last bit.
func (p *Pipeline) WindowInput(scored []Scored) FusionInput {
	var window []Scored
	for _, sc := range scored {
		if sc.StageScores != nil {
			window = append(window, sc)
		}
	}
	slices.SortFunc(window, func(a, b Scored) int { return cmp.Compare(a.Rank, b.Rank) })
	in := FusionInput{Names: p.StageNames(), Candidates: make([]Candidate, len(window)), Scores: make([][]float64, len(p.Stages))}
	for st := range in.Scores {
		in.Scores[st] = make([]float64, len(window))
	}
	for i, sc := range window {
		in.Candidates[i] = sc.Candidate
		for st := range in.Scores {
			in.Scores[st][i] = sc.StageScores[st]
		}
	}
	return in
}

// Rerank scores cands (in first-stage order, Rank set) and returns them
// sorted by fused score, highest first. A candidate whose Rank is not set
// (0) takes its place in cands, i+1, as its rank: candidates built by hand
// would otherwise all share rank 1, and the fusion's first-stage rank
// feature would silently weigh nothing. Only the first WindowSize
// candidates are reranked; any beyond follow in their first-stage order,
// below every reranked one. A Smooth step rescores the fused scores
// before the window is sorted.
func (p *Pipeline) Rerank(ctx context.Context, q Query, cands []Candidate) ([]Scored, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	cands = ranked(cands)
	w := min(p.WindowSize(), len(cands))
	head := cands[:w]
	if WindowMemoOf(ctx) == nil {
		// One memo for the stages and the Smooth step, which reads
		// the window's payloads as they do.
		ctx = withWindowMemo(ctx)
	}
	scores, err := p.ScoreStages(ctx, q, head)
	if err != nil {
		return nil, err
	}
	fused := make([]float64, w)
	if p.Fusion != nil {
		start := time.Now()
		fused, err = p.Fusion.Fuse(FusionInput{Names: p.StageNames(), Candidates: head, Scores: scores})
		if err != nil {
			return nil, err
		}
		if p.Observe != nil {
			p.Observe("fusion", time.Since(start))
		}
		if err := checkFused(fused, head); err != nil {
			return nil, err
		}
	} else {
		for i, c := range head {
			fused[i] = c.Score
		}
	}
	if p.Smooth != nil {
		if fused, err = p.smooth(ctx, q, head, fused); err != nil {
			return nil, err
		}
	}
	// The window by fused score, ties by first-stage rank, then in
	// candidate order: an order of indices, not of the (large) Scored
	// values. The order is total, so an unstable sort gives it.
	order := make([]int, w)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if fused[i] != fused[j] {
			if fused[i] > fused[j] {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(head[i].Rank, head[j].Rank); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	out := make([]Scored, len(cands))
	stageScores := make([]float64, w*len(scores))
	for k, i := range order {
		out[k] = Scored{Candidate: head[i], Score: fused[i], StageScores: stageScores[k*len(scores) : (k+1)*len(scores) : (k+1)*len(scores)]}
		for s := range scores {
			out[k].StageScores[s] = scores[s][i]
		}
	}
	for i := w; i < len(cands); i++ {
		out[i].Candidate = cands[i]
	}
	// Make scores strictly decreasing so any evaluator sorts as we do, and
	// put the tail below the window.
	for i := 1; i < len(out); i++ {
		if i >= w || out[i].Score >= out[i-1].Score {
			out[i].Score = math.Nextafter(out[i-1].Score, math.Inf(-1))
			if i >= w {
				out[i].Score = tailScore(out[i-1].Score)
			}
		}
	}
	return out, nil
}

// smooth returns the Smooth step's scores of the window head whose fused
// scores are fused: the step scores the candidates with fused as their
// Score.
func (p *Pipeline) smooth(ctx context.Context, q Query, head []Candidate, fused []float64) ([]float64, error) {
	in := slices.Clone(head)
	for i := range in {
		in[i].Score = fused[i]
	}
	return p.scoreStage(ctx, p.Smooth, q, in)
}

// tailScore is the score Rerank gives a candidate below the window whose
// predecessor scored prev: a step down of a millionth (relative where prev
// is large), so the tail keeps its first-stage order below every reranked
// candidate. Wrap also reads it, to tell how far down a score lies.
func tailScore(prev float64) float64 { return prev - 1e-6*math.Max(1, math.Abs(prev)) }

// checkFused refuses fused scores that are not one finite number per
// candidate: a NaN sorts nowhere, so the order would be arbitrary, and
// the scores could not be encoded as JSON.
func checkFused(fused []float64, cands []Candidate) error {
	if len(fused) != len(cands) {
		return fmt.Errorf("rerank: fusion returned %d scores for %d candidates", len(fused), len(cands))
	}
	for i, v := range fused {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("rerank: fusion gave candidate %q a non-finite score", cands[i].ID)
		}
	}
	return nil
}
