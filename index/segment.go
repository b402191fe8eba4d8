package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blevesearch/mmap-go"
)

// A payload segment, name.seg in the payload folder, holds one payload
// name's payloads as of the last fold (see payloadStore.fold), immutable
// and memory-mapped, so that opening it reads its header and serving a
// window touches only the pages of that window's documents:
//
//	header (64 bytes) | model id | records | entries | slots
//	header  = magic | u64 count | u64 slots | u64 entriesOff | u64 slotsOff
//	          | u32 crc32(entries|slots) | u32 modelLen | u64 size
//	          | u32 crc32(header[:56]|model id) | u32 0
//	record  = id | payload | crc32(id|payload)
//	entry   = u64 record offset | u32 idLen | u32 payloadLen (sorted by id)
//	slot    = u32 entry number + 1, 0 when empty (open addressing, FNV-1a)
//
// The header's checksum is checked at open, a record's when it is read:
// a damaged record is an error naming the segment, never a wrong payload.
// The table's checksum, and every record's, are checked by verify
// (semrank inspect --verify). Every offset is checked against the file
// before it is followed, so no damage can make a read panic or loop.
//
// A lookup (find, get) reads the table through the mapping and the
// record with one pread into a buffer of its own. Reading records through
// the mapping would make every page a window touches resident in the
// process, and the kernel's fault-around maps the cached pages around it
// too (64 KiB a fault), so a server's resident memory grew towards the
// segments' size; read, the records' pages stay in the page cache alone,
// shared and reclaimable, and the buffer is the copy a caller may keep
// anyway. A segment of at most mappedReadMax bytes, whose pages bound what
// it can make resident, is read through the mapping instead, without a
// system call a record (a small collection's window reads hundreds), its
// window's records copied into one buffer (readMany). The payloads windows
// read are kept by the store, at most windowCacheMax bytes a payload name,
// and later windows read them from there.
// Scans of every record (fold, ids, verify) read the mapping.
const (
	segMagic     = "SRPSEG01"
	segHeaderLen = 64
	segEntryLen  = 16
	segExt       = ".seg"

	mappedReadMax = 16 << 20
)

// segment is an open payload segment.
type segment struct {
	path  string      // for errors
	b     []byte      // the file's bytes
	m     mmap.MMap   // b's mapping; nil when b is in the heap
	f     *os.File    // the file; nil when b is in the heap
	r     io.ReaderAt // where lookups read records: f, or b
	model string

	count, slots                 uint64
	dataOff, entriesOff, slotsOf uint64
	tableSum                     uint32
}

// windowCacheMax bounds the payload bytes a store keeps for windows, a
// payload name (payloadStore.kept); past it, the kept ones are dropped
// and it starts again.
const windowCacheMax = 2 << 20

// openSegment maps the segment file at path and checks its header.
func openSegment(path string) (*segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() < segHeaderLen {
		f.Close()
		return nil, fmt.Errorf("payload segment %s: %d bytes, too short for its header (cut short?)", path, st.Size())
	}
	m, err := mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("payload segment %s: %w", path, err)
	}
	s, err := parseSegment(path, m)
	if err != nil {
		m.Unmap()
		f.Close()
		return nil, err
	}
	s.m, s.f = m, f
	if st.Size() > mappedReadMax {
		s.r = f
	}
	return s, nil
}

// parseSegment checks the header of the segment b, read from path.
func parseSegment(path string, b []byte) (*segment, error) {
	fail := func(format string, a ...any) (*segment, error) {
		return nil, fmt.Errorf("payload segment %s: %s", path, fmt.Sprintf(format, a...))
	}
	if len(b) < segHeaderLen {
		return fail("%d bytes, too short for its header (cut short?)", len(b))
	}
	if string(b[:len(segMagic)]) != segMagic {
		return fail("not a payload segment")
	}
	le := binary.LittleEndian
	s := &segment{
		path:       path,
		b:          b,
		r:          bytes.NewReader(b),
		count:      le.Uint64(b[8:]),
		slots:      le.Uint64(b[16:]),
		entriesOff: le.Uint64(b[24:]),
		slotsOf:    le.Uint64(b[32:]),
		tableSum:   le.Uint32(b[40:]),
	}
	modelLen := uint64(le.Uint32(b[44:]))
	size := le.Uint64(b[48:])
	if modelLen == 0 || modelLen > maxIDLen || segHeaderLen+modelLen > uint64(len(b)) {
		return fail("model id length %d out of range", modelLen)
	}
	s.dataOff = segHeaderLen + modelLen
	sum := crc32.Update(crc32.ChecksumIEEE(b[:56]), crc32.IEEETable, b[segHeaderLen:s.dataOff])
	if sum != le.Uint32(b[56:]) {
		return fail("header checksum mismatch")
	}
	s.model = string(b[segHeaderLen:s.dataOff])
	switch {
	case size != uint64(len(b)):
		return fail("%d bytes, its header says %d (cut short?)", len(b), size)
	case s.slots == 0 || s.slots&(s.slots-1) != 0 || s.slots > size/4:
		return fail("%d hash slots, not a power of two that fits the file", s.slots)
	case s.count >= s.slots || s.count > size/segEntryLen:
		return fail("%d entries for %d slots", s.count, s.slots)
	case s.entriesOff < s.dataOff || s.entriesOff > size ||
		s.entriesOff+s.count*segEntryLen != s.slotsOf || s.slotsOf+s.slots*4 != size:
		return fail("table offsets %d, %d do not fit the file", s.entriesOff, s.slotsOf)
	}
	return s, nil
}

// close unmaps and closes the segment; nothing may be read from it after.
func (s *segment) close() error {
	if s == nil || s.m == nil {
		return nil
	}
	err := s.m.Unmap()
	if e := s.f.Close(); err == nil {
		err = e
	}
	s.m, s.b, s.f, s.r = nil, nil, nil, nil
	return err
}

// hashID is FNV-1a, 64 bits: stable across processes, unlike maphash.
func hashID[T string | []byte](id T) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(id) {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// entry returns where entry i's record lies: its offset, and the lengths
// of its id and payload, checked against the records' area.
func (s *segment) entry(i uint64) (off, idLen, valLen uint64, err error) {
	e := s.b[s.entriesOff+i*segEntryLen:]
	off = binary.LittleEndian.Uint64(e)
	idLen = uint64(binary.LittleEndian.Uint32(e[8:]))
	valLen = uint64(binary.LittleEndian.Uint32(e[12:]))
	if off < s.dataOff || off > s.entriesOff || idLen == 0 || s.entriesOff-off < idLen+valLen+4 {
		return 0, 0, 0, fmt.Errorf("payload segment %s: entry %d points outside its records", s.path, i)
	}
	return off, idLen, valLen, nil
}

// record returns entry i's id and payload, slices of the mapping, once
// its record's checksum is checked: for scans, which read every record.
func (s *segment) record(i uint64) (id, val []byte, err error) {
	off, idLen, valLen, err := s.entry(i)
	if err != nil {
		return nil, nil, err
	}
	return s.checked(s.b[off:off+idLen+valLen+4], idLen)
}

// readRecord is record for lookups: it reads the record from the file
// into a buffer of its own, leaving the mapping's pages untouched.
func (s *segment) readRecord(i uint64) (id, val []byte, err error) {
	off, idLen, valLen, err := s.entry(i)
	if err != nil {
		return nil, nil, err
	}
	buf := make([]byte, idLen+valLen+4)
	if _, err := s.r.ReadAt(buf, int64(off)); err != nil {
		return nil, nil, fmt.Errorf("payload segment %s: entry %d: %w", s.path, i, err)
	}
	return s.checked(buf, idLen)
}

// checked splits rec, a record (id, payload, checksum) whose id is idLen
// bytes, into its id and payload once its checksum is checked.
func (s *segment) checked(rec []byte, idLen uint64) (id, val []byte, err error) {
	end := len(rec) - 4
	if crc32.ChecksumIEEE(rec[:end]) != binary.LittleEndian.Uint32(rec[end:]) {
		return nil, nil, fmt.Errorf("payload segment %s: record of %q: checksum mismatch", s.path, rec[:idLen])
	}
	return rec[:idLen:idLen], rec[idLen:end:end], nil
}

// find returns the number of id's entry; ok is false when the segment
// has no payload for id. At most every slot is probed once, and only the
// ids of entries whose id has id's length are read, not their payloads;
// except that with whole set, a segment read through its file reads each
// such entry's whole record in one pread, and returns id's as rec.
func (s *segment) find(id string, whole bool) (i uint64, rec []byte, ok bool, err error) {
	mask := s.slots - 1
	p := hashID(id) & mask
	file := s.r == s.f
	for range s.slots {
		e := uint64(binary.LittleEndian.Uint32(s.b[s.slotsOf+p*4:]))
		if e == 0 {
			return 0, nil, false, nil
		}
		if e > s.count {
			return 0, nil, false, fmt.Errorf("payload segment %s: slot %d names entry %d of %d", s.path, p, e-1, s.count)
		}
		off, idLen, valLen, err := s.entry(e - 1)
		if err != nil {
			return 0, nil, false, err
		}
		if idLen == uint64(len(id)) {
			var got []byte
			if file {
				n := idLen
				if whole {
					n += valLen + 4
				}
				got = make([]byte, n)
				if _, err := s.f.ReadAt(got, int64(off)); err != nil {
					return 0, nil, false, fmt.Errorf("payload segment %s: entry %d: %w", s.path, e-1, err)
				}
			} else {
				got = s.b[off : off+idLen]
			}
			if string(got[:idLen]) == id {
				if file && whole {
					return e - 1, got, true, nil
				}
				return e - 1, nil, true, nil
			}
		}
		p = (p + 1) & mask
	}
	return 0, nil, false, nil
}

// get returns id's payload, which the caller may keep: it is read into a
// buffer of its own, never a slice of the mapping, which goes at the next
// fold or at close.
func (s *segment) get(id string) ([]byte, bool, error) {
	i, rec, ok, err := s.find(id, true)
	if !ok || err != nil {
		return nil, false, err
	}
	var val []byte
	if rec != nil {
		_, val, err = s.checked(rec, uint64(len(id)))
	} else {
		_, val, err = s.readRecord(i)
	}
	return val, err == nil, err
}

// readMany sets out[k] to the payload of ids[k], for every k in which
// whose id the segment holds, read from the segment and checked
// (payloadStore.readKinds keeps them for later windows). A segment read through its mapping copies them into one
// buffer, which they share: one allocation a window rather than one a
// payload, which made up most of a read's cost.
func (s *segment) readMany(ids []string, which []int, out [][]byte) error {
	if s.r == s.f {
		for _, k := range which {
			b, ok, err := s.get(ids[k])
			if err != nil {
				return err
			}
			if ok {
				out[k] = b
			}
		}
		return nil
	}
	type record struct{ off, idLen, n uint64 } // n 0: none
	found := make([]record, len(which))
	var total uint64
	for j, k := range which {
		i, _, ok, err := s.find(ids[k], false)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		off, idLen, valLen, err := s.entry(i)
		if err != nil {
			return err
		}
		found[j] = record{off, idLen, idLen + valLen + 4}
		total += found[j].n
	}
	buf := make([]byte, total)
	for j, k := range which {
		r := found[j]
		if r.n == 0 {
			continue
		}
		copy(buf, s.b[r.off:r.off+r.n])
		_, val, err := s.checked(buf[:r.n:r.n], r.idLen)
		if err != nil {
			return err
		}
		out[k] = val
		buf = buf[r.n:]
	}
	return nil
}

// has reports whether the segment holds a payload for id, reading its id
// alone: the record's checksum is checked when it is read.
func (s *segment) has(id string) (bool, error) {
	_, _, ok, err := s.find(id, false)
	return ok, err
}

// verify reads the whole segment: the table's checksum, every record's,
// the ids' order, and that each entry is found through the slots.
func (s *segment) verify() error {
	if crc32.ChecksumIEEE(s.b[s.entriesOff:]) != s.tableSum {
		return fmt.Errorf("payload segment %s: table checksum mismatch", s.path)
	}
	var prev []byte
	for i := range s.count {
		id, _, err := s.record(i)
		if err != nil {
			return err
		}
		if i > 0 && bytes.Compare(prev, id) >= 0 {
			return fmt.Errorf("payload segment %s: entry %d (%q) out of order", s.path, i, id)
		}
		if j, _, ok, err := s.find(string(id), false); err != nil || !ok || j != i {
			return fmt.Errorf("payload segment %s: entry %d (%q) not found through its slots (%v)", s.path, i, id, err)
		}
		prev = id
	}
	var used uint64
	for p := range s.slots {
		if binary.LittleEndian.Uint32(s.b[s.slotsOf+p*4:]) != 0 {
			used++
		}
	}
	if used != s.count {
		return fmt.Errorf("payload segment %s: %d slots used for %d entries", s.path, used, s.count)
	}
	return nil
}

// segWriter writes a segment, its payloads given in increasing id order.
type segWriter struct {
	f       *os.File
	w       *bufio.Writer
	model   string
	off     uint64
	entries []byte
	hashes  []uint64
}

func newSegWriter(f *os.File, model string) (*segWriter, error) {
	w := &segWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), model: model}
	var hdr [segHeaderLen]byte // written again by finish
	w.w.Write(hdr[:])
	_, err := w.w.WriteString(model)
	w.off = segHeaderLen + uint64(len(model))
	return w, err
}

// add appends id's payload; ids must come in increasing order.
func (w *segWriter) add(id string, val []byte) error {
	sum := crc32.Update(crc32.ChecksumIEEE([]byte(id)), crc32.IEEETable, val)
	w.entries = binary.LittleEndian.AppendUint64(w.entries, w.off)
	w.entries = binary.LittleEndian.AppendUint32(w.entries, uint32(len(id)))
	w.entries = binary.LittleEndian.AppendUint32(w.entries, uint32(len(val)))
	w.hashes = append(w.hashes, hashID(id))
	w.w.WriteString(id)
	w.w.Write(val)
	_, err := w.w.Write(binary.LittleEndian.AppendUint32(nil, sum))
	w.off += uint64(len(id) + len(val) + 4)
	return err
}

// finish writes the table and the header; the caller syncs the file.
func (w *segWriter) finish() error {
	n := uint64(len(w.hashes))
	if n > 1<<32-2 {
		return fmt.Errorf("%d payloads, more than a segment holds", n)
	}
	slots := uint64(1)
	for slots < 2*n {
		slots <<= 1
	}
	table := make([]uint32, slots)
	for i, h := range w.hashes {
		p := h & (slots - 1)
		for table[p] != 0 {
			p = (p + 1) & (slots - 1)
		}
		table[p] = uint32(i + 1)
	}
	tab := w.entries
	for _, e := range table {
		tab = binary.LittleEndian.AppendUint32(tab, e)
	}
	entriesOff := w.off
	if _, err := w.w.Write(tab); err != nil {
		return err
	}
	if err := w.w.Flush(); err != nil {
		return err
	}
	le := binary.LittleEndian
	hdr := make([]byte, segHeaderLen, segHeaderLen+len(w.model))
	copy(hdr, segMagic)
	le.PutUint64(hdr[8:], n)
	le.PutUint64(hdr[16:], slots)
	le.PutUint64(hdr[24:], entriesOff)
	le.PutUint64(hdr[32:], entriesOff+n*segEntryLen)
	le.PutUint32(hdr[40:], crc32.ChecksumIEEE(tab))
	le.PutUint32(hdr[44:], uint32(len(w.model)))
	le.PutUint64(hdr[48:], entriesOff+uint64(len(tab)))
	le.PutUint32(hdr[56:], crc32.ChecksumIEEE(append(hdr[:56:56], w.model...)))
	_, err := w.f.WriteAt(hdr, 0)
	return err
}

// VerifyPayloads checks every payload segment of the index at path in
// full (segment.verify: the table's checksum and every record's); the
// payload logs are read whole whenever the index opens. A damaged segment
// is reported in its SegmentCheck.
func VerifyPayloads(path string) ([]SegmentCheck, error) {
	entries, err := os.ReadDir(filepath.Join(path, payloadDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: payloads: %w", err)
	}
	var out []SegmentCheck
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), segExt) || strings.HasPrefix(e.Name(), foldPrefix) {
			continue
		}
		c := SegmentCheck{File: filepath.Join(path, payloadDir, e.Name())}
		if st, err := os.Stat(c.File); err == nil {
			c.Size = st.Size()
		}
		s, err := openSegment(c.File)
		if err == nil {
			err = s.verify()
			s.close()
		}
		c.Err = err
		out = append(out, c)
	}
	return out, nil
}
