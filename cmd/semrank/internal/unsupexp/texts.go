package unsupexp

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"

	"github.com/semrank/semrank/dataset"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// CollectionTexts returns the texts of the BEIR directories (DatasetTexts)
// followed by the documents of the indexes, read through fields where an
// index is not semrank's (IndexTexts).
func CollectionTexts(ctx context.Context, dirs, indexes []string, fields rerank.Fields) ([]string, error) {
	out, err := DatasetTexts(dirs)
	if err != nil {
		return nil, err
	}
	for _, path := range indexes {
		more, err := IndexTexts(ctx, path, fields)
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
		docs, qs, err := dataset.LoadText(dir)
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

// IndexTexts returns the title and text of every document of the index
// at path (the whole collection is read into memory): a semrank index's
// own, or, from any other Bleve index, those of the fields fields names
// (rerank.IndexCorpus), which must then name some.
func IndexTexts(ctx context.Context, path string, fields rerank.Fields) ([]string, error) {
	idx, err := index.OpenAny(path)
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
	si, ok := idx.(*index.Index)
	if !ok || !fields.IsZero() {
		return fieldTexts(ctx, idx, path, fields)
	}
	hits, err := si.TopN(ctx, bleve.NewMatchAllQuery(), int(n))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Title + "\n" + h.Text
	}
	return out, nil
}

// fieldTexts returns the title and text of every document of idx, read
// through fields.
func fieldTexts(ctx context.Context, idx bleve.Index, path string, fields rerank.Fields) ([]string, error) {
	if fields.IsZero() {
		return nil, fmt.Errorf("index %s is not a semrank index: name the fields that hold its documents' text (a pipeline file's fields: key, --pipeline)", path)
	}
	p, err := rerank.FirstStageOf(idx, &rerank.Config{Fields: fields}, 0)
	if err == nil {
		err = index.CheckFields(idx, p.Fields.All()...)
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	docs, err := rerank.IndexCorpus(ctx, idx, p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Title + "\n" + d.Text
	}
	return out, nil
}
