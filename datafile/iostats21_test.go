package datafile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/fileblob"
)

// TestReadRows21_ReadsOnlyTheChunksOfTheRanges (lance-file-format-2.1.md
// §4.2, §4.6): a pruned read of a few rows of a Lance 12 2.2 file with
// multi-chunk mini-block pages reads far fewer bytes (IOStats) than the
// whole read, and returns the same values as the slice of the whole read.
func TestReadRows21_ReadsOnlyTheChunksOfTheRanges(t *testing.T) {
	dir := needCorpus(t)
	// deletions.lance: fragments of 20 000 rows (many chunks per page).
	files, _ := filepath.Glob(filepath.Join(dir, "lance12/deletions.lance/data/*.lance"))
	var path string
	var size int64
	for _, p := range files {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			path, size = p, st.Size()
		}
	}
	if path == "" {
		t.Fatal("no deletions.lance data file")
	}
	bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	read := func(req ReadRequest) (int64, *File) {
		var st IOStats
		f, err := Open(ctx, bucket, filepath.Base(path), OpenOptions{Stats: &st, TailSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		opened := st.Bytes.Load()
		rec, err := f.ReadRows(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
		return st.Bytes.Load() - opened, f
	}
	whole, f := read(ReadRequest{})
	if f.Version() == V2_0 || f.NumRows() < 10000 {
		t.Fatalf("%s: %s, %d rows: not the multi-chunk 2.2 file this test needs", path, f.Version(), f.NumRows())
	}
	ranges := []RowRange{{5000, 5010}, {15000, 15001}}
	part, _ := read(ReadRequest{Ranges: ranges})
	t.Logf("%s: whole read %d bytes, rows %v %d bytes", filepath.Base(path), whole, ranges, part)
	if part*5 > whole {
		t.Errorf("pruned read took %d bytes, the whole read %d: chunks outside the ranges were read", part, whole)
	}
	all, err := f.ReadRows(ctx, ReadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Release()
	checkPiecewiseRanges(t, path, f, all, ranges)
}
