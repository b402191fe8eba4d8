package conceptexp

import (
	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/models/concept"
)

// LoadLists reads the judged candidate lists of a BEIR directory.
func LoadLists(dir string) ([]concept.Judged, *dataset.Dataset, error) {
	d, ds, err := concept.LoadDir(dir, false)
	return d.Lists, ds, err
}

// LoadExtra reads extra corpora: their texts, title–body pairs and
// query–relevant-document pairs (see concept.Data.AddCorpus).
func LoadExtra(dirs []string) (concept.Data, error) {
	var d concept.Data
	for _, dir := range dirs {
		ds, err := dataset.Load(dir)
		if err != nil {
			return d, err
		}
		d.AddCorpus(ds, true)
	}
	return d, nil
}

// Texts returns the queries' and candidates' texts of lists.
func Texts(lists []concept.Judged) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l.Query)
		out = append(out, l.Docs...)
	}
	return out
}
