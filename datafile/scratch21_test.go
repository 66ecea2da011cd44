package datafile

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSpec21_4_ReusedChunkBufferLeavesEarlierReadsIntact: a File reuses
// the mini-block chunk buffer of a finished ReadRows for the next one
// (compressed and plain pages, §4). Arrays returned earlier must not alias
// it: after later and concurrent reads of other row ranges of the same
// file, every earlier result still holds the written values.
func TestSpec21_4_ReusedChunkBufferLeavesEarlierReadsIntact(t *testing.T) {
	const n = 60_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	r := rand.New(rand.NewPCG(7, 11))
	for k := 0; k < n; k++ {
		if r.IntN(13) == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(r.Uint64() >> r.IntN(60)))
		}
		b.Field(1).(*array.StringBuilder).Append("v" + string(rune('a'+r.IntN(26))))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	ctx := context.Background()
	for _, opts := range []WriterOptions{{Version: V2_2, NoCompression: true}, {Version: V2_2}} {
		f, _ := write21(t, rec, opts)
		ranges := []RowRange{{Start: 0, End: 9000}, {Start: 9000, End: 30_001}, {Start: 30_001, End: n}, {Start: 17, End: 17_017}}
		got := make([]arrow.RecordBatch, len(ranges))
		for k, rg := range ranges[:2] {
			if got[k], _ = f.ReadRows(ctx, ReadRequest{Ranges: []RowRange{rg}}); got[k] == nil {
				t.Fatalf("%+v: read %v failed", opts, rg)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ranges))
		for k := 2; k < len(ranges); k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[k], errs[k] = f.ReadRows(ctx, ReadRequest{Ranges: []RowRange{ranges[k]}})
			}()
		}
		wg.Wait()
		for k, rg := range ranges {
			if errs[k] != nil {
				t.Fatalf("%+v: read %v: %v", opts, rg, errs[k])
			}
			want := rec.NewSlice(int64(rg.Start), int64(rg.End))
			for c := range int(want.NumCols()) {
				if !array.Equal(got[k].Column(c), want.Column(c)) {
					t.Errorf("%+v: rows %v column %d differ after later reads", opts, rg, c)
				}
			}
			want.Release()
			got[k].Release()
		}
	}
}
