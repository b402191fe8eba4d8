package embed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/semrank/semrank/internal/regfile"
)

// Limits on what the loaders accept, so a corrupt header cannot make them
// allocate without bound.
const (
	MaxDim      = 4096
	MaxWordLen  = 1 << 10
	maxLineSize = MaxDim*32 + MaxWordLen
)

var utf8BOM = []byte("\xef\xbb\xbf")

// Format names a word-vector file format.
type Format string

// The formats LoadFile reads.
const (
	FormatAuto         Format = "auto"         // detect from the content
	FormatBundle       Format = "semrank"      // an "embed" model bundle
	FormatWord2VecText Format = "word2vec"     // "N D" header, then "word v1 … vD" lines
	FormatWord2VecBin  Format = "word2vec-bin" // "N D\n", then word, space, D little-endian float32
	FormatGloVe        Format = "glove"        // "word v1 … vD" lines, no header
)

// LoadFile reads word vectors from path in the given format. A path that
// is not a regular file (a device, a FIFO) is refused without being read.
func LoadFile(path string, f Format) (*Vectors, error) {
	if f == FormatBundle {
		return Load(path)
	}
	fh, _, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	defer fh.Close()
	return ReadFormat(fh, path, f)
}

// ReadFormat reads word vectors in the given format from r, as LoadFile
// reads a file; name, the file r reads, is for errors.
func ReadFormat(r io.Reader, name string, f Format) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	// A UTF-8 byte order mark (editors on Windows write one) would make
	// the word2vec header a word, and the error that follows would blame
	// the second line.
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	var err error
	if f == FormatAuto || f == "" {
		if f, err = detect(br); err != nil {
			return nil, fmt.Errorf("embed: %s: %w", name, err)
		}
	}
	var v *Vectors
	switch f {
	case FormatBundle:
		return Read(br, name)
	case FormatWord2VecText:
		v, err = ReadWord2VecText(br)
	case FormatWord2VecBin:
		v, err = ReadWord2VecBinary(br)
	case FormatGloVe:
		v, err = ReadGloVe(br)
	default:
		return nil, fmt.Errorf("embed: unknown vector format %q (want %s, %s, %s, %s or %s)", f, FormatAuto, FormatBundle, FormatWord2VecText, FormatWord2VecBin, FormatGloVe)
	}
	if err != nil {
		return nil, fmt.Errorf("embed: %s: %w", name, err)
	}
	return v, nil
}

// detect guesses a file's format from its first bytes: the bundle magic,
// a "N D" header followed by text (word2vec text) or by binary floats
// (word2vec binary), or a first line of a word and numbers (GloVe).
func detect(br *bufio.Reader) (Format, error) {
	head, _ := br.Peek(4096)
	if len(head) == 0 {
		return "", errors.New("empty file")
	}
	if bytes.HasPrefix(head, []byte("SEMRANK1")) {
		return FormatBundle, nil
	}
	nl := bytes.IndexByte(head, '\n')
	if nl < 0 {
		return FormatGloVe, nil
	}
	_, dim, err := parseHeader(string(head[:nl]))
	if err != nil {
		return FormatGloVe, nil
	}
	rest := head[nl+1:]
	rec := rest
	if e := bytes.IndexByte(rest, '\n'); e >= 0 {
		rec = rest[:e]
	}
	if sp := bytes.IndexByte(rec, ' '); sp >= 0 {
		// A binary file has raw float32 bytes after the first word; a text
		// file has printable digits, signs, dots and spaces up to the newline.
		for _, c := range rec[sp+1:] {
			if !strings.ContainsRune("0123456789+-.eE \r\tnaifNAIF", rune(c)) {
				return FormatWord2VecBin, nil
			}
		}
		// The float bytes may hold a newline (0x0a) before any byte that
		// gives them away. Then the line is short of the header's number
		// of values, and the newline that word2vec writes after each
		// binary record is where the first record's bytes end.
		end := sp + 1 + 4*dim
		if len(splitFields(strings.TrimRight(string(rec), "\r"))) != dim+1 && end < len(rest) && rest[end] == '\n' {
			return FormatWord2VecBin, nil
		}
	}
	return FormatWord2VecText, nil
}

func parseHeader(line string) (n, dim int, err error) {
	f := strings.Fields(line)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("header %q: want \"<words> <dimensions>\"", clip(line))
	}
	n, err1 := strconv.Atoi(f[0])
	dim, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || n < 0 || dim <= 0 || dim > MaxDim {
		return 0, 0, fmt.Errorf("header %q: want a word count ≥ 0 and 1..%d dimensions", clip(line), MaxDim)
	}
	return n, dim, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// builder accumulates words and vectors, keeping the first of duplicate
// words (some published vector files repeat a word; the first occurrence is
// the more frequent one in word2vec's frequency-sorted output).
type builder struct {
	dim   int
	words []string
	data  []float64
	seen  map[string]bool
}

func (b *builder) add(word string, vec []float64) {
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	if b.seen[word] {
		return
	}
	b.seen[word] = true
	b.words = append(b.words, word)
	b.data = append(b.data, vec...)
}

func (b *builder) vectors() (*Vectors, error) {
	if len(b.words) == 0 {
		return nil, errors.New("no vectors")
	}
	return NewVectors(b.words, b.dim, b.data)
}

// parseVectorLine parses "word v1 … vD". dim < 0 means any dimension.
// Fields are separated by ASCII spaces and tabs only, as gensim reads them:
// published vector files have words holding other Unicode spaces (U+00A0).
func parseVectorLine(line string, dim int, lineNo int) (string, []float64, error) {
	f := splitFields(line)
	if len(f) < 2 {
		return "", nil, fmt.Errorf("line %d: want a word and its values", lineNo)
	}
	if dim > 0 && len(f)-1 != dim {
		return "", nil, fmt.Errorf("line %d: word %q has %d values, want %d", lineNo, clip(f[0]), len(f)-1, dim)
	}
	if len(f)-1 > MaxDim {
		return "", nil, fmt.Errorf("line %d: %d values, more than %d", lineNo, len(f)-1, MaxDim)
	}
	if len(f[0]) > MaxWordLen {
		return "", nil, fmt.Errorf("line %d: word longer than %d bytes", lineNo, MaxWordLen)
	}
	vec := make([]float64, len(f)-1)
	for i, s := range f[1:] {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return "", nil, fmt.Errorf("line %d: word %q: value %d is %q, not a finite number", lineNo, clip(f[0]), i+1, clip(s))
		}
		vec[i] = x
	}
	return f[0], vec, nil
}

// splitFields splits a text vector line at ASCII spaces and tabs.
func splitFields(line string) []string {
	return strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
}

func scanLines(r io.Reader, fn func(line string, n int) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineSize)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(line, n); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}

// ReadWord2VecText reads word2vec's text format: a "N D" header line, then
// one "word v1 … vD" line per word. The header's count must match.
func ReadWord2VecText(r io.Reader) (*Vectors, error) {
	var (
		b       builder
		want    = -1
		entries int
	)
	err := scanLines(r, func(line string, n int) error {
		if want < 0 {
			cnt, dim, err := parseHeader(line)
			if err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			want, b.dim = cnt, dim
			return nil
		}
		w, vec, err := parseVectorLine(line, b.dim, n)
		if err != nil {
			return err
		}
		entries++
		if entries > want {
			return fmt.Errorf("line %d: more vectors than the header's %d", n, want)
		}
		b.add(w, vec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if want < 0 {
		return nil, errors.New("no header")
	}
	if entries != want {
		return nil, fmt.Errorf("header promises %d vectors, file has %d", want, entries)
	}
	return b.vectors()
}

// ReadGloVe reads GloVe's text format: "word v1 … vD" lines with no
// header; every line must have the first line's dimension.
func ReadGloVe(r io.Reader) (*Vectors, error) {
	var b builder
	b.dim = -1
	header := false // line 1 reads as a word2vec "N D" header
	err := scanLines(r, func(line string, n int) error {
		if n == 1 {
			_, _, err := parseHeader(line)
			header = err == nil
		}
		w, vec, err := parseVectorLine(line, b.dim, n)
		if err != nil {
			if header && n == 2 {
				// The "word" of line 1 was a vector count.
				return fmt.Errorf("%w (line 1 reads as a word2vec header \"N D\": is this a word2vec text file?)", err)
			}
			return err
		}
		b.dim = len(vec)
		b.add(w, vec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.vectors()
}

// ReadWord2VecBinary reads word2vec's binary format: a "N D" header line,
// then N records of a word, a space, and D little-endian float32 values,
// each record optionally followed by a newline (LF or CRLF, which the
// word2vec tool skips too). The header's count must match, as in
// ReadWord2VecText: bytes after the N-th record other than line breaks and
// spaces are an error, not vectors left out unsaid.
func ReadWord2VecBinary(r io.Reader) (*Vectors, error) {
	br := bufio.NewReader(r)
	head, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("header: %w", eofIsTruncation(err))
	}
	n, dim, err := parseHeader(strings.TrimRight(head, "\r\n"))
	if err != nil {
		return nil, err
	}
	b := builder{dim: dim}
	raw := make([]byte, 4*dim)
	for i := 0; i < n; i++ {
		word, err := readBinaryWord(br)
		if err != nil {
			return nil, fmt.Errorf("vector %d of %d: %w", i+1, n, err)
		}
		if _, err := io.ReadFull(br, raw); err != nil {
			return nil, fmt.Errorf("vector %d of %d (%q): %w", i+1, n, clip(word), eofIsTruncation(err))
		}
		vec := make([]float64, dim)
		for k := range vec {
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:])))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("vector %d (%q): value %d is not finite", i+1, clip(word), k+1)
			}
			vec[k] = x
		}
		b.add(word, vec)
	}
	for {
		c, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if !isRecordSpace(c) {
			return nil, fmt.Errorf("more data after the header's %d vectors", n)
		}
	}
	return b.vectors()
}

// isRecordSpace reports whether c may separate binary records: the newline
// word2vec writes after each, a CR before it (a file written with CRLF
// line ends), or a space or tab.
func isRecordSpace(c byte) bool { return c == '\n' || c == '\r' || c == ' ' || c == '\t' }

// readBinaryWord reads a word up to its terminating space, skipping the
// line break (LF or CRLF) that ends the previous record.
func readBinaryWord(br *bufio.Reader) (string, error) {
	var sb strings.Builder
	for {
		c, err := br.ReadByte()
		if err != nil {
			return "", eofIsTruncation(err)
		}
		switch {
		case c == ' ':
			if sb.Len() == 0 {
				return "", errors.New("empty word")
			}
			return sb.String(), nil
		case (c == '\n' || c == '\r') && sb.Len() == 0:
			continue
		}
		if sb.Len() >= MaxWordLen {
			return "", fmt.Errorf("word longer than %d bytes", MaxWordLen)
		}
		sb.WriteByte(c)
	}
}

func eofIsTruncation(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file truncated")
	}
	return err
}

// WriteWord2VecText writes v in word2vec's text format.
func (v *Vectors) WriteWord2VecText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d\n", v.Len(), v.Dim)
	for i, word := range v.Words {
		bw.WriteString(word)
		for _, x := range v.Vector(i) {
			bw.WriteByte(' ')
			bw.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteWord2VecBinary writes v in word2vec's binary format (float32).
func (v *Vectors) WriteWord2VecBinary(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d\n", v.Len(), v.Dim)
	var buf [4]byte
	for i, word := range v.Words {
		bw.WriteString(word)
		bw.WriteByte(' ')
		for _, x := range v.Vector(i) {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(float32(x)))
			bw.Write(buf[:])
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
