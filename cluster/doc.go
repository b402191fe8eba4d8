// Package cluster serves one collection from several machines: shards,
// each a semrank index of the documents whose ids hash to it (Of; built by
// semrank index --shard), each served by semrank serve, whose /api/shard/
// endpoints (package server) answer a coordinator; and coordinators that
// search the shards as one index (Coordinator: a bleve.Index over a
// bleve.IndexAlias of Remote clients) and rerank the merged window once
// with their pipeline.
//
// Scores are the ones a single index of every document would give: each
// shard searches with the collection's document count, term document
// counts and dictionary sizes in place of its own (WithStats), which a
// coordinator gathers from every shard (Presearch on each) and caches for
// the shards' epochs (Epoch). The lexical stages at the coordinator read
// the same sums (Coordinator implements rerank.TermStats), and the
// window's payloads come from their shards (rerank.PayloadFetcher).
package cluster
