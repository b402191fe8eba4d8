package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/semrank/semrank/dataset"
)

// TestPayloadLogReplay damages a log in the ways a crash and a bad disk
// do. A crash leaves a torn last record, cut short or zero-filled to the
// end of the file: replay drops it and truncates it away. Damage anywhere
// else, lengths included, is an error naming the log, and the log is left
// exactly as it was: nothing after the damage is cut.
func TestPayloadLogReplay(t *testing.T) {
	last := func(raw []byte) int { off := recordOffsets(t, raw); return off[len(off)-1] }
	second := func(raw []byte) int { return recordOffsets(t, raw)[2] } // [0] is the model record
	zeroFrom := func(at func([]byte) int, skip int) func([]byte) []byte {
		return func(raw []byte) []byte {
			for i := at(raw) + skip; i < len(raw); i++ {
				raw[i] = 0
			}
			return raw
		}
	}
	flip := func(at func([]byte) int, skip int) func([]byte) []byte {
		return func(raw []byte) []byte { raw[at(raw)+skip] ^= 0x40; return raw }
	}
	for _, tc := range []struct {
		name    string
		edit    func([]byte) []byte
		wantErr string // "" when the log opens
	}{
		{"intact", func(raw []byte) []byte { return raw }, ""},
		{"last record cut short", func(raw []byte) []byte { return raw[:len(raw)-3] }, ""},
		{"last record cut inside its lengths", func(raw []byte) []byte { return raw[:last(raw)+5] }, ""},
		{"last record zero-filled from its id", zeroFrom(last, 12), ""},
		{"last record zero-filled from its lengths", zeroFrom(last, 6), ""},
		{"length of a middle record damaged", flip(second, 0), "at byte"},
		{"payload length of a middle record damaged", flip(second, 5), "at byte"},
		{"payload byte of a middle record damaged", flip(second, 14), "checksum mismatch"},
		{"last record's checksum damaged", flip(func(raw []byte) int { return len(raw) - 1 }, 0), "checksum mismatch"},
		{"model id length damaged", flip(func([]byte) int { return len(payloadMagic) }, 0), "model record"},
		{"older format", func(raw []byte) []byte { return append([]byte(payloadMagicV1), raw[len(payloadMagic):]...) }, "rebuild the index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, raw := builtLog(t, tc.edit)
			log := filepath.Join(path, payloadDir, "len.log")
			damaged, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := Open(path)
			if tc.wantErr != "" {
				if err == nil {
					idx.Close()
					t.Fatal("opened a damaged log")
				}
				if !strings.Contains(err.Error(), "len.log") || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one naming len.log and saying %q", err, tc.wantErr)
				}
				if now, _ := os.ReadFile(log); !bytes.Equal(now, damaged) {
					t.Errorf("refusing a damaged log changed it (%d -> %d bytes)", len(damaged), len(now))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			whole := bytes.Equal(damaged, raw)
			for _, d := range corpus {
				_, ok, err := idx.Payload("len", d.ID)
				if want := whole || d.ID != "d4"; ok != want || err != nil {
					t.Errorf("payload of %s present = %v (%v), want %v", d.ID, ok, err, want)
				}
			}
			size := len(raw)
			if !whole {
				size = last(raw)
			}
			if fi, err := os.Stat(log); err != nil || fi.Size() != int64(size) {
				t.Errorf("log size %v (%v), want %d", fi.Size(), err, size)
			}
		})
	}
}

// recordOffsets returns where each record of a log starts, the model
// record first.
func recordOffsets(t *testing.T, raw []byte) []int {
	t.Helper()
	var off []int
	for at := len(payloadMagic); at < len(raw); {
		off = append(off, at)
		il := int(binary.LittleEndian.Uint32(raw[at:]))
		dl := binary.LittleEndian.Uint32(raw[at+4:])
		if dl == deleteLen {
			dl = 0
		}
		at += 12 + il + int(dl) + 4
	}
	return off
}

// TestPayloadLogTornHeader reopens an index after a crash while a payload
// log was being created: a log that stops inside its header holds no
// payloads, so the index opens and the log is written afresh.
func TestPayloadLogTornHeader(t *testing.T) {
	for _, keep := range []int{0, 3, len(payloadMagic), len(payloadMagic) + 2, len(payloadMagic) + 5} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			path, _ := builtLog(t, func(raw []byte) []byte { return raw[:keep] })
			idx, err := Open(path)
			if err != nil {
				t.Fatalf("torn header: %v", err)
			}
			if got := idx.PayloadNames(); len(got) != 0 {
				t.Errorf("payload names %v, want none", got)
			}
			if err := idx.Add(context.Background(), corpus, []PayloadEncoder{lenEncoder{"m2"}}, nil); err != nil {
				t.Fatal(err)
			}
			idx.Close()
			idx, err = Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if _, ok, _ := idx.Payload("len", "d1"); !ok || idx.PayloadModel("len") != "m2" {
				t.Errorf("payload after rewrite: %v, model %q", ok, idx.PayloadModel("len"))
			}
		})
	}
	// A short file that is not a log's beginning is still an error.
	idx, path := build(t, lenEncoder{"m1"})
	idx.Close()
	if err := os.WriteFile(filepath.Join(path, payloadDir, "len.log"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil {
		t.Error("opened an index with a junk payload log")
	}
}

// TestPayloadTornTailReadOnly: a read-only open reads the records before
// a torn tail and leaves the log as it is (a read-write open cuts it).
func TestPayloadTornTailReadOnly(t *testing.T) {
	path, raw := builtLog(t, func(raw []byte) []byte { return append(raw, make([]byte, 100)...) })
	log := filepath.Join(path, payloadDir, "len.log")
	idx, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if b, ok, _ := idx.Payload("len", "d1"); !ok || string(b) != "47" {
		t.Errorf("payload d1 = %q, %v", b, ok)
	}
	if fi, err := os.Stat(log); err != nil || fi.Size() != int64(len(raw)+100) {
		t.Errorf("read-only open changed the log: size %v (%v), want %d", fi.Size(), err, len(raw)+100)
	}
}

// TestPayloadLogZeroTail checks that zeros a crash left past a log's last
// record are dropped, not read as a record with an empty id, and that other
// bytes there are still an error.
func TestPayloadLogZeroTail(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tail    []byte
		wantErr bool
	}{
		{"zeros", make([]byte, 4096), false},
		{"zeros then junk", append(make([]byte, 64), 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, raw := builtLog(t, func(raw []byte) []byte { return append(raw, tc.tail...) })
			log := filepath.Join(path, payloadDir, "len.log")
			idx, err := Open(path)
			if tc.wantErr {
				if err == nil {
					idx.Close()
					t.Fatal("opened a log with junk after its records")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			if _, ok, _ := idx.Payload("len", ""); ok {
				t.Error("zeros read as a payload for an empty id")
			}
			if _, ok, _ := idx.Payload("len", "d1"); !ok {
				t.Error("lost the payload of d1")
			}
			if fi, err := os.Stat(log); err != nil || fi.Size() != int64(len(raw)) {
				t.Errorf("log not truncated to its %d bytes of records: %v, %v", len(raw), fi.Size(), err)
			}
		})
	}
}

// FuzzPayloadLog replays arbitrary bytes as a payload log: opening must
// give a store or an error, never panic, and a store it gives must take
// new records and replay them again. A read-only open (first, as it
// changes no file) must agree with it: the same error or the same
// payloads.
func FuzzPayloadLog(f *testing.F) {
	hdr := appendRecord([]byte(payloadMagic), "m1", []byte{}, false)
	f.Add(hdr)
	f.Add(appendRecord(append([]byte(nil), hdr...), "d1", []byte("17"), false))
	f.Add(appendRecord(appendRecord(append([]byte(nil), hdr...), "d1", []byte("17"), false), "d1", nil, true))
	f.Add(append(append([]byte(nil), hdr...), make([]byte, 40)...))
	f.Add([]byte(payloadMagic[:3]))
	f.Add(append(appendRecord(append([]byte(nil), hdr...), "d1", []byte("17"), false)[:len(hdr)+5], make([]byte, 30)...))
	f.Fuzz(func(t *testing.T, log []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, payloadDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, payloadDir, "len.log"), log, 0o644); err != nil {
			t.Fatal(err)
		}
		ro, roErr := openPayloads(dir, true)
		ps, err := openPayloads(dir, false)
		if (roErr == nil) != (err == nil) {
			t.Fatalf("read-only open: %v; read-write open: %v", roErr, err)
		}
		if err != nil {
			return
		}
		if r, w := payloadsOf(t, ro), payloadsOf(t, ps); !reflect.DeepEqual(r, w) {
			t.Fatalf("read-only open read %v, read-write open %v", r, w)
		}
		ro.close()
		model := ps.model("len")
		if model == "" {
			model = "m1"
		}
		perr := ps.put("len", []payloadRec{{model: model, id: "new", data: []byte("x")}})
		ps.close()
		if perr != nil {
			t.Fatalf("put after a successful open: %v", perr)
		}
		ps, err = openPayloads(dir, false)
		if err != nil {
			t.Fatalf("reopen after put: %v", err)
		}
		defer ps.close()
		if b, ok := ps.get("len", "new"); !ok || string(b) != "x" {
			t.Fatalf("payload after reopen: %q, %v", b, ok)
		}
	})
}

// builtLog builds and closes an index with the "len" payload, replaces its
// payload log with edit's result, and returns the index path and the log's
// original bytes.
func builtLog(t *testing.T, edit func([]byte) []byte) (string, []byte) {
	t.Helper()
	idx, path := build(t, lenEncoder{"m1"})
	idx.Close()
	log := filepath.Join(path, payloadDir, "len.log")
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, edit(append([]byte(nil), raw...)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestPayloadTooLarge: a payload replay would refuse as damage is refused
// when written, and the log stays readable.
func TestPayloadTooLarge(t *testing.T) {
	defer func(old int) { maxPayload = old }(maxPayload)
	maxPayload = 2 // the lenEncoder payloads of corpus are two bytes
	idx, path := build(t, lenEncoder{"m1"})
	big := dataset.Doc{ID: "big", Text: strings.Repeat("x", 100)} // a three-byte payload
	if err := idx.Add(context.Background(), []dataset.Doc{big}, []PayloadEncoder{lenEncoder{"m1"}}, nil); err == nil || !strings.Contains(err.Error(), "more than 2") {
		t.Errorf("oversize payload: err = %v", err)
	}
	idx.Close()
	idx, err := Open(path)
	if err != nil {
		t.Fatalf("reopening after a refused payload: %v", err)
	}
	idx.Close()
}

// TestPayloadJournalLeftovers: a journal that a kill left under its
// temporary name belongs to a write that never reached Bleve: it is
// removed and drops nothing. A damaged journal is refused with a message
// naming it and what to do.
func TestPayloadJournalLeftovers(t *testing.T) {
	idx, path := build(t, lenEncoder{"m1"})
	journal, err := idx.payloads.begin([]string{"d1"})
	if err != nil || journal == "" {
		t.Fatalf("begin = %q, %v", journal, err)
	}
	idx.Close()
	tmp := strings.TrimSuffix(journal, journalExt) + journalTmp
	if err := os.Rename(journal, tmp); err != nil {
		t.Fatal(err)
	}
	idx, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := idx.Payload("len", "d1"); !ok {
		t.Error("a temporary journal dropped the payload of d1")
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary journal left: %v", err)
	}
	idx.Close()
	if err := os.WriteFile(journal, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(string) (*Index, error){OpenReadOnly, Open} {
		if idx, err := open(path); err == nil {
			idx.Close()
			t.Error("opened an index with a damaged journal")
		} else if !strings.Contains(err.Error(), journal) || !strings.Contains(err.Error(), "index again") {
			t.Errorf("err = %v, want it to name %s and say what to do", err, journal)
		}
	}
}

// TestPayloadsFrom: a window's read agrees with reading each payload,
// whether it lies in the log's tail or in a folded segment, for another
// model, after a deletion, and once the index is closed.
func TestPayloadsFrom(t *testing.T) {
	ctx := context.Background()
	idx, err := Create(filepath.Join(t.TempDir(), "idx"))
	if err != nil {
		t.Fatal(err)
	}
	docs := benchDocs(20)
	if err := idx.Add(ctx, docs, []PayloadEncoder{vecEncoder{}}, nil); err != nil {
		t.Fatal(err)
	}
	ids := []string{docs[0].ID, docs[7].ID, "absent", docs[19].ID, docs[0].ID}
	check := func(when string) {
		t.Helper()
		for _, model := range []string{vecEncoder{}.ModelID(), "other"} {
			got, err := idx.PayloadsFrom("vec", model, ids)
			if err != nil || len(got) != len(ids) {
				t.Fatalf("%s: PayloadsFrom(vec, %s) = %d payloads, %v", when, model, len(got), err)
			}
			for i, id := range ids {
				want, ok, err := idx.PayloadFrom("vec", model, id)
				if err != nil {
					t.Fatal(err)
				}
				if (got[i] != nil) != ok || !bytes.Equal(got[i], want) {
					t.Errorf("%s: PayloadsFrom(vec, %s)[%d] = %x; PayloadFrom(%s) = %x, %v", when, model, i, got[i], id, want, ok)
				}
			}
		}
	}
	check("in the log")
	if err := idx.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("in the segment")
	if err := idx.Delete(docs[7].ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := idx.PayloadsFrom("vec", vecEncoder{}.ModelID(), []string{docs[7].ID}); got[0] != nil {
		t.Error("a deleted document still holds its payload")
	}
	check("after a deletion")
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := idx.PayloadsFrom("vec", vecEncoder{}.ModelID(), ids); err == nil {
		t.Error("no error from a closed index")
	}
}

// TestPayloadsFromKinds: a window's read of several payloads at once
// gives each kind's PayloadsFrom, from the log, the segment and the kept
// reads, and a document written again or folded into a new segment is
// read anew rather than from what an earlier window kept.
func TestPayloadsFromKinds(t *testing.T) {
	ctx := context.Background()
	idx, err := Create(filepath.Join(t.TempDir(), "idx"))
	if err != nil {
		t.Fatal(err)
	}
	encs := []PayloadEncoder{vecEncoder{}, modelEncoder{"text", "text-v1"}}
	docs := benchDocs(20)
	if err := idx.Add(ctx, docs, encs, nil); err != nil {
		t.Fatal(err)
	}
	ids := []string{docs[0].ID, docs[7].ID, "absent", docs[19].ID, docs[0].ID}
	names := []string{"vec", "text", "vec", "none"}
	models := []string{vecEncoder{}.ModelID(), "text-v1", "other", "x"}
	check := func(when string) {
		t.Helper()
		for round := range 2 { // the second from the kept reads
			got, err := idx.PayloadsFromKinds(names, models, ids)
			if err != nil || len(got) != len(names) {
				t.Fatalf("%s: PayloadsFromKinds = %d kinds, %v", when, len(got), err)
			}
			for k := range names {
				want, err := idx.PayloadsFrom(names[k], models[k], ids)
				if err != nil {
					t.Fatal(err)
				}
				for i := range ids {
					if (got[k][i] != nil) != (want[i] != nil) || !bytes.Equal(got[k][i], want[i]) {
						t.Errorf("%s, round %d: PayloadsFromKinds[%s][%d] = %q, PayloadsFrom = %q", when, round, names[k], i, got[k][i], want[i])
					}
				}
			}
		}
	}
	check("in the log")
	if err := idx.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("in the segment")
	docs[0].Text = "written again with other words"
	if err := idx.Add(ctx, docs[:1], encs, nil); err != nil {
		t.Fatal(err)
	}
	check("written again")
	if got, _ := idx.PayloadsFromKinds([]string{"text"}, []string{"text-v1"}, ids[:1]); string(got[0][0]) != docs[0].Text {
		t.Errorf("a document written again reads %q, want %q", got[0][0], docs[0].Text)
	}
	if err := idx.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("folded again")
	if got, _ := idx.PayloadsFromKinds([]string{"text"}, []string{"text-v1"}, ids[:1]); string(got[0][0]) != docs[0].Text {
		t.Errorf("after a fold, a document written again reads %q, want %q", got[0][0], docs[0].Text)
	}
	if err := idx.Delete(docs[7].ID); err != nil {
		t.Fatal(err)
	}
	check("after a deletion")
	if _, err := idx.PayloadsFromKinds([]string{"vec"}, nil, ids); err == nil {
		t.Error("no error for names and models of different lengths")
	}
	// A closed store refuses both reads alike (readKinds), as
	// TestPayloadsFrom checks.
	idx.Close()
}

// TestKeptReadsBound: the kept reads start again past their bound, and
// keep what the read that passed it read.
func TestKeptReadsBound(t *testing.T) {
	ctx := context.Background()
	idx, err := Create(filepath.Join(t.TempDir(), "idx"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	docs := benchDocs(3)
	if err := idx.Add(ctx, docs, []PayloadEncoder{modelEncoder{"text", "m"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := idx.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	ps := idx.payloads
	first, err := idx.PayloadsFrom("text", "m", []string{docs[0].ID, docs[1].ID})
	if err != nil || len(ps.kept) != 2 {
		t.Fatalf("kept %d documents after reading two (%v)", len(ps.kept), err)
	}
	again, _ := idx.PayloadsFrom("text", "m", []string{docs[0].ID})
	if &again[0][0] != &first[0][0] {
		t.Error("a second read's payload is not the kept one")
	}
	ps.keptBytes = windowCacheMax // full: the next payload read starts again
	if _, err := idx.PayloadsFrom("text", "m", []string{docs[2].ID}); err != nil || len(ps.kept) != 1 || ps.kept[docs[2].ID] == nil {
		t.Errorf("a read past the bound keeps %d documents (%v), want the one it read", len(ps.kept), err)
	}
}
