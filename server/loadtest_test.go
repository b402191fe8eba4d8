package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheckLoopback(t *testing.T) {
	for url, ok := range map[string]bool{
		"http://127.0.0.1:8095": true, "http://localhost:1": true, "http://[::1]:80": true, "http://127.3.2.1": true,
		"http://10.0.0.1:8095": false, "http://example.com": false, "https://127.0.0.1": false, "http://0.0.0.0:8095": false,
		"127.0.0.1:8095": false,
	} {
		if err := CheckLoopback(url); (err == nil) != ok {
			t.Errorf("%s: %v", url, err)
		}
	}
}

// TestLoadTest runs a tiny load test; its numbers are not checked (no
// timing limits in tests), only that it counts and stops by itself.
func TestLoadTest(t *testing.T) {
	idx, ds := demoIndex(t)
	_, ts, _ := newServer(t, idx, lexicalPipeline, nil)
	qs := []string{ds.Queries[0].FullText(), ds.Queries[1].FullText(), "the"} // "the" has no searchable terms
	r, err := LoadTest(context.Background(), LoadOptions{URL: ts.URL, Clients: 3, Duration: 200 * time.Millisecond, Queries: qs, Rerank: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests < 3 || r.Errors == 0 || !strings.Contains(r.FirstError, "status 400") || r.Errors > r.Requests ||
		r.P50 > r.P99 || r.P99 > r.Max || r.Throughput <= 0 {
		t.Errorf("%+v", r)
	}
	// A base URL with a trailing slash names the same server.
	if r, err := LoadTest(context.Background(), LoadOptions{URL: ts.URL + "/", Clients: 1, Duration: 50 * time.Millisecond, Queries: qs[:2]}); err != nil || r.Errors != 0 {
		t.Errorf("URL with a trailing slash: %+v, err = %v", r, err)
	}
	if _, err := LoadTest(context.Background(), LoadOptions{URL: "http://192.0.2.1:80", Clients: 1, Duration: time.Second, Queries: qs}); err == nil {
		t.Error("load test against a non-loopback address")
	}
	// A server that is down, or a first query it refuses, stops the test
	// before anything is measured.
	ts.Close()
	if r, err := LoadTest(context.Background(), LoadOptions{URL: ts.URL, Clients: 3, Duration: time.Minute, Queries: qs}); err == nil || !strings.Contains(err.Error(), "first search failed") || r.Requests != 0 {
		t.Errorf("server down: %+v, err = %v, want the first search's failure", r, err)
	}
}

// TestLoadTestRefusesRedirects: a loopback server that redirects elsewhere
// is reported, not followed: the load test must not leave the loopback
// address.
func TestLoadTestRefusesRedirects(t *testing.T) {
	var followed atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer elsewhere.Close()
	redirect := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/api/search", http.StatusTemporaryRedirect))
	defer redirect.Close()
	_, err := LoadTest(context.Background(), LoadOptions{URL: redirect.URL, Clients: 1, Duration: time.Second, Queries: []string{"visa"}})
	if err == nil || !strings.Contains(err.Error(), "status 307") || followed.Load() {
		t.Errorf("err = %v, followed %v; want the redirect reported and not followed", err, followed.Load())
	}
}
