package scan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestScan_LateMaterialization (issue 13, bytes read): the columns the
// filter does not use are read only for the rows that pass — a kept zone
// of 4,000 rows with 10 matches costs its id chunks and the payload
// chunks of those 10 rows, not the zone's 800 KB of payload — and the
// rows are exact, whether the matches form few runs (cut to the matching
// rows) or many (the whole chunk read, the filter's answer reused), with
// and without pruning.
func TestScan_LateMaterialization(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "pay", Type: arrow.BinaryTypes.String}}, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	pay := func(i int) string { return fmt.Sprintf("%06d", i) + strings.Repeat(string(rune('a'+i%26)), 194) }
	const n = 8000
	for i := 0; i < n; i++ {
		bl.Field(0).(*array.Int64Builder).Append(int64(i))
		bl.Field(1).(*array.StringBuilder).Append(pay(i))
	}
	rec := bl.NewRecordBatch()
	bl.Release()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate,
		SeedAllColumns: true, RowsPerZone: 4000, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		where    string
		want     func(i int) bool
		maxBytes int64 // 0: no bound
	}{
		{"id >= 100 AND id < 110", func(i int) bool { return i >= 100 && i < 110 }, 100 << 10},
		{"id >= 3990 AND id < 4003", func(i int) bool { return i >= 3990 && i < 4003 }, 0},
		{"id % 7 = 0 AND id < 3000", func(i int) bool { return i%7 == 0 && i < 3000 }, 0},
		{"id < 0", func(i int) bool { return false }, 0},
	} {
		for _, noPrune := range []bool{false, true} {
			s, err := New(ctx, d, Options{Filter: c.where, NoPrune: noPrune, WithRowAddr: true, BatchSize: 1000})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := collect(t, s, ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range recs {
				ids, ps, addr := r.Column(0).(*array.Int64), r.Column(1).(*array.String), r.Column(2).(*array.Uint64)
				for i := 0; i < int(r.NumRows()); i++ {
					id := int(ids.Value(i))
					if ps.Value(i) != pay(id) || addr.Value(i) != uint64(id) {
						t.Errorf("%q: row %d: pay %.8q…, address %d", c.where, id, ps.Value(i), addr.Value(i))
					}
					got = append(got, id)
				}
				r.Release()
			}
			var want []int
			for i := 0; i < n; i++ {
				if c.want(i) {
					want = append(want, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q (no prune %v): rows %v, want %v", c.where, noPrune, got, want)
			}
			_, b := s.BytesRead()
			if c.maxBytes > 0 && !noPrune && b > c.maxBytes {
				t.Errorf("%q: %d bytes read, more than %d (the payload of non-matching rows was read)", c.where, b, c.maxBytes)
			}
			s.Close()
		}
	}
}
