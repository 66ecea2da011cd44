package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir returns the shared Lance corpus (../shared/lance-corpus relative
// to the repository root) or skips the test loudly when it is missing.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "lance-corpus")
	if _, err := os.Stat(filepath.Join(c, "README.md")); err != nil {
		t.Skipf("!!! SHARED LANCE CORPUS NOT FOUND at %s: corpus tests skipped (CI always has it) !!!", c)
	}
	return c
}

// corpusManifests returns every manifest-container file in the corpus:
// _versions/*.manifest (any depth, incl. branch trees) and _latest.manifest.
func corpusManifests(t testing.TB) []string {
	t.Helper()
	root := corpusDir(t)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		if name == LegacyLatestName {
			out = append(out, p)
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == VersionsDir && strings.HasSuffix(name, ".manifest") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no manifests found in the corpus")
	}
	return out
}
