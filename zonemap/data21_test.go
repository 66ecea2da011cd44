package zonemap

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

// copyCorpus copies a Lance 12 corpus dataset into a writable temp dir.
func copyCorpus(t *testing.T, rel string) string {
	t.Helper()
	src := filepath.Join("..", "..", "shared", "lance-corpus", rel)
	if _, err := os.Stat(src); err != nil {
		t.Skipf("!!! LANCE CORPUS NOT FOUND at %s (%v): test SKIPPED; CI always has it !!!", src, err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, r)
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
	return dst
}

// TestCreateFromData_Lance12Storage21And22: an index created from data on
// tables Lance 12 wrote at storage 2.1, 2.2 (default), 2.3 and legacy 0.1 reads the
// column through the 2.1+ page decoders (datafile) and zones every row.
func TestCreateFromData_Lance12Storage21And22(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ rel, col string }{
		{"lance12/storage_2_1.lance", "i64"},
		{"lance12/storage_2_1.lance", "utf8"},
		{"lance12/all_types.lance", "f64"},
		{"lance12/deletions.lance", "id"},
		{"lance12/storage_2_3.lance", "i32"},
		// legacy (0.1) files are read with the version's schema
		// (datafile.OpenOptions.LegacyFields).
		{"lance12/storage_legacy.lance", "i32"},
		{"lance12/storage_legacy.lance", "utf8"},
	} {
		t.Run(c.rel+"/"+c.col, func(t *testing.T) {
			dir := copyCorpus(t, c.rel)
			st, err := store.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			r, err := Create(ctx, st, CreateOptions{Column: c.col, RowsPerZone: 4, NoSeeds: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Fragments) == 0 {
				t.Fatal("no fragment indexed")
			}
			for _, fr := range r.Fragments {
				if fr.Source != FromData || fr.Zones == 0 || uint64(fr.Zones) != (fr.Rows+3)/4 {
					t.Errorf("fragment %+v: want zones from data covering every row", fr)
				}
			}
			segs, err := Inspect(ctx, st, latest(t, st), true)
			if err != nil || len(segs) != 1 || segs[0].Err != nil || segs[0].Zones == 0 {
				t.Fatalf("inspect %+v %v", segs, err)
			}
		})
	}
}
