package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// gate is a stage that blocks until released, to hold requests in flight.
// entered receives once per Score call.
var gate struct {
	mu      sync.Mutex
	release chan struct{}
	entered chan struct{}
}

func init() {
	rerank.RegisterStage("test_gate", func(rerank.StageSpec, rerank.Env) (rerank.Stage, error) { return gateStage{}, nil })
}

type gateStage struct{}

func (gateStage) Name() string { return "gate" }

func (gateStage) Score(ctx context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	gate.mu.Lock()
	release, entered := gate.release, gate.entered
	gate.mu.Unlock()
	entered <- struct{}{}
	select {
	case <-release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return make([]float64, len(cands)), nil
}

func armGate() (release, entered chan struct{}) {
	gate.mu.Lock()
	defer gate.mu.Unlock()
	gate.release, gate.entered = make(chan struct{}), make(chan struct{}, 16)
	return gate.release, gate.entered
}

const gatePipeline = "window: 10\nstages:\n  - type: test_gate\n"

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestReloadUnderLoad reloads the pipeline, alternating two files and one
// broken file, while clients search without pause: no search may fail, and
// each answer must come wholly from one generation's pipeline.
func TestReloadUnderLoad(t *testing.T) {
	idx, _ := demoIndex(t)
	s, ts, path := newServer(t, idx, lexicalPipeline, func(c *Config) { c.AdminToken = "sesame" })
	files := []struct{ yaml, stages string }{
		{"window: 20\nstages:\n  - type: tfidf\n  - type: bm25\n", "tfidf,bm25"},
		{lexicalPipeline, "tfidf,overlap"},
	}
	var mu sync.Mutex
	stagesOf := map[int]string{1: "tfidf,overlap"}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var searches, failures atomic.Int64
	var firstFailure atomic.Value
	queries := []string{"best bank in Doha", "visa renewal for my wife", "where to buy a used car", "driving license test"}
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				body := fmt.Sprintf(`{"query": %q, "size": 5}`, queries[(c+i)%len(queries)])
				code, raw, err := do("POST", ts.URL+"/api/search", body, "")
				var res SearchResponse
				if err == nil && code == http.StatusOK {
					err = json.Unmarshal(raw, &res)
				} else if err == nil {
					err = fmt.Errorf("status %d: %s", code, raw)
				}
				if err == nil {
					mu.Lock()
					want, ok := stagesOf[res.Generation]
					mu.Unlock()
					if got := strings.Join(res.Stages, ","); !ok || got != want {
						err = fmt.Errorf("generation %d answered with stages %s, want %s", res.Generation, got, want)
					}
				}
				searches.Add(1)
				if err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}

	reloads := 0
	for i := range 12 {
		f := files[i%2]
		if i == 5 {
			// A broken file: the reload fails and the old pipeline serves on.
			if err := os.WriteFile(path, []byte("stages:\n  - type: no_such_stage\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, raw, err := do("POST", ts.URL+"/api/admin/reload", nil, "sesame")
			if err != nil || code != http.StatusInternalServerError || !strings.Contains(string(raw), "no_such_stage") {
				t.Errorf("broken reload: %d %s %v", code, raw, err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(f.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		// The stages of the next generation are known before it exists.
		mu.Lock()
		stagesOf[s.Generation()+1] = f.stages
		mu.Unlock()
		var rr ReloadResponse
		if code := call(t, "POST", ts.URL+"/api/admin/reload", nil, &rr); code != http.StatusUnauthorized {
			t.Errorf("reload without the token: %d", code)
		}
		code, raw, err := do("POST", ts.URL+"/api/admin/reload", "{}", "sesame")
		if err != nil || code != http.StatusOK || json.Unmarshal(raw, &rr) != nil || strings.Join(rr.Stages, ",") != f.stages {
			t.Fatalf("reload %d: %d %s %v", i, code, raw, err)
		}
		reloads++
		time.Sleep(15 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Errorf("%d of %d searches failed during reloads; first: %v", n, searches.Load(), firstFailure.Load())
	}
	if s.Generation() != 1+reloads {
		t.Errorf("generation %d after %d reloads", s.Generation(), reloads)
	}
	t.Logf("%d searches during %d reloads", searches.Load(), reloads)
}

// TestReloadKeepsInFlight holds a search inside a stage while the pipeline
// is reloaded: it finishes on the pipeline it started with.
func TestReloadKeepsInFlight(t *testing.T) {
	idx, _ := demoIndex(t)
	s, ts, path := newServer(t, idx, gatePipeline, nil)
	release, entered := armGate()
	done := make(chan SearchResponse, 1)
	go func() {
		var res SearchResponse
		call(t, "POST", ts.URL+"/api/search", `{"query": "visa"}`, &res)
		done <- res
	}()
	<-entered
	if err := os.WriteFile(path, []byte(lexicalPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	// SIGHUP reaches the server through ReloadOn.
	hup := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ReloadOn(ctx, hup)
	hup <- syscall.SIGHUP
	for s.Generation() != 2 {
		time.Sleep(time.Millisecond)
	}
	var now SearchResponse
	call(t, "POST", ts.URL+"/api/search", `{"query": "visa"}`, &now)
	close(release)
	old := <-done
	if old.Generation != 1 || strings.Join(old.Stages, ",") != "gate" || now.Generation != 2 || strings.Join(now.Stages, ",") != "tfidf,overlap" {
		t.Errorf("in-flight answer: generation %d stages %v; new answer: generation %d stages %v", old.Generation, old.Stages, now.Generation, now.Stages)
	}
}

// TestGracefulShutdown stops the server while a search is in flight: the
// search completes, new connections are refused, Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	idx, _ := demoIndex(t)
	s, _, _ := newServer(t, idx, gatePipeline, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l, 10*time.Second) }()

	release, entered := armGate()
	type answer struct {
		code int
		body []byte
		err  error
	}
	inflight := make(chan answer, 1)
	go func() {
		code, body, err := do("POST", url+"/api/search", `{"query": "visa", "size": 3}`, "")
		inflight <- answer{code, body, err}
	}()
	<-entered
	cancel()
	// Once shutdown has begun the listener is closed.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", l.Addr().String(), 100*time.Millisecond)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepts connections after shutdown began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) before the in-flight request finished", err)
	default:
	}
	close(release)
	a := <-inflight
	if a.err != nil || a.code != http.StatusOK {
		t.Errorf("in-flight request: %d %s %v", a.code, a.body, a.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, gatePipeline, func(c *Config) { c.Limits.Timeout = 50 * time.Millisecond })
	armGate() // never released: the stage waits for the deadline
	var e ErrorBody
	code := call(t, "POST", ts.URL+"/api/search", `{"query": "visa"}`, &e)
	if code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "longer than the limit of 50ms") {
		t.Errorf("got %d %+v", code, e)
	}
}

func TestNewErrors(t *testing.T) {
	idx, _ := demoIndex(t)
	dir := t.TempDir()
	good := writePipeline(t, t.TempDir(), lexicalPipeline)
	limits := func(l Limits) Config { return Config{Index: idx, PipelinePath: good, Limits: l} }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{PipelinePath: "p.yaml"}, "no index"},
		{limits(Limits{MaxSize: -1}), "Limits.MaxSize -1: want a positive number, or 0 for the default"},
		{limits(Limits{MaxWindow: -5}), "Limits.MaxWindow -5"},
		{limits(Limits{MaxBodyBytes: -1}), "Limits.MaxBodyBytes -1"},
		{limits(Limits{MaxIndexBodyBytes: -1}), "Limits.MaxIndexBodyBytes -1"},
		{limits(Limits{MaxQueryBytes: -1}), "Limits.MaxQueryBytes -1"},
		{limits(Limits{MaxFrom: -1}), "Limits.MaxFrom -1"},
		{limits(Limits{MaxFields: -1}), "Limits.MaxFields -1"},
		{limits(Limits{MaxIndexDocs: -1}), "Limits.MaxIndexDocs -1"},
		{limits(Limits{MaxIDBytes: -1}), "Limits.MaxIDBytes -1"},
		{limits(Limits{Timeout: -time.Second}), "Limits.Timeout -1s: want a positive duration"},
		{limits(Limits{MaxDocBytes: -1}), "Limits.MaxDocBytes -1"},
		{limits(Limits{MaxQueuedIndexBytes: -1}), "Limits.MaxQueuedIndexBytes -1"},
		{limits(Limits{MaxQueuedIndexBytes: 1 << 20}), "Limits.MaxQueuedIndexBytes 1048576 is less than MaxIndexBodyBytes 33554432"},
		{limits(Limits{MaxIndexBodyBytes: 100, MaxQueuedIndexBytes: 99}), "Limits.MaxQueuedIndexBytes 99 is less than MaxIndexBodyBytes 100"},
		{Config{Index: idx}, "no pipeline file"},
		{Config{Index: idx, PipelinePath: dir + "/missing.yaml"}, "no such file"},
		{Config{Index: idx, PipelinePath: writePipeline(t, dir, "stages:\n  - type: nope\n")}, `unknown stage type "nope"`},
	} {
		tc.cfg.Logger = quiet
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New(Config{Index: idx, PipelinePath: "x", Logger: quiet}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReloadOnStops checks that ReloadOn returns when its context is done
// and when its signal channel is closed, rather than reloading without end.
func TestReloadOnStops(t *testing.T) {
	idx, _ := demoIndex(t)
	s, _, _ := newServer(t, idx, lexicalPipeline, nil)
	for _, tc := range []struct {
		name string
		stop func(cancel context.CancelFunc, sig chan os.Signal)
	}{
		{"context done", func(cancel context.CancelFunc, _ chan os.Signal) { cancel() }},
		{"channel closed", func(_ context.CancelFunc, sig chan os.Signal) { close(sig) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sig := make(chan os.Signal, 1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.ReloadOn(ctx, sig)
			}()
			gen := s.Generation()
			tc.stop(cancel, sig)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReloadOn still running")
			}
			if got := s.Generation(); got != gen {
				t.Errorf("generation %d after stopping, was %d: ReloadOn reloaded with no signal", got, gen)
			}
		})
	}
}

// lockCheck is a stage with a payload encoder that records, when the stage
// is built (by a reload) and when it is asked for its encoder (by an index
// batch), whether the server's write lock is held: a reload must not come
// between a batch choosing its encoders and writing, nor a batch between a
// reload checking the stored payloads and publishing its pipeline.
var lockCheck struct {
	mu     sync.Mutex
	server *Server
	seen   []string // "EVENT held" or "EVENT free"
}

func init() {
	rerank.RegisterStage("test_lock_check", func(rerank.StageSpec, rerank.Env) (rerank.Stage, error) {
		noteLock("build")
		return lockCheckStage{}, nil
	})
}

func noteLock(event string) {
	lockCheck.mu.Lock()
	defer lockCheck.mu.Unlock()
	s := lockCheck.server
	if s == nil {
		return
	}
	state := "held"
	if s.writeMu.TryLock() {
		s.writeMu.Unlock()
		state = "free"
	}
	lockCheck.seen = append(lockCheck.seen, event+" "+state)
}

type lockCheckStage struct{}

func (lockCheckStage) Name() string { return "lock_check" }

func (lockCheckStage) Score(_ context.Context, _ rerank.Query, cands []rerank.Candidate) ([]float64, error) {
	return make([]float64, len(cands)), nil
}

func (lockCheckStage) PayloadEncoder() rerank.PayloadEncoder {
	noteLock("encoders")
	return lockCheckStage{}
}

func (lockCheckStage) PayloadName() string { return "lock_check" }

func (lockCheckStage) ModelID() string { return "lock-check-v1" }

func (lockCheckStage) EncodePayload(dataset.Doc) ([]byte, error) { return []byte{1}, nil }

func TestWriteLockCoversPipeline(t *testing.T) {
	_, ds := demoIndex(t)
	s, ts, _ := newServer(t, newIndex(t, ds.Corpus[:20]), "stages:\n  - type: test_lock_check\n", nil)
	lockCheck.mu.Lock()
	lockCheck.server = s
	lockCheck.mu.Unlock()
	t.Cleanup(func() {
		lockCheck.mu.Lock()
		lockCheck.server, lockCheck.seen = nil, nil
		lockCheck.mu.Unlock()
	})
	for _, tc := range []struct {
		name  string
		event string
		do    func() error
	}{
		{"index batch", "encoders", func() error {
			if code := call(t, "POST", ts.URL+"/api/index", `{"add": [{"_id": "lock-1", "text": "camel racing"}]}`, nil); code != http.StatusOK {
				return fmt.Errorf("status %d", code)
			}
			return nil
		}},
		{"reload endpoint", "build", func() error {
			if code := call(t, "POST", ts.URL+"/api/admin/reload", nil, nil); code != http.StatusOK {
				return fmt.Errorf("status %d", code)
			}
			return nil
		}},
		{"Reload", "build", func() error { _, err := s.Reload(context.Background()); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lockCheck.mu.Lock()
			lockCheck.seen = nil
			lockCheck.mu.Unlock()
			if err := tc.do(); err != nil {
				t.Fatal(err)
			}
			lockCheck.mu.Lock()
			seen := lockCheck.seen
			lockCheck.mu.Unlock()
			if !slices.Contains(seen, tc.event+" held") || slices.ContainsFunc(seen, func(e string) bool { return strings.HasSuffix(e, " free") }) {
				t.Errorf("pipeline used with the write lock %v, want %q held throughout", seen, tc.event)
			}
		})
	}
}

// TestReloadBody: a reload takes an empty body, null or an empty object,
// however it is spaced, and nothing else.
func TestReloadBody(t *testing.T) {
	idx, _ := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	for _, tc := range []struct {
		body string
		code int
	}{
		{"", 200}, {"{}", 200}, {"{ }", 200}, {" {\n} \n", 200}, {"null", 200},
		{`{"path": "/tmp/other.yaml"}`, 400}, {"[]", 400}, {`""`, 400}, {"{} {}", 400}, {"{", 400},
	} {
		var e ErrorBody
		code := call(t, "POST", ts.URL+"/api/admin/reload", tc.body, &e)
		if code != tc.code || code != 200 && !strings.Contains(e.Error, "takes no parameters") {
			t.Errorf("%q: got %d %+v, want %d", tc.body, code, e, tc.code)
		}
	}
}

// TestReloadWaitTimesOut: a reload that waits past the request timeout
// for an index batch (here, the write lock held by the test) is a 503
// timeout, as any request that takes too long, not a failed pipeline.
func TestReloadWaitTimesOut(t *testing.T) {
	idx, _ := demoIndex(t)
	s, ts, _ := newServer(t, idx, lexicalPipeline, func(c *Config) { c.Limits.Timeout = 50 * time.Millisecond })
	if err := s.writeMu.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond) // past the timeout
		s.writeMu.Unlock()
	}()
	var e ErrorBody
	code := call(t, "POST", ts.URL+"/api/admin/reload", nil, &e)
	if code != http.StatusServiceUnavailable || !strings.Contains(e.Error, "longer than the limit of 50ms") {
		t.Errorf("got %d %+v, want 503", code, e)
	}
	if s.Generation() != 1 {
		t.Errorf("generation %d after a reload that timed out", s.Generation())
	}
}

// TestShutdownAfterGrace: a request still running when the grace period
// ends is cancelled, its connection closed, rather than left running
// after Serve has returned (and its index perhaps closed).
func TestShutdownAfterGrace(t *testing.T) {
	idx, _ := demoIndex(t)
	s, _, _ := newServer(t, idx, gatePipeline, nil) // the request timeout is 10s
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l, 100*time.Millisecond) }()
	release, entered := armGate() // never released: the stage waits for its context
	defer close(release)
	answered := make(chan error, 1)
	go func() {
		_, _, err := do("POST", "http://"+l.Addr().String()+"/api/search", `{"query": "visa"}`, "")
		answered <- err
	}()
	<-entered
	start := time.Now()
	cancel()
	if err := <-served; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Serve: %v, want the grace period's deadline", err)
	}
	select {
	case err := <-answered:
		if err == nil {
			t.Error("the request cut off by shutdown got an answer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request is still running 5s after the grace period ended")
	}
	t.Logf("request ended %s after shutdown began", time.Since(start).Round(time.Millisecond))
}

// TryLock locks m if it is free and reports whether it did (for tests that
// look at the lock without waiting).
func (m ctxMutex) TryLock() bool {
	select {
	case m <- struct{}{}:
		return true
	default:
		return false
	}
}

// TestReloadMeetsChangedModel: a reload that meets a listed file changed
// since the pipeline file was written (a recipe publishing) is a 503 with
// Retry-After, and the running pipeline keeps serving.
func TestReloadMeetsChangedModel(t *testing.T) {
	idx, _ := demoIndex(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "notes.model")
	if err := os.WriteFile(model, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := rerank.FileSHA256(model)
	if err != nil {
		t.Fatal(err)
	}
	path := writePipeline(t, dir, lexicalPipeline+"sha256:\n  notes.model: "+sum+"\n")
	s, err := New(Config{Index: idx, PipelinePath: path, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	if err := os.WriteFile(model, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/api/admin/reload", nil)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if s.Generation() != 1 {
		t.Errorf("generation %d after the failed reload, want 1", s.Generation())
	}
}
