package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether stderr is a terminal: progress bars are drawn
// only there, so logs and CI output stay clean.
func isTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// newBar returns a progress bar over n steps on a terminal, and a silent one
// otherwise. desc labels the bar.
func newBar(n int, desc string) *progressbar.ProgressBar {
	var w io.Writer = io.Discard
	if isTerminal() {
		w = os.Stderr
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
	)
}
