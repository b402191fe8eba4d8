package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// payloadFlags are the index-time models a user can name; each model's
// file registers a flag and a loader here in init.
var payloadFlags []payloadFlag

type payloadFlag struct {
	name  string
	usage string
	load  func(path string) (index.PayloadEncoder, error)
	value *string
}

func addPayloadFlag(name, usage string, load func(string) (index.PayloadEncoder, error)) {
	payloadFlags = append(payloadFlags, payloadFlag{name: name, usage: usage, load: load, value: new(string)})
}

func init() {
	var dataDir, indexPath string
	cmd := &cobra.Command{
		Use:   "index --data DIR --index PATH",
		Short: "Index a BEIR directory's corpus with Bleve (BM25), with optional learned payloads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ds, err := eval.LoadDataset(dataDir)
			if err != nil {
				return err
			}
			encs, err := loadEncoders()
			if err != nil {
				return err
			}
			idx, err := index.OpenOrCreate(indexPath)
			if err != nil {
				return err
			}
			start := time.Now()
			bar := newBar(len(ds.Corpus), "indexing")
			err = idx.Add(context.Background(), ds.Corpus, encs, func(done, _ int) { _ = bar.Set(done) })
			_ = bar.Finish()
			if err == nil {
				err = idx.Compact(context.Background())
			}
			if cerr := idx.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			el := time.Since(start)
			fmt.Fprintf(cmd.OutOrStdout(), "indexed %d documents into %s in %s (%.0f docs/s)\n",
				len(ds.Corpus), indexPath, el.Round(time.Millisecond), float64(len(ds.Corpus))/el.Seconds())
			for _, e := range encs {
				fmt.Fprintf(cmd.OutOrStdout(), "  payload %s from model %s\n", e.PayloadName(), e.ModelID())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "", "BEIR directory (corpus.jsonl, queries.jsonl)")
	cmd.Flags().StringVar(&indexPath, "index", "", "index path (created if absent)")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("index")
	// Model flags (--tweak, ...) are registered by other files' init
	// functions, which may run after this one; main binds them.
	indexCmd = cmd
	rootCmd.AddCommand(cmd)
}

var indexCmd *cobra.Command

// bindPayloadFlags adds the payload model flags to the index command; main
// calls it after every init has run.
func bindPayloadFlags() {
	for _, p := range payloadFlags {
		indexCmd.Flags().StringVar(p.value, p.name, "", p.usage)
	}
}

// loadEncoders returns the built-in term-count payload plus the payloads
// of the models named by flags.
func loadEncoders() ([]index.PayloadEncoder, error) {
	out := []index.PayloadEncoder{index.TermsEncoder{}}
	for _, p := range payloadFlags {
		if *p.value == "" {
			continue
		}
		e, err := p.load(*p.value)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", p.name, err)
		}
		out = append(out, e)
	}
	return out, nil
}
