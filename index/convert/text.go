package convert

import (
	"errors"
	"strings"
)

// SemEvalText returns every question and comment text in the given
// SemEval Task 3 XML files (original questions, related questions,
// comments), one string per post: unlabeled in-domain text for word
// vectors, topic models and other unsupervised training. Labels are not
// read.
func SemEvalText(paths ...string) ([]string, error) {
	a, b := NewSemEval(SubtaskA), NewSemEval(SubtaskB)
	// The threads subtask A skips repeat a related question, not its
	// comments, which are found only there.
	a.keepSkipped = true
	for _, p := range paths {
		if err := a.AddFile(p); err != nil {
			return nil, err
		}
		// Files without original questions (the 2015 threads) carry no
		// subtask B data; that is not an error here.
		if err := b.AddFile(p); err != nil && !strings.Contains(err.Error(), "no subtask B queries") {
			return nil, err
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, ds := range []*SemEval{a, b} {
		d := ds.Dataset()
		for _, q := range d.Queries {
			add(q.FullText())
		}
		for _, doc := range d.Corpus {
			add(doc.FullText())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("convert: no text in the given files")
	}
	return out, nil
}
