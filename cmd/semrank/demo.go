package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/server"
	"github.com/semrank/semrank/server/demo"
	"github.com/semrank/semrank/testdata"
)

// demoOptions are the flags of semrank demo.
type demoOptions struct {
	dataDir, dir, addr string
	noServe            bool
	token              func() string // set by adminTokenFlag below
	show               int
}

// newDemoCmd returns semrank demo.
func newDemoCmd() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--no-serve] [--dir DIR] [--addr 127.0.0.1:8095] [--admin-token TOKEN]",
		Short: "Index the bundled SemEval data, train small models, and serve search with reranking",
		Long: `Build the demo and serve it: index the bundled SemEval-2016 Task 3 data
(testdata/demo, built into semrank: 50 forum questions, 500 related
questions, judgments; --data reads another directory), train a
TWEAK term-weighting model and a linear fusion on four fifths of the questions,
and serve the web page and JSON API (see "semrank serve") at --addr.

` + adminTokenHelp + `

With --no-serve, print the first-stage and reranked lists of a few held-out
questions, and their MAP, instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, o) },
	}
	o.token = adminTokenFlag(cmd)
	cmd.Flags().StringVar(&o.dataDir, "data", "", "judged BEIR directory with candidates.trec (default: the bundled data, built into semrank)")
	cmd.Flags().StringVar(&o.dir, "dir", "", "keep the index, models and pipeline file here, in a folder without an earlier demo (default: a temporary directory, removed at exit)")
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8095", "listen address")
	cmd.Flags().BoolVar(&o.noServe, "no-serve", false, "print before/after rankings of held-out questions instead of serving")
	cmd.Flags().IntVar(&o.show, "show", 3, "with --no-serve: how many questions to print")
	return cmd
}

// runDemo runs semrank demo.
func runDemo(cmd *cobra.Command, o demoOptions) error {
	if err := checkNonNegative(cmd, "show"); err != nil {
		return err
	}
	// Listen before the minute of training and indexing, so that
	// an address in use fails at once; connections made meanwhile
	// wait in the listener's queue until the demo serves them.
	var l net.Listener
	if !o.noServe {
		var err error
		if l, err = listen(o.addr); err != nil {
			return err
		}
		defer l.Close() // in case the build fails; serve closes it too
	}
	work := o.dir
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
	do := demo.Options{Data: o.dataDir, Dir: work, Log: cmd.ErrOrStderr()}
	if o.dataDir == "" {
		// The data built into the binary: the demo runs from any
		// directory.
		do.Data, do.FS = testdata.DemoDir, testdata.Demo
	}
	d, err := demo.Build(cmd.Context(), do)
	if err != nil {
		return err
	}
	defer d.Close()
	if o.noServe {
		c, err := d.Compare(cmd.Context())
		if err != nil {
			return err
		}
		d.Print(out, c, o.show, 5)
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "demo ready in %s (pipeline %s)\n", time.Since(start).Round(100*time.Millisecond), d.PipelinePath)
	return serve(cmd.Context(), out, server.Config{Index: d.Index, PipelinePath: d.PipelinePath, Examples: d.Examples(4), AdminToken: o.token()}, l, 10*time.Second, demoNextSteps)
}

// demoQuery is the query demoNextSteps shows; the README's curl example
// sends it too.
const demoQuery = "visa renewal for my wife"

// demoNextSteps says, after the serving demo's URL, what to try next: the
// page, a search from the shell, and serving one's own documents.
func demoNextSteps(url string) string {
	return fmt.Sprintf(`
Try it:
  open %[1]s in a browser: the first-stage and reranked lists side by side
  curl -s -H 'Content-Type: application/json' %[1]sapi/search \
    -d '{"query": "%[2]s", "size": 5, "fields": ["title"]}'

Search your own documents (a folder with corpus.jsonl, one
{"_id": "d1", "title": "...", "text": "..."} a line):
  printf 'window: 100\nstages: [{type: tfidf}, {type: bm25}, {type: overlap}]\n' > pipeline.yaml
  semrank index --data DIR --index my.idx
  semrank serve --index my.idx --pipeline pipeline.yaml
(the README shows how to train learned stages on your data)
`, url, demoQuery)
}
