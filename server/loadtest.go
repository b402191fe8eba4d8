package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// LoadOptions configure LoadTest.
type LoadOptions struct {
	// URL is the server's base URL. It must name a loopback address: the
	// load test is for measuring a local server, never for loading others.
	URL      string
	Clients  int           // concurrent clients, each with one request at a time
	Duration time.Duration // how long new requests are started
	Queries  []string      // texts, cycled through
	Size     int           // hits per search; 10 when zero
	Rerank   bool          // rerank the hits (rerank.enabled), or search the first stage only
	Window   int           // rerank window; 0: the pipeline's
}

// LoadResult summarises a load test.
type LoadResult struct {
	Requests   int           // searches completed, errors included (not the first, unmeasured one)
	Errors     int           // of Requests: answers other than a 200 with hits, and failed requests
	FirstError string        // one client's first error; "" when none
	Elapsed    time.Duration // from the first client's start until the last request in flight ended
	Throughput float64       // Requests per second of Elapsed
	// P50, P90, P99 and Max are latency percentiles over every request,
	// errors included.
	P50, P90 time.Duration
	P99, Max time.Duration
}

// CheckLoopback returns an error unless rawURL is an http URL whose host is
// a loopback address (127.0.0.0/8, ::1 or localhost).
func CheckLoopback(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("load test: %s: want an http:// URL, such as http://127.0.0.1:8095: %w", rawURL, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("load test: %s: want an http:// URL, such as http://127.0.0.1:8095", rawURL)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("load test: %s is not a loopback address; load tests run against 127.0.0.1 only", host)
}

// LoadTest runs o.Clients clients against /api/search for o.Duration, then
// waits for the requests in flight, and reports throughput and latency
// percentiles. Every answer but a 200 with hits is an error.
func LoadTest(ctx context.Context, o LoadOptions) (LoadResult, error) {
	var res LoadResult
	if err := CheckLoopback(o.URL); err != nil {
		return res, err
	}
	if o.Clients <= 0 || o.Duration <= 0 || len(o.Queries) == 0 {
		return res, errors.New("load test: need clients > 0, a duration > 0 and queries")
	}
	if o.Size == 0 {
		o.Size = 10
	}
	bodies := make([][]byte, len(o.Queries))
	for i, q := range o.Queries {
		raw, err := json.Marshal(q)
		if err != nil {
			return res, err
		}
		req := SearchRequest{Query: raw, Size: &o.Size, Rerank: &RerankOptions{Enabled: &o.Rerank, Window: o.Window}}
		if bodies[i], err = json.Marshal(req); err != nil {
			return res, err
		}
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConns: o.Clients, MaxIdleConnsPerHost: o.Clients, DisableCompression: true},
		Timeout:   time.Minute,
		// A redirect is an answer to report, not one to follow: it could
		// lead away from the loopback address.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	// "http://127.0.0.1:8095/" names the same server; "//api/search" would
	// be redirected.
	endpoint := strings.TrimRight(o.URL, "/") + "/api/search"
	// One search first: a server that is down or answers with errors
	// would otherwise be hammered for the whole duration and reported
	// as a throughput.
	if err := searchOnce(ctx, client, endpoint, bodies[0]); err != nil {
		return res, fmt.Errorf("load test: first search failed, nothing measured: %w", err)
	}

	var mu sync.Mutex
	var lat []time.Duration
	start := time.Now()
	stop := start.Add(o.Duration)
	var wg sync.WaitGroup
	for c := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			errs, first := 0, ""
			for i := c; time.Now().Before(stop) && ctx.Err() == nil; i += o.Clients {
				t0 := time.Now()
				err := searchOnce(ctx, client, endpoint, bodies[i%len(bodies)])
				mine = append(mine, time.Since(t0))
				if err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			res.Errors += errs
			if res.FirstError == "" {
				res.FirstError = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests = len(lat)
	if res.Requests == 0 {
		return res, errors.New("load test: no request completed")
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	res.P50, res.P90, res.P99, res.Max = at(0.50), at(0.90), at(0.99), lat[len(lat)-1]
	res.Throughput = float64(res.Requests) / res.Elapsed.Seconds()
	return res, ctx.Err()
}

func searchOnce(ctx context.Context, client *http.Client, endpoint string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	var out struct {
		Hits []json.RawMessage `json:"hits"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("answer is not a search result: %v", err)
	}
	if len(out.Hits) == 0 {
		return errors.New("no hits")
	}
	return nil
}
