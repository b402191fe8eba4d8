package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/server"
	"github.com/semrank/semrank/testdata"
)

// loadtestOptions are the flags of semrank loadtest.
type loadtestOptions struct {
	url, dataDir, mode    string
	clients, size, window int
	duration              time.Duration
}

// newLoadtestCmd returns semrank loadtest.
func newLoadtestCmd() *cobra.Command {
	var o loadtestOptions
	cmd := &cobra.Command{
		Use:   "loadtest --url http://127.0.0.1:PORT [--clients 32] [--duration 30s] [--rerank both|on|off]",
		Short: "Load a local semrank server with concurrent searches and report throughput and latency",
		Long: `Run --clients concurrent clients against a semrank server's /api/search for
--duration (with reranking on, off, or both one after the other), each sending
the queries of --data in turn, and report requests per second, latency
percentiles and errors. Only loopback URLs are accepted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLoadtest(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "http://127.0.0.1:8095", "server base URL (loopback only)")
	f.StringVar(&o.dataDir, "data", "", "BEIR directory whose queries are sent (default: the demo's, built into semrank)")
	f.StringVar(&o.mode, "rerank", "both", "both, on or off")
	f.IntVar(&o.clients, "clients", 32, "concurrent clients")
	f.IntVar(&o.size, "size", 10, "hits per search")
	f.IntVar(&o.window, "window", 0, "rerank window (0: the pipeline's)")
	f.DurationVar(&o.duration, "duration", 30*time.Second, "how long each run starts new requests")
	return cmd
}

// runLoadtest runs semrank loadtest.
func runLoadtest(cmd *cobra.Command, o loadtestOptions) error {
	// The load test would take 0 for its default, 10.
	if err := checkPositive(cmd, "size"); err != nil {
		return err
	}
	if err := server.CheckLoopback(o.url); err != nil {
		return err
	}
	var ds *dataset.Dataset
	var err error
	if o.dataDir == "" {
		ds, err = dataset.LoadFS(testdata.Demo, testdata.DemoDir) // the demo's queries, built in
	} else {
		ds, err = dataset.Load(o.dataDir)
	}
	if err != nil {
		return err
	}
	var queries []string
	for _, q := range ds.Queries {
		queries = append(queries, q.FullText())
	}
	var modes []bool
	switch o.mode {
	case "both":
		modes = []bool{false, true}
	case "on":
		modes = []bool{true}
	case "off":
		modes = []bool{false}
	default:
		return fmt.Errorf("--rerank %q: want both, on or off", o.mode)
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "rerank\tclients\trequests\terrors\treq/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\t\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	var firstErr string
	for _, on := range modes {
		r, err := server.LoadTest(cmd.Context(), server.LoadOptions{URL: o.url, Clients: o.clients, Duration: o.duration,
			Queries: queries, Size: o.size, Rerank: on, Window: o.window})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\t\n", map[bool]string{true: "on", false: "off"}[on],
			o.clients, r.Requests, r.Errors, r.Throughput, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
		if firstErr == "" {
			firstErr = r.FirstError
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if firstErr != "" {
		return fmt.Errorf("requests failed; first error: %s", firstErr)
	}
	return nil
}
