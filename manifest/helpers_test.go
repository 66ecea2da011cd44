package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// corpusDir returns the shared Lance corpus (peerlance.CorpusDir:
// $LANCEKEEPER_CORPUS, else ../shared/lance-corpus relative to the
// repository root) or skips the test loudly when it is missing.
func corpusDir(t testing.TB) string {
	t.Helper()
	c, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("!!! SHARED LANCE CORPUS NOT FOUND: corpus tests skipped (CI always has it): %v !!!", err)
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
