// Package models defines the one file format every semrank model is saved
// in, so that any model — TWEAK weights, projection matrices, word vectors,
// network layers — is stored, versioned and validated the same way.
//
// A bundle is a manifest plus named tensors and string lists:
//
//	magic "SEMRANK1" | uint32 manifest length | manifest JSON
//	| section* | 32-byte SHA-256 of everything before it
//
// Each section is a tensor (float64 values, little endian, with a shape) or a
// list of strings (a vocabulary); the manifest lists them in order with their
// sizes. The trailing checksum makes a truncated or corrupted file fail to
// load with a clear error rather than yield a model with garbage weights,
// and the manifest's method, format version and vocabulary hash let a
// loader refuse a model made for something else.
//
// The per-method packages (models/tweak, models/s2net, …) build on this:
// each keeps its own Config and tensors but never its own file format.
package models

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/internal/regfile"
)

// FormatVersion is the version of the bundle layout written by this package.
const FormatVersion = 1

const magic = "SEMRANK1"

// MaxBundleSize bounds what Read accepts, so a corrupt length field cannot
// make the loader allocate without limit.
const MaxBundleSize = 4 << 30

// ErrCorrupt is wrapped by every error that reports a damaged bundle.
var ErrCorrupt = errors.New("corrupt model bundle")

// ErrNotBundle is wrapped by the error for a file that is not a model
// bundle at all (it lacks the magic): a pipeline file or a run given where
// a model belongs, rather than a damaged model.
var ErrNotBundle = errors.New("not a semrank model file")

// Manifest describes a bundle: what made it, how, from what data, and how
// well it did. It is stored as JSON at the start of the file.
type Manifest struct {
	Method        string `json:"method"`         // e.g. "tweak", "s2net"
	FormatVersion int    `json:"format_version"` // bundle layout version
	// ModelVersion is the method's own version of what its tensors mean; a
	// loader refuses versions it does not know.
	ModelVersion int             `json:"model_version"`
	Config       json.RawMessage `json:"config,omitempty"`
	// VocabHash identifies the vocabulary the tensors are indexed by (see
	// HashStrings); a mismatch with the data a model is applied to is an error.
	VocabHash string `json:"vocab_hash,omitempty"`
	// Analyzer identifies the analyzer, and the version of its behaviour,
	// whose terms the vocabulary holds (analyzers.ID or analyzers.WordsID,
	// e.g. "semrank_en/1"). A vocabulary hash cannot catch tokenization
	// drift: the stored vocabulary is intact, but a build that analyzes
	// text differently no longer produces its terms (see CheckAnalyzer).
	// Empty for models whose inputs are not analyzer terms and for models
	// saved before analyzers were recorded.
	Analyzer string `json:"analyzer,omitempty"`
	// TrainingFingerprint identifies the data the model was trained on (see
	// Fingerprint), so results can be traced and leaks across folds detected.
	TrainingFingerprint string             `json:"training_fingerprint,omitempty"`
	Metrics             map[string]float64 `json:"metrics,omitempty"`
	Notes               map[string]string  `json:"notes,omitempty"`
	Sections            []Section          `json:"sections"`
}

// Section is the manifest's entry for one tensor or string list.
type Section struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // "f64" or "strings"
	Shape []int  `json:"shape,omitempty"`
	Bytes int64  `json:"bytes"`
}

// Tensor is a dense float64 array in row-major order.
type Tensor struct {
	Shape []int
	Data  []float64
}

// Bundle is a model in memory: its manifest and its sections.
type Bundle struct {
	Manifest Manifest
	tensors  map[string]Tensor
	strs     map[string][]string
}

// New returns an empty bundle for method at the given model version.
func New(method string, modelVersion int) *Bundle {
	return &Bundle{
		Manifest: Manifest{Method: method, FormatVersion: FormatVersion, ModelVersion: modelVersion},
		tensors:  map[string]Tensor{},
		strs:     map[string][]string{},
	}
}

// SetConfig stores cfg, marshalled as JSON, in the manifest.
func (b *Bundle) SetConfig(cfg any) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("models: config: %w", err)
	}
	b.Manifest.Config = raw
	return nil
}

// Config unmarshals the manifest's config into cfg.
func (b *Bundle) Config(cfg any) error {
	if len(b.Manifest.Config) == 0 {
		return fmt.Errorf("models: %s bundle has no config", b.Manifest.Method)
	}
	if err := json.Unmarshal(b.Manifest.Config, cfg); err != nil {
		return fmt.Errorf("models: %s config: %w", b.Manifest.Method, err)
	}
	return nil
}

// SetMetric records a metric (e.g. "dev_map") in the manifest.
func (b *Bundle) SetMetric(name string, v float64) {
	if b.Manifest.Metrics == nil {
		b.Manifest.Metrics = map[string]float64{}
	}
	b.Manifest.Metrics[name] = v
}

// SetNote records a free-form note in the manifest.
func (b *Bundle) SetNote(name, v string) {
	if b.Manifest.Notes == nil {
		b.Manifest.Notes = map[string]string{}
	}
	b.Manifest.Notes[name] = v
}

// AddTensor adds a tensor; data is used, not copied. It panics if the
// shape does not match len(data), which is a programming error.
func (b *Bundle) AddTensor(name string, shape []int, data []float64) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(data) {
		panic(fmt.Sprintf("models: tensor %q: shape %v holds %d values, got %d", name, shape, n, len(data)))
	}
	b.tensors[name] = Tensor{Shape: append([]int(nil), shape...), Data: data}
}

// AddStrings adds a list of strings (a vocabulary, labels).
func (b *Bundle) AddStrings(name string, s []string) {
	b.strs[name] = s
}

// Tensor returns the named tensor, checking its shape has wantDims
// dimensions when wantDims > 0.
func (b *Bundle) Tensor(name string, wantDims int) (Tensor, error) {
	t, ok := b.tensors[name]
	if !ok {
		return Tensor{}, fmt.Errorf("models: %s bundle has no tensor %q", b.Manifest.Method, name)
	}
	if wantDims > 0 && len(t.Shape) != wantDims {
		return Tensor{}, fmt.Errorf("models: %s tensor %q has shape %v, want %d dimensions", b.Manifest.Method, name, t.Shape, wantDims)
	}
	return t, nil
}

// Strings returns the named string list.
func (b *Bundle) Strings(name string) ([]string, error) {
	s, ok := b.strs[name]
	if !ok {
		return nil, fmt.Errorf("models: %s bundle has no string list %q", b.Manifest.Method, name)
	}
	return s, nil
}

// WriteTo writes the bundle to w.
func (b *Bundle) WriteTo(w io.Writer) (int64, error) {
	m := b.Manifest
	m.FormatVersion = FormatVersion
	m.Sections = nil
	var names []string
	for n := range b.tensors {
		names = append(names, "t:"+n)
	}
	for n := range b.strs {
		names = append(names, "s:"+n)
	}
	sort.Strings(names)
	var body bytes.Buffer
	for _, key := range names {
		kind, name := key[:1], key[2:]
		start := body.Len()
		if kind == "t" {
			t := b.tensors[name]
			var buf [8]byte
			for _, v := range t.Data {
				binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
				body.Write(buf[:])
			}
			m.Sections = append(m.Sections, Section{Name: name, Kind: "f64", Shape: t.Shape, Bytes: int64(body.Len() - start)})
		} else {
			for _, s := range b.strs[name] {
				var buf [binary.MaxVarintLen64]byte
				k := binary.PutUvarint(buf[:], uint64(len(s)))
				body.Write(buf[:k])
				body.WriteString(s)
			}
			m.Sections = append(m.Sections, Section{Name: name, Kind: "strings", Shape: []int{len(b.strs[name])}, Bytes: int64(body.Len() - start)})
		}
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("models: manifest: %w", err)
	}
	h := sha256.New()
	bw := bufio.NewWriter(w)
	mw := io.MultiWriter(bw, h)
	var n int64
	var lenBuf [4]byte
	binary.LittleEndian.PutUint32(lenBuf[:], uint32(len(mj)))
	for _, part := range [][]byte{[]byte(magic), lenBuf[:], mj, body.Bytes()} {
		k, err := mw.Write(part)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	k, err := bw.Write(h.Sum(nil))
	n += int64(k)
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// Save writes the bundle to path atomically: a reader never sees a partly
// written model, and a failed save leaves any previous file intact.
func (b *Bundle) Save(path string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := b.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("models: save: %w", err)
	}
	return nil
}

// Read parses a bundle from r, verifying its checksum and structure. It
// reads the magic and the manifest first, then only as many bytes as the
// manifest's sections declare and the checksum: what is no bundle is
// refused after its first bytes, and a bundle followed by more bytes
// after one more, rather than read up to MaxBundleSize (a device or a
// large file named as a model).
func Read(r io.Reader) (*Bundle, error) {
	raw, err := readDeclared(r)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// HasMagic reports whether b, a file's first bytes, starts as a model
// bundle does.
func HasMagic(b []byte) bool { return bytes.HasPrefix(b, []byte(magic)) }

// ReadRaw reads one bundle's bytes from r as Read does, without parsing
// them: the magic, the manifest, and the sections and checksum the
// manifest declares, refusing more bytes after them. A reader that ends
// sooner, or holds no bundle, gives what it held (Parse reports it).
func ReadRaw(r io.Reader) ([]byte, error) { return readDeclared(r) }

// maxManifest bounds a bundle's manifest, JSON of its method, config and
// section list.
const maxManifest = 64 << 20

// readDeclared reads a bundle's bytes from r: the magic, the manifest,
// and the sections and checksum the manifest declares. A reader that ends
// sooner gives what it held, for Parse to report (not a bundle,
// truncated). Memory grows with what r holds, never with what a length
// field claims.
func readDeclared(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	read := func(n int64) (bool, error) {
		k, err := io.CopyN(&buf, r, n)
		if err == io.EOF || k < n && err == nil {
			return false, nil
		}
		return err == nil, err
	}
	if whole, err := read(int64(len(magic)) + 4); !whole || err != nil {
		return buf.Bytes(), err
	}
	head := buf.Bytes()
	if string(head[:len(magic)]) != magic {
		return head, nil // Parse: not a bundle
	}
	ml := int64(binary.LittleEndian.Uint32(head[len(magic):]))
	if ml > maxManifest {
		return nil, corrupt("manifest length %d, more than %d", ml, maxManifest)
	}
	if whole, err := read(ml); !whole || err != nil {
		return buf.Bytes(), err
	}
	var m struct {
		Sections []struct {
			Bytes int64 `json:"bytes"`
		} `json:"sections"`
	}
	if err := json.Unmarshal(buf.Bytes()[len(head):], &m); err != nil {
		return nil, corrupt("manifest: %v", err)
	}
	size := int64(buf.Len()) + sha256.Size
	for _, s := range m.Sections {
		if s.Bytes < 0 || s.Bytes > MaxBundleSize-size {
			return nil, corrupt("sections larger than %d bytes", MaxBundleSize)
		}
		size += s.Bytes
	}
	if whole, err := read(size - int64(buf.Len())); !whole || err != nil {
		return buf.Bytes(), err
	}
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n > 0 {
		return nil, corrupt("more bytes than the %d its manifest declares", size)
	}
	return buf.Bytes(), nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func notBundle() error {
	return fmt.Errorf("%w (it does not start with %q)", ErrNotBundle, magic)
}

// Parse decodes a bundle held in memory.
func Parse(raw []byte) (*Bundle, error) {
	if len(raw) > MaxBundleSize {
		return nil, corrupt("larger than %d bytes", MaxBundleSize)
	}
	if len(raw) < len(magic)+4+sha256.Size {
		if len(raw) >= len(magic) && string(raw[:len(magic)]) != magic {
			return nil, notBundle()
		}
		return nil, corrupt("truncated: %d bytes", len(raw))
	}
	if string(raw[:len(magic)]) != magic {
		return nil, notBundle()
	}
	payload, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return nil, corrupt("checksum mismatch (file truncated or modified)")
	}
	p := payload[len(magic):]
	ml := int(binary.LittleEndian.Uint32(p))
	p = p[4:]
	if ml > len(p) {
		return nil, corrupt("manifest length %d exceeds file", ml)
	}
	var m Manifest
	if err := json.Unmarshal(p[:ml], &m); err != nil {
		return nil, corrupt("manifest: %v", err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("models: bundle format version %d, this build reads %d", m.FormatVersion, FormatVersion)
	}
	p = p[ml:]
	b := &Bundle{Manifest: m, tensors: map[string]Tensor{}, strs: map[string][]string{}}
	for _, s := range m.Sections {
		if s.Bytes < 0 || s.Bytes > int64(len(p)) {
			return nil, corrupt("section %q: %d bytes, %d left", s.Name, s.Bytes, len(p))
		}
		data := p[:s.Bytes]
		p = p[s.Bytes:]
		_, dupT := b.tensors[s.Name]
		_, dupS := b.strs[s.Name]
		if (s.Kind == "f64" && dupT) || (s.Kind == "strings" && dupS) {
			return nil, corrupt("section %q listed twice", s.Name)
		}
		switch s.Kind {
		case "f64":
			n, zero := 1, false
			for _, d := range s.Shape {
				if d < 0 {
					return nil, corrupt("section %q: negative dimension", s.Name)
				}
				zero = zero || d == 0
			}
			for _, d := range s.Shape {
				// Stop before the product overflows: a crafted shape must
				// not wrap around to the section's size.
				if zero || n > int(s.Bytes/8)/d {
					n = 0
					break
				}
				n *= d
			}
			if int64(n)*8 != s.Bytes || (n == 0 && !zero) {
				return nil, corrupt("section %q: shape %v does not match %d bytes", s.Name, s.Shape, s.Bytes)
			}
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
			}
			b.tensors[s.Name] = Tensor{Shape: s.Shape, Data: v}
		case "strings":
			if len(s.Shape) != 1 || s.Shape[0] < 0 || s.Shape[0] > len(data) {
				return nil, corrupt("section %q: bad string count", s.Name)
			}
			out := make([]string, 0, s.Shape[0])
			for i := 0; i < s.Shape[0]; i++ {
				l, k := binary.Uvarint(data)
				if k <= 0 || l > uint64(len(data)-k) {
					return nil, corrupt("section %q: string %d overruns section", s.Name, i)
				}
				out = append(out, string(data[k:k+int(l)]))
				data = data[k+int(l):]
			}
			if len(data) != 0 {
				return nil, corrupt("section %q: %d trailing bytes", s.Name, len(data))
			}
			b.strs[s.Name] = out
		default:
			return nil, corrupt("section %q: unknown kind %q", s.Name, s.Kind)
		}
	}
	if len(p) != 0 {
		return nil, corrupt("%d bytes after the last section", len(p))
	}
	return b, nil
}

// IsBundle reports whether the file at path starts as a model bundle
// does, without reading the rest: for refusing to write a model over a
// file of another kind.
func IsBundle(path string) (bool, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		return false, err
	}
	return string(head) == magic, nil
}

// Load reads the bundle at path and checks it was made by method (when
// method is non-empty) at a model version no newer than maxVersion (when
// maxVersion > 0). Errors name the file.
func Load(path, method string, maxVersion int) (*Bundle, error) {
	return LoadWith(path, func(r io.Reader, name string) (*Bundle, error) {
		return ReadChecked(r, name, method, maxVersion)
	})
}

// ReadChecked reads a bundle from r and checks it as Load checks a file;
// name, the file r reads, is for errors. Loading from a reader lets a
// caller parse the very bytes it verified (see rerank.LoadModel).
func ReadChecked(r io.Reader, name, method string, maxVersion int) (*Bundle, error) {
	b, err := Read(r)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", name, err)
	}
	if method != "" && b.Manifest.Method != method {
		return nil, fmt.Errorf("models: %s is a %q model, want %q", name, b.Manifest.Method, method)
	}
	if maxVersion > 0 && (b.Manifest.ModelVersion < 1 || b.Manifest.ModelVersion > maxVersion) {
		return nil, fmt.Errorf("models: %s: %s model version %d, this build reads 1..%d", name, b.Manifest.Method, b.Manifest.ModelVersion, maxVersion)
	}
	return b, nil
}

// LoadAs reads the bundle at path as Load does and decodes it with decode,
// naming the method and the file in a decoding error: a model whose tensors
// disagree with its config is refused when loaded, saying which file.
func LoadAs[M any](path, method string, maxVersion int, decode func(*Bundle) (M, error)) (M, error) {
	return LoadWith(path, func(r io.Reader, name string) (M, error) {
		return ReadAs(r, name, method, maxVersion, decode)
	})
}

// ReadAs reads a bundle from r as ReadChecked does and decodes it as LoadAs
// does.
func ReadAs[M any](r io.Reader, name, method string, maxVersion int, decode func(*Bundle) (M, error)) (M, error) {
	var zero M
	b, err := ReadChecked(r, name, method, maxVersion)
	if err != nil {
		return zero, err
	}
	m, err := decode(b)
	if err != nil {
		return zero, fmt.Errorf("%s: %s: %w", method, name, err)
	}
	return m, nil
}

// LoadWith opens the file at path and reads it with read, which gets path
// as the name its errors give: a model package's Load, from its Read.
// It refuses a path that is not a regular file (a device, a FIFO, a
// directory) without reading it.
func LoadWith[M any](path string, read func(r io.Reader, name string) (M, error)) (M, error) {
	var zero M
	f, _, err := regfile.Open(path)
	if err != nil {
		return zero, fmt.Errorf("models: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

// ID returns a short stable identifier of the bundle's content: the hash of
// its serialized form. Indexes record it to refuse payloads from a
// different model.
func (b *Bundle) ID() string {
	h := sha256.New()
	if _, err := b.WriteTo(h); err != nil {
		return ""
	}
	return b.Manifest.Method + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// HashStrings returns a hash of a vocabulary (order matters).
func HashStrings(s []string) string {
	h := sha256.New()
	for _, w := range s {
		fmt.Fprintf(h, "%d:%s\n", len(w), w)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Fingerprint returns a hash of the given identifiers (query ids, document
// ids, file names): the manifest's training-data fingerprint.
func Fingerprint(parts ...string) string {
	return HashStrings(append([]string(nil), parts...))
}

// CheckVocab returns an error when the bundle's vocabulary hash is set and
// differs from want.
func (b *Bundle) CheckVocab(want string) error {
	if b.Manifest.VocabHash != "" && want != "" && b.Manifest.VocabHash != want {
		return fmt.Errorf("models: %s model vocabulary %s does not match %s", b.Manifest.Method, b.Manifest.VocabHash, want)
	}
	return nil
}

// ErrAnalyzerMismatch is wrapped by the error CheckAnalyzer returns, so a
// caller that can retrain (a training cache) can tell it from damage.
var ErrAnalyzerMismatch = errors.New("analyzer mismatch")

// CheckAnalyzer returns an error when the bundle records the analyzer its
// vocabulary came from and that is not want, the analyzer this build uses
// for the model (analyzers.ID or analyzers.WordsID). Such a model would
// load and run, but the terms this build produces are not the terms it
// learned, so its results would be silently worse: it must be retrained.
// A bundle recording no analyzer (saved before analyzers were recorded) is
// accepted, so existing model files keep loading.
func (b *Bundle) CheckAnalyzer(want string) error {
	if got := b.Manifest.Analyzer; got != "" && got != want {
		return fmt.Errorf("models: %s model: %w: its vocabulary holds terms of analyzer %s, but this build analyzes text with %s; retrain the model", b.Manifest.Method, ErrAnalyzerMismatch, got, want)
	}
	return nil
}

// Describe returns a one-line human summary of the manifest.
func (m Manifest) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s v%d", m.Method, m.ModelVersion)
	var keys []string
	for k := range m.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, " %s=%.4f", k, m.Metrics[k])
	}
	return sb.String()
}
