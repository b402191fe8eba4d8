package cluster

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// jsonRoundTrip is res as a coordinator reads it from a shard's JSON.
func jsonRoundTrip(t testing.TB, res *bleve.SearchResult) *bleve.SearchResult {
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out bleve.SearchResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestResultMatchesJSON: what the compact encoding carries decodes to
// what Bleve's JSON round trip gives, scores to the bit; what it does not
// carry is refused, for JSON to carry.
func TestResultMatchesJSON(t *testing.T) {
	status := func() *bleve.SearchStatus { return &bleve.SearchStatus{Total: 1, Successful: 1} }
	hit := func(id string, score float64) *search.DocumentMatch {
		return &search.DocumentMatch{ID: id, Score: score, Sort: []string{"_score"}}
	}
	for _, tc := range []struct {
		name string
		res  *bleve.SearchResult
		ok   bool
	}{
		{"hits", &bleve.SearchResult{Status: status(), Total: 412, TotalRelation: "eq", Cost: 2451, MaxScore: 1.0986213421748967, Took: 227699 * time.Nanosecond,
			Hits: search.DocumentMatchCollection{hit("72", 1.0986213421748967), hit("2573", 0.1+0.2), hit("ü-7", math.SmallestNonzeroFloat64)}}, true},
		{"no hits", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{}}, true},
		{"nil hits", &bleve.SearchResult{Status: status()}, true},
		{"sort values", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{
			{ID: "a", Score: 2, Sort: []string{"x", ""}, DecodedSort: []string{"1"}}, {ID: "", Score: 0, Sort: []string{}}}}, true},
		{"empty maps", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{
			{ID: "a", Score: 1, Fields: map[string]any{}, ScoreBreakdown: map[int]float64{}}}}, true},
		{"fields", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{{ID: "a", Fields: map[string]any{"title": "t"}}}}, false},
		{"explanation", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{{ID: "a", Expl: &search.Explanation{Value: 1}}}}, false},
		{"fragments", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{{ID: "a", Fragments: search.FieldFragmentMap{"f": {"x"}}}}}, false},
		{"index", &bleve.SearchResult{Status: status(), Hits: search.DocumentMatchCollection{{ID: "a", Index: "/data/x"}}}, false},
		{"facets", &bleve.SearchResult{Status: status(), Facets: search.FacetResults{}}, false},
		{"status errors", &bleve.SearchResult{Status: &bleve.SearchStatus{Errors: map[string]error{"x": errResult}}}, false},
		{"no status", &bleve.SearchResult{}, false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := AppendResult([]byte("keep"), tc.res)
			if ok != tc.ok {
				t.Fatalf("encoded: %v, want %v", ok, tc.ok)
			}
			if string(b[:4]) != "keep" {
				t.Fatalf("the bytes before were not kept: %q", b)
			}
			if !ok {
				if len(b) != 4 {
					t.Fatalf("refused, yet appended %d bytes", len(b)-4)
				}
				return
			}
			got, err := DecodeResult(b[4:])
			if err != nil {
				t.Fatal(err)
			}
			if want := jsonRoundTrip(t, tc.res); !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Fatalf("decoded %s\nJSON gives %s", gj, wj)
			}
			for i, h := range got.Hits {
				if math.Float64bits(h.Score) != math.Float64bits(tc.res.Hits[i].Score) {
					t.Fatalf("hit %d: score %v, want %v", i, h.Score, tc.res.Hits[i].Score)
				}
			}
		})
	}
}

// TestDecodeResultRefuses: cut, padded and malformed bytes are errors.
func TestDecodeResultRefuses(t *testing.T) {
	good, _ := AppendResult(nil, &bleve.SearchResult{Status: &bleve.SearchStatus{}, Hits: search.DocumentMatchCollection{{ID: "doc", Score: 1, Sort: []string{"_score"}}}})
	for i := range good {
		if _, err := DecodeResult(good[:i]); err == nil {
			t.Fatalf("the first %d of %d bytes decoded", i, len(good))
		}
	}
	for name, b := range map[string][]byte{
		"trailing":   append(append([]byte{}, good...), 0),
		"magic":      append([]byte("SRR9"), good[4:]...),
		"huge count": append([]byte(resultMagic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		if _, err := DecodeResult(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeResult: any bytes decode or fail without panicking, and what
// decodes encodes again to bytes that decode to the same result (bytes
// compared: a NaN score is not equal to itself).
func FuzzDecodeResult(f *testing.F) {
	good, _ := AppendResult(nil, &bleve.SearchResult{Status: &bleve.SearchStatus{Total: 1}, Total: 3, TotalRelation: "eq",
		Hits: search.DocumentMatchCollection{{ID: "a", Score: 1.5, Sort: []string{"_score"}}, {ID: "b", DecodedSort: []string{"z"}}}})
	f.Add(good)
	f.Add([]byte(resultMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := DecodeResult(b)
		if err != nil {
			return
		}
		again, ok := AppendResult(nil, res)
		if !ok {
			t.Fatalf("a decoded result does not encode")
		}
		res2, err := DecodeResult(again)
		if err != nil {
			t.Fatal(err)
		}
		if third, _ := AppendResult(nil, res2); string(third) != string(again) {
			t.Fatalf("%q decodes and encodes to %q", again, third)
		}
	})
}
