// Package testdata holds the data semrank's tests read from disk and
// builds the demo data into the binary, so that an installed semrank runs
// its demo from any directory.
//
// Go's tools skip directories named testdata when matching ./..., so this
// package is built only as a dependency of the packages that import it;
// the Makefile vets it by name (go vet ./testdata).
package testdata

import "embed"

// Demo is the demo data set (see demo/README.md for its source and
// licence): a judged BEIR directory with candidate lists, under "demo".
//
//go:embed demo/README.md demo/corpus.jsonl demo/queries.jsonl demo/qrels/test.tsv demo/candidates.trec
var Demo embed.FS

// DemoDir is the directory of Demo that holds the demo data.
const DemoDir = "demo"
