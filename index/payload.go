package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
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

// payloadStore keeps every payload in memory and appends changes to a log
// per payload name:
//
//	magic | record(model id, empty data) | record(doc id, data or delete)*
//	record = u32 idLen | u32 dataLen | crc32(idLen|dataLen) | id | data | crc32(id|data)
//
// A log is replayed on open. The lengths carry their own checksum, so
// replay can tell a crash from damage: a log that ends inside a record,
// or whose record turns to zeros up to the end of the file (the file's
// size reached disk before its data), ends with a torn write, which is
// dropped and truncated away; any other mismatch is an error naming the
// log and the byte, and nothing is cut.
type payloadStore struct {
	dir string // "" for an in-memory index

	mu     sync.RWMutex
	data   map[string]map[string][]byte // name → doc id → payload
	models map[string]string            // name → model id
	logs   map[string]*os.File
	// hidden counts, per document, the writes in flight that replace or
	// delete it: get reports no payload for it meanwhile (see Index).
	hidden map[string]int
	// closed is set by close: later writes fail rather than change the
	// payloads in memory only.
	closed   bool
	readOnly bool // see openPayloads
}

// errPayloadsClosed is returned by writes to a closed store.
var errPayloadsClosed = errors.New("index: payload store is closed")

// openPayloads reads the payload logs of the index at indexPath. readOnly
// opens them for reading only and changes no file: the tail a crash tore
// off a log is skipped in memory rather than cut from the file, and the
// logs are closed once read (the Index refuses writes).
func openPayloads(indexPath string, readOnly bool) (*payloadStore, error) {
	ps := &payloadStore{data: map[string]map[string][]byte{}, models: map[string]string{}, logs: map[string]*os.File{}, readOnly: readOnly}
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
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || e.IsDir() {
			continue
		}
		if err := ps.replay(name); err != nil {
			ps.close()
			return nil, err
		}
	}
	if err := ps.recover(entries); err != nil {
		ps.close()
		return nil, err
	}
	return ps, nil
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
		for _, m := range ps.data {
			if _, ok := m[id]; ok {
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
	for name, f := range ps.logs {
		if err := syncFile(f); err != nil {
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

func (ps *payloadStore) replay(name string) error {
	path := ps.logPath(name)
	flag := os.O_RDWR
	if ps.readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
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
		}
	}
	if torn {
		// A crash while the log was being created, before any payload:
		// the log holds nothing, and the next put recreates it.
		f.Close()
		if ps.readOnly {
			return nil
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("index: payload log %s: %w", path, err)
		}
		return nil
	}
	m := map[string][]byte{}
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
		if data == nil {
			delete(m, id)
		} else {
			m[id] = data
		}
	}
	ps.data[name] = m
	ps.models[name] = model
	if ps.readOnly {
		return f.Close()
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return fail(err)
	}
	ps.logs[name] = f
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
	if have, ok := ps.models[name]; ok && have != model {
		return fmt.Errorf("index: %s: %w (index has %s, got %s); rebuild the index to change models", name, ErrModelMismatch, have, model)
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
	if _, ok := ps.models[name]; !ok {
		if ps.dir != "" {
			if err := os.MkdirAll(ps.dir, dirMode); err != nil {
				return fmt.Errorf("index: payloads: %w", err)
			}
			f, err := os.OpenFile(ps.logPath(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, fileMode)
			if err != nil {
				return fmt.Errorf("index: payloads: %w", err)
			}
			hdr := appendRecord([]byte(payloadMagic), recs[0].model, []byte{}, false)
			if _, err := f.Write(hdr); err != nil {
				f.Close()
				os.Remove(ps.logPath(name))
				return fmt.Errorf("index: payloads: %w", err)
			}
			ps.logs[name] = f
		}
		// Registered only once its log exists, so a failed create leaves
		// no name whose payloads would silently stay in memory only.
		ps.models[name] = recs[0].model
		ps.data[name] = map[string][]byte{}
	}
	var buf []byte
	for _, r := range recs {
		buf = appendRecord(buf, r.id, r.data, false)
		ps.data[name][r.id] = r.data
	}
	return ps.write(name, buf)
}

func (ps *payloadStore) write(name string, buf []byte) error {
	f := ps.logs[name]
	if f == nil {
		return nil
	}
	if _, err := f.Write(buf); err != nil {
		return fmt.Errorf("index: payload log %s: %w", name, err)
	}
	return nil
}

// delete drops the payloads of ids under every name but the keys of keep.
func (ps *payloadStore) delete(ids []string, keep map[string]string) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return errPayloadsClosed
	}
	for name, m := range ps.data {
		if _, ok := keep[name]; ok {
			continue
		}
		var buf []byte
		for _, id := range ids {
			if _, ok := m[id]; ok {
				delete(m, id)
				buf = appendRecord(buf, id, nil, true)
			}
		}
		if err := ps.write(name, buf); err != nil {
			return err
		}
		if len(m) == 0 {
			ps.drop(name)
		}
	}
	return nil
}

// drop forgets a payload name none of whose documents holds a payload any
// more (every one re-indexed without its model, or deleted), and removes
// its log: the model claim goes with it, so another model may store under
// the name without a rebuild, and inspect no longer names a model whose
// payloads are gone. It is best effort: when the log cannot be removed (a
// file system that refuses to remove an open file), the name stays as it
// was, claim and empty log, so that memory and disk still agree and the
// write that emptied it does not fail after its Bleve batch. The caller
// holds ps.mu.
func (ps *payloadStore) drop(name string) {
	if f := ps.logs[name]; f != nil {
		if err := os.Remove(ps.logPath(name)); err != nil {
			return
		}
		f.Close() // removed: nothing more will be written to it
		delete(ps.logs, name)
	}
	delete(ps.data, name)
	delete(ps.models, name)
}

// holdsAny reports whether any document has a payload.
func (ps *payloadStore) holdsAny() bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	for _, m := range ps.data {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

func (ps *payloadStore) get(name, id string) ([]byte, bool) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return ps.getLocked(name, id)
}

// getFrom is get for the payloads of name only when model wrote them.
func (ps *payloadStore) getFrom(name, model, id string) ([]byte, bool) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	if ps.models[name] != model {
		return nil, false
	}
	return ps.getLocked(name, id)
}

// getLocked is get for a caller holding ps.mu.
func (ps *payloadStore) getLocked(name, id string) ([]byte, bool) {
	if len(ps.hidden) > 0 && ps.hidden[id] > 0 {
		return nil, false
	}
	b, ok := ps.data[name][id]
	return b, ok
}

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
	return ps.models[name]
}

func (ps *payloadStore) names() []string {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	out := make([]string, 0, len(ps.models))
	for n := range ps.models {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ids returns the documents holding a payload under name, sorted.
func (ps *payloadStore) ids(name string) []string {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	out := make([]string, 0, len(ps.data[name]))
	for id := range ps.data[name] {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (ps *payloadStore) close() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var err error
	for _, f := range ps.logs {
		if e := f.Sync(); e != nil && err == nil {
			err = e
		}
		if e := f.Close(); e != nil && err == nil {
			err = e
		}
	}
	ps.logs = map[string]*os.File{}
	ps.closed = true
	return err
}
