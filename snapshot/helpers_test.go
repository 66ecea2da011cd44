package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// corpusRoot is the shared corpus of real Lance datasets, relative to this
// package directory (repo root ../shared/lance-corpus).
const corpusRoot = "../../shared/lance-corpus"

// corpusPath returns the path of a corpus dataset, skipping loudly when the
// corpus is missing (CI always has it).
func corpusPath(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(corpusRoot, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("!!! LANCE CORPUS NOT FOUND at %s (%v): corpus tests did not run !!!", p, err)
	}
	return p
}

// copyCorpus copies a corpus dataset into a fresh writable temp directory
// and returns the copy's path.
func copyCorpus(t testing.TB, rel string) string {
	t.Helper()
	src := corpusPath(t, rel)
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	copyTree(t, src, dst)
	return dst
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if de.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeState maps every file under dir (relative, slash-separated) to the
// sha256 of its content.
func treeState(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if de.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStates(before, after map[string]string) []string {
	var diffs []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if w != v {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// manifestBytes returns every manifest file under dir (any _versions/
// directory, branches included) with its bytes.
func manifestBytes(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() || filepath.Base(filepath.Dir(p)) != manifest.VersionsDir || !strings.HasSuffix(p, ".manifest") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertHistoryUnchanged checks R58: every manifest that existed before is
// byte-identical afterwards.
func assertHistoryUnchanged(t testing.TB, before, after map[string][]byte) {
	t.Helper()
	for k, v := range before {
		w, ok := after[k]
		if !ok {
			t.Errorf("R58: historical manifest %s disappeared", k)
		} else if !bytes.Equal(v, w) {
			t.Errorf("R58: historical manifest %s was rewritten", k)
		}
	}
}

// readManifestFile decodes the manifest file at path.
func readManifestFile(t testing.TB, path string) *manifest.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := manifest.Decode(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// writeVersion writes m (with idx/txn) as version v of the dataset at root
// (V2 name), the way a foreign writer would; used to craft manifests with
// particular flags.
func writeVersion(t testing.TB, root string, m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) {
	t.Helper()
	b, err := manifest.Encode(m, idx, txn)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(manifest.ManifestPath(manifest.V2, m.GetVersion())))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openDS(t testing.TB, uri string) *Dataset {
	t.Helper()
	d, err := OpenDataset(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
