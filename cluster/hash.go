package cluster

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
)

// Of returns the shard, 0 to n-1, that holds document id in a collection
// of n shards: the 64-bit FNV-1a hash of the id's bytes, modulo n. The
// hash is fixed (it decides where every document of every sharded index
// lives); changing n moves most documents, so a collection is resharded by
// indexing it again.
func Of(id string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64() % uint64(n))
}

// MaxShards bounds the number of shards a collection is split into.
const MaxShards = 1024

// ParseShard reads "I/N", shard I (0-based) of N.
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("shard %q: want I/N, shard I (0 to N-1) of N shards (1 to %d), such as 0/3", s, MaxShards)
	}
	return i, n, nil
}

// shardKey is the internal key under which a shard's index records which
// shard it holds ("I/N").
var shardKey = []byte("semrank_shard")

// MarkShard records in idx that it holds shard i of n, so that servers
// report it (Info) and a coordinator refuses shards listed out of order.
// An index that records another shard is refused: its documents are that
// shard's.
func MarkShard(idx bleve.Index, i, n int) error {
	have, ok, err := ShardOfIndex(idx)
	if err != nil {
		return err
	}
	want := fmt.Sprintf("%d/%d", i, n)
	if ok && have != want {
		return fmt.Errorf("cluster: the index holds shard %s, not %s", have, want)
	}
	return idx.SetInternal(shardKey, []byte(want))
}

// ShardOfIndex returns the shard ("I/N") idx records holding (MarkShard);
// ok is false when it records none (an index built whole).
func ShardOfIndex(idx bleve.Index) (shard string, ok bool, err error) {
	b, err := idx.GetInternal(shardKey)
	if err != nil || b == nil {
		return "", false, err
	}
	return string(b), true, nil
}
