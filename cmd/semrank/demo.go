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

func init() {
	var dataDir, dir, addr string
	var noServe bool
	var token func() string // set by adminTokenFlag below
	var show int
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkNonNegative(cmd, "show"); err != nil {
				return err
			}
			// Listen before the minute of training and indexing, so that
			// an address in use fails at once; connections made meanwhile
			// wait in the listener's queue until the demo serves them.
			var l net.Listener
			if !noServe {
				var err error
				if l, err = listen(addr); err != nil {
					return err
				}
				defer l.Close() // in case the build fails; serve closes it too
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
			o := demo.Options{Data: dataDir, Dir: work, Log: cmd.ErrOrStderr()}
			if dataDir == "" {
				// The data built into the binary: the demo runs from any
				// directory.
				o.Data, o.FS = testdata.DemoDir, testdata.Demo
			}
			d, err := demo.Build(cmd.Context(), o)
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
			return serve(cmd.Context(), out, server.Config{Index: d.Index, PipelinePath: d.PipelinePath, Examples: d.Examples(4), AdminToken: token()}, l, 10*time.Second, demoNextSteps)
		},
	}
	token = adminTokenFlag(cmd)
	cmd.Flags().StringVar(&dataDir, "data", "", "judged BEIR directory with candidates.trec (default: the bundled data, built into semrank)")
	cmd.Flags().StringVar(&dir, "dir", "", "keep the index, models and pipeline file here, in a folder without an earlier demo (default: a temporary directory, removed at exit)")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8095", "listen address")
	cmd.Flags().BoolVar(&noServe, "no-serve", false, "print before/after rankings of held-out questions instead of serving")
	cmd.Flags().IntVar(&show, "show", 3, "with --no-serve: how many questions to print")
	rootCmd.AddCommand(cmd)
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
