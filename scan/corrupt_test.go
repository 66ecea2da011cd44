package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestScan_CorruptPageNamesFileColumnAndPage (issue 13, "Bad input": a
// corrupt page gives a clear error naming the file and the page): the
// buffers of the last page of the string column of one data file are
// overwritten; the scan fails with an error naming that file, the column
// and the page, and yields no batch of that fragment.
func TestScan_CorruptPageNamesFileColumnAndPage(t *testing.T) {
	for _, v := range []string{"2.0", "2.1", "2.2"} {
		t.Run(v, func(t *testing.T) { corruptPage(t, v) })
	}
}

func corruptPage(t *testing.T, version string) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	var recs []arrow.RecordBatch
	for b := 0; b < 3; b++ {
		bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i := 0; i < 300; i++ {
			bl.Field(0).(*array.Int64Builder).Append(int64(b*300 + i))
			bl.Field(1).(*array.StringBuilder).Append(fmt.Sprint("v", i))
		}
		recs = append(recs, bl.NewRecordBatch())
		bl.Release()
	}
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: recs}, commit.WriteOptions{Mode: commit.ModeCreate,
		DataStorageVersion: version, MaxRowsPerFile: 450}); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	if len(files) == 0 {
		t.Fatal("no data file")
	}
	path := files[0]
	bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := datafile.Open(ctx, bucket, filepath.Base(path), datafile.OpenOptions{})
	bucket.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := 1 // "s": plain int64 values stay valid whatever their bytes, string offsets do not
	page := len(f.Column(col).Pages) - 1
	pg := f.Column(col).Pages[page]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pg.Buffers {
		for i := b.Pos; i < b.Pos+b.Len; i++ {
			raw[i] = 0xff
		}
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, d, Options{Columns: []string{"s", "id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = collect(t, s, ctx)
	if err == nil {
		t.Fatal("scan of a corrupt page: no error")
	}
	msg := err.Error()
	for _, want := range []string{filepath.Base(path), fmt.Sprintf("column %d", col), fmt.Sprintf("page %d", page)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	t.Log(msg)
}
