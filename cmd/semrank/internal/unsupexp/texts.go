package unsupexp

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/eval"
	"github.com/semrank/semrank/index"
)

// CollectionTexts returns the texts of the BEIR directories (DatasetTexts)
// followed by the documents of the semrank indexes (IndexTexts).
func CollectionTexts(ctx context.Context, dirs, indexes []string) ([]string, error) {
	out, err := DatasetTexts(dirs)
	if err != nil {
		return nil, err
	}
	for _, path := range indexes {
		more, err := IndexTexts(ctx, path)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// DatasetTexts returns the full text of every query (where a directory
// has queries.jsonl) and document of the BEIR directories, the training
// text of the word vectors and topic model.
func DatasetTexts(dirs []string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		docs, qs, err := eval.LoadText(dir)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			out = append(out, q.FullText())
		}
		for _, d := range docs {
			out = append(out, d.FullText())
		}
	}
	return out, nil
}

// IndexTexts returns the title and text of every document a semrank index
// holds (the whole collection is read into memory).
func IndexTexts(ctx context.Context, path string) ([]string, error) {
	idx, err := index.OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	n, err := idx.DocCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("index %s is empty", path)
	}
	hits, err := idx.TopN(ctx, bleve.NewMatchAllQuery(), int(n))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Title + "\n" + h.Text
	}
	return out, nil
}
