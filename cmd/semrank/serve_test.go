package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAdminToken: serve and demo take the admin token from --admin-token
// or, when the flag is unset, from $SEMRANK_ADMIN_TOKEN; with one, a write
// (here a reload) without it is refused.
func TestAdminToken(t *testing.T) {
	idx, pipeline := demoIndex(t, "window: 20\nstages:\n  - type: tfidf\n")
	serveArgs := []string{"serve", "--index", idx, "--pipeline", pipeline, "--addr", "127.0.0.1:0"}
	demoArgs := []string{"demo", "--addr", "127.0.0.1:0"}
	for _, tc := range []struct {
		name  string
		args  []string
		env   string // $SEMRANK_ADMIN_TOKEN
		token string // what writes need; "" for none
	}{
		{"serve without token", serveArgs, "", ""},
		{"serve with env", serveArgs, "s3cret", "s3cret"},
		{"serve with flag", append(serveArgs, "--admin-token", "flagged"), "", "flagged"},
		{"serve flag over env", append(serveArgs, "--admin-token", "flagged"), "s3cret", "flagged"},
		{"serve empty flag over env", append(serveArgs, "--admin-token="), "s3cret", ""},
		{"demo with env", demoArgs, "s3cret", "s3cret"},
		{"demo with flag and --data", append(demoArgs, "--admin-token", "flagged", "--data", "../../testdata/demo"), "", "flagged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(adminTokenEnv, tc.env)
			url := serveCommand(t, tc.args...)
			for _, try := range []struct {
				token string
				want  int
			}{
				{"", http.StatusUnauthorized},
				{"wrong", http.StatusUnauthorized},
				{tc.token, http.StatusOK},
			} {
				if tc.token == "" {
					try.want = http.StatusOK // open: any token or none
				}
				req, err := http.NewRequest("POST", url+"api/admin/reload", strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				if try.token != "" {
					req.Header.Set("Authorization", "Bearer "+try.token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != try.want {
					t.Errorf("reload with token %q: status %d, want %d: %s", try.token, resp.StatusCode, try.want, raw)
				}
			}
		})
	}
}

// serveCommand runs a serving command line (serve, demo) until the test
// ends and returns the base URL it serves on, read from its "serving on"
// line.
func serveCommand(t *testing.T, args ...string) string {
	t.Helper()
	url, _ := serveCommandOutput(t, args...)
	return url
}

// serveCommandOutput is serveCommand, also returning what gives the
// command's standard output so far.
func serveCommandOutput(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	cmd, _, err := rootCmd.Find(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// A command keeps the context of its first run; give it this one.
	prev := cmd.Context()
	cmd.SetContext(ctx)
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	rootCmd.SetOut(pw)
	rootCmd.SetErr(&stderr)
	rootCmd.SetArgs(args)
	done := make(chan error, 1)
	go func() {
		err := rootCmd.Execute()
		pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: %v\n%s", args, err, stderr.String())
		}
		resetFlags(cmd)
		cmd.SetContext(prev)
	})
	urls := make(chan string, 1)
	var mu sync.Mutex
	var stdout strings.Builder
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return stdout.String()
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			stdout.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if _, rest, ok := strings.Cut(sc.Text(), "serving on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				urls <- url
			}
		}
		close(urls)
	}()
	select {
	case url, ok := <-urls:
		if !ok {
			t.Fatalf("%v stopped without serving", args)
		}
		return url, output
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v: not serving after 2 minutes", args)
	}
	return "", output
}
