package scan

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestScan_PrunedFileReadsOnlyTablesSchemaAndItsSeed (issue 13, bytes
// read): in a table with seeds on every column, a fragment pruned by the
// seed of the filtered column costs only its footer, offset tables,
// column metadata and schema (the metadata after the first global
// buffer, read in one request sized from the previous file) plus that
// one seed: not the other columns' seeds, not the 16 KiB tail of the
// past; the whole scan reads less than the kept file plus that bound.
func TestScan_PrunedFileReadsOnlyTablesSchemaAndItsSeed(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.PrimitiveTypes.Float64}, {Name: "c", Type: arrow.BinaryTypes.String}}, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	for i := 0; i < 8000; i++ {
		bl.Field(0).(*array.Int64Builder).Append(int64(i))
		bl.Field(1).(*array.Int64Builder).Append(int64(i * 7 % 1000))
		bl.Field(2).(*array.Float64Builder).Append(float64(i) / 3)
		bl.Field(3).(*array.StringBuilder).Append("row")
	}
	rec := bl.NewRecordBatch()
	bl.Release()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate,
		MaxRowsPerFile: 1000, SeedAllColumns: true, RowsPerZone: 250, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	bucket, err := fileblob.OpenBucket(filepath.Join(dir, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	var bound, largest, allMeta int64
	for _, p := range files {
		f, err := datafile.Open(ctx, bucket, filepath.Base(p), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
		if err != nil || len(infos) != 4 {
			t.Fatalf("%s: %d seeds, %v", p, len(infos), err)
		}
		fi, _ := os.Stat(p)
		meta := fi.Size() - int64(f.GlobalBuffers()[0].Pos)
		for _, si := range infos {
			if si.Column == "id" {
				bound += meta + int64(si.Buffer.Len)
			}
			if int64(si.Buffer.Pos) < fi.Size()-meta {
				meta = fi.Size() - int64(si.Buffer.Pos)
			}
		}
		allMeta += meta
		largest = max(largest, fi.Size())
	}
	bound += largest + openTailSize
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := New(ctx, d, Options{Filter: "id >= 4100 AND id < 4120"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := collect(t, s, ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, r := range out {
		n += r.NumRows()
		r.Release()
	}
	_, got := s.BytesRead()
	t.Logf("%d rows, %d bytes read; bound %d; metadata with every seed %d", n, got, bound, allMeta)
	if n != 20 || got > bound || got >= allMeta {
		t.Errorf("%d rows (want 20), %d bytes read, more than the bound %d or than every file's metadata with all seeds (%d)", n, got, bound, allMeta)
	}
}
