package commit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestOldWriterFixup_5_2e: a commit on a table whose latest manifest has no
// writer_version (Lance 0.7.5, legacy storage, physical_rows and
// num_deleted_rows left 0) writes the statistics Lance 12 computes for the
// same table: the data file's row count, the deletion file's cardinality
// and the data file's size; Lance 12 then counts the same live rows.
func TestOldWriterFixup_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, filepath.Join(corpus, "historical", "0.7.5", "with_deletions"))
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if head.Manifest.GetWriterVersion() != nil || head.Manifest.GetFragments()[0].GetPhysicalRows() != 0 {
		t.Fatal("corpus table changed: want no writer_version and physical_rows 0")
	}
	v := "x"
	res, err := Commit(ctx, st, NewUpdateConfig(head.Manifest.GetVersion(), UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: &v}}}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Manifest.GetFragments()[0]
	info, err := os.Stat(filepath.Join(dir, "data", f.GetFiles()[0].GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	if f.GetPhysicalRows() != 100 || f.GetDeletionFile().GetNumDeletedRows() != 10 || f.GetFiles()[0].GetFileSizeBytes() != uint64(info.Size()) {
		t.Fatalf("fixed statistics: physical_rows %d, num_deleted_rows %d, file_size_bytes %d (file %d bytes); want 100, 10, file size",
			f.GetPhysicalRows(), f.GetDeletionFile().GetNumDeletedRows(), f.GetFiles()[0].GetFileSizeBytes(), info.Size())
	}
	p := peerlance.ForTest(t)
	if _, n, err := p.Count(ctx, dir); err != nil || n != 90 {
		t.Fatalf("Lance 12 counts %d rows (%v), want 90", n, err)
	}
}
