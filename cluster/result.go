package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// ResultType is the media type of a shard's search answer in the compact
// encoding (AppendResult): a coordinator lists it in its search requests'
// Accept header, and a shard answers in it when the result holds nothing
// the encoding leaves out, else in Bleve's JSON. Decoding JSON costs a
// coordinator more than searching its merged window does on a small
// collection; the compact form is read with no reflection, and holds
// each score's exact bits.
const ResultType = "application/vnd.semrank.result"

// resultMagic begins a compact result, naming the encoding's version.
const resultMagic = "SRR1"

// AppendResult appends res in the compact encoding to dst: the search's
// status, totals, cost, largest score and time, and each hit's id, score
// and sort values, which are all a shard's answer to a search without
// fields, highlights, explanations or facets holds. ok is false, and dst
// returned as it was, when res holds anything else (then Bleve's JSON
// carries it). Decoding gives what Bleve's JSON round trip of res gives.
func AppendResult(dst []byte, res *bleve.SearchResult) (out []byte, ok bool) {
	if !compact(res) {
		return dst, false
	}
	b := append(dst, resultMagic...)
	st := res.Status
	for _, n := range []int{st.Total, st.Failed, st.Successful} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = binary.AppendUvarint(b, res.Total)
	b = appendString(b, res.TotalRelation)
	b = binary.AppendUvarint(b, res.Cost)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(res.MaxScore))
	b = binary.AppendVarint(b, int64(res.Took))
	// The hits' count plus one; 0 for none at all (nil), which JSON
	// tells from an empty list too.
	n := uint64(len(res.Hits)) + 1
	if res.Hits == nil {
		n = 0
	}
	b = binary.AppendUvarint(b, n)
	for _, h := range res.Hits {
		b = appendString(b, h.ID)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.Score))
		b = appendStrings(b, h.Sort)
		b = appendStrings(b, h.DecodedSort)
	}
	return b, true
}

// compact reports whether res holds only what the compact encoding
// carries. Empty maps and slices count as absent: Bleve's JSON omits
// them too.
func compact(res *bleve.SearchResult) bool {
	if res == nil || res.Status == nil || len(res.Status.Errors) > 0 || res.Request != nil ||
		res.Facets != nil || len(res.SynonymResult) > 0 || res.BM25Stats != nil {
		return false
	}
	for _, h := range res.Hits {
		if h == nil || h.Index != "" || h.Expl != nil || len(h.Locations) > 0 || len(h.Fragments) > 0 ||
			len(h.Fields) > 0 || len(h.ScoreBreakdown) > 0 || len(h.IndexNames) > 0 {
			return false
		}
	}
	return true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// errResult is the error of a compact result that is cut short or
// malformed.
var errResult = errors.New("cluster: malformed compact search result")

// DecodeResult decodes a compact search result (AppendResult). It reads
// b only, allocating no more than b's length warrants, and refuses
// trailing bytes.
func DecodeResult(b []byte) (*bleve.SearchResult, error) {
	if len(b) < len(resultMagic) || string(b[:len(resultMagic)]) != resultMagic {
		return nil, fmt.Errorf("%w: it does not begin with %q", errResult, resultMagic)
	}
	d := resultDecoder{b: b[len(resultMagic):]}
	res := &bleve.SearchResult{Status: &bleve.SearchStatus{}}
	res.Status.Total = d.int()
	res.Status.Failed = d.int()
	res.Status.Successful = d.int()
	res.Total = d.uvarint()
	res.TotalRelation = d.string()
	res.Cost = d.uvarint()
	res.MaxScore = d.float()
	res.Took = time.Duration(d.varint())
	// The hits' count plus one (0: nil). Each hit takes at least 11
	// bytes (an id's length, a score, two counts), which bounds what the
	// count may ask to allocate.
	if n := d.uvarint(); n > 0 {
		if n-1 > uint64(len(d.b)/11) {
			d.fail("the hits' count is larger than the bytes that follow")
			return nil, d.err
		}
		res.Hits = make(search.DocumentMatchCollection, n-1)
		ms := make([]search.DocumentMatch, n-1) // one allocation for all
		for i := range res.Hits {
			h := &ms[i]
			h.ID, h.Score = d.string(), d.float()
			h.Sort = d.strings()
			h.DecodedSort = d.strings()
			res.Hits[i] = h
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after its last hit", errResult, len(d.b))
	}
	return res, nil
}

// scoreSort is the sort value of a hit sorted by score.
const scoreSort = "_score"

// resultDecoder reads a compact result's fields in turn; the first
// problem is kept in err, and every read after it gives zero.
type resultDecoder struct {
	b   []byte
	err error
}

func (d *resultDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errResult, what)
	}
	d.b = nil
}

func (d *resultDecoder) uvarint() uint64 { return number(d, binary.Uvarint) }

func (d *resultDecoder) varint() int64 { return number(d, binary.Varint) }

// number reads a varint with read, binary.Uvarint or binary.Varint.
func number[T uint64 | int64](d *resultDecoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail("a number is cut short or too large")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a count that must fit an int.
func (d *resultDecoder) int() int {
	v := d.uvarint()
	if v > math.MaxInt32 {
		d.fail("a status count is out of range")
		return 0
	}
	return int(v)
}

// count reads the number of items that follow, each at least size bytes.
func (d *resultDecoder) count(size int) int {
	v := d.uvarint()
	if v > uint64(len(d.b)/size) {
		d.fail("a count is larger than the bytes that follow")
		return 0
	}
	return int(v)
}

func (d *resultDecoder) float() float64 {
	if len(d.b) < 8 {
		d.fail("a score is cut short")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *resultDecoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("a string is cut short")
		return ""
	}
	var s string
	if string(d.b[:n]) == scoreSort {
		s = scoreSort // every hit of a search by score has it: not copied
	} else {
		s = string(d.b[:n])
	}
	d.b = d.b[n:]
	return s
}

// strings reads a list of strings; an empty one is nil, as Bleve's JSON
// gives for an omitted list.
func (d *resultDecoder) strings() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}
