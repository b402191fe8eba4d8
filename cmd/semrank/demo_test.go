package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoAnywhere serves the demo from a directory that is not the
// repository, as an installed semrank runs it: the data comes from the
// binary. After the URL the demo says what to try, and the search it
// shows, like the README's curl example, answers with titles.
func TestDemoAnywhere(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	url, output := serveCommandOutput(t, "demo", "--addr", "127.0.0.1:0")
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if out = output(); strings.Contains(out, "semrank serve --index") {
			break
		}
	}
	for _, want := range []string{"open " + url + " in a browser", "curl ", "semrank index --data DIR", "semrank serve --index"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	// Send what the curl commands of the output and of the README send.
	curl := regexp.MustCompile(`(?s)curl [^\n]*?(\S+)/api/search\s*\\\s*-d '([^']*)'`)
	m := curl.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no curl command in the demo's output:\n%s", out)
	}
	if m[1]+"/" != url {
		t.Errorf("the curl command searches %s, not the demo at %s", m[1], url)
	}
	searchTitles(t, url, "the demo's curl command", m[2])
	if m = curl.FindStringSubmatch(string(readme)); m == nil {
		t.Error("no curl search command in the README")
	} else {
		searchTitles(t, url, "the README's curl command", m[2])
	}
}

// searchTitles sends body to the search API at url and checks the hits
// come with their titles.
func searchTitles(t *testing.T, url, name, body string) {
	t.Helper()
	resp, err := http.Post(url+"api/search", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Hits []struct {
			ID     string
			Fields map[string]any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 || len(res.Hits) == 0 {
		t.Fatalf("%s: %d %v %+v", name, resp.StatusCode, err, res)
	}
	for _, h := range res.Hits {
		if title, _ := h.Fields["title"].(string); title == "" {
			t.Errorf("%s: hit %s has no title: %v", name, h.ID, h.Fields)
		}
	}
}

// TestDemoBusyPort runs the demo on an address in use: it fails at once,
// before building anything, and says how to choose another.
func TestDemoBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	start := time.Now()
	out, err := execute("demo", "--addr", addr)
	if err == nil || !strings.Contains(err.Error(), addr+": the address is in use") || !strings.Contains(err.Error(), "--addr") {
		t.Errorf("err = %v, want one saying %s is in use and naming --addr", err, addr)
	}
	if strings.Contains(out, "documents") || time.Since(start) > 5*time.Second {
		t.Errorf("the demo built before failing on the address (%s):\n%s", time.Since(start), out)
	}
}
