// Command semrank indexes document collections with Bleve, reranks search
// results with learned and unsupervised semantic stages, and evaluates the
// rankings. Run "semrank help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/semrank/semrank/analyzers" // registers the semrank_en analyzer
	"github.com/semrank/semrank/models/deepmatch"
)

// newRootCmd returns the semrank command with all its subcommands.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "semrank",
		Short: "Semantic reranking for Bleve search",
		Long: `semrank indexes document collections with Bleve (BM25), stores learned
per-document payloads at index time, reranks the top candidates with learned
and unsupervised semantic stages, and evaluates rankings against judgments.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command: a NaN or infinite number flag is never meant, and the
		// trainers would otherwise run for minutes before failing to save it.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return checkFinite(cmd) },
	}
	root.AddCommand(
		newAttachCmd(), newBenchCmd(), newConvertCmd(), newDemoCmd(), newEvalCmd(),
		newExperimentCmd(), newExportCmd(), newIndexCmd(), newInspectCmd(), newLoadtestCmd(),
		newReportCmd(), newRerankCmd(), newRunCmd(), newSearchCmd(), newServeCmd(), newTrainCmd(),
	)
	root.AddCommand(oldExperimentCmds()...)
	refuseUnknownSubcommands(root)
	return root
}

// newTrainCmd returns semrank train, which groups the trainers: "semrank
// train <model>".
func newTrainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a model (tweak, lsa, s2net, dse, deepmatch, bilinear, siamese, quality, translation, embed, topics, fusion)",
	}
	cmd.AddCommand(newTrainTweakCmd(), newTrainConceptCmd("lsa"), newTrainConceptCmd("s2net"), newTrainConceptCmd("dse"))
	for _, method := range []string{deepmatch.MethodDeepMatch, deepmatch.MethodBilinear, deepmatch.MethodSiamese} {
		cmd.AddCommand(newTrainDeepMatchCmd(method))
	}
	cmd.AddCommand(newTrainQualityCmd(), newTrainTranslationCmd(), newTrainEmbedCmd(), newTrainTopicsCmd(), newTrainNeighboursCmd(), newTrainFusionCmd())
	return cmd
}

// refuseUnknownSubcommands makes every command that only groups others
// ("train", "experiment", "convert") fail on a name it does not know:
// cobra would print the help and exit 0, so "semrank train tweek" in a
// script would seem to succeed.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.NoArgs
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
}

func main() {
	// SIGINT and SIGTERM cancel the command's context, so a long command
	// stops at its next check and cleans up: an index closes after its
	// last whole batch, and a recipe leaves an earlier pipeline in its
	// output directory as it was (see recipe.Fit). A second signal kills
	// the process at once.
	ctx, stop := notifyInterrupt(context.Background(), os.Stderr)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		if errors.Is(context.Cause(ctx), errInterrupted) && errors.Is(err, context.Canceled) {
			if err.Error() == context.Canceled.Error() {
				err = errInterrupted
			} else { // keep what the command says about the state it left
				err = fmt.Errorf("%w: %w", errInterrupted, err)
			}
		}
		fmt.Fprintln(os.Stderr, "semrank:", withHint(err))
		os.Exit(1)
	}
}

// errInterrupted is the cause of a context cancelled by notifyInterrupt.
var errInterrupted = errors.New("interrupted")

// notifyInterrupt returns a copy of parent that SIGINT or SIGTERM cancels
// (context.Cause: errInterrupted). The first signal also restores the
// signals' default action, so that a second one kills the process at once,
// and says so on w: a command that checks its context only now and then,
// or never, runs on after it. stop releases the signals.
func notifyInterrupt(parent context.Context, w io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sig:
			// The notice first: once the signals are released, a second
			// one kills the process, perhaps before it could be printed.
			fmt.Fprintf(w, "semrank: %v: stopping at the next safe point (again to kill at once)\n", s)
			signal.Stop(sig)
			cancel(errInterrupted)
		case <-ctx.Done():
			signal.Stop(sig)
		}
	}()
	return ctx, func() {
		cancel(nil)
		signal.Stop(sig)
	}
}
