package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/atomicfile"
)

// defaultTop is export semeval2016's default --top: 43% of subtask A's
// training candidates are relevant and 44% of B's, about 4 of a question's
// 10.
const defaultTop = 4

// newExportCmd returns semrank export, which groups the exporters.
func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a run in another tool's format",
	}
	cmd.AddCommand(newExportSemEvalCmd())
	return cmd
}

// exportSemEvalOptions are the flags of semrank export semeval2016.
type exportSemEvalOptions struct {
	runPath, out, dataDir string
	top                   int
	threshold             float64
}

// newExportSemEvalCmd returns semrank export semeval2016.
func newExportSemEvalCmd() *cobra.Command {
	var o exportSemEvalOptions
	semevalCmd := &cobra.Command{
		Use:   "semeval2016 --run run.trec --out run.pred [--data T] [--top K | --threshold S]",
		Short: "Write a TREC run as predictions for the SemEval-2016 Task 3 scorer",
		Long: `Write a TREC run as predictions for the official SemEval-2016 Task 3
scorer (MAP_scorer.py, ev.py): one tab-separated line per candidate,

  qid  candid  0  score  true|false

the layout of the task's gold .relevancy files. The ids are the XML's own,
which convert semeval2016 keeps: ORGQ_ID and RELQ_ID for subtask B, RELQ_ID
and RELC_ID for A. The scorer ranks by score and ignores the third column.

The scorer pairs the lines of the predictions and of the gold file by
position and stops at the first pair whose ids differ, so --data T, the
split the run ranks (convert semeval2016 --out T), gives the order: that
of T/candidates.trec, which the task's gold files follow (subtask B: each
original question's related questions by RELQ_RANKING_ORDER; A: each
thread's comments as the XML lists them; the task's XML files list
threads by ranking order too). Every
candidate of every query of T is written: one the run lacks gets a score
below the run's for its query and the label false, and a note says how
many there are. A query or candidate T does not have is an error. Without
--data the run is written in its own order, and a note says so. The scorer
orders tied scores as the gold file lists them; a run's ties are ordered as
its file lists them (as semrank eval reads it), so tied scores are lowered
by the smallest float steps to keep that order, with a note.

The label is the system's relevant-or-not call; only the scorer's
classification measures read it (MAP does not). By default each query's top
4 are labelled true: 43% of subtask A's training candidates are relevant and
44% of B's, about 4 of a question's 10, and a fused pipeline's scores
compare only within a query, so no one threshold fits every query.
--threshold S labels true instead every candidate scored above S, for runs
whose scores mean the same in every query (probabilities).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExportSemEval(cmd, o) },
	}
	f := semevalCmd.Flags()
	f.StringVar(&o.runPath, "run", "", "TREC run to export (rerank --out)")
	f.StringVar(&o.out, "out", "", "prediction file to write")
	f.StringVar(&o.dataDir, "data", "", "the split the run ranks (convert semeval2016 --out): all its candidates, in the gold files' order; checks the run's ids")
	f.IntVar(&o.top, "top", defaultTop, "label each query's top K true")
	f.Float64Var(&o.threshold, "threshold", 0, "label true the candidates scored above this, instead of --top")
	for _, n := range []string{"run", "out"} {
		_ = semevalCmd.MarkFlagRequired(n)
	}
	return semevalCmd
}

// runExportSemEval runs semrank export semeval2016.
func runExportSemEval(cmd *cobra.Command, o exportSemEvalOptions) error {
	if err := checkNonNegative(cmd, "top"); err != nil {
		return err
	}
	byThreshold := cmd.Flags().Changed("threshold")
	if byThreshold && cmd.Flags().Changed("top") {
		return errors.New("give --top or --threshold, not both")
	}
	if err := checkOutputOf("--out", o.out, []string{o.dataDir}, o.runPath); err != nil {
		return err
	}
	run, err := dataset.ReadRunFile(o.runPath)
	if err != nil {
		return err
	}
	if err := checkFiniteScores(run); err != nil {
		return err
	}
	// Labels are decided on the run's own entries: a candidate
	// added from --data is one the run made no call on.
	isTrue := trueLabels(run, o.top, o.threshold, byThreshold)
	run, tied := breakTies(run)
	if tied > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %d queries rank candidates with equal scores; their scores are lowered by the smallest float steps to keep the run's order, which semrank eval follows (the scorer would break the ties by the gold file's order)\n", tied)
	}
	if o.dataDir == "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: without --data the lines follow %s; the scorer needs the gold file's order (give --data)\n", o.runPath)
	} else if run, err = inSplitOrder(cmd.ErrOrStderr(), run, o.dataDir); err != nil {
		return err
	}
	if err := checkRoomBelow(run); err != nil {
		return err
	}
	lines, labelled := 0, 0
	label := func(qid string, e dataset.Entry) bool {
		lines++
		if isTrue[qid][e.DocID] {
			labelled++
			return true
		}
		return false
	}
	if err := atomicfile.Write(o.out, func(w io.Writer) error { return run.WriteSemEval(w, label) }); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d queries, %d candidates, %d labelled true\n", o.out, run.Len(), lines, labelled)
	return nil
}

// inSplitOrder returns run completed with the candidates of the split in
// dataDir, in their order (completeRun), and notes on w how many it lacked.
func inSplitOrder(w io.Writer, run dataset.Run, dataDir string) (dataset.Run, error) {
	candsPath := filepath.Join(dataDir, dataset.CandidatesFile)
	cands, err := dataset.ReadRunFile(candsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return run, fmt.Errorf("--data %s has no %s: want a split written by convert semeval2016", dataDir, dataset.CandidatesFile)
	}
	if err != nil {
		return run, err
	}
	full, added, err := completeRun(run, cands)
	if err != nil {
		return run, err
	}
	if added.candidates > 0 {
		whole := ""
		switch {
		case added.queries == 1:
			whole = " (among them every candidate of 1 query)"
		case added.queries > 1:
			whole = fmt.Sprintf(" (among them every candidate of %d queries)", added.queries)
		}
		fmt.Fprintf(w, "note: %s lacks %d of the %d candidates in %s%s; they get scores below its own and the label false\n",
			run.File, added.candidates, added.candidates+added.ranked, candsPath, whole)
	}
	return full, nil
}

// completion counts what completeRun added to a run.
type completion struct {
	ranked     int // candidates the run ranks
	candidates int // candidates it lacks, added
	queries    int // queries it lacks entirely, added
}

// trueLabels returns the entries of run labelled true, per query: its top
// k by score, or with byThreshold those scored above threshold.
func trueLabels(run dataset.Run, k int, threshold float64, byThreshold bool) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, qid := range run.QueryIDs() {
		out[qid] = map[string]bool{}
		for i, e := range run.Sorted(qid) {
			if byThreshold && e.Score > threshold || !byThreshold && i < k {
				out[qid][e.DocID] = true
			}
		}
	}
	return out
}

// breakTies returns run with every query's scores distinct, each entry
// where it was: the scores are taken in the run's order (as Run.Sorted
// gives it: by score, ties in the order of the file), and a score tied
// with the one before is lowered to the next float below that one. The
// scorer sorts by score alone and would order tied candidates as the gold
// file lists them; so lowered, the ranking it reads is the run's. It also
// returns how many queries had ties.
func breakTies(run dataset.Run) (dataset.Run, int) {
	out := dataset.NewRun()
	out.File = run.File
	tied := 0
	for _, qid := range run.QueryIDs() {
		es := slices.Clone(run.Ranking(qid))
		order := make([]int, len(es)) // positions in es, in the run's order
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(es[b].Score, es[a].Score) })
		had := false
		for k := 1; k < len(order); k++ {
			prev, cur := &es[order[k-1]], &es[order[k]]
			if cur.Score >= prev.Score {
				cur.Score = math.Nextafter(prev.Score, math.Inf(-1))
				had = true
			}
		}
		if had {
			tied++
		}
		out.Set(qid, es)
	}
	return out, tied
}

// completeRun returns run with every candidate of cands (a split's
// candidates.trec), in cands's order, queries and candidates: the order of
// the gold files. A candidate run lacks gets a score below run's lowest for
// its query (below 0 for a query run lacks), lower the later it comes, so
// the missing ones rank last in their given order. A query or document of
// run that cands does not have is an error naming the run's file and line.
func completeRun(run, cands dataset.Run) (dataset.Run, completion, error) {
	var c completion
	isCand := map[string]map[string]bool{}
	for _, qid := range cands.QueryIDs() {
		isCand[qid] = map[string]bool{}
		for _, e := range cands.Ranking(qid) {
			isCand[qid][e.DocID] = true
		}
	}
	if err := checkRunIn(run, isCand, cands.File); err != nil {
		return dataset.Run{}, c, err
	}
	full := dataset.NewRun()
	full.File = run.File
	for _, qid := range cands.QueryIDs() {
		scores := map[string]float64{}
		floor := 0.0
		for i, e := range run.Ranking(qid) {
			scores[e.DocID] = e.Score
			if i == 0 || e.Score < floor {
				floor = e.Score
			}
		}
		c.ranked += len(scores)
		if len(scores) == 0 {
			c.queries++
		}
		for _, e := range cands.Ranking(qid) {
			s, ok := scores[e.DocID]
			if !ok {
				floor = below(floor)
				s = floor
				c.candidates++
			}
			full.Add(qid, dataset.Entry{DocID: e.DocID, Score: s})
		}
	}
	return full, c, nil
}

// checkFiniteScores refuses an infinite score: ties among infinities
// cannot be broken by a float step, and the scorer reads "inf" as no
// number it ranks sensibly.
func checkFiniteScores(run dataset.Run) error {
	for _, qid := range run.QueryIDs() {
		for _, e := range run.Ranking(qid) {
			if math.IsInf(e.Score, 0) {
				return &dataset.ParseError{File: run.File, Line: e.Line,
					Err: fmt.Errorf("query %q, document %q: score %v is not finite", qid, e.DocID, e.Score)}
			}
		}
	}
	return nil
}

// checkRoomBelow refuses a run that breakTies or completeRun lowered to
// -Inf: scores at the bottom of float64's range leave no float below them,
// so tied candidates, or the candidates the run lacks, would tie again at
// -Inf and the scorer would order them as the gold file does, not as the
// run and its notes say. checkFiniteScores has refused an infinite score
// in the run itself, so any here came from lowering.
func checkRoomBelow(run dataset.Run) error {
	for _, qid := range run.QueryIDs() {
		for _, e := range run.Ranking(qid) {
			if math.IsInf(e.Score, -1) {
				return fmt.Errorf("%s: query %q: its scores reach the lowest float64 (%v), leaving no score below them to keep tied candidates, or the candidates the run lacks, in order; rescale the run's scores",
					run.File, qid, -math.MaxFloat64)
			}
		}
	}
	return nil
}

// checkRunIn refuses run's queries that isCand (query → candidate set, read
// from candsFile) lacks, naming them all, and then the first document that
// is not one of its query's candidates.
func checkRunIn(run dataset.Run, isCand map[string]map[string]bool, candsFile string) error {
	var unknown []string
	line := 0
	for _, qid := range run.QueryIDs() {
		if isCand[qid] == nil {
			if line == 0 {
				line = run.Ranking(qid)[0].Line
			}
			unknown = append(unknown, fmt.Sprintf("%q", qid))
		}
	}
	if len(unknown) > 0 {
		const show = 10
		if len(unknown) > show {
			unknown = append(unknown[:show], fmt.Sprintf("and %d more", len(unknown)-show))
		}
		return &dataset.ParseError{File: run.File, Line: line,
			Err: fmt.Errorf("queries not in %s: %s", candsFile, strings.Join(unknown, ", "))}
	}
	for _, qid := range run.QueryIDs() {
		for _, e := range run.Ranking(qid) {
			if !isCand[qid][e.DocID] {
				return &dataset.ParseError{File: run.File, Line: e.Line,
					Err: fmt.Errorf("document %q is not a candidate of query %q in %s", e.DocID, qid, candsFile)}
			}
		}
	}
	return nil
}

// below returns a score lower than s: s-1, or the next float64 down where
// s is too large for 1 to change it.
func below(s float64) float64 {
	if b := s - 1; b < s {
		return b
	}
	return math.Nextafter(s, math.Inf(-1))
}
