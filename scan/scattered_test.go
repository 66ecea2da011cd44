package scan

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestScan_ScatteredRowsUseTheFilterKernel: a predicate selecting rows
// scattered through every batch (more than manyRuns runs) returns exactly
// the expected rows, values and row addresses, for a top-level column, a
// struct and a nested field (the filter-kernel path of emit).
func TestScan_ScatteredRowsUseTheFilterKernel(t *testing.T) {
	d := smallTable(t)
	ctx := context.Background()
	s, err := New(ctx, d, Options{Columns: []string{"id", "p", "p.x"}, Filter: "p.x IN (1, 3, 5) OR p.x IS NULL", WithRowAddr: true, BatchSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := collect(t, s, ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := int64(0); i < 1000; i++ {
		if i%10 == 0 || i%7 == 1 || i%7 == 3 || i%7 == 5 {
			want = append(want, i)
		}
	}
	k := 0
	for _, rec := range recs {
		ids := rec.Column(0).(*array.Int64)
		st := rec.Column(1).(*array.Struct)
		px := rec.Column(2).(*array.Int64)
		addr := rec.Column(3).(*array.Uint64)
		for i := 0; i < int(rec.NumRows()); i++ {
			if k >= len(want) || ids.Value(i) != want[k] {
				t.Fatalf("row %d: id %d, want %v", k, ids.Value(i), want[min(k, len(want)-1)])
			}
			id := want[k]
			if id%10 == 0 {
				if !px.IsNull(i) || !st.Field(0).IsNull(i) {
					t.Errorf("id %d: p.x not null", id)
				}
			} else if px.Value(i) != id%7 || st.Field(0).(*array.Int64).Value(i) != id%7 {
				t.Errorf("id %d: p.x %d", id, px.Value(i))
			}
			if a := addr.Value(i); a&0xffffffff != uint64(id%250) || a>>32 != uint64(id/250) {
				t.Errorf("id %d: row address %x", id, a)
			}
			k++
		}
		rec.Release()
	}
	if k != len(want) {
		t.Fatalf("%d rows, want %d", k, len(want))
	}
}
