package index

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// FuzzParseJournal reads fuzzed payload journals: never a panic, and a
// journal that reads names the ids, each a deletion record, that written
// back as begin writes them give the same bytes, or a prefix of them
// (trailing zeros read as a torn record's).
func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(payloadMagic))
	f.Add(appendRecord(appendRecord([]byte(payloadMagic), "d1", nil, true), "d2", nil, true))
	f.Add(appendRecord([]byte(payloadMagic), "d1", []byte("data"), false))
	f.Add(append(appendRecord([]byte(payloadMagic), "d1", nil, true), 0, 0, 0, 0))
	f.Add([]byte(payloadMagicV1))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ids, err := parseJournal(bytes.NewReader(raw))
		if err != nil {
			return
		}
		back := []byte(payloadMagic)
		for _, id := range ids {
			if id == "" || len(id) > maxIDLen {
				t.Fatalf("id %q read back", id)
			}
			back = appendRecord(back, id, nil, true)
		}
		if !bytes.HasPrefix(raw, back) {
			t.Fatalf("ids %q do not write back the journal read", ids)
		}
	})
}

// FuzzDecodeTermList decodes fuzzed term-count payloads: never a panic,
// nor an allocation beyond the payload's size, and a payload that decodes
// holds its terms sorted, each once, with counts of at least 1, and
// encodes back to what decodes to the same list (a varint need not be
// written in its shortest form).
func FuzzDecodeTermList(f *testing.F) {
	f.Add(EncodeTermCounts([]string{"bank", "doha", "bank"}))
	f.Add(EncodeTermCounts(nil))
	f.Add([]byte{2, 1, 'a', 1, 1, 'a', 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		list, err := DecodeTermList(raw)
		// EachTermCount reads what DecodeTermList reads, without
		// allocating: it refuses the same inputs and yields the same
		// terms and counts, in order.
		var each []TermCount
		eerr := EachTermCount(raw, func(int) {}, func(term []byte, c int) {
			each = append(each, TermCount{Term: string(term), Count: c})
		})
		if (eerr == nil) != (err == nil) {
			t.Fatalf("DecodeTermList: %v; EachTermCount: %v", err, eerr)
		}
		if err != nil {
			return
		}
		if !slices.Equal(each, list) {
			t.Fatalf("EachTermCount yields %v, DecodeTermList %v", each, list)
		}
		b := binary.AppendUvarint(nil, uint64(len(list)))
		for _, tc := range list {
			b = binary.AppendUvarint(b, uint64(len(tc.Term)))
			b = append(b, tc.Term...)
			b = binary.AppendUvarint(b, uint64(tc.Count))
		}
		again, err := DecodeTermList(b)
		if err != nil || !reflect.DeepEqual(again, list) {
			t.Fatalf("decoded %v, which encodes to %x, which decodes to %v, %v", list, b, again, err)
		}
		for i, tc := range list {
			if tc.Count < 1 || i > 0 && tc.Term <= list[i-1].Term {
				t.Fatalf("decoded %v: terms not sorted and distinct, or a count below 1", list)
			}
		}
		if m, err := DecodeTermCounts(raw); err != nil || len(m) != len(list) {
			t.Fatalf("DecodeTermCounts = %v, %v", m, err)
		}
	})
}

// FuzzParseSource reads fuzzed attachment records (semrank_attach.json):
// never a panic, and a record that reads names a field and an analyzer.
func FuzzParseSource(f *testing.F) {
	f.Add([]byte(`{"title":["title"],"text":["abstract"],"analyzer":"standard"}`))
	f.Add([]byte(`{"title":[],"text":["a","b"],"analyzer":"en"}`))
	f.Add([]byte(`{"text":["a"],"analyzer":"standard","extra":1}`))
	f.Add([]byte(`{"text":["a"],"analyzer":"standard"} {}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := parseSource(raw)
		if err != nil {
			return
		}
		if len(s.Title)+len(s.Text) == 0 || s.Analyzer == "" {
			t.Fatalf("%q read as %+v", raw, s)
		}
	})
}

// FuzzStoredMeta: metadata decoded on the fast path (flat objects) is
// what encoding/json decodes, value for value, and any JSON decodes as
// encoding/json decodes it.
func FuzzStoredMeta(f *testing.F) {
	for _, s := range []string{
		`{"by_question_author":false,"category":"Working in Qatar","date":"2015-01-07 10:31:45","position":1,"thread_size":10,"user_id":"U4433","user_name":"anon"}`,
		`{"a":1e3,"b":-0.5,"c":null,"d":true,"a":2}`,
		`{"nested":{"x":1},"list":[1,2]}`,
		`{"esc":"a\"b\u00e9\ud83d\ude00"}`,
		`{"n":01}`, `{"n":1e400}`, `{}`, `[]`, `"x"`, `{"a":1} trailing`, "{\"bad\":\"\xff\"}",
		`{"a":-0,"b":1.5E+2,"c":0.25e-1}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":00}`, ` { "a" : "b" , "c" : [ ] } `,
		"{\"tab\":\"a\tb\"}", `{"a":1,}`, `{,}`, `{"a"}`, `{"a":tru}`, `{"a":nul}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want map[string]any
		werr := json.Unmarshal([]byte(raw), &want)
		if fast, ok := flatMeta(raw); ok {
			if werr != nil {
				t.Fatalf("%q: fast path decoded %v, encoding/json refuses it: %v", raw, fast, werr)
			}
			if !reflect.DeepEqual(fast, want) {
				t.Fatalf("%q: fast path %#v, encoding/json %#v", raw, fast, want)
			}
		}
		if raw == "" {
			return
		}
		if got := StoredMeta(map[string]any{FieldMeta: raw}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: StoredMeta %#v, encoding/json %#v", raw, got, want)
		}
	})
}
