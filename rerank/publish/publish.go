// Package publish writes the SHA-256 digests a pipeline file lists under
// sha256 (rerank.Config.Checksums), so that the pipeline and its models
// load as one set or not at all: RecordChecksums when a pipeline is
// written beside its models, UpdateChecksum when a model it lists is
// retrained in place. Package rerank checks them when it builds the
// pipeline.
package publish

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/semrank/semrank/internal/atomicfile"
	"github.com/semrank/semrank/internal/regfile"
	"github.com/semrank/semrank/rerank"
)

// RecordChecksums lists the SHA-256 of each file in c.Checksums. Paths
// are relative to the pipeline file's folder, which is dir when the
// files are read.
func RecordChecksums(c *rerank.Config, dir string, paths ...string) error {
	for _, p := range paths {
		sum, err := rerank.FileSHA256(rerank.Resolve(dir, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("pipeline: checksum: %w", err)
		}
		if c.Checksums == nil {
			c.Checksums = map[string]string{}
		}
		c.Checksums[rerank.ChecksumKey(p)] = sum
	}
	return nil
}

// UpdateChecksum sets the listed SHA-256 of file, a file the pipeline at
// pipelinePath lists under sha256, to the file's content now, for a
// model retrained in place. The rest of the pipeline file, comments
// included, is kept. It reports whether the file is listed; a pipeline
// that does not list it is left as it is.
func UpdateChecksum(pipelinePath, file string) (bool, error) {
	raw, err := regfile.ReadFile(pipelinePath, rerank.MaxConfigSize)
	if err != nil {
		return false, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return false, fmt.Errorf("pipeline %s: %w", pipelinePath, err)
	}
	dir, err := filepath.Abs(filepath.Dir(pipelinePath))
	if err != nil {
		return false, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return false, nil // on another volume: not listed
	}
	entry := listedChecksum(&doc, rerank.ChecksumKey(rel))
	if entry == nil {
		return false, nil
	}
	sum, err := rerank.FileSHA256(file)
	if err != nil {
		return false, err
	}
	// A string, whatever the old value read as (a digest of digits
	// alone reads as a number).
	entry.Value, entry.Tag, entry.Style = sum, "!!str", 0
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(indentOf(raw))
	if err := enc.Encode(&doc); err != nil {
		return false, err
	}
	if err := enc.Close(); err != nil {
		return false, err
	}
	return true, atomicfile.Write(pipelinePath, func(w io.Writer) error {
		_, err := w.Write(out.Bytes())
		return err
	})
}

// indentOf returns the indentation under the first top-level key of a
// YAML document that opens a block (2 to 8 spaces), or 4, yaml.v3's, so
// that rewriting a pipeline file keeps its look.
func indentOf(raw []byte) int {
	lines := bytes.Split(raw, []byte("\n"))
	for i := 1; i < len(lines); i++ {
		prev := bytes.TrimRight(lines[i-1], " \r")
		if len(prev) == 0 || prev[0] == ' ' || prev[0] == '#' || prev[len(prev)-1] != ':' {
			continue
		}
		if n := len(lines[i]) - len(bytes.TrimLeft(lines[i], " ")); n > 0 {
			return min(max(n, 2), 8)
		}
	}
	return 4
}

// listedChecksum returns the value node of key under the document's
// sha256 mapping, or nil.
func listedChecksum(doc *yaml.Node, key string) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		if top[i].Value != "sha256" || top[i+1].Kind != yaml.MappingNode {
			continue
		}
		sums := top[i+1].Content
		for j := 0; j+1 < len(sums); j += 2 {
			if rerank.ChecksumKey(sums[j].Value) == key {
				return sums[j+1]
			}
		}
	}
	return nil
}
