// Command semrank indexes document collections with Bleve, reranks search
// results with learned and unsupervised semantic stages, and evaluates the
// rankings. Run "semrank help" for the commands.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	_ "github.com/semrank/semrank/analyzers" // registers the semrank_en analyzer
)

var rootCmd = &cobra.Command{
	Use:   "semrank",
	Short: "Semantic reranking for Bleve search",
	Long: `semrank indexes document collections with Bleve (BM25), stores learned
per-document payloads at index time, reranks the top candidates with learned
and unsupervised semantic stages, and evaluates rankings against judgments.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// trainCmd groups "semrank train <model>"; each model's file adds its own
// subcommand in init.
var trainCmd = &cobra.Command{
	Use:   "train",
	Short: "Train a model (tweak, lsa, s2net, dse, deepmatch, bilinear, siamese, quality, embed, topics, fusion)",
}

// finishCommands completes the command tree once every file's init has
// registered its commands (payload flags come from those files' models).
func finishCommands() {
	rootCmd.AddCommand(trainCmd)
	bindPayloadFlags()
}

func main() {
	finishCommands()
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "semrank:", err)
		os.Exit(1)
	}
}
