package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bindex "github.com/blevesearch/bleve_index_api"
)

// damagedCopies builds a compacted index of corpus and returns the paths
// of copies of it, each with its one segment damaged in one way, and the
// whole index.
func damagedCopies(t *testing.T) (whole string, damaged map[string]string) {
	t.Helper()
	idx, path := build(t, lenEncoder{"m1"})
	if err := idx.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(b []byte) []byte{
		// A bit of the footer's sections offset (v17): zap's offsets
		// then run past the file, and Bleve panicked in loadFields.
		"bit flipped 20 bytes before the end": func(b []byte) []byte { b[len(b)-20] ^= 1; return b },
		"bit flipped mid-file":                func(b []byte) []byte { b[len(b)/2] ^= 4; return b },
		"cut in half":                         func(b []byte) []byte { return b[:len(b)/2] },
		"emptied":                             func(b []byte) []byte { return nil },
	}
	damaged = map[string]string{}
	for name, f := range damage {
		dst := filepath.Join(t.TempDir(), "idx")
		copyTree(t, path, dst)
		segs, err := filepath.Glob(filepath.Join(dst, storeDir, "*.zap"))
		if err != nil || len(segs) != 1 {
			t.Fatalf("segments %v, %v; want one", segs, err)
		}
		b, err := os.ReadFile(segs[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(segs[0], f(b), 0o600); err != nil {
			t.Fatal(err)
		}
		damaged[name] = dst
	}
	return path, damaged
}

// copyTree copies the folder src to dst, which must not exist.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenDamagedSegment: an index whose segment is damaged is refused by
// Open and OpenReadOnly with an error naming the segment, not a panic
// (a flipped footer bit panicked in zap's loadFields) nor "creation cut
// short" (a segment cut in half made Bleve skip its snapshot and find no
// mapping). Open for writing leaves the segment where it is: scorch would
// otherwise skip its snapshot and remove it. VerifySegments names it too.
func TestOpenDamagedSegment(t *testing.T) {
	whole, damaged := damagedCopies(t)
	for name, path := range damaged {
		t.Run(name, func(t *testing.T) {
			segs, _ := filepath.Glob(filepath.Join(path, storeDir, "*.zap"))
			for _, open := range []struct {
				name string
				f    func(string) (*Index, error)
			}{{"OpenReadOnly", OpenReadOnly}, {"Open", Open}} {
				idx, err := open.f(path)
				if err == nil {
					idx.Close()
					t.Fatalf("%s succeeded", open.name)
				}
				if !errors.Is(err, ErrDamaged) || errors.Is(err, ErrNoMapping) || !strings.Contains(err.Error(), segs[0]) {
					t.Errorf("%s: err = %v; want ErrDamaged naming %s", open.name, err, segs[0])
				}
			}
			if _, err := os.Stat(segs[0]); err != nil {
				t.Errorf("the damaged segment is gone after Open: %v", err)
			}
			checks, err := VerifySegments(path)
			if err != nil || len(checks) != 1 || checks[0].Err == nil || checks[0].File != segs[0] {
				t.Errorf("VerifySegments = %+v, %v; want %s damaged", checks, err, segs[0])
			}
		})
	}
	checks, err := VerifySegments(whole)
	if err != nil || len(checks) != 1 || checks[0].Err != nil {
		t.Fatalf("VerifySegments of the whole index = %+v, %v", checks, err)
	}
	idx, err := OpenReadOnly(whole)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n, err := idx.CheckDocuments(context.Background()); err != nil || n != len(corpus) {
		t.Errorf("CheckDocuments = %d, %v; want %d", n, err, len(corpus))
	}
}

// TestBlevePanicIsAnError: where a damaged segment gets past open's
// checks (one larger than verifyAtOpenMax, damaged where the footer
// does not tell), Bleve's panic reading it is an error naming the index.
func TestBlevePanicIsAnError(t *testing.T) {
	_, damaged := damagedCopies(t)
	path := damaged["bit flipped 20 bytes before the end"]
	b, err := openBleve(path, map[string]any{"read_only": true})
	if err == nil {
		b.Close()
		t.Fatal("openBleve succeeded")
	}
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v; want ErrDamaged naming %s", err, path)
	}

	idx, _ := build(t)
	defer idx.Close()
	idx.bleveIndex = panicking{idx.bleveIndex}
	if _, _, err := idx.Doc("d1"); !errors.Is(err, ErrDamaged) {
		t.Errorf("Doc over a panicking Bleve: err = %v, want ErrDamaged", err)
	}
}

// panicking is a Bleve index whose document loads panic, as zap's do on a
// damaged segment.
type panicking struct{ bleveIndex }

func (panicking) Document(string) (_ bindex.Document, _ error) {
	var b []byte
	_ = b[7] // index out of range, as in zap
	return nil, nil
}

// TestCheckSegmentsAtOpenBounded: beyond verifyAtOpenMax, open checks the
// footers alone, so a damaged byte mid-file is left to inspect --verify.
func TestCheckSegmentsAtOpenBounded(t *testing.T) {
	_, damaged := damagedCopies(t)
	defer func(old int64) { verifyAtOpenMax = old }(verifyAtOpenMax)
	verifyAtOpenMax = 0
	if err := checkSegments(damaged["bit flipped mid-file"]); err != nil {
		t.Errorf("footer-only check: %v", err)
	}
	if err := checkSegments(damaged["bit flipped 20 bytes before the end"]); !errors.Is(err, ErrDamaged) {
		t.Errorf("footer-only check of a damaged footer: %v", err)
	}
}
