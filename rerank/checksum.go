package rerank

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// again, and the server keeps the pipeline it has. The files are hashed
// after every model is loaded: the publisher only ever replaces old files
// by new ones, so a file that still holds the listed content after the
// loads held it during them too.
//
// The digests are those of the whole files, as sha256sum prints them.

// FileSHA256 returns the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
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

// RecordChecksums lists the SHA-256 of each file in c.Checksums. Paths
// are relative to the pipeline file's folder, which is dir when the
// files are read.
func (c *Config) RecordChecksums(dir string, paths ...string) error {
	for _, p := range paths {
		sum, err := FileSHA256(Resolve(dir, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("pipeline: checksum: %w", err)
		}
		if c.Checksums == nil {
			c.Checksums = map[string]string{}
		}
		c.Checksums[filepath.ToSlash(p)] = sum
	}
	return nil
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
// its digest, in name order so the first error is always the same.
func (c *Config) verifyChecksums(dir string) error {
	paths := make([]string, 0, len(c.Checksums))
	for p := range c.Checksums {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		path := Resolve(dir, filepath.FromSlash(p))
		got, err := FileSHA256(path)
		if err != nil {
			return fmt.Errorf("pipeline: %s is listed under sha256 but cannot be read: %w", path, err)
		}
		if want := c.Checksums[p]; !strings.EqualFold(got, want) {
			return fmt.Errorf("pipeline: %s is not the file the pipeline was written with (sha256 %.12s…, listed %.12s…): a recipe publishing into that folder replaces the models before the pipeline file, so load it again once the recipe has finished; if you replaced the file on purpose, remove its line under sha256", path, got, want)
		}
	}
	return nil
}
