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
	"sort"
	"strings"
	"sync"
)

// payloadDir is the folder, inside the index directory, holding one
// append-only log per payload name.
const payloadDir = "semrank_payloads"

const payloadMagic = "SRPAYLD1"

// maxPayload bounds one record so a corrupt length cannot exhaust memory.
const maxPayload = 256 << 20

// maxIDLen bounds a document id (and the model id) in a log; put refuses
// longer ones, which replay could not read back.
const maxIDLen = 1 << 16

type payloadRec struct {
	model string
	id    string
	data  []byte // nil means delete
}

// payloadStore keeps every payload in memory and appends changes to a log
// per payload name:
//
//	magic | model-id record | (op, id, data, crc32)*
//
// A log is replayed on open; a torn final record (a crash mid-write) is
// ignored and truncated away, while damage anywhere else is an error.
type payloadStore struct {
	dir string // "" for an in-memory index

	mu     sync.RWMutex
	data   map[string]map[string][]byte // name → doc id → payload
	models map[string]string            // name → model id
	logs   map[string]*os.File
}

func openPayloads(indexPath string) (*payloadStore, error) {
	ps := &payloadStore{data: map[string]map[string][]byte{}, models: map[string]string{}, logs: map[string]*os.File{}}
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
	return ps, nil
}

func (ps *payloadStore) logPath(name string) string { return filepath.Join(ps.dir, name+".log") }

func (ps *payloadStore) replay(name string) error {
	path := ps.logPath(name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("index: payloads: %w", err)
	}
	r := bufio.NewReader(f)
	magic := make([]byte, len(payloadMagic))
	k, err := io.ReadFull(r, magic)
	torn := err != nil && strings.HasPrefix(payloadMagic, string(magic[:k]))
	if err != nil && !torn || err == nil && string(magic) != payloadMagic {
		f.Close()
		return fmt.Errorf("index: payload log %s: not a payload log", path)
	}
	var model string
	if !torn {
		model, err = readString(r)
		torn = errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !torn {
			f.Close()
			return fmt.Errorf("index: payload log %s: model record: %v", path, err)
		}
	}
	if !torn && model == "" {
		f.Close()
		return fmt.Errorf("index: payload log %s: no model id", path)
	}
	if torn {
		// A crash while the log was being created, before any record:
		// the log holds nothing, and the next put recreates it.
		f.Close()
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("index: payload log %s: %w", path, err)
		}
		return nil
	}
	m := map[string][]byte{}
	good := int64(len(payloadMagic)) + int64(4+len(model))
	for {
		id, data, n, err := readRecord(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// A torn final record: drop it.
				if terr := f.Truncate(good); terr != nil {
					f.Close()
					return fmt.Errorf("index: payload log %s: %v", path, terr)
				}
				break
			}
			f.Close()
			return fmt.Errorf("index: payload log %s at byte %d: %v", path, good, err)
		}
		if id == "" {
			// put never writes an empty id, but a crash can leave the
			// file zero-filled past its last write, and zeros read as a
			// record with an empty id, no payload and a valid checksum.
			if err := zeroTail(r); err != nil {
				f.Close()
				return fmt.Errorf("index: payload log %s at byte %d: %v", path, good, err)
			}
			if err := f.Truncate(good); err != nil {
				f.Close()
				return fmt.Errorf("index: payload log %s: %v", path, err)
			}
			break
		}
		good += n
		if data == nil {
			delete(m, id)
		} else {
			m[id] = data
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	ps.data[name] = m
	ps.models[name] = model
	ps.logs[name] = f
	return nil
}

// zeroTail reads r to its end and reports an error unless every byte left
// is zero.
func zeroTail(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return errors.New("a record without a document id")
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func readString(r io.Reader) (string, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint32(l[:])
	if n > maxIDLen {
		return "", fmt.Errorf("string length %d too large", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// record: u32 idLen | id | u32 dataLen (0xFFFFFFFF = delete) | data | u32 crc(id|data)
func readRecord(r *bufio.Reader) (id string, data []byte, n int64, err error) {
	if _, err := r.Peek(1); err != nil {
		return "", nil, 0, io.EOF
	}
	id, err = readString(r)
	if err != nil {
		return "", nil, 0, unexpected(err)
	}
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", nil, 0, unexpected(err)
	}
	dl := binary.LittleEndian.Uint32(l[:])
	del := dl == 0xFFFFFFFF
	if del {
		dl = 0
	} else if dl > maxPayload {
		return "", nil, 0, fmt.Errorf("payload of %q: length %d too large", id, dl)
	}
	buf := make([]byte, dl)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", nil, 0, unexpected(err)
	}
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", nil, 0, unexpected(err)
	}
	crc := crc32.NewIEEE()
	crc.Write([]byte(id))
	crc.Write(buf)
	if crc.Sum32() != binary.LittleEndian.Uint32(l[:]) {
		return "", nil, 0, fmt.Errorf("payload of %q: checksum mismatch", id)
	}
	n = int64(4 + len(id) + 4 + int(dl) + 4)
	if del {
		return id, nil, n, nil
	}
	return id, buf, n, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func appendRecord(b []byte, id string, data []byte, del bool) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	b = append(b, id...)
	if del {
		b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFFF)
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
	}
	crc := crc32.NewIEEE()
	crc.Write([]byte(id))
	crc.Write(data)
	return binary.LittleEndian.AppendUint32(b, crc.Sum32())
}

// ErrModelMismatch is wrapped when payloads from a different model would
// be mixed with those already stored.
var ErrModelMismatch = errors.New("payloads were written by a different model")

func (ps *payloadStore) checkModel(name, model string) error {
	// The name becomes a file name, name.log, in the payload directory:
	// no separators, and no leading dot (".", "..", hidden files). Other
	// dots are fine, and stage names made from options carry them
	// ("s2net_gamma2.5").
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("index: invalid payload name %q", name)
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	if have, ok := ps.models[name]; ok && have != model {
		return fmt.Errorf("index: %s: %w (index has %s, got %s); rebuild the index to change models", name, ErrModelMismatch, have, model)
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
	// Check again under the write lock: another put may have claimed the
	// name since checkModel.
	if have, ok := ps.models[name]; ok && have != recs[0].model {
		return fmt.Errorf("index: %s: %w (index has %s, got %s); rebuild the index to change models", name, ErrModelMismatch, have, recs[0].model)
	}
	if recs[0].model == "" {
		return fmt.Errorf("index: %s: payloads from a model without an id", name)
	}
	if len(recs[0].model) > maxIDLen {
		return fmt.Errorf("index: %s: model id of %d bytes, more than %d", name, len(recs[0].model), maxIDLen)
	}
	for _, r := range recs {
		if r.id == "" {
			return fmt.Errorf("index: %s payload of a document without an id", name)
		}
		if len(r.id) > maxIDLen {
			return fmt.Errorf("index: %s payload of a document whose id is %d bytes, more than %d", name, len(r.id), maxIDLen)
		}
	}
	if _, ok := ps.models[name]; !ok {
		if ps.dir != "" {
			if err := os.MkdirAll(ps.dir, 0o755); err != nil {
				return fmt.Errorf("index: payloads: %w", err)
			}
			f, err := os.OpenFile(ps.logPath(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return fmt.Errorf("index: payloads: %w", err)
			}
			hdr := append([]byte(payloadMagic), binary.LittleEndian.AppendUint32(nil, uint32(len(recs[0].model)))...)
			hdr = append(hdr, recs[0].model...)
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
	}
	return nil
}

func (ps *payloadStore) get(name, id string) ([]byte, bool) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	b, ok := ps.data[name][id]
	return b, ok
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
	return err
}
