package recipe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/semrank/semrank/rerank"
)

// TestRemoveUnpublished checks that a self-trained run removes the model
// files its dropped stages wrote, keeps those a kept stage shares, and
// never removes a file outside its staging directory: the pre-trained
// vectors a dropped wmd stage started from, or a model a stage was given.
// Staging is named relative to the working directory, as under a
// relative --out, and absolute.
func TestRemoveUnpublished(t *testing.T) {
	for _, relative := range []bool{true, false} {
		t.Run(map[bool]string{true: "relative", false: "absolute"}[relative], func(t *testing.T) {
			t.Chdir(t.TempDir())
			wd, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			staging := filepath.Join("out", ".fit-1")
			if !relative {
				staging = filepath.Join(wd, staging)
			}
			in := func(name string) string { return filepath.Join(staging, "models", name) }
			glove, given := filepath.Join(wd, "glove.txt"), "given.model"
			files := []string{in("wmd.embed"), in("shared.embed"), in("tweak.model"), glove, given}
			for _, f := range files {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			kept := []rerank.StageSpec{{Type: "ssg", Model: in("shared.embed")}}
			dropped := []rerank.StageSpec{
				{Type: "wmd", Model: in("wmd.embed"), Options: map[string]any{"embed_init": glove}},
				{Type: "wmd", Name: "other", Model: in("shared.embed")},
				{Type: "tweak", Model: in("tweak.model")},
				{Type: "lsa", Model: given},
			}
			if err := removeUnpublished(staging, kept, dropped); err != nil {
				t.Fatal(err)
			}
			removed := map[string]bool{in("wmd.embed"): true, in("tweak.model"): true}
			for _, f := range files {
				_, err := os.Stat(f)
				if gone := os.IsNotExist(err); gone != removed[f] {
					t.Errorf("%s: removed %v, want %v", f, gone, removed[f])
				}
			}
		})
	}
}

// TestUnder checks which paths count as inside a directory.
func TestUnder(t *testing.T) {
	tests := []struct {
		dir, path string
		want      bool
	}{
		{"out", "out", true},
		{"out", "out/models/a", true},
		{"out/", "out/./models/../a", true},
		{"out", "outside/a", false},
		{"out", "out/../a", false},
		{"out", "..", false},
		{"out/.fit-1", "out/models/a", false},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
	}
	for _, tc := range tests {
		if got := under(tc.dir, tc.path); got != tc.want {
			t.Errorf("under(%q, %q) = %v, want %v", tc.dir, tc.path, got, tc.want)
		}
	}
}
