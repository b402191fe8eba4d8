// Command semrank indexes document collections with Bleve, reranks search
// results with learned and unsupervised semantic stages, and evaluates the
// rankings. Run "semrank help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	_ "github.com/semrank/semrank/analyzers" // registers the semrank_en analyzer
	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/rerank"
)

var rootCmd = &cobra.Command{
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
	refuseUnknownSubcommands(rootCmd)
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
	finishCommands()
	// SIGINT and SIGTERM cancel the command's context, so a long command
	// stops at its next check and cleans up: an index closes after its
	// last whole batch, and a recipe leaves an earlier pipeline in its
	// output directory as it was (see recipe.Fit). A second signal kills
	// the process at once.
	ctx, stop := notifyInterrupt(context.Background(), os.Stderr)
	err := rootCmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		if errors.Is(context.Cause(ctx), errInterrupted) && errors.Is(err, context.Canceled) {
			if err.Error() == context.Canceled.Error() {
				err = errInterrupted
			} else { // keep what the command says about the state it left
				err = fmt.Errorf("%w: %w", errInterrupted, err)
			}
		}
		fmt.Fprintln(os.Stderr, "semrank:", err)
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

// checkOutput refuses, before any work, an output path (flag's value)
// that the command could not write or should not: a directory, a path in
// a folder that does not exist (found only when the result is saved,
// after the training), a file inside an index (which it would corrupt),
// or one of the files a command reads, such as DIR/candidates.trec, or
// another of its outputs: the command would overwrite what it was given.
func checkOutput(flag, out string, inputs ...string) error {
	// Writing the file would fail only at the end, with the rename's
	// "file exists".
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s is a directory; give a file path", flag, out)
	}
	for _, in := range inputs {
		if sameFile(out, in) {
			return fmt.Errorf("%s %s would overwrite %s, which this command also reads or writes", flag, out, in)
		}
	}
	if dir := filepath.Dir(out); !isDir(dir) {
		return fmt.Errorf("%s %s: folder %s does not exist; create it first", flag, out, dir)
	}
	if idx := enclosingIndex(out); idx != "" {
		return fmt.Errorf("%s %s is inside the index %s, which it would corrupt; write it elsewhere", flag, out, idx)
	}
	return nil
}

// checkModelOutput refuses a model output (flag's value) that names an
// existing file other than a semrank model: a pipeline file, a run or
// data given by mistake would be replaced by the model.
func checkModelOutput(flag, out string) error {
	ok, err := models.IsBundle(out)
	if err != nil || ok {
		return nil // a model, absent, or unreadable (saving says why)
	}
	return fmt.Errorf("%s %s exists and is not a semrank model; remove it or choose another path", flag, out)
}

// noteListedModel tells w when a pipeline file beside out (in its folder
// or the one above, as a recipe lays them out) lists out's checksum: that
// pipeline will refuse the model about to be written over it until the
// line is updated.
func noteListedModel(w io.Writer, out string) {
	for _, dir := range []string{filepath.Dir(out), filepath.Dir(filepath.Dir(out))} {
		p := filepath.Join(dir, "pipeline.yaml")
		c, err := rerank.ReadConfig(p)
		if err != nil {
			continue
		}
		for key := range c.Checksums {
			if sameFile(rerank.Resolve(dir, filepath.FromSlash(key)), out) {
				fmt.Fprintf(w, "note: %s lists %s under sha256: once retrained, the pipeline refuses it until that line holds its new sha256 (sha256sum prints it) or is removed\n", p, out)
			}
		}
	}
}

// checkTrainingDirs refuses, before any work, training directories
// (trainFlag's values) and a held-out one (heldFlag's) that would make the
// training meaningless: see checkHeldOut and checkJudged.
func checkTrainingDirs(trainFlag string, train []string, heldFlag, held string) error {
	if err := checkHeldOut(heldFlag, held, trainFlag, train...); err != nil {
		return err
	}
	if err := checkJudged(trainFlag, train...); err != nil {
		return err
	}
	return checkJudged(heldFlag, held)
}

// checkHeldOut refuses a held-out directory (flag's value: dev, valid,
// test) that is also one of the training directories (trainFlag's): the
// early stopping, tuning or metrics would see the training queries.
func checkHeldOut(flag, dir, trainFlag string, train ...string) error {
	if dir == "" {
		return nil
	}
	for _, d := range train {
		if sameFile(dir, d) {
			return fmt.Errorf("%s %s is also a %s directory: held-out queries must not be training queries", flag, dir, trainFlag)
		}
	}
	return nil
}

// checkJudged refuses judged directories (flag's values) whose judgments
// mark no document relevant: every metric on them is 0, so there is
// nothing to learn, tune or stop early on. Directories without judgments
// pass: the commands that need them say so when they load them.
func checkJudged(flag string, dirs ...string) error {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		q, err := eval.ReadQrelsFile(filepath.Join(dir, eval.QrelsFile))
		if err != nil {
			continue
		}
		relevant := len(q) == 0
		for qid := range q {
			if q.Relevant(qid) > 0 {
				relevant = true
				break
			}
		}
		if !relevant {
			return fmt.Errorf("%s %s: no judgment marks a document relevant, so every metric is 0 and there is nothing to learn from", flag, dir)
		}
	}
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// enclosingIndex returns the Bleve index folder (one holding
// index_meta.json) that path lies in, or "".
func enclosingIndex(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "index_meta.json")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// checkFinite refuses a NaN or infinite value for any float flag of cmd.
func checkFinite(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || (f.Value.Type() != "float64" && f.Value.Type() != "float32") {
			return
		}
		if v, perr := strconv.ParseFloat(f.Value.String(), 64); perr == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("--%s %s: want a finite number", f.Name, f.Value)
		}
	})
	return err
}

// checkNonNegative refuses a negative value for the named numeric flags of
// cmd (where 0 has a meaning, such as "all", but a negative value would be
// read as 0 or as the default).
func checkNonNegative(cmd *cobra.Command, names ...string) error {
	return checkFlags(cmd, names, func(v float64) bool { return v >= 0 }, "zero or a positive number")
}

// pipelineFiles returns the pipeline file at path and the files it names
// (stage models, option values naming an existing file, such as an SSG
// stage's topics model, and with fusion the fusion model), resolved as the
// pipeline resolves them. An unreadable pipeline gives path alone: loading
// it fails later.
func pipelineFiles(path string, fusion bool) []string {
	c, err := rerank.ReadConfig(path)
	if err != nil {
		return []string{path}
	}
	return append([]string{path}, c.Files(filepath.Dir(path), fusion)...)
}

// noteUnrankedQueries says which of ds's queries run has no ranking for
// (an empty given list, no searchable terms, or nothing in the index
// matched), naming a few:
// the run file simply lacks them, and an evaluation counts them 0.
func noteUnrankedQueries(w io.Writer, ds *eval.Dataset, run eval.Run) {
	var ids []string
	for _, q := range ds.Queries {
		if len(run.Ranking(q.ID)) == 0 {
			ids = append(ids, q.ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	const show = 5
	list := strings.Join(ids[:min(show, len(ids))], ", ")
	if len(ids) > show {
		list += ", …"
	}
	fmt.Fprintf(w, "note: %d of %d queries have no ranking (no candidates, no searchable terms, or no document matched): %s\n", len(ids), len(ds.Queries), list)
}

// writeReport writes b to path atomically: an earlier report stays whole
// until the new one is complete.
func writeReport(path string, b []byte) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// checkOutputOf refuses an output path (flag's value) that names a file of
// one of the BEIR directories dirs or one of files.
func checkOutputOf(flag, out string, dirs []string, files ...string) error {
	var inputs []string
	for _, d := range dirs {
		if d != "" {
			inputs = append(inputs, datasetFiles(d)...)
		}
	}
	for _, f := range files {
		if f != "" {
			inputs = append(inputs, f)
		}
	}
	return checkOutput(flag, out, inputs...)
}

// datasetFiles returns the files of BEIR directory dir.
func datasetFiles(dir string) []string {
	var out []string
	for _, f := range []string{eval.CorpusFile, eval.QueriesFile, eval.QrelsFile, eval.CandidatesFile} {
		out = append(out, filepath.Join(dir, f))
	}
	return out
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// checkPositive refuses a zero or negative value for the named numeric
// flags of cmd. The model configurations read a non-positive size as "the
// default", which is right for a Go caller's zero value but would turn a
// mistyped --dim -3 into a silent 100.
func checkPositive(cmd *cobra.Command, names ...string) error {
	return checkFlags(cmd, names, func(v float64) bool { return v > 0 }, "a positive number")
}

// checkFlags refuses a value of the named numeric flags of cmd that ok
// rejects, saying what is wanted.
func checkFlags(cmd *cobra.Command, names []string, ok func(float64) bool, want string) error {
	for _, name := range names {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			continue
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return fmt.Errorf("--%s %s: not a number", name, f.Value)
		}
		if !ok(v) {
			return fmt.Errorf("--%s %s: want %s", name, f.Value, want)
		}
	}
	return nil
}
