package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether stderr is a terminal: progress bars are drawn
// only there, so logs and CI output stay clean.
func isTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// logEvery is the least time between two progress lines off a terminal.
const logEvery = 10 * time.Second

// progress shows how far a long step has come on stderr: a bar on a
// terminal; elsewhere (logs, CI) a line at most every logEvery, so that a
// run that takes minutes shows it is alive without filling its log.
type progress struct {
	bar   *progressbar.ProgressBar // nil off a terminal
	w     io.Writer                // where lines go off a terminal
	desc  string
	done  int
	total int
	last  time.Time // when the last line was written, or the start
	lines int       // lines written
}

// newBar returns the progress of a step of n units labelled desc.
func newBar(n int, desc string) *progress {
	if isTerminal() {
		return &progress{bar: progressbar.NewOptions(n,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100_000_000),
		)}
	}
	return newLines(os.Stderr, n, desc)
}

// newLines returns a progress that writes sparse lines to w.
func newLines(w io.Writer, n int, desc string) *progress {
	return &progress{w: w, desc: desc, total: n, last: time.Now()}
}

// Describe changes the label shown with the count.
func (p *progress) Describe(desc string) {
	if p.bar != nil {
		p.bar.Describe(desc)
		return
	}
	p.desc = desc
}

// Set records that done units are finished.
func (p *progress) Set(done int) {
	if p.bar != nil {
		_ = p.bar.Set(done)
		return
	}
	p.done = done
	if time.Since(p.last) >= logEvery {
		p.line()
	}
}

// Add records n more finished units.
func (p *progress) Add(n int) {
	if p.bar != nil {
		_ = p.bar.Add(n)
		return
	}
	p.Set(p.done + n)
}

// Finish ends the step: it clears the bar, or, off a terminal, writes a
// last line when earlier ones were written (a short step writes none).
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	if p.lines > 0 {
		p.line()
	}
}

func (p *progress) line() {
	fmt.Fprintf(p.w, "%s: %d/%d\n", p.desc, p.done, p.total)
	p.last = time.Now()
	p.lines++
}
