package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// payloadsOf returns every payload ps holds, as "model/name" → id →
// payload, reading the segments through their entries and the tails.
func payloadsOf(t testing.TB, ps *payloadStore) map[string]map[string]string {
	t.Helper()
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	out := map[string]map[string]string{}
	for name, s := range ps.sets {
		m := map[string]string{}
		if s.seg != nil {
			for i := range s.seg.count {
				id, v, err := s.seg.record(i)
				if err != nil {
					t.Fatal(err)
				}
				m[string(id)] = string(v)
			}
		}
		for id, b := range s.tail {
			if b == nil {
				delete(m, id)
			} else {
				m[id] = string(b)
			}
		}
		if len(m) != s.live {
			t.Fatalf("%s holds %d payloads, live says %d", name, len(m), s.live)
		}
		out[s.model+"/"+name] = maps.Clone(m)
	}
	return out
}

// TestPayloadFoldAgainstMap drives a store with random puts and deletions of 60 ids over
// two names, checking it against a map after every step; fold runs
// whenever a log passes foldMin, set to 0 here, and at compact.
func TestPayloadFoldAgainstMap(t *testing.T) {
	defer func(m int64) { foldMin = m }(foldMin)
	for _, min := range []int64{0, 200, 1 << 30} {
		t.Run(fmt.Sprint("foldMin=", min), func(t *testing.T) {
			foldMin = min
			dir := t.TempDir()
			ps, err := openPayloads(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]map[string]string{"m1/a": {}, "m2/b": {}}
			rng := rand.New(rand.NewPCG(27, uint64(min)))
			check := func(ps *payloadStore, when string) {
				t.Helper()
				got := payloadsOf(t, ps)
				for k, m := range want {
					if len(m) == 0 {
						delete(got, k) // an emptied name is dropped, or kept empty
					}
				}
				w := maps.Clone(want)
				maps.DeleteFunc(w, func(_ string, m map[string]string) bool { return len(m) == 0 })
				if !reflect.DeepEqual(got, w) {
					t.Fatalf("%s: store holds %v, want %v", when, got, w)
				}
				for k, m := range want {
					name := strings.SplitN(k, "/", 2)[1]
					for i := range 60 {
						id := fmt.Sprint("d", i)
						b, ok := ps.get(name, id)
						if v, in := m[id]; ok != in || string(b) != v {
							t.Fatalf("%s: get(%s, %s) = %q, %v; want %q, %v", when, name, id, b, ok, v, in)
						}
					}
				}
			}
			for step := range 300 {
				k := []string{"m1/a", "m2/b"}[rng.IntN(2)]
				model, name, _ := strings.Cut(k, "/")
				var ids []string
				for range 1 + rng.IntN(5) {
					ids = append(ids, fmt.Sprint("d", rng.IntN(60)))
				}
				switch rng.IntN(10) {
				case 0:
					if err := ps.compact(); err != nil {
						t.Fatal(err)
					}
				case 1, 2, 3:
					if err := ps.delete(ids, nil); err != nil {
						t.Fatal(err)
					}
					for _, m := range want {
						for _, id := range ids {
							delete(m, id)
						}
					}
				default:
					var recs []payloadRec
					for _, id := range ids {
						v := strings.Repeat(fmt.Sprint(step), 1+rng.IntN(20))
						recs = append(recs, payloadRec{model: model, id: id, data: []byte(v)})
						want[k][id] = v
					}
					if err := ps.put(name, recs); err != nil {
						t.Fatal(err)
					}
				}
				check(ps, fmt.Sprint("step ", step))
			}
			if err := ps.close(); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				ps, err := openPayloads(dir, ro)
				if err != nil {
					t.Fatal(err)
				}
				check(ps, fmt.Sprint("reopened, read-only ", ro))
				ps.close()
			}
		})
	}
}

// foldedStore returns the payload folder of a store whose "len" payloads
// lie in a segment and a tail that replaces, deletes and adds to it, and
// what it holds.
func foldedStore(t *testing.T) (string, *payloadStore, map[string]map[string]string) {
	t.Helper()
	dir := t.TempDir()
	ps, err := openPayloads(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	put := func(id, v string) {
		if err := ps.put("len", []payloadRec{{model: "m1", id: id, data: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		put(fmt.Sprint("d", i), fmt.Sprint("old", i))
	}
	if err := ps.compact(); err != nil {
		t.Fatal(err)
	}
	put("d3", "new3")
	put("d30", "new30")
	if err := ps.delete([]string{"d4", "d31"}, nil); err != nil {
		t.Fatal(err)
	}
	return dir, ps, payloadsOf(t, ps)
}

// TestFoldKilled: a fold killed after any of its steps leaves a folder
// that opens, read-only and for writing, to the payloads it held; the
// writable open removes what the fold left half done. The kill is played
// by ending the folding goroutine at the step (runtime.Goexit): fold's
// deferred calls touch no file.
func TestFoldKilled(t *testing.T) {
	defer func(f func(string)) { foldStep = f }(foldStep)
	for _, step := range []string{"segment written", "segment renamed", "segment synced", "log written", "log renamed"} {
		t.Run(step, func(t *testing.T) {
			dir, ps, want := foldedStore(t)
			foldStep = func(s string) {
				if s == step {
					runtime.Goexit()
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = ps.compact()
				t.Error("the fold went on past", step)
			}()
			<-done
			foldStep = func(string) {}
			before := snapshotFiles(t, dir)
			for _, ro := range []bool{true, false, false} {
				ps, err := openPayloads(dir, ro)
				if err != nil {
					t.Fatalf("read-only %v: %v", ro, err)
				}
				if got := payloadsOf(t, ps); !reflect.DeepEqual(got, want) {
					t.Errorf("read-only %v: %v, want %v", ro, got, want)
				}
				if err := ps.close(); err != nil {
					t.Fatal(err)
				}
				if after := snapshotFiles(t, dir); ro && !maps.Equal(before, after) {
					t.Errorf("a read-only open changed files:\nbefore %v\nafter  %v", before, after)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, payloadDir, foldPrefix+"*")); len(left) > 0 {
				t.Errorf("left after a writable open: %v", left)
			}
		})
	}
}

// TestFoldSyncOrder: what a power loss could undo is synced in the order
// that keeps every state on disk one that opens to the same payloads: the
// new segment's bytes, its name in the folder, then the new log's bytes
// and its name.
func TestFoldSyncOrder(t *testing.T) {
	dir, ps, _ := foldedStore(t)
	defer ps.close()
	var events []string
	sync := syncFile
	t.Cleanup(func() { syncFile = sync })
	syncFile = func(f *os.File) error {
		switch name := f.Name(); {
		case name == filepath.Join(dir, payloadDir):
			events = append(events, "folder")
		case strings.HasPrefix(filepath.Base(name), foldPrefix):
			events = append(events, strings.TrimPrefix(filepath.Ext(name), "."))
		default:
			events = append(events, filepath.Base(name))
		}
		return sync(f)
	}
	if err := ps.compact(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(events, " "); got != "seg folder log folder" {
		t.Errorf("synced %q, want seg folder log folder", got)
	}
}

// TestOldLogFoldedAtOpen: an index whose payloads are only a log (written
// before segments, or never folded) opens to the same payloads, read-only
// from the log, and for writing folds a log past its share.
func TestOldLogFoldedAtOpen(t *testing.T) {
	defer func(m int64) { foldMin = m }(foldMin)
	idx, path := build(t, lenEncoder{"m1"})
	ro := payloadsOf(t, idx.payloads)
	idx.Close()
	foldMin = 0
	for _, readOnly := range []bool{true, false} {
		ps, err := openPayloads(path, readOnly)
		if err != nil {
			t.Fatal(err)
		}
		if got := payloadsOf(t, ps); !reflect.DeepEqual(got, ro) {
			t.Errorf("read-only %v: %v, want %v", readOnly, got, ro)
		}
		if s := ps.sets["len"]; (s.seg != nil) == readOnly || !readOnly && len(s.tail) > 0 {
			t.Errorf("read-only %v: segment %v, %d in the tail", readOnly, s.seg != nil, len(s.tail))
		}
		ps.close()
	}
}

// TestSegmentDamage: a damaged record is an error from Payload naming the
// segment (never a wrong payload), which VerifyPayloads also finds; a
// damaged or cut header keeps the index from opening.
func TestSegmentDamage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		edit     func([]byte) []byte
		openErr  string // "" when the index opens
		readErr  bool   // Payload("len", "d1") fails
		verifies bool
	}{
		{"intact", func(b []byte) []byte { return b }, "", false, true},
		{"payload byte", func(b []byte) []byte { b[segHeaderLen+2+2] ^= 1; return b }, "", true, false},
		{"table byte", func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }, "", false, false},
		{"header byte", func(b []byte) []byte { b[9] ^= 1; return b }, "header checksum", false, false},
		{"cut short", func(b []byte) []byte { return b[:len(b)-3] }, "cut short", false, false},
		{"not a segment", func(b []byte) []byte { return append([]byte("XXXXXXXX"), b[8:]...) }, "not a payload segment", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, path := build(t, lenEncoder{"m1"})
			if err := idx.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			idx.Close()
			seg := filepath.Join(path, payloadDir, "len"+segExt)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seg, tc.edit(b), 0o600); err != nil {
				t.Fatal(err)
			}
			checks, err := VerifyPayloads(path)
			if err != nil || len(checks) != 1 || (checks[0].Err == nil) != tc.verifies {
				t.Errorf("VerifyPayloads = %+v, %v", checks, err)
			}
			idx, err = OpenReadOnly(path)
			if tc.openErr != "" {
				if err == nil || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tc.openErr) || !strings.Contains(err.Error(), seg) {
					t.Fatalf("open: %v; want ErrDamaged naming %s and %q", err, seg, tc.openErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer idx.Close()
			p, ok, err := idx.Payload("len", "d1")
			switch {
			case tc.readErr && (err == nil || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), seg)):
				t.Errorf("Payload of a damaged record = %q, %v, %v; want ErrDamaged naming %s", p, ok, err, seg)
			case !tc.readErr && (err != nil || !ok || string(p) != fmt.Sprint(len(corpus[0].Text))):
				t.Errorf("Payload = %q, %v, %v", p, ok, err)
			}
		})
	}
}

// writeSegment writes a segment of model m1 to path holding n payloads,
// the i-th given by entry, its ids in increasing order.
func writeSegment(tb testing.TB, path string, n int, entry func(i int) (id, val string)) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w, err := newSegWriter(f, "m1")
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		id, val := entry(i)
		if err := w.add(id, []byte(val)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.finish(); err != nil {
		tb.Fatal(err)
	}
}

// TestSegmentReads reads a segment's payloads by lookup (get, and has
// then get, as a window does) and by scan (record), against what was
// written, with ids it lacks, through the mapping and through the file
// (as segments over mappedReadMax are read).
func TestSegmentReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	n := 3000
	want := make(map[string]string, n)
	writeSegment(t, path, n, func(i int) (string, string) {
		id, val := fmt.Sprintf("d%05d", i), strings.Repeat(fmt.Sprint(i%10), i%50)
		want[id] = val
		return id, val
	})
	for _, file := range []bool{false, true} {
		t.Run(fmt.Sprintf("file=%v", file), func(t *testing.T) {
			s, err := openSegment(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if file {
				s.r = s.f
			}
			testSegmentReads(t, s, n, want)
		})
	}
}

func testSegmentReads(t *testing.T, s *segment, n int, want map[string]string) {
	for i := range s.count {
		id, val, err := s.record(i)
		if err != nil || want[string(id)] != string(val) {
			t.Fatalf("record %d = %q, %q, %v", i, id, val, err)
		}
	}
	for _, has := range []bool{false, true} {
		for i := range n + 10 {
			id := fmt.Sprintf("d%05d", i)
			if has {
				ok, err := s.has(id)
				if err != nil || ok != (i < n) {
					t.Fatalf("has(%s) = %v, %v", id, ok, err)
				}
			}
			v, ok, err := s.get(id)
			if err != nil || ok != (i < n) || string(v) != want[id] {
				t.Fatalf("get(%s) = %q, %v, %v; want %q", id, v, ok, err, want[id])
			}
		}
	}
	// What get returns is the caller's: changing it changes no later read.
	id := fmt.Sprintf("d%05d", n-1)
	if ok, err := s.has(id); !ok || err != nil {
		t.Fatalf("has(%s) = %v, %v", id, ok, err)
	}
	for range 2 {
		v, ok, err := s.get(id)
		if err != nil || !ok || string(v) != want[id] {
			t.Fatalf("get(%s) = %q, %v, %v; want %q", id, v, ok, err, want[id])
		}
		clear(v)
	}
}

// FuzzSegment parses arbitrary bytes as a segment: an error or a segment
// whose every read and verify returns, never a panic or a loop.
func FuzzSegment(f *testing.F) {
	file := filepath.Join(f.TempDir(), "seg")
	for _, n := range []int{0, 1, 3, 9} {
		writeSegment(f, file, n, func(i int) (string, string) { return fmt.Sprint("d", i), strings.Repeat("x", i) })
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSegment("seg", b)
		if err != nil {
			return
		}
		for i := range min(s.count, 64) {
			s.record(i)
			s.readRecord(i)
		}
		for i := range 10 {
			s.get(fmt.Sprint("d", i))
		}
		if err := s.verify(); err == nil {
			for i := range s.count {
				id, _, _ := s.record(i)
				if _, ok, err := s.get(string(id)); !ok || err != nil {
					t.Fatalf("verified segment: entry %d (%q) not read: %v", i, id, err)
				}
			}
		}
	})
}

// TestSegmentDamagedRecord: a record whose payload was damaged on disk is
// an error naming the checksum when it is read, through the mapping and
// through the file, while its presence is still told by its id alone.
func TestSegmentDamagedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	writeSegment(t, path, 3, func(i int) (string, string) { return fmt.Sprintf("d%d", i), "payload" })
	s, err := openSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	off, idLen, _, err := s.entry(1)
	s.close()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[off+idLen] ^= 0x40
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []bool{false, true} {
		s, err := openSegment(path)
		if err != nil {
			t.Fatal(err)
		}
		if file {
			s.r = s.f
		}
		if ok, err := s.has("d1"); !ok || err != nil {
			t.Errorf("file=%v: has(d1) = %v, %v", file, ok, err)
		}
		if _, _, err := s.get("d1"); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("file=%v: get of a damaged record: %v, want a checksum mismatch", file, err)
		}
		if v, ok, err := s.get("d2"); !ok || err != nil || string(v) != "payload" {
			t.Errorf("file=%v: get(d2) = %q, %v, %v", file, v, ok, err)
		}
		// A window's read: the records it finds, none for an absent id,
		// and the damaged record's error when the window holds it.
		ids := []string{"d2", "absent", "d0", "d1"}
		out := make([][]byte, len(ids))
		if err := s.readMany(ids, []int{0, 1, 2}, out); err != nil || string(out[0]) != "payload" || out[1] != nil || string(out[2]) != "payload" || out[3] != nil {
			t.Errorf("file=%v: readMany(d2, absent, d0) = %q, %v", file, out, err)
		}
		if err := s.readMany(ids, []int{0, 3}, out); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("file=%v: readMany of a window holding a damaged record: %v, want a checksum mismatch", file, err)
		}
		s.close()
	}
}
