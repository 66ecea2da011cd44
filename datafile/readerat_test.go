package datafile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/fileblob"
)

// TestOpenReaderAt_SameRowsSameRequests (OpenOptions.ReaderAt): a data
// file read through an *os.File (one pread per range) decodes to the same
// rows as through its bucket, with the same requests and bytes counted;
// ReaderAt without Size is refused.
func TestOpenReaderAt_SameRowsSameRequests(t *testing.T) {
	dir := needCorpus(t)
	fs, _ := filepath.Glob(filepath.Join(dir, "lance12", "storage_2_1.lance", "data", "*.lance"))
	if len(fs) == 0 {
		t.Fatal("corpus table storage_2_1 has no data file")
	}
	path := fs[0]
	ctx := context.Background()
	bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	osf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf.Close()
	fi, _ := osf.Stat()
	if _, err := Open(ctx, nil, filepath.Base(path), OpenOptions{ReaderAt: osf}); err == nil {
		t.Error("ReaderAt without Size accepted")
	}
	var bs, rs IOStats
	viaBucket, err := Open(ctx, bucket, filepath.Base(path), OpenOptions{Stats: &bs, TailSize: 64, LazyColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	viaFile, err := Open(ctx, nil, filepath.Base(path), OpenOptions{Stats: &rs, TailSize: 64, LazyColumns: true, ReaderAt: osf, Size: fi.Size()})
	if err != nil {
		t.Fatal(err)
	}
	top := viaBucket.Schema().TopLevel()
	a, err := viaBucket.ReadRows(ctx, ReadRequest{Fields: top})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := viaFile.ReadRows(ctx, ReadRequest{Fields: top})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if a.NumRows() == 0 || a.NumRows() != b.NumRows() {
		t.Fatalf("%d rows via the bucket, %d via the file", a.NumRows(), b.NumRows())
	}
	for i := 0; i < int(a.NumCols()); i++ {
		if fmt.Sprint(a.Column(i)) != fmt.Sprint(b.Column(i)) { // NaNs print alike
			t.Errorf("column %d (%s) differs", i, a.Schema().Field(i).Type)
		}
	}
	if bs.Requests.Load() != rs.Requests.Load() || bs.Bytes.Load() != rs.Bytes.Load() {
		t.Errorf("bucket: %d requests, %d bytes; file: %d requests, %d bytes", bs.Requests.Load(), bs.Bytes.Load(), rs.Requests.Load(), rs.Bytes.Load())
	}
}
