package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/rerank"
)

// panicStage panics on every query: a user's stage with a bug.
type panicStage struct{}

func (panicStage) Name() string { return "test_panic" }
func (panicStage) Score(context.Context, rerank.Query, []rerank.Candidate) ([]float64, error) {
	var scores []float64
	return scores[:1], nil // out of range
}

func init() {
	rerank.RegisterStage("test_panic", func(rerank.StageSpec, rerank.Env) (rerank.Stage, error) { return panicStage{}, nil })
}

// TestStagePanicAnswered: a stage that panics fails its request with a
// 500 naming the stage, the log has the stage's stack, and the server
// goes on serving.
func TestStagePanicAnswered(t *testing.T) {
	idx := newIndex(t, []dataset.Doc{{ID: "d1", Text: "bank account"}, {ID: "d2", Text: "bank visa"}})
	var log lockedBuffer
	_, ts, _ := newServer(t, idx, "stages:\n  - type: test_panic\n", func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	for range 2 {
		var e struct {
			Error string `json:"error"`
		}
		code := call(t, http.MethodPost, ts.URL+"/api/search", map[string]any{"query": map[string]any{"query": "bank"}}, &e)
		if code != http.StatusInternalServerError || !strings.Contains(e.Error, "stage test_panic panicked: runtime error: slice bounds out of range") {
			t.Fatalf("status %d, error %q; want 500 naming the stage's panic", code, e.Error)
		}
	}
	if l := log.String(); !strings.Contains(l, "stack=") || !strings.Contains(l, "panicStage.Score") {
		t.Errorf("the log lacks the stage's stack:\n%s", l)
	}
}

// TestRecovered: a handler's panic becomes an error the server answers
// (with the stack for the log); net/http's deliberate abort still aborts.
func TestRecovered(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	err := recovered(func(http.ResponseWriter, *http.Request) error {
		var m map[string]int
		m["x"] = 1
		return nil
	}, httptest.NewRecorder(), r)
	var hp *handlerPanic
	if !errors.As(err, &hp) || !strings.Contains(err.Error(), "internal error: assignment to entry in nil map") || len(hp.stack) == 0 {
		t.Errorf("err = %v, want a *handlerPanic with its stack", err)
	}
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler to pass", v)
		}
	}()
	recovered(func(http.ResponseWriter, *http.Request) error { panic(http.ErrAbortHandler) }, httptest.NewRecorder(), r)
}

// timeoutReader fails as a connection whose read deadline passed.
type timeoutReader struct{}

func (timeoutReader) Read([]byte) (int, error) { return 0, os.ErrDeadlineExceeded }

// TestSlowBodyIsTimeout: a body the client sends too slowly for the
// server's read timeout is a 408, not a bad request.
func TestSlowBodyIsTimeout(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/api/search", io.NopCloser(timeoutReader{}))
	_, err := readLimited(httptest.NewRecorder(), r, 1<<20)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusRequestTimeout {
		t.Errorf("err = %v, want a 408", err)
	}
}
