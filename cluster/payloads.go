package cluster

import (
	"context"
	"net/http"

	"github.com/semrank/semrank/analyzers"
	"github.com/semrank/semrank/index"
	"github.com/semrank/semrank/rerank"
)

// PayloadsBody asks a shard for the payloads of documents (POST
// /api/shard/payloads).
type PayloadsBody struct {
	IDs []string `json:"ids"`
}

// ShardPayloads is a shard's answer: every payload it holds for the
// documents asked for, by payload name and document id, and the model
// that wrote each payload name.
type ShardPayloads struct {
	Models   map[string]string            `json:"models"`
	Payloads map[string]map[string][]byte `json:"payloads"`
}

// payloadCache holds the payloads fetched for the shards' state of one
// presearch (view key): a write moves a shard's epoch, and the cache is
// dropped at the next search.
type payloadCache struct {
	models  map[string]string
	byName  map[string]map[string][]byte
	fetched map[string]bool // ids asked for, with or without payloads
}

// payloadCacheMax bounds the documents whose payloads are cached.
const payloadCacheMax = 1 << 18

// FetchPayloads implements rerank.PayloadFetcher: it asks each document's
// shard for the payloads of the documents of ids not fetched yet, one
// request to each shard at once. A shard that fails leaves its documents
// without payloads: the stages compute them from their text, as they
// would for a document indexed without them.
func (c *Coordinator) FetchPayloads(ctx context.Context, ids []string) error {
	n := len(c.shards)
	parts := make([][]string, n)
	c.mu.Lock()
	for _, id := range ids {
		if !c.pay.fetched[id] {
			s := Of(id, n)
			parts[s] = append(parts[s], id)
		}
	}
	key := c.view.key
	c.mu.Unlock()
	var send []*Remote
	var bodies []PayloadsBody
	for i, p := range parts {
		if len(p) > 0 {
			send = append(send, c.shards[i])
			bodies = append(bodies, PayloadsBody{IDs: p})
		}
	}
	if len(send) == 0 {
		return nil
	}
	at := map[*Remote]PayloadsBody{}
	for i, r := range send {
		at[r] = bodies[i]
	}
	answers, errs := each(send, func(r *Remote) (*ShardPayloads, error) {
		var a ShardPayloads
		return &a, r.call(ctx, http.MethodPost, "/api/shard/payloads", at[r], &a)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view.key != key {
		return nil // the shards moved on: these may be stale
	}
	if c.pay.fetched == nil || len(c.pay.fetched)+len(ids) > payloadCacheMax {
		c.pay = payloadCache{models: map[string]string{}, byName: map[string]map[string][]byte{}, fetched: map[string]bool{}}
	}
	for i, a := range answers {
		if errs[i] != nil {
			continue
		}
		for _, id := range at[send[i]].IDs {
			c.pay.fetched[id] = true
		}
		for name, model := range a.Models {
			if old, ok := c.pay.models[name]; ok && old != model {
				// Shards whose payloads of one name other models wrote:
				// none is trusted.
				c.pay.models[name] = ""
				continue
			}
			c.pay.models[name] = model
		}
		for name, docs := range a.Payloads {
			m := c.pay.byName[name]
			if m == nil {
				m = map[string][]byte{}
				c.pay.byName[name] = m
			}
			for id, b := range docs {
				m[id] = b
			}
		}
	}
	return nil
}

// Payload implements rerank.Payloads: the payload fetched for docID, if
// any (FetchPayloads).
func (c *Coordinator) Payload(name, docID string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.pay.byName[name][docID]
	return b, ok, nil
}

// PayloadModel implements rerank.Payloads: the model that wrote the
// payloads of name fetched so far, "" when none was or the shards'
// models differ.
func (c *Coordinator) PayloadModel(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pay.models[name]
}

// PayloadFrom implements rerank.ModelPayloads.
func (c *Coordinator) PayloadFrom(name, model, docID string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if model == "" || c.pay.models[name] != model {
		return nil, false, nil
	}
	b, ok := c.pay.byName[name][docID]
	return b, ok, nil
}

// termsOf returns the terms of candidate cd: its terms payload's, when
// fetched, else its text's.
func (c *Coordinator) termsOf(cd rerank.Candidate, add func(string)) {
	b, ok, _ := c.PayloadFrom(index.TermsPayload, (index.TermsEncoder{}).ModelID(), cd.ID)
	if ok {
		if tcs, err := index.DecodeTermList(b); err == nil {
			for _, tc := range tcs {
				add(tc.Term)
			}
			return
		}
	}
	for _, t := range analyzers.CachedTokens(cd.FullText()) {
		add(t)
	}
}

var (
	_ rerank.ModelPayloads  = (*Coordinator)(nil)
	_ rerank.PayloadFetcher = (*Coordinator)(nil)
)
