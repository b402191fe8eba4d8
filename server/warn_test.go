package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/index"
)

// TestWarnsOfGivenListFusion: a pipeline whose fusion weighs given_rank,
// which only a given candidate list supplies, serves, but the log names
// the feature and its weight, at start and on reload.
func TestWarnsOfGivenListFusion(t *testing.T) {
	idx, _ := demoIndex(t)
	withGiven := func(w string) string {
		return "window: 30\nstages:\n  - type: tfidf\nfusion:\n  weights: {first_rank: 1, tfidf: 2, given_rank: " + w + "}\n"
	}
	for _, tc := range []struct {
		name          string
		start, reload string // pipeline files; reload "" for none
		want          string // in the warning; "" for no warning
	}{
		{"lexical", lexicalPipeline, "", ""},
		{"given_rank weighed", withGiven("3"), "", "feature=given_rank weight=3"},
		{"given_rank weighed negatively", withGiven("-0.25"), "", "feature=given_rank weight=-0.25"},
		{"given_rank weight 0", withGiven("0"), "", ""},
		{"given_rank weighed after reload", lexicalPipeline, withGiven("1.5"), "feature=given_rank weight=1.5"},
		{"given_rank dropped at reload", withGiven("3"), lexicalPipeline, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			s, _, path := newServer(t, idx, tc.start, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			})
			if tc.reload != "" {
				log.Reset()
				if err := os.WriteFile(path, []byte(tc.reload), 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Reload(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			warned := strings.Contains(log.String(), "level=WARN") && strings.Contains(log.String(), "given candidate lists")
			if warned != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
				t.Errorf("warned = %v, want a warning with %q; log:\n%s", warned, tc.want, log.String())
			}
		})
	}
}

// listeners are listen addresses and whether they are loopback-only once
// resolved: a host name resolving to loopback is, an unspecified address
// is not.
var listeners = []struct {
	network, addr string
	loopback      bool
}{
	{"tcp", "127.0.0.1:0", true},
	{"tcp", "localhost:0", true},
	{"tcp6", "[::1]:0", true},
	{"tcp", ":0", false},
	{"tcp", "0.0.0.0:0", false},
	{"tcp6", "[::]:0", false},
	{"unix", "sock", true},
}

// listen listens as listeners[i] says, skipping the test where this
// machine cannot (no IPv6).
func listen(t *testing.T, i int) net.Listener {
	t.Helper()
	network, addr := listeners[i].network, listeners[i].addr
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), addr)
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen here: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLoopbackOnly decides from the resolved listener address.
func TestLoopbackOnly(t *testing.T) {
	for i, tc := range listeners {
		t.Run(tc.addr, func(t *testing.T) {
			l := listen(t, i)
			if got := loopbackOnly(l.Addr()); got != tc.loopback {
				t.Errorf("loopbackOnly(%s) = %v, want %v", l.Addr(), got, tc.loopback)
			}
		})
	}
	// Other address types are read from their string.
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "10.0.0.1:80": false, "[::]:80": false, "pipe": false} {
		if got := loopbackOnly(otherAddr(addr)); got != want {
			t.Errorf("loopbackOnly(%s) = %v, want %v", addr, got, want)
		}
	}
}

type otherAddr string

func (otherAddr) Network() string  { return "other" }
func (a otherAddr) String() string { return string(a) }

// TestWarnsOfOpenWrites: serving on an address other machines can reach
// without an admin token works, but the log says the write endpoints are
// open and how to set a token.
func TestWarnsOfOpenWrites(t *testing.T) {
	idx, _ := demoIndex(t)
	for i, tc := range listeners {
		for _, token := range []string{"", "s3cret"} {
			t.Run(tc.addr+" token "+token, func(t *testing.T) {
				var log bytes.Buffer
				s, _, _ := newServer(t, idx, lexicalPipeline, func(c *Config) {
					c.AdminToken = token
					c.Logger = slog.New(slog.NewTextHandler(&log, nil))
				})
				l := listen(t, i)
				ctx, cancel := context.WithCancel(context.Background())
				cancel() // Serve warns first, then stops at once
				if err := s.Serve(ctx, l, 0); err != nil {
					t.Fatal(err)
				}
				out := log.String()
				warn := token == "" && !tc.loopback
				warned := strings.Contains(out, "level=WARN") && strings.Contains(out, "open to anyone")
				if warned != warn {
					t.Fatalf("warned = %v, want %v; log:\n%s", warned, warn, out)
				}
				if !warn {
					return
				}
				for _, want := range []string{"/api/index", "/api/admin/reload", "SEMRANK_ADMIN_TOKEN", "--admin-token", "addr=" + l.Addr().String()} {
					if !strings.Contains(out, want) {
						t.Errorf("warning lacks %q:\n%s", want, out)
					}
				}
			})
		}
	}
}

// TestWarnsOfIndexWithoutTermVectors: an index created before semrank kept
// term vectors serves, but the log says that phrases match nothing there.
func TestWarnsOfIndexWithoutTermVectors(t *testing.T) {
	current, _ := demoIndex(t)
	old := index.NewMapping()
	for _, name := range []string{index.FieldTitle, index.FieldText} {
		old.DefaultMapping.Properties[name].Fields[0].IncludeTermVectors = false
	}
	path := filepath.Join(t.TempDir(), "old")
	b, err := bleve.New(path, old)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	legacy, err := index.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { legacy.Close() })
	for _, tc := range []struct {
		name string
		idx  *index.Index
		warn bool
	}{
		{"current index", current, false},
		{"index without term vectors", legacy, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			newServer(t, tc.idx, lexicalPipeline, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			})
			if warned := strings.Contains(log.String(), "no term vectors"); warned != tc.warn {
				t.Errorf("warned = %v, want %v; log:\n%s", warned, tc.warn, log.String())
			}
		})
	}
}
