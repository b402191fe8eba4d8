package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	finishCommands()
	os.Exit(m.Run())
}

// TestCommandTree checks the command names that issues, scripts and the
// held-out scoring rely on, and that the earlier experiment names still
// resolve, hidden and deprecated.
func TestCommandTree(t *testing.T) {
	tests := []struct {
		args       []string
		deprecated bool
	}{
		{[]string{"convert", "semeval2016"}, false},
		{[]string{"convert", "smart"}, false},
		{[]string{"index"}, false},
		{[]string{"run"}, false},
		{[]string{"search"}, false},
		{[]string{"rerank"}, false},
		{[]string{"eval"}, false},
		{[]string{"report"}, false},
		{[]string{"serve"}, false},
		{[]string{"experiment", "semeval2016"}, false},
		{[]string{"experiment", "beir"}, false},
		{[]string{"experiment", "tweak"}, false},
		{[]string{"experiment", "concepts"}, false},
		{[]string{"experiment", "deepmatch"}, false},
		{[]string{"experiment", "unsup"}, false},
		{[]string{"experiment", "wmd-speed"}, false},
		{[]string{"experiment-tweak"}, true},
		{[]string{"experiment-wmd-speed"}, true},
	}
	for _, name := range []string{"tweak", "lsa", "s2net", "dse", "deepmatch", "bilinear", "siamese", "quality", "embed", "topics", "fusion"} {
		tests = append(tests, struct {
			args       []string
			deprecated bool
		}{[]string{"train", name}, false})
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd, rest, err := rootCmd.Find(tt.args)
			if err != nil || len(rest) > 0 || cmd == rootCmd {
				t.Fatalf("not found: %v (rest %q)", err, rest)
			}
			if want := tt.args[len(tt.args)-1]; cmd.Name() != want {
				t.Fatalf("found %q, want %q", cmd.Name(), want)
			}
			if (cmd.Deprecated != "") != tt.deprecated || cmd.Hidden != tt.deprecated {
				t.Fatalf("deprecated %q hidden %v, want deprecated and hidden %v", cmd.Deprecated, cmd.Hidden, tt.deprecated)
			}
		})
	}
}

// TestMissingFlags checks that commands started without their required
// inputs fail with an error that names what is missing.
func TestMissingFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "tweak"}, "--train"},
		{[]string{"experiment", "beir"}, `"data"`},
		{[]string{"rerank"}, `"pipeline"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			rootCmd.SetOut(&out)
			rootCmd.SetErr(&out)
			rootCmd.SetArgs(tt.args)
			err := rootCmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}
