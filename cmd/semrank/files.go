package main

// What commands read and write: outputs that would overwrite their
// inputs, land where they cannot or should not be written, or make a
// training meaningless are refused before any work.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/models"
	"github.com/semrank/semrank/rerank"
)

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

// checkRetrainOutput is checkModelOutput for a trainer's --out, then
// noteListedModel: the model output checks of every trainer but fusion,
// which updates its pipeline's line itself.
func checkRetrainOutput(w io.Writer, out string) error {
	if err := checkModelOutput("--out", out); err != nil {
		return err
	}
	noteListedModel(w, out)
	return nil
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
		q, err := dataset.ReadQrelsFile(filepath.Join(dir, dataset.QrelsFile))
		if err != nil {
			continue
		}
		if len(q) > 0 && !q.JudgesRelevant() {
			return fmt.Errorf("%s %s: no judgment marks a document relevant, so every metric is 0 and there is nothing to learn from", flag, dir)
		}
	}
	return nil
}

// pipelineFile returns the pipeline file a --pipeline value names: the
// value itself, or the pipeline.yaml of a directory holding one (a
// recipe's output directory stands for its pipeline, as inspect reads it).
func pipelineFile(path string) string {
	if p := filepath.Join(path, "pipeline.yaml"); path != "" && isDir(path) && exists(p) {
		return p
	}
	return path
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
	for _, f := range []string{dataset.CorpusFile, dataset.QueriesFile, dataset.QrelsFile, dataset.CandidatesFile} {
		out = append(out, filepath.Join(dir, f))
	}
	return out
}

// readDatasetFiles returns the files of BEIR directory dir that a command
// loading it reads: the optional ones (judgments, candidates) only when
// they exist. An output may then create an absent optional file, as
// "semrank run --out DIR/candidates.trec" writes the candidate lists that
// the trainers ask for.
func readDatasetFiles(dir string) []string {
	out := []string{filepath.Join(dir, dataset.CorpusFile), filepath.Join(dir, dataset.QueriesFile)}
	for _, f := range []string{dataset.QrelsFile, dataset.CandidatesFile} {
		// As dataset.Load decides: only a file that does not
		// exist is absent.
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
		}
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
