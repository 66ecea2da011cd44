package scan

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// TestScan_IndexPrunedFragmentsAreNotOpened (issue 13, bytes read): with
// a ZoneMap index on the filtered column, fragments the index prunes are
// never opened — the scan makes far fewer requests than the same scan
// deciding from the seeds inside every data file (NoIndex), and returns
// the same rows.
func TestScan_IndexPrunedFragmentsAreNotOpened(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	for i := 0; i < 4000; i++ {
		bl.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := bl.NewRecordBatch()
	bl.Release()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate,
		MaxRowsPerFile: 200, SeedAllColumns: true, RowsPerZone: 100, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := zonemap.Create(ctx, st, zonemap.CreateOptions{Column: "id", RowsPerZone: 100}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	run := func(noIndex bool) (rows, requests int64) {
		s, err := New(ctx, d, Options{Filter: "id >= 1010 AND id < 1030", NoIndex: noIndex})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		recs, err := collect(t, s, ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			rows += r.NumRows()
			r.Release()
		}
		requests, _ = s.BytesRead()
		return rows, requests
	}
	ri, qi := run(false)
	rs, qs := run(true)
	t.Logf("index: %d rows, %d requests; seeds only: %d rows, %d requests", ri, qi, rs, qs)
	if ri != 20 || rs != 20 {
		t.Fatalf("rows: %d with the index, %d without, want 20", ri, rs)
	}
	if qi*3 > qs {
		t.Errorf("with the index %d requests, without %d: pruned fragments were opened", qi, qs)
	}
}
