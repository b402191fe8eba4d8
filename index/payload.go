package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// payloadDir is the folder, inside the index directory, holding one
// append-only log per payload name.
const payloadDir = "semrank_payloads"

// payloadMagic opens every log. Version 1 logs (SRPAYLD1) had no checksum
// over a record's lengths, so a damaged length read as a crash's torn tail
// and replay cut away the records after it; they are refused, not read.
const (
	payloadMagic   = "SRPAYLD2"
	payloadMagicV1 = "SRPAYLD1"
)

// maxPayload bounds one record so a corrupt length cannot exhaust memory.
var maxPayload = 256 << 20 // a variable for tests

// maxIDLen bounds a document id (and the model id) in a log; put refuses
// longer ones, which replay could not read back.
const maxIDLen = 1 << 16

// maxNameLen bounds a payload name: name.log must be a file name, at most
// 255 bytes on common file systems.
const maxNameLen = 255 - len(".log")

// The payload folder and logs get the modes Bleve gives its store and
// segments: payloads are as private as the text they are computed from.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// deleteLen in a record's data length marks a deletion.
const deleteLen = 0xFFFFFFFF

type payloadRec struct {
	model string
	id    string
	data  []byte // nil means delete
}

// payloadStore holds the payloads of each name in two parts: a segment
// (name.seg, see segment.go), memory-mapped, with every payload as of the
// last fold, and an append-only log (name.log) of the writes since, which
// open replays into the heap (the tail):
//
//	magic | record(model id, empty data) | record(doc id, data or delete)*
//	record = u32 idLen | u32 dataLen | crc32(idLen|dataLen) | id | data | crc32(id|data)
//
// The lengths carry their own checksum, so replay can tell a crash from
// damage: a log that ends inside a record, or whose record turns to zeros
// up to the end of the file (the file's size reached disk before its
// data), ends with a torn write, which is dropped and truncated away; any
// other mismatch is an error naming the log and the byte, and nothing is
// cut. A log written before segments existed is a tail over no segment.
//
// When a log outgrows its share (foldDue), and at Index.Compact, fold
// writes segment and tail into a new segment and starts an empty log.
type payloadStore struct {
	dir string // "" for an in-memory index

	mu   sync.RWMutex
	sets map[string]*payloadSet // name → its payloads
	// hidden counts, per document, the writes in flight that replace or
	// delete it: get reports no payload for it meanwhile (see Index).
	hidden map[string]int
	// closed is set by close: later writes fail rather than change the
	// payloads in memory only, and reads find nothing (the segments are
	// unmapped).
	closed   bool
	readOnly bool // see openPayloads

	// kept holds the payloads windows read from segments, checked, by
	// document id (readKinds), at most windowCacheMax bytes a payload
	// name; keptBytes counts them.
	keptMu    sync.Mutex
	kept      map[string]keptDoc
	keptBytes int
}

// payloadSet is one payload name's payloads: the segment, and the tail
// of writes since the segment was written.
type payloadSet struct {
	model string
	seg   *segment // nil before the first fold
	// tail maps a document to the payload written since the fold, or to
	// nil when the segment's payload of it was deleted since.
	tail map[string][]byte
	live int      // documents holding a payload
	log  *os.File // nil in memory and read-only
	// logSize is the log's length: its header and the tail's records.
	logSize int64
}

// holds reports whether id has a payload, without returning it.
func (s *payloadSet) holds(id string) (held, inSeg bool, err error) {
	if s.seg != nil {
		if inSeg, err = s.seg.has(id); err != nil {
			return false, false, err
		}
	}
	if b, ok := s.tail[id]; ok {
		return b != nil, inSeg, nil
	}
	return inSeg, inSeg, nil
}

// set records id's payload in the tail, or its deletion when data is nil,
// and keeps live. It writes nothing to the log.
func (s *payloadSet) set(id string, data []byte) error {
	held, inSeg, err := s.holds(id)
	if err != nil {
		return err
	}
	switch {
	case data != nil:
		s.tail[id] = data
	case inSeg:
		s.tail[id] = nil
	default:
		delete(s.tail, id)
	}
	switch {
	case data != nil && !held:
		s.live++
	case data == nil && held:
		s.live--
	}
	return nil
}

// errPayloadsClosed is returned by writes to a closed store.
var errPayloadsClosed = errors.New("index: payload store is closed")

// openPayloads opens the payloads of the index at indexPath: it maps
// each name's segment and replays its log. readOnly opens them for
// reading only and changes no file: the tail a crash tore off a log is
// skipped in memory rather than cut from the file, and the logs are
// closed once read (the Index refuses writes). Opened for writing, a name
// whose log has outgrown its share (an index written before segments
// existed, say) is folded.
func openPayloads(indexPath string, readOnly bool) (*payloadStore, error) {
	ps := &payloadStore{sets: map[string]*payloadSet{}, readOnly: readOnly}
	if indexPath == "" {
		return ps, nil
	}
	ps.dir = filepath.Join(indexPath, payloadDir)
	entries, err := os.ReadDir(ps.dir)
	if errors.Is(err, os.ErrNotExist) {
		return ps, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: payloads: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			continue
		}
		if strings.HasPrefix(n, foldPrefix) {
			// A fold a kill cut short: its segment or log never replaced
			// the name's (see fold).
			if !readOnly {
				if err := os.Remove(filepath.Join(ps.dir, n)); err != nil {
					return nil, fmt.Errorf("index: payloads: %w", err)
				}
			}
			continue
		}
		if name, ok := strings.CutSuffix(n, ".log"); ok {
			names = append(names, name)
		} else if name, ok := strings.CutSuffix(n, segExt); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if err := ps.openSet(name); err != nil {
			ps.close()
			return nil, err
		}
	}
	if err := ps.recover(entries); err != nil {
		ps.close()
		return nil, err
	}
	if !readOnly {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		for name, s := range ps.sets {
			if ps.foldDue(s) {
				if err := ps.fold(name, s); err != nil {
					ps.closeLocked()
					return nil, err
				}
			}
		}
	}
	return ps, nil
}

// openSet opens name's segment, when it has one, and replays its log over
// it; a name with a segment and no log (or a log a crash tore before its
// first record) gets a new log when opened for writing.
func (ps *payloadStore) openSet(name string) error {
	s := &payloadSet{tail: map[string][]byte{}}
	path := filepath.Join(ps.dir, name+segExt)
	seg, err := openSegment(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("index: %w (%w); restore the index from a copy, or remove it and index again", err, ErrDamaged)
	default:
		s.seg, s.model, s.live = seg, seg.model, int(seg.count)
	}
	ps.sets[name] = s
	if err := ps.replay(name, s); err != nil {
		return err
	}
	switch {
	case s.model == "":
		delete(ps.sets, name) // a log torn at its creation, and no segment
	case s.log == nil && !ps.readOnly:
		return ps.createLog(name, s)
	}
	return nil
}

// A write that replaces or deletes documents holding payloads first
// writes a journal naming them (begin), and removes it once their
// payloads are written or dropped (end). A process killed in between,
// after Bleve persisted the write but before the logs had it, leaves the
// journal: recover, when the index is next opened, drops those
// documents' payloads, which may describe text Bleve no longer holds (the
// documents are then scored from their text, as after Index). A journal
// is written under a temporary name (journalTmp) and renamed when whole,
// before Bleve is written: a temporary one left by a kill belongs to a
// write that never reached Bleve, and is removed.
const (
	journalPrefix = "pending-"
	journalExt    = ".ids"
	journalTmp    = ".tmp"
)

// begin writes the journal of a write about to replace or delete ids in
// Bleve, and returns its path for end: "" when none of ids holds a
// payload, or the index is in memory, and so nothing needs one.
func (ps *payloadStore) begin(ids []string) (string, error) {
	if ps.dir == "" {
		return "", nil
	}
	ps.mu.RLock()
	buf := []byte(payloadMagic)
	held := false
	for _, id := range ids {
		for _, s := range ps.sets {
			h, _, err := s.holds(id)
			if err != nil {
				ps.mu.RUnlock()
				return "", fmt.Errorf("index: %w", err)
			}
			if h {
				buf = appendRecord(buf, id, nil, true)
				held = true
				break
			}
		}
	}
	ps.mu.RUnlock()
	if !held {
		return "", nil
	}
	f, err := os.CreateTemp(ps.dir, journalPrefix+"*"+journalTmp)
	if err != nil {
		return "", fmt.Errorf("index: payload journal: %w", err)
	}
	// The journal must outlast a power loss that Bleve's write survives
	// (scorch syncs what it persists): its bytes, then its name.
	_, err = f.Write(buf)
	if err == nil {
		err = syncFile(f)
	}
	if e := f.Close(); err == nil {
		err = e
	}
	path := strings.TrimSuffix(f.Name(), journalTmp) + journalExt
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		err = syncDir(ps.dir)
	}
	if err != nil {
		os.Remove(f.Name())
		os.Remove(path)
		return "", fmt.Errorf("index: payload journal: %w", err)
	}
	return path, nil
}

// end removes the journal begin wrote, once the write's payloads are
// written or dropped. The logs are synced first: were the journal gone
// and the logs' last records lost to a power loss, the documents' old
// payloads would stand beside their new text.
func (ps *payloadStore) end(journal string) error {
	if journal == "" {
		return nil
	}
	ps.mu.RLock()
	for name, s := range ps.sets {
		if s.log == nil {
			continue
		}
		if err := syncFile(s.log); err != nil {
			ps.mu.RUnlock()
			return fmt.Errorf("index: payload log %s: %w", name, err)
		}
	}
	ps.mu.RUnlock()
	return ps.abandon(journal)
}

// abandon removes the journal begin wrote for a write Bleve refused: the
// logs have nothing new to sync.
func (ps *payloadStore) abandon(journal string) error {
	if journal == "" {
		return nil
	}
	if err := os.Remove(journal); err != nil {
		return fmt.Errorf("index: payload journal: %w", err)
	}
	return nil
}

// syncFile makes f's contents durable; a variable so that tests can see
// what is synced, and when.
var syncFile = (*os.File).Sync

// syncDir makes the entries of directory dir (a file renamed into it)
// durable. Windows cannot sync a directory; there the rename's
// durability is the file system's.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = syncFile(d)
	if e := d.Close(); err == nil {
		err = e
	}
	return err
}

// recover drops the payloads of the documents named by the journals among
// entries, the payload folder's, and removes them (see begin); read-only,
// it drops them in memory alone and changes no file.
func (ps *payloadStore) recover(entries []os.DirEntry) error {
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, journalPrefix) {
			continue
		}
		path := filepath.Join(ps.dir, name)
		switch {
		case strings.HasSuffix(name, journalTmp):
			if !ps.readOnly {
				if err := os.Remove(path); err != nil {
					return fmt.Errorf("index: payload journal: %w", err)
				}
			}
			continue
		case !strings.HasSuffix(name, journalExt):
			continue
		}
		ids, err := readJournal(path)
		if err != nil {
			return fmt.Errorf("index: payload journal %s: %w; it names documents whose payloads may not match their text: remove the index and index again", path, err)
		}
		if err := ps.delete(ids, nil); err != nil {
			return err
		}
		if !ps.readOnly {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("index: payload journal: %w", err)
			}
		}
	}
	return nil
}

// readJournal returns the ids a journal names.
func readJournal(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseJournal(f)
}

// parseJournal returns the ids the journal r holds: deletion records
// after the magic, as begin writes them.
func parseJournal(f io.Reader) ([]string, error) {
	r := bufio.NewReader(f)
	magic := make([]byte, len(payloadMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != payloadMagic {
		return nil, errors.New("not a payload journal")
	}
	var ids []string
	for {
		id, data, _, err := readRecord(r)
		switch {
		case err == io.EOF:
			return ids, nil
		case err != nil:
			return nil, err
		case data != nil:
			return nil, fmt.Errorf("record of %q is no deletion", id)
		}
		ids = append(ids, id)
	}
}

func (ps *payloadStore) logPath(name string) string { return filepath.Join(ps.dir, name+".log") }

// errTorn reports a record cut short by a crash mid-write.
var errTorn = errors.New("torn record")

// replay reads name's log, when it has one, into s: the model it names
// and its records, applied over the segment. Opened for writing, the log
// is kept open for appends, after its torn tail, if any, is cut away.
func (ps *payloadStore) replay(name string, s *payloadSet) error {
	path := ps.logPath(name)
	flag := os.O_RDWR
	if ps.readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if errors.Is(err, os.ErrNotExist) && s.seg != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index: payloads: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		return fmt.Errorf("index: payload log %s: %w", path, err)
	}
	r := bufio.NewReader(f)
	magic := make([]byte, len(payloadMagic))
	k, err := io.ReadFull(r, magic)
	torn := err != nil && strings.HasPrefix(payloadMagic, string(magic[:k]))
	switch {
	case err == nil && string(magic) == payloadMagicV1:
		return fail(errors.New("written by an older semrank in a format that cannot tell damage from a crash; rebuild the index"))
	case err != nil && !torn || err == nil && string(magic) != payloadMagic:
		return fail(errors.New("not a payload log"))
	}
	var model string
	if !torn {
		var data []byte
		model, data, _, err = readRecord(r)
		torn = errors.Is(err, errTorn) || err == io.EOF
		switch {
		case err != nil && !torn:
			return fail(fmt.Errorf("model record: %w", err))
		case !torn && (data == nil || len(data) > 0): // readRecord refuses an empty id
			return fail(errors.New("no model id"))
		case !torn && s.seg != nil && model != s.model:
			return fail(fmt.Errorf("names model %s, its segment %s (%w)", model, s.model, ErrDamaged))
		}
	}
	if torn {
		// A crash while the log was being created, before any payload:
		// the log holds nothing, and is created again.
		f.Close()
		if ps.readOnly {
			return nil
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("index: payload log %s: %w", path, err)
		}
		return nil
	}
	s.model = model
	good := int64(len(payloadMagic)) + recordSize(model, nil)
	for {
		id, data, n, err := readRecord(r)
		if err == io.EOF {
			break
		}
		if errors.Is(err, errTorn) {
			if !ps.readOnly {
				if err := f.Truncate(good); err != nil {
					return fail(err)
				}
			}
			break
		}
		if err != nil {
			return fail(fmt.Errorf("at byte %d: %w", good, err))
		}
		good += n
		if err := s.set(id, data); err != nil {
			return fail(err)
		}
	}
	if ps.readOnly {
		return f.Close()
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return fail(err)
	}
	s.log, s.logSize = f, good
	return nil
}

// logHeader is what a log holds before its first payload record.
func logHeader(model string) []byte {
	return appendRecord([]byte(payloadMagic), model, []byte{}, false)
}

// createLog creates name's log, empty of payloads, for s.
func (ps *payloadStore) createLog(name string, s *payloadSet) error {
	if err := os.MkdirAll(ps.dir, dirMode); err != nil {
		return fmt.Errorf("index: payloads: %w", err)
	}
	f, err := os.OpenFile(ps.logPath(name), os.O_CREATE|os.O_EXCL|os.O_RDWR, fileMode)
	if err != nil {
		return fmt.Errorf("index: payloads: %w", err)
	}
	hdr := logHeader(s.model)
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		os.Remove(ps.logPath(name))
		return fmt.Errorf("index: payloads: %w", err)
	}
	s.log, s.logSize = f, int64(len(hdr))
	return nil
}

// readRecord reads the next record: io.EOF at the end of the log, an error
// wrapping errTorn for a record a crash cut short, another error for
// damage. data is nil for a deletion.
func readRecord(r *bufio.Reader) (id string, data []byte, n int64, err error) {
	if _, err := r.Peek(1); err != nil {
		return "", nil, 0, io.EOF
	}
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", nil, 0, torn(err)
	}
	if err := checkSum(r, hdr[:8], hdr[8:]); err != nil {
		return "", nil, 0, fmt.Errorf("record lengths: %w", err)
	}
	il, dl := binary.LittleEndian.Uint32(hdr[:4]), binary.LittleEndian.Uint32(hdr[4:8])
	del := dl == deleteLen
	switch {
	case il == 0 || il > maxIDLen:
		return "", nil, 0, fmt.Errorf("id length %d out of range", il)
	case del:
		dl = 0
	case int64(dl) > int64(maxPayload):
		return "", nil, 0, fmt.Errorf("payload length %d too large", dl)
	}
	body := make([]byte, int(il)+int(dl)+4)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", nil, 0, torn(err)
	}
	id = string(body[:il])
	if err := checkSum(r, body[:len(body)-4], body[len(body)-4:]); err != nil {
		return "", nil, 0, fmt.Errorf("record of %q: %w", id, err)
	}
	n = int64(len(hdr) + len(body))
	if del {
		return id, nil, n, nil
	}
	return id, body[il : il+dl], n, nil
}

// checkSum checks the crc32 sum of b. A mismatch is a torn write when the
// stored sum is zero and so is every byte after it: a crash after the
// file's new size reached disk but before its data did.
func checkSum(r io.Reader, b, sum []byte) error {
	want := binary.LittleEndian.Uint32(sum)
	if crc32.ChecksumIEEE(b) == want {
		return nil
	}
	if want == 0 {
		if zero, err := zeroTail(r); err != nil {
			return err
		} else if zero {
			return errTorn
		}
	}
	return errors.New("checksum mismatch")
}

// zeroTail reads r to its end and reports whether every byte left is zero.
func zeroTail(r io.Reader) (bool, error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// torn maps a read that ran out of file to errTorn.
func torn(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errTorn
	}
	return err
}

// recordSize is the length of the record appendRecord writes for id and
// data.
func recordSize(id string, data []byte) int64 {
	return int64(12 + len(id) + len(data) + 4)
}

// appendRecord appends a record of id's payload, or of its deletion, to b.
func appendRecord(b []byte, id string, data []byte, del bool) []byte {
	dl := uint32(len(data))
	if del {
		dl = deleteLen
	}
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	b = binary.LittleEndian.AppendUint32(b, dl)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	body := len(b)
	b = append(b, id...)
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[body:]))
}

// ErrModelMismatch is wrapped when payloads from a different model would
// be mixed with those already stored.
var ErrModelMismatch = errors.New("payloads were written by a different model")

func (ps *payloadStore) checkModel(name, model string) error {
	// The name becomes a file name, name.log, in the payload directory:
	// no separators, and no leading dot (".", "..", hidden files). Other
	// dots are fine, and stage names made from options carry them
	// ("s2net_gamma2.5"). Nor a NUL byte or more bytes than a file name
	// holds (255 on common file systems): the log of a new name is
	// created after its batch has gone to Bleve, too late to refuse.
	if name == "" || strings.ContainsAny(name, "/\\\x00") || strings.HasPrefix(name, ".") || len(name) > maxNameLen {
		return fmt.Errorf("index: invalid payload name %.80q (it names a file, name.log: no / or \\, NUL or leading dot, at most %d bytes)", name, maxNameLen)
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return ps.checkClaimLocked(name, model)
}

// checkClaimLocked refuses model for name when another model's payloads
// are stored under it. The caller holds ps.mu.
func (ps *payloadStore) checkClaimLocked(name, model string) error {
	if set, ok := ps.sets[name]; ok && set.model != model {
		return fmt.Errorf("index: %s: %w (index has %s, got %s); rebuild the index to change models", name, ErrModelMismatch, set.model, model)
	}
	return nil
}

// checkModelID refuses a model id that a log cannot record: empty, or
// longer than replay reads back. put refuses it, and Add does before any
// of its documents reaches Bleve.
func checkModelID(name, model string) error {
	switch {
	case model == "":
		return fmt.Errorf("index: %s: payloads from a model without an id", name)
	case len(model) > maxIDLen:
		return fmt.Errorf("index: %s: model id of %d bytes, more than %d", name, len(model), maxIDLen)
	}
	return nil
}

func (ps *payloadStore) put(name string, recs []payloadRec) error {
	if len(recs) == 0 {
		return nil
	}
	if err := ps.checkModel(name, recs[0].model); err != nil {
		return err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return errPayloadsClosed
	}
	// Check again under the write lock: another put may have claimed the
	// name since checkModel.
	if err := ps.checkClaimLocked(name, recs[0].model); err != nil {
		return err
	}
	if err := checkModelID(name, recs[0].model); err != nil {
		return err
	}
	for _, r := range recs {
		if r.id == "" {
			return fmt.Errorf("index: %s payload of a document without an id", name)
		}
		if len(r.id) > maxIDLen {
			return fmt.Errorf("index: %s payload of a document whose id is %d bytes, more than %d", name, len(r.id), maxIDLen)
		}
		if len(r.data) > maxPayload {
			return fmt.Errorf("index: %s payload of %q is %d bytes, more than %d", name, r.id, len(r.data), maxPayload)
		}
	}
	s := ps.sets[name]
	if s == nil {
		s = &payloadSet{model: recs[0].model, tail: map[string][]byte{}}
		if ps.dir != "" {
			if err := ps.createLog(name, s); err != nil {
				return err
			}
		}
		// Registered only once its log exists, so a failed create leaves
		// no name whose payloads would silently stay in memory only.
		ps.sets[name] = s
	}
	var buf []byte
	for _, r := range recs {
		data := r.data
		if data == nil {
			data = []byte{} // nil in the tail is a deletion
		}
		buf = appendRecord(buf, r.id, data, false)
		if err := s.set(r.id, data); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	if err := ps.write(name, s, buf); err != nil {
		return err
	}
	return ps.foldIfDue(name, s)
}

// write appends buf, records of name's payloads already applied to s, to
// its log.
func (ps *payloadStore) write(name string, s *payloadSet, buf []byte) error {
	if s.log == nil || len(buf) == 0 {
		return nil
	}
	if _, err := s.log.Write(buf); err != nil {
		return fmt.Errorf("index: payload log %s: %w", name, err)
	}
	s.logSize += int64(len(buf))
	return nil
}

// delete drops the payloads of ids under every name but the keys of keep.
func (ps *payloadStore) delete(ids []string, keep map[string]string) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return errPayloadsClosed
	}
	for name, s := range ps.sets {
		if _, ok := keep[name]; ok {
			continue
		}
		var buf []byte
		for _, id := range ids {
			held, _, err := s.holds(id)
			if err != nil {
				return fmt.Errorf("index: %w", err)
			}
			if held {
				if err := s.set(id, nil); err != nil {
					return fmt.Errorf("index: %w", err)
				}
				buf = appendRecord(buf, id, nil, true)
			}
		}
		if err := ps.write(name, s, buf); err != nil {
			return err
		}
		if s.live == 0 {
			ps.drop(name, s)
		} else if err := ps.foldIfDue(name, s); err != nil {
			return err
		}
	}
	return nil
}

// drop forgets a payload name none of whose documents holds a payload any
// more (every one re-indexed without its model, or deleted), and removes
// its segment and log: the model claim goes with them, so another model
// may store under the name without a rebuild, and inspect no longer names
// a model whose payloads are gone. The segment goes first: its log, left
// alone by a kill, deletes every payload it had. It is best effort: when
// a file cannot be removed (a file system that refuses to remove an open
// or mapped file), the name keeps its claim and the files left, which
// hold no payload, so that memory and disk still agree and the write that
// emptied it does not fail after its Bleve batch. The caller holds ps.mu.
func (ps *payloadStore) drop(name string, s *payloadSet) {
	if s.seg != nil {
		if err := os.Remove(s.seg.path); err != nil {
			return
		}
		s.seg.close()
		s.seg = nil
		clear(s.tail) // holds deletions of the segment's payloads alone
	}
	if s.log != nil {
		if err := os.Remove(ps.logPath(name)); err != nil {
			return
		}
		s.log.Close() // removed: nothing more will be written to it
	}
	delete(ps.sets, name)
}

// holdsAny reports whether any document has a payload.
func (ps *payloadStore) holdsAny() bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	for _, s := range ps.sets {
		if s.live > 0 {
			return true
		}
	}
	return false
}

// get returns id's payload under name; a payload that cannot be read (a
// damaged segment) is reported as none (read reports why).
func (ps *payloadStore) get(name, id string) ([]byte, bool) {
	b, ok, _ := ps.read(name, id, "", false)
	return b, ok
}

// getFrom is get for the payloads of name only when model wrote them.
func (ps *payloadStore) getFrom(name, model, id string) ([]byte, bool) {
	b, ok, _ := ps.read(name, id, model, true)
	return b, ok
}

// read returns id's payload under name, when model wrote it or fromModel
// is false, or the error that kept it from being read: the store is
// closed, or its record in the segment is damaged.
func (ps *payloadStore) read(name, id, model string, fromModel bool) ([]byte, bool, error) {
	out, err := ps.readMany(name, model, fromModel, []string{id})
	if err != nil {
		return nil, false, err
	}
	return out[0], out[0] != nil, nil
}

// readMany returns read's payload of every id, nil where it finds none,
// under one lock. The payloads it reads from a segment may share one
// buffer.
func (ps *payloadStore) readMany(name, model string, fromModel bool, ids []string) ([][]byte, error) {
	out, err := ps.readKinds([]payloadKind{{name, model, fromModel}}, ids)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// payloadKind is one payload a read asks for: name's, when model wrote
// it or fromModel is false.
type payloadKind struct {
	name, model string
	fromModel   bool
}

// readKinds returns readMany's payloads of every id for each of kinds,
// under one lock: a window's stages read several payloads of the same
// documents, and each document is looked up once among the kept reads
// for all of them. A payload comes from its name's tail, else from the
// kept reads of its segment, else from the segment (segment.readMany),
// and is then kept: a window's documents are read again query after
// query, and finding, copying and checking each record was most of a
// window's payload read.
func (ps *payloadStore) readKinds(kinds []payloadKind, ids []string) ([][][]byte, error) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	if ps.closed {
		return nil, errPayloadsClosed
	}
	out := make([][][]byte, len(kinds))
	segs := make([]*segment, len(kinds)) // nil: no segment to read
	tails := make([]map[string][]byte, len(kinds))
	for k, kd := range kinds {
		out[k] = make([][]byte, len(ids))
		s := ps.sets[kd.name]
		if s == nil || kd.fromModel && s.model != kd.model {
			continue
		}
		segs[k] = s.seg
		if len(s.tail) > 0 {
			tails[k] = s.tail
		}
	}
	rest := make([][]int, len(kinds)) // the places in ids each segment is read for
	ps.keptMu.Lock()
	for i, id := range ids {
		if len(ps.hidden) > 0 && ps.hidden[id] > 0 {
			continue
		}
		var doc keptDoc
		looked := false
		for k, seg := range segs {
			if b, ok := tails[k][id]; ok {
				out[k][i] = b
				continue
			}
			if seg == nil {
				continue
			}
			if !looked {
				doc, looked = ps.kept[id], true
			}
			if b := doc.of(seg); b != nil {
				out[k][i] = b
			} else {
				rest[k] = append(rest[k], i)
			}
		}
	}
	ps.keptMu.Unlock()
	read := false
	for k, seg := range segs {
		if len(rest[k]) == 0 {
			continue
		}
		if err := seg.readMany(ids, rest[k], out[k]); err != nil {
			return nil, damagedErr(err)
		}
		read = true
	}
	if read {
		ps.keep(ids, segs, rest, out, windowCacheMax*len(ps.sets))
	}
	return out, nil
}

// keptDoc is what a store keeps of one document's payloads read from
// segments: one entry a segment, so a name whose segment is replaced by
// a fold no longer finds the old one's.
type keptDoc []keptRead

// keptRead is a payload read from seg.
type keptRead struct {
	seg *segment
	b   []byte
}

// of returns the payload kept from seg, nil when none is.
func (d keptDoc) of(seg *segment) []byte {
	for _, r := range d {
		if r.seg == seg {
			return r.b
		}
	}
	return nil
}

// keep adds to the kept reads the payloads readKinds read from segs:
// out[k][i] for every i in rest[k]. Past budget bytes the kept reads
// start again.
func (ps *payloadStore) keep(ids []string, segs []*segment, rest [][]int, out [][][]byte, budget int) {
	ps.keptMu.Lock()
	defer ps.keptMu.Unlock()
	for k, seg := range segs {
		for _, i := range rest[k] {
			b := out[k][i]
			if b == nil {
				continue
			}
			doc := ps.kept[ids[i]]
			if doc.of(seg) != nil {
				continue // kept by a concurrent read meanwhile
			}
			if ps.keptBytes += len(b) + len(ids[i]); ps.kept == nil || ps.keptBytes > budget {
				ps.kept, ps.keptBytes, doc = map[string]keptDoc{}, len(b)+len(ids[i]), nil
			}
			ps.kept[ids[i]] = append(doc, keptRead{seg, b})
		}
	}
}

// damagedErr wraps err, a damaged segment's, with ErrDamaged.
func damagedErr(err error) error { return fmt.Errorf("index: %w (%w)", err, ErrDamaged) }

// hide makes get report no payload for ids until as many unhide calls: a
// write about to replace or delete them calls it before the documents
// change in Bleve, and unhide once their payloads are written or dropped,
// or the write has failed.
func (ps *payloadStore) hide(ids []string) {
	if len(ids) == 0 {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.hidden == nil {
		ps.hidden = make(map[string]int, len(ids))
	}
	for _, id := range ids {
		ps.hidden[id]++
	}
}

// unhide undoes one hide of ids.
func (ps *payloadStore) unhide(ids []string) {
	if len(ids) == 0 {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, id := range ids {
		if ps.hidden[id]--; ps.hidden[id] <= 0 {
			delete(ps.hidden, id)
		}
	}
	if len(ps.hidden) == 0 {
		ps.hidden = nil // a large batch's map is not kept
	}
}

func (ps *payloadStore) model(name string) string {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	if s := ps.sets[name]; s != nil {
		return s.model
	}
	return ""
}

func (ps *payloadStore) names() []string {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return slices.Sorted(maps.Keys(ps.sets))
}

// ids returns the documents holding a payload under name, sorted: the
// segment's, but those the tail deleted or rewrote, and the tail's.
func (ps *payloadStore) ids(name string) ([]string, error) {
	var out []string
	err := ps.each(name, "", func(id string, _ []byte) error {
		out = append(out, id)
		return nil
	})
	slices.Sort(out)
	return out, err
}

// each calls fn with every payload name holds, when model wrote them or
// model is "": the segment's records, but those the tail deleted or
// rewrote, then the tail's, in no set order. data is valid only during
// the call, which holds the store's read lock; an error from fn ends the
// walk and is returned.
func (ps *payloadStore) each(name, model string, fn func(id string, data []byte) error) error {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	s := ps.sets[name]
	if s == nil || model != "" && s.model != model {
		return nil
	}
	if s.seg != nil {
		for i := range s.seg.count {
			id, data, err := s.seg.record(i)
			if err != nil {
				return damagedErr(err)
			}
			if _, inTail := s.tail[string(id)]; inTail {
				continue
			}
			if err := fn(string(id), data); err != nil {
				return err
			}
		}
	}
	for id, b := range s.tail {
		if b != nil {
			if err := fn(id, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ps *payloadStore) close() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.closeLocked()
}

// closeLocked is close for a caller holding ps.mu.
func (ps *payloadStore) closeLocked() error {
	var err error
	for _, s := range ps.sets {
		if s.log != nil {
			if e := syncFile(s.log); e != nil && err == nil {
				err = e
			}
			if e := s.log.Close(); e != nil && err == nil {
				err = e
			}
			s.log = nil
		}
		if e := s.seg.close(); e != nil && err == nil {
			err = e
		}
	}
	ps.closed = true
	return err
}

// Folding. A log's tail lives in the heap, so a name's log is folded
// with its segment into a new segment once the log outgrows the larger of
// foldMin and a foldShare-th of the segment: the heap then holds at most
// that share of a name's payloads, and each payload is rewritten about
// foldShare times over as the index grows (amortised, one segment's worth
// of writes per foldShare-th of growth). Index.Compact folds every log
// holding a payload record, so an index built and compacted (semrank
// index, the recipes) serves from its segments with an empty tail. A fold
// holds the store's lock: reads wait for it, as for a write.
var (
	foldMin   int64 = 4 << 20 // variables for tests
	foldShare int64 = 8
)

// foldPrefix starts the name of the files a fold writes before renaming
// them into place; payload names cannot start with a dot.
const foldPrefix = ".fold-"

// foldDue reports whether s's log has outgrown its share.
func (ps *payloadStore) foldDue(s *payloadSet) bool {
	if s.log == nil || s.live == 0 {
		return false
	}
	var seg int64
	if s.seg != nil {
		seg = int64(len(s.seg.b))
	}
	return s.logSize-int64(len(logHeader(s.model))) > max(foldMin, seg/foldShare)
}

// foldIfDue folds s when its log has outgrown its share.
func (ps *payloadStore) foldIfDue(name string, s *payloadSet) error {
	if !ps.foldDue(s) {
		return nil
	}
	return ps.fold(name, s)
}

// compact folds every name whose log holds a payload record.
func (ps *payloadStore) compact() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return errPayloadsClosed
	}
	for _, name := range slices.Sorted(maps.Keys(ps.sets)) {
		s := ps.sets[name]
		if s.log == nil || s.logSize == int64(len(logHeader(s.model))) {
			continue
		}
		if err := ps.fold(name, s); err != nil {
			return err
		}
	}
	return nil
}

// foldStep is called after each step of a fold that changes the folder;
// tests end the folding goroutine there, as a kill would.
var foldStep = func(step string) {}

// fold writes s's segment and tail into a new segment and replaces its
// log by an empty one, in an order that a kill or a power loss at any
// point leaves a folder that opens to the same payloads:
//
//  1. the new segment is written under a temporary name and synced;
//  2. it is renamed over name.seg, and the folder synced: the old log,
//     replayed over the new segment, writes again what it already holds;
//  3. an empty log is written under a temporary name, synced, renamed
//     over name.log, and the folder synced.
//
// Temporary files a kill leaves are removed at the next writable open.
// The old segment is unmapped before the rename (Windows renames over no
// mapped file): the store's lock keeps every reader out, and get hands
// out copies, never slices of a mapping. The caller holds ps.mu.
func (ps *payloadStore) fold(name string, s *payloadSet) error {
	segPath := filepath.Join(ps.dir, name+segExt)
	fail := func(err error) error { return fmt.Errorf("index: folding payloads %s: %w", name, err) }
	tmp, err := ps.writeSegment(s)
	if err != nil {
		return fail(err)
	}
	foldStep("segment written")
	if err := s.seg.close(); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, segPath); err != nil {
		os.Remove(tmp)
		if s.seg != nil { // map the old one again, still in place
			seg, e := openSegment(segPath)
			if e != nil {
				return ps.brokenFold(name, s, e)
			}
			s.seg = seg
		}
		return fail(err)
	}
	foldStep("segment renamed")
	if err := syncDir(ps.dir); err != nil {
		return ps.brokenFold(name, s, err)
	}
	foldStep("segment synced")
	seg, err := openSegment(segPath)
	if err != nil {
		return ps.brokenFold(name, s, err)
	}
	s.seg = seg
	// The new segment holds everything: the old log over it is a tail of
	// writes it already has, true until the new log is in place.
	log, err := ps.writeEmptyLog(s)
	if err != nil {
		return fail(err)
	}
	foldStep("log written")
	if err := os.Rename(log.Name(), ps.logPath(name)); err != nil {
		log.Close()
		os.Remove(log.Name())
		return fail(err)
	}
	foldStep("log renamed")
	err = syncDir(ps.dir)
	s.log.Close()
	s.log, s.logSize, s.live = log, int64(len(logHeader(s.model))), int(seg.count)
	clear(s.tail)
	if err != nil {
		return fail(err)
	}
	return nil
}

// brokenFold is fold's error once the new segment is in place but cannot
// be synced or mapped: s, which still reads the old one, no longer
// matches the folder, so the name refuses writes (its log is closed)
// and reads (its segment) until the index is opened again.
func (ps *payloadStore) brokenFold(name string, s *payloadSet, err error) error {
	s.seg = nil
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
	delete(ps.sets, name)
	return fmt.Errorf("index: folding payloads %s: %w; open the index again", name, err)
}

// writeSegment writes s's payloads, segment and tail merged in id order,
// to a new temporary file in the payload folder, synced, and returns its
// path.
func (ps *payloadStore) writeSegment(s *payloadSet) (string, error) {
	f, err := os.CreateTemp(ps.dir, foldPrefix+"*"+segExt)
	if err != nil {
		return "", err
	}
	err = s.writeTo(f)
	if err == nil {
		err = syncFile(f)
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// writeTo writes s's payloads as a segment to f.
func (s *payloadSet) writeTo(f *os.File) error {
	w, err := newSegWriter(f, s.model)
	if err != nil {
		return err
	}
	tail := slices.Sorted(maps.Keys(s.tail))
	var n uint64
	if s.seg != nil {
		n = s.seg.count
	}
	for i, j := uint64(0), 0; i < n || j < len(tail); {
		var sid, v []byte
		if i < n {
			if sid, v, err = s.seg.record(i); err != nil {
				return err
			}
		}
		if j < len(tail) && (i == n || tail[j] <= string(sid)) {
			if i < n && tail[j] == string(sid) {
				i++ // replaced or deleted since
			}
			if b := s.tail[tail[j]]; b != nil {
				if err := w.add(tail[j], b); err != nil {
					return err
				}
			}
			j++
			continue
		}
		if err := w.add(string(sid), v); err != nil {
			return err
		}
		i++
	}
	return w.finish()
}

// writeEmptyLog writes a log holding s's model and no payload to a new
// temporary file in the payload folder, synced, and returns it open for
// appends.
func (ps *payloadStore) writeEmptyLog(s *payloadSet) (*os.File, error) {
	f, err := os.CreateTemp(ps.dir, foldPrefix+"*.log")
	if err != nil {
		return nil, err
	}
	_, err = f.Write(logHeader(s.model))
	if err == nil {
		err = syncFile(f)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}
