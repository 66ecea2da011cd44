package scan

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestScan_DivisionByZeroInPrunedZoneFailsAsLance12 (issue 13, session
// 23): a zero divisor in a zone the seeds prune. Lance 12 evaluates every
// 1,024-row batch of a fragment (AND short-circuits decided per batch),
// so "id >= 16 AND id / z > 1" fails there (284 of 300 rows pass the
// left side) although "id >= 16" prunes the zone of row 0; the scan must
// fail too. "id >= 250 AND ..." (50 of 300, at most a fifth: DataFusion
// evaluates the division only where the left side holds) succeeds in
// both, and a predicate without a failing division still prunes.
func TestScan_DivisionByZeroInPrunedZoneFailsAsLance12(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "z", Type: arrow.PrimitiveTypes.Int32}}, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	for i := 0; i < 300; i++ {
		bl.Field(0).(*array.Int64Builder).Append(int64(i))
		z := int32(1)
		if i == 0 {
			z = 0
		}
		bl.Field(1).(*array.Int32Builder).Append(z)
	}
	rec := bl.NewRecordBatch()
	bl.Release()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate,
		SeedAllColumns: true, RowsPerZone: 16, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	run := func(where string) (rows int64, kept uint64, err error) {
		s, err := New(ctx, d, Options{Filter: where, BatchSize: 37})
		if err != nil {
			return 0, 0, err
		}
		defer s.Close()
		plan, err := s.Explain(ctx)
		if err != nil {
			return 0, 0, err
		}
		kept = plan.RowsKept
		recs, err := collect(t, s, ctx)
		for _, r := range recs {
			if r.NumRows() > 37 {
				t.Errorf("%q: a batch of %d rows, BatchSize 37", where, r.NumRows())
			}
			rows += r.NumRows()
		}
		return rows, kept, err
	}
	if _, _, err := run("id >= 16 AND id / z > 1"); !errors.Is(err, filter.ErrArithmetic) {
		t.Errorf("id >= 16 AND id / z > 1: %v, want ErrArithmetic (Lance 12 fails)", err)
	}
	if n, kept, err := run("id >= 250 AND id / z > 1"); err != nil || n != 50 || kept != 300 {
		t.Errorf("id >= 250 AND id / z > 1: %d rows (%d kept), %v; want 50 rows, every row kept", n, kept, err)
	}
	if n, kept, err := run("id >= 250 AND id / 2 > 1"); err != nil || n != 50 || kept >= 300 {
		t.Errorf("id >= 250 AND id / 2 > 1: %d rows (%d kept), %v; want 50 rows and pruning", n, kept, err)
	}
}
