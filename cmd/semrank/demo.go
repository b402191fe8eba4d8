package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/server"
	"github.com/semrank/semrank/server/demo"
)

func init() {
	var dataDir, dir, addr string
	var noServe bool
	var token func() string // set by adminTokenFlag below
	var show int
	cmd := &cobra.Command{
		Use:   "demo [--no-serve] [--dir DIR] [--addr 127.0.0.1:8095] [--admin-token TOKEN]",
		Short: "Index the bundled SemEval data, train small models, and serve search with reranking",
		Long: `Build the demo and serve it: index the bundled SemEval-2016 Task 3 data
(testdata/demo: 50 forum questions, 500 related questions, judgments), train a
TWEAK term-weighting model and a linear fusion on four fifths of the questions,
and serve the web page and JSON API (see "semrank serve") at --addr.

` + adminTokenHelp + `

With --no-serve, print the first-stage and reranked lists of a few held-out
questions, and their MAP, instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkNonNegative(cmd, "show"); err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(dataDir, "corpus.jsonl")); errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no demo data at %s: run from the repository root, or pass --data", dataDir)
			}
			work := dir
			if work == "" {
				tmp, err := os.MkdirTemp("", "semrank-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				work = tmp
			}
			start := time.Now()
			out := cmd.OutOrStdout()
			d, err := demo.Build(cmd.Context(), demo.Options{Data: dataDir, Dir: work, Log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			defer d.Close()
			if noServe {
				c, err := d.Compare(cmd.Context())
				if err != nil {
					return err
				}
				d.Print(out, c, show, 5)
				return nil
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "demo ready in %s (pipeline %s)\n", time.Since(start).Round(100*time.Millisecond), d.PipelinePath)
			return serve(cmd.Context(), out, server.Config{Index: d.Index, PipelinePath: d.PipelinePath, Examples: d.Examples(4), AdminToken: token()}, addr, 10*time.Second)
		},
	}
	token = adminTokenFlag(cmd)
	cmd.Flags().StringVar(&dataDir, "data", filepath.Join("testdata", "demo"), "judged BEIR directory with candidates.trec")
	cmd.Flags().StringVar(&dir, "dir", "", "keep the index, models and pipeline file here, in a folder without an earlier demo (default: a temporary directory, removed at exit)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8095", "listen address")
	cmd.Flags().BoolVar(&noServe, "no-serve", false, "print before/after rankings of held-out questions instead of serving")
	cmd.Flags().IntVar(&show, "show", 3, "with --no-serve: how many questions to print")
	rootCmd.AddCommand(cmd)
}
