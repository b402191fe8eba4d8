package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// The bodies of a shard's endpoints (semrank serve, package server):
//
//	POST /api/shard/search     SearchBody → Bleve's SearchResult, compact (ResultType) when accepted and it fits
//	POST /api/shard/presearch  PresearchBody → ShardStats
//	POST /api/shard/docfreq    DocFreqBody → ShardStats
//	POST /api/shard/payloads   PayloadsBody → ShardPayloads
//	GET  /api/shard/terms?field=F  the field's dictionary, one JSON string a line
//	GET  /api/shard/info       Info

// EpochHeader carries, with a shard's search answer, the epoch of its
// index after the search (Epoch): a coordinator that searched with the
// statistics it cached for another epoch searches again.
const EpochHeader = "Semrank-Epoch"

// SearchBody asks a shard for a search: Bleve's request, searched with
// the collection's statistics when Stats is set (WithStats).
type SearchBody struct {
	Request *bleve.SearchRequest `json:"request"`
	Stats   *Stats               `json:"stats,omitempty"`
}

// PresearchBody asks a shard for its statistics of a query's terms
// (Presearch): the query is Bleve's query JSON.
type PresearchBody struct {
	Query json.RawMessage `json:"query"`
}

// DocFreqBody asks a shard how many of its documents hold each term, as
// the lexical stages count them (index.Index.DocFreq); with Fields, how
// many hold it in each of those fields and in Bleve's composite field
// _all, each field's count apart (FieldDocFreqs), which the coordinator
// sums over the shards and combines as index.Stats does.
type DocFreqBody struct {
	Terms  []string `json:"terms"`
	Fields []string `json:"fields,omitempty"`
}

// ShardStats is a shard's answer to a presearch or a docfreq: its
// statistics, and the epoch of the index they were read from.
type ShardStats struct {
	Stats
	Epoch string `json:"epoch"`
}

// Info describes a shard.
type Info struct {
	// Shard is the shard ("I/N") the index holds, when it records one
	// (MarkShard).
	Shard   string          `json:"shard,omitempty"`
	Docs    uint64          `json:"docs"`
	Epoch   string          `json:"epoch"`
	Fields  []string        `json:"fields"`
	Mapping json.RawMessage `json:"mapping"`
}

// process tells this process's epochs from another's: a shard that
// restarts begins its index's epochs again.
var process = func() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// Epoch returns a string that changes whenever what idx holds may have
// changed: scorch's root epoch, which every write and merge moves on,
// and this process's id. A coordinator keeps the statistics it gathered
// (dictionary sizes, document frequencies) only as long as every shard's
// epoch stays the same. An index that reports no root epoch gets a new
// epoch each time, so nothing is kept.
func Epoch(idx bleve.Index) string {
	// scorch's Stats, not StatsMap, which walks the index's folder.
	if adv, err := idx.Advanced(); err == nil {
		if s, ok := adv.(*scorch.Scorch); ok {
			if st, ok := s.Stats().(*scorch.Stats); ok {
				return fmt.Sprintf("%s.%d", process, atomic.LoadUint64(&st.CurRootEpoch))
			}
		}
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return process + ".?" + hex.EncodeToString(b)
}
