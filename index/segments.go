package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/util"
	bindex "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"
)

// Damaged segments.
//
// Bleve keeps an index's documents in zap segment files (store/*.zap),
// which it maps into memory and trusts: a flipped bit in a segment's
// footer sends zap's offsets past the end of the file, and Bleve panics
// (slice bounds out of range) in every command that opens the index. A
// writable open is worse: scorch skips a snapshot whose segment it cannot
// open, falls back to an older one or to none, and removes the segment
// files the snapshot it kept does not name, so a damaged segment would
// be deleted and its documents silently lost.
//
// Each zap segment ends with a footer whose last four bytes are the
// CRC-32 (IEEE, big endian) of everything before them, and whose four
// before those are the zap version. So open checks every segment the
// index's snapshots name before Bleve reads any, as root.bolt lists them:
// the footer always, and the checksum too while the segments together
// are no larger than verifyAtOpenMax (reading them costs about what
// mapping them in does; larger indexes are checked in full by semrank
// inspect --verify, VerifySegments). A panic of Bleve's while it opens
// the index or reads a stored document is returned as an error wrapping
// ErrDamaged that names the index.

// ErrDamaged is wrapped by the errors for an index whose files are
// damaged: a segment whose footer or checksum is wrong, or one Bleve
// failed to read.
var ErrDamaged = errors.New("the index is damaged")

// verifyAtOpenMax bounds the total size of the segments whose checksums
// open verifies; a variable for tests.
var verifyAtOpenMax int64 = 256 << 20

// storeDir is the folder, inside the index directory, where scorch keeps
// root.bolt and the segments.
const storeDir = "store"

// Zap footers, from the end of the file: crc32 (4 bytes), version (4),
// chunk mode (4), then 64-bit offsets and the document count. zapOffsets
// is how many of those 64-bit values before the chunk mode are offsets
// into the file, by version: v17 (sections, stored), v16 (doc values,
// sections, fields, stored), v11 to v15 (doc values, fields, stored).
func zapOffsets(version uint32) (int, bool) {
	switch {
	case version == 17:
		return 2, true
	case version == 16:
		return 4, true
	case version >= 11 && version <= 15:
		return 3, true
	}
	return 0, false
}

// SegmentCheck is what VerifySegments found of one segment file.
type SegmentCheck struct {
	File string // path of the segment
	Size int64
	Err  error // what is wrong with it; nil when it is whole
}

// segmentFiles returns the paths of the segments that the snapshots
// recorded in the index at path name (root.bolt), sorted, read-only and
// waiting at most lockWait for a process that holds the index for
// writing. It returns none for an index without root.bolt: one whose
// creation was cut short, which Bleve explains.
func segmentFiles(path string) ([]string, error) {
	store := filepath.Join(path, storeDir)
	root := filepath.Join(store, "root.bolt")
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	db, err := bolt.Open(root, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("index: %s is locked by another process (a running semrank serve or index?); stop it, or work on a copy: %w", path, err)
		}
		return nil, fmt.Errorf("index: %s: %s: %w (%w)", path, root, err, ErrDamaged)
	}
	defer db.Close()
	names := map[string]bool{}
	err = db.View(func(tx *bolt.Tx) error {
		snapshots := tx.Bucket(util.BoltSnapshotsBucket)
		if snapshots == nil {
			return nil
		}
		return snapshots.ForEachBucket(func(k []byte) error {
			snap := snapshots.Bucket(k)
			return snap.ForEachBucket(func(seg []byte) error {
				if len(seg) == 0 || seg[0] == util.BoltInternalKey[0] {
					return nil
				}
				if p := snap.Bucket(seg).Get(util.BoltPathKey); p != nil {
					names[string(p)] = true
				}
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("index: %s: %s: %w (%w)", path, root, err, ErrDamaged)
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, filepath.Join(store, filepath.Base(n)))
	}
	slices.Sort(out)
	return out, nil
}

// checkSegment checks the zap segment at path: its footer (a known
// version, offsets inside the file) and, when full, the CRC-32 the footer
// holds against the file's content.
func checkSegment(path string, full bool) (size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, errors.New("not a regular file")
	}
	size = st.Size()
	const tail = 4 + 4 + 4 + 4*8
	if size < tail {
		return size, fmt.Errorf("%d bytes, too short to hold a zap footer (cut short?)", size)
	}
	var foot [tail]byte
	if _, err := f.ReadAt(foot[:], size-tail); err != nil {
		return size, err
	}
	crc := binary.BigEndian.Uint32(foot[tail-4:])
	version := binary.BigEndian.Uint32(foot[tail-8:])
	n, ok := zapOffsets(version)
	if !ok {
		return size, fmt.Errorf("footer gives zap version %d, not one Bleve writes (cut short, or overwritten?)", version)
	}
	for i := range n {
		end := tail - 12 - 8*i
		if off := binary.BigEndian.Uint64(foot[end-8 : end]); off >= uint64(size) {
			return size, fmt.Errorf("footer offset %d lies past the end of the %d-byte file", off, size)
		}
	}
	if !full {
		return size, nil
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, bufio.NewReaderSize(io.LimitReader(f, size-4), 1<<20)); err != nil {
		return size, err
	}
	if got := h.Sum32(); got != crc {
		return size, fmt.Errorf("checksum mismatch (CRC-32 %08x, footer says %08x): the file changed after Bleve wrote it", got, crc)
	}
	return size, nil
}

// checkSegments is open's check of the index at path: every segment's
// footer, and their checksums while they total no more than
// verifyAtOpenMax. A damaged segment is an error naming it.
func checkSegments(path string) error {
	files, err := segmentFiles(path)
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			total += st.Size()
		}
	}
	full := total <= verifyAtOpenMax
	for _, f := range files {
		if _, err := checkSegment(f, full); err != nil {
			return damagedSegment(path, f, err)
		}
	}
	return nil
}

// damagedSegment is the error for the damaged segment file of the index
// at path.
func damagedSegment(path, file string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		err = errors.New("missing")
	}
	return fmt.Errorf("index: %s: segment %s: %v: %w; restore the index from a copy, or remove it and index again", path, file, err, ErrDamaged)
}

// VerifySegments checks every segment of the index at path in full: its
// footer and its CRC-32, reading every byte. It lists the segments the
// index's snapshots name, or, when root.bolt cannot be read, every
// store/*.zap file. The error is for an index whose segments cannot be
// listed; a damaged segment is reported in its SegmentCheck.
func VerifySegments(path string) ([]SegmentCheck, error) {
	files, err := segmentFiles(path)
	if err != nil {
		if !errors.Is(err, ErrDamaged) {
			return nil, err
		}
		if files, _ = filepath.Glob(filepath.Join(path, storeDir, "*.zap")); len(files) == 0 {
			return nil, err
		}
	}
	out := make([]SegmentCheck, len(files))
	for i, f := range files {
		size, err := checkSegment(f, true)
		if errors.Is(err, os.ErrNotExist) {
			err = errors.New("missing")
		}
		out[i] = SegmentCheck{File: f, Size: size, Err: err}
	}
	return out, nil
}

// recoverDamaged, deferred, turns a panic of Bleve's while it reads the
// index at path into *err, an error wrapping ErrDamaged. Bleve trusts
// its segments and panics on damaged ones (an offset past the end, a
// length too large); the caller gets an error to report instead of a
// crash. The index should not be used further: the panic may have left
// Bleve's reference counts or locks as they were.
func recoverDamaged(path, what string, err *error) {
	if r := recover(); r != nil {
		where := path
		if where == "" {
			where = "in-memory index"
		}
		*err = fmt.Errorf("index: %s: %s: Bleve failed reading it (%v): %w", where, what, r, ErrDamaged)
	}
}

// openBleve opens the Bleve index at path, returning a panic of Bleve's
// (a damaged segment it failed to read) as an error.
func openBleve(path string, config map[string]any) (b bleve.Index, err error) {
	defer recoverDamaged(path, "open", &err)
	return bleve.OpenUsing(path, config)
}

// Document returns the stored fields of document id, as bleve.Index's
// Document does, with a panic of Bleve's reading a damaged segment
// returned as an error wrapping ErrDamaged.
func (x *Index) Document(id string) (doc bindex.Document, err error) {
	defer recoverDamaged(x.Path, fmt.Sprintf("document %.80q", id), &err)
	return x.bleveIndex.Document(id)
}

// CheckDocuments reads every stored field of every document, to find
// what VerifySegments cannot: a segment whose checksum is whole but whose
// stored data Bleve cannot decode. It returns how many documents it read.
// A failure, Bleve's panic included, is an error naming the document.
func (x *Index) CheckDocuments(ctx context.Context) (n int, err error) {
	defer recoverDamaged(x.Path, "reading every document", &err)
	adv, err := x.Advanced()
	if err != nil {
		return 0, err
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	all, err := r.DocIDReaderAll()
	if err != nil {
		return 0, err
	}
	defer all.Close()
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		iid, err := all.Next()
		if err != nil {
			return n, fmt.Errorf("index: %s: listing documents: %w", x.Path, err)
		}
		if iid == nil {
			return n, nil
		}
		id, err := r.ExternalID(iid)
		if err != nil {
			return n, fmt.Errorf("index: %s: document number %x: %w (%w)", x.Path, []byte(iid), err, ErrDamaged)
		}
		doc, err := x.Document(id)
		if err != nil {
			return n, err
		}
		if doc == nil {
			return n, fmt.Errorf("index: %s: document %.80q is listed but has no stored fields (%w)", x.Path, id, ErrDamaged)
		}
		doc.VisitFields(func(f bindex.Field) { _ = f.Value() })
		n++
	}
}
