package rerank

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/semrank/semrank/internal/regfile"
	"github.com/semrank/semrank/models"
)

// Model checksums.
//
// A pipeline file may list the SHA-256 of the files it was written with
// (Config.Checksums, the sha256 section). Building the pipeline then
// refuses a listed file whose content differs, so that a pipeline file
// and its models are loaded as one set or not at all.
//
// The case this is for: a recipe publishes a pipeline into a folder by
// renaming its new models into place first and its pipeline file last. A
// server reloading the old pipeline file in between would load some new
// models under it, and score with a fusion fitted to other models,
// silently. With checksums that load fails with an error saying to try
// again, and the server keeps the pipeline it has.
//
// Build reads every listed file once, before any model loads, and checks
// its digest; the stage factories and the fusion then parse those very
// bytes (LoadModel), not the file again, so a file changed during the
// load, even changed and changed back (a blue/green flip back and forth),
// cannot slip in. The listed files are held in memory together until
// Build returns, beside the models parsed from them. A factory matches a
// listed file by its absolute path, however either names it. A listed
// file that no factory reads through LoadModel (a factory of one's own
// that opens its model by path) is hashed again after the loads, which
// catches a publisher that only moves forward.
//
// The digests are those of the whole files, as sha256sum prints them.

// ErrModelChanged is wrapped by Build's error for a listed file whose
// content is not the listed one.
var ErrModelChanged = errors.New("a model changed since the pipeline file was written")

// FileSHA256 returns the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkChecksums refuses listed digests that are not SHA-256 digests, so
// a damaged line fails when the pipeline is read, naming the file.
func (c *Config) checkChecksums() error {
	for p, sum := range c.Checksums {
		if p == "" {
			return fmt.Errorf("sha256: an entry has no file name")
		}
		if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("sha256 of %s: %q is not a SHA-256 digest (64 hex digits)", p, sum)
		}
	}
	return nil
}

// verifyChecksums compares each listed file, resolved against dir, with
// its digest, in name order so the first error is always the same; files
// a factory read through LoadModel from v are skipped: what was parsed is
// what v verified.
func (c *Config) verifyChecksums(dir string, v *verifiedFiles) error {
	for _, p := range slices.Sorted(maps.Keys(c.Checksums)) {
		file := Resolve(dir, filepath.FromSlash(p))
		if v != nil {
			v.mu.Lock()
			read := v.read[verifiedKey(file)]
			v.mu.Unlock()
			if read {
				continue
			}
		}
		got, err := FileSHA256(file)
		if err != nil {
			return unreadable(file, err)
		}
		if err := c.compare(p, file, got); err != nil {
			return err
		}
	}
	return nil
}

// verifiedFiles is the content of a pipeline's listed files, read and
// checked against their digests before the models load.
type verifiedFiles struct {
	mu      sync.Mutex
	content map[string][]byte // by verifiedKey of the resolved path; nil once Build returns
	read    map[string]bool   // files a factory read through LoadModel
}

// verifiedKey is the key of the file at p in verifiedFiles: its absolute
// path, so that a factory naming a listed file otherwise than its sha256
// line (an absolute model path under a relative pipeline folder, or the
// other way round) still parses the checked bytes. Symbolic links are
// not followed: the publisher renames files, it does not repoint links.
func verifiedKey(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// release drops the content once Build has returned: a factory may keep
// its Env (in a stage, in a goroutine), and the files (word vectors run
// to gigabytes) must not live as long as the pipeline. LoadModel then
// reads from disk, as it does outside Build.
func (v *verifiedFiles) release() {
	v.mu.Lock()
	v.content = nil
	v.mu.Unlock()
}

// readVerified reads every file c lists, resolved against dir, and checks
// it against its digest, in name order so the first error is always the
// same.
func (c *Config) readVerified(dir string) (*verifiedFiles, error) {
	v := &verifiedFiles{content: map[string][]byte{}, read: map[string]bool{}}
	for _, p := range slices.Sorted(maps.Keys(c.Checksums)) {
		file := Resolve(dir, filepath.FromSlash(p))
		raw, err := readListed(file)
		if err != nil {
			return nil, unreadable(file, err)
		}
		sum := sha256.Sum256(raw)
		if err := c.compare(p, file, hex.EncodeToString(sum[:])); err != nil {
			return nil, err
		}
		v.content[verifiedKey(file)] = raw
	}
	return v, nil
}

// readListed reads a file a pipeline lists under sha256, whole: only a
// regular file, of a model bundle only the bytes its manifest declares
// (models.ReadRaw), and of anything else (word vectors, text but for
// word2vec's binary vectors) nothing that starts with a NUL byte. So a
// device, a FIFO, or a file of zeros gigabytes long, is refused before
// it is read into memory, not after.
func readListed(file string) ([]byte, error) {
	f, size, err := regfile.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(4096)
	if models.HasMagic(head) {
		return models.ReadRaw(br)
	}
	if len(head) > 0 && head[0] == 0 {
		return nil, errors.New("starts with a NUL byte: neither a semrank model nor word vectors")
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + 1)
	if _, err := buf.ReadFrom(br); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// compare checks got, the digest of file (listed as p), against the
// listed one.
func (c *Config) compare(p, file, got string) error {
	if want := c.Checksums[p]; !strings.EqualFold(got, want) {
		return &changedError{file: file, got: got, want: want}
	}
	return nil
}

// unreadable is the error for a listed file that cannot be read.
func unreadable(file string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		// Removed since the pipeline file was read: a recipe
		// publishing a pipeline that no longer uses it.
		return fmt.Errorf("pipeline: %s is listed under sha256 but is gone: %w", file, ErrModelChanged)
	}
	return fmt.Errorf("pipeline: %s is listed under sha256 but cannot be read: %w", file, err)
}

// LoadModel reads the model file at path, as StageSpec.ModelFile resolved
// it, with read (a model package's Read: tweak.Read, lsa.Read, …), which
// gets path as the name its errors give. Stage factories load their
// models through it: while Build loads a pipeline whose file lists path
// under sha256, read parses the content Build checked against the listed
// digest, not the file again (see Config.Checksums); other files are read
// from disk.
func LoadModel[M any](env Env, path string, read func(r io.Reader, name string) (M, error)) (M, error) {
	if v := env.verified; v != nil {
		key := verifiedKey(path)
		v.mu.Lock()
		raw, ok := v.content[key]
		if ok {
			v.read[key] = true
		}
		v.mu.Unlock()
		if ok {
			return read(bytes.NewReader(raw), path)
		}
	}
	return models.LoadWith(path, read)
}

// ChecksumKey is the name a file at p, relative to the pipeline file's
// folder, is listed under in Config.Checksums: slash-separated and clean.
func ChecksumKey(p string) string {
	return path.Clean(filepath.ToSlash(p))
}

// changedError reports a listed file whose content differs; it wraps
// ErrModelChanged.
type changedError struct{ file, got, want string }

func (e *changedError) Error() string {
	return fmt.Sprintf("pipeline: %s is not the file the pipeline was written with (sha256 %.12s…, listed %.12s…): a recipe publishing into that folder replaces the models before the pipeline file, so load it again once the recipe has finished (should the recipe have failed while publishing, train again); if you retrained or replaced the file on purpose, put its new sha256 (sha256sum prints it) on its line under sha256, or remove the line", e.file, e.got, e.want)
}

func (e *changedError) Unwrap() error { return ErrModelChanged }
