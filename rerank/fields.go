package rerank

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/search"
	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
)

// Fields names the stored document fields that stages read as a
// candidate's title and text. A pipeline file gives them as
//
//	fields:
//	  title: title            # one field or a list
//	  text: [abstract, body]
//
//	  analyzer: semrank_en    # default: the one the index's mapping gives them
//
// A key left out keeps semrank's own field (title, text); an empty list
// reads none. A field indexed from several values, or several fields,
// read as their values joined one a line.
//
// The lexical stages analyze the fields as the index analyzed them and
// read its term statistics. Analyzer names another analyzer that Bleve's
// registry knows (semrank's stemming semrank_en, Bleve's en, ...): the
// index's term dictionary then holds none of its terms, so the stages
// read term counts made with it and attached to the index (Attach), and
// statistics counted from those.
type Fields struct {
	Title    FieldList `yaml:"title,omitempty" json:"title,omitempty"`
	Text     FieldList `yaml:"text,omitempty" json:"text,omitempty"`
	Analyzer string    `yaml:"analyzer,omitempty" json:"analyzer,omitempty"`
}

// IsZero reports whether f leaves every key out; an empty list is not
// left out (it reads no field), so a pipeline file written keeps it.
func (f Fields) IsZero() bool { return f.Title == nil && f.Text == nil && f.Analyzer == "" }

// MarshalYAML writes the keys f sets, an empty list as [].
func (f Fields) MarshalYAML() (any, error) {
	out := map[string]any{}
	if f.Title != nil {
		out["title"] = []string(f.Title)
	}
	if f.Text != nil {
		out["text"] = []string(f.Text)
	}
	if f.Analyzer != "" {
		out["analyzer"] = f.Analyzer
	}
	return out, nil
}

// FieldList is one field name or several; in YAML a string or a list.
type FieldList []string

// UnmarshalYAML reads a string or a list of strings.
func (l *FieldList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = FieldList{s}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = FieldList(s)
		if *l == nil {
			*l = FieldList{}
		}
		return nil
	}
	return fmt.Errorf("line %d: a field name or a list of them", n.Line)
}

// resolved returns f with each key left out set to semrank's own field.
func (f Fields) resolved() Fields {
	if f.Title == nil {
		f.Title = FieldList{index.FieldTitle}
	}
	if f.Text == nil {
		f.Text = FieldList{index.FieldText}
	}
	return f
}

// IsDefault reports whether f reads semrank's own fields analyzed with
// semrank's analyzer, as an index semrank built stores them.
func (f Fields) IsDefault() bool {
	r := f.resolved()
	return slices.Equal(r.Title, FieldList{index.FieldTitle}) && slices.Equal(r.Text, FieldList{index.FieldText}) &&
		(f.Analyzer == "" || f.Analyzer == analyzers.Name)
}

// All returns every field f names, title fields first.
func (f Fields) All() []string {
	r := f.resolved()
	return slices.Concat([]string(r.Title), []string(r.Text))
}

// check refuses an empty or repeated field name.
func (f Fields) check() error {
	seen := map[string]bool{}
	for _, n := range f.All() {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("fields: an empty field name")
		}
		if seen[n] {
			return fmt.Errorf("fields: %q is named twice", n)
		}
		seen[n] = true
	}
	if r := f.resolved(); len(r.Text) == 0 && len(r.Title) == 0 {
		return fmt.Errorf("fields: no field to read")
	}
	return nil
}

// candidate returns the candidate a first-stage hit is, its title and text
// read from the hit's stored fields, at 1-based rank; its metadata
// decoded from semrank's stored JSON only with meta (see MetadataReader).
func (f Fields) candidate(h *search.DocumentMatch, rank int, meta bool) Candidate {
	r := f.resolved()
	doc := dataset.Doc{ID: h.ID, Title: joinedText(h.Fields, r.Title), Text: joinedText(h.Fields, r.Text), Metadata: candidateFields(h.Fields, meta)}
	return Candidate{Doc: doc, Score: h.Score, Rank: rank}
}

// joinedText returns the stored text of fields in stored, one value a
// line.
func joinedText(stored map[string]any, fields FieldList) string {
	if len(fields) == 1 {
		return storedText(stored[fields[0]])
	}
	var parts []string
	for _, f := range fields {
		if s := storedText(stored[f]); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}
