package datafile

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSpec21_4_LargePagesDecodeInParallelGroups: mini-block pages with
// enough chunks for the parallel value decode (fixed-width values cut into
// groups of chunks decoded on separate goroutines, straight into the output)
// and large variable-width pages give exactly the written values, whole
// and for ranges that start and end inside chunks and groups, at 2.1 and
// 2.2 (§4: chunk value counts place every value).
func TestSpec21_4_LargePagesDecodeInParallelGroups(t *testing.T) {
	const n = 200_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	r := rand.New(rand.NewPCG(3, 5))
	for k := 0; k < n; k++ {
		if r.IntN(17) == 0 {
			b.Field(0).AppendNull()
			b.Field(2).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(r.Uint64()))
			b.Field(2).(*array.StringBuilder).Append(string(rune('a' + r.IntN(26)))[:1] + "xyz"[:r.IntN(4)])
		}
		b.Field(1).(*array.Float64Builder).Append(r.NormFloat64())
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, v := range []FileVersion{V2_1, V2_2} {
		f, _ := write21(t, rec, WriterOptions{Version: v, NoCompression: true})
		ctx := context.Background()
		for _, rg := range [][]RowRange{nil, {{Start: 1234, End: 190_001}}, {{Start: 7, End: 70_000}, {Start: 70_513, End: 199_999}}, {{Start: 150_001, End: n}}} {
			got, err := f.ReadRows(ctx, ReadRequest{Ranges: rg})
			if err != nil {
				t.Fatalf("%s %v: %v", v, rg, err)
			}
			want := []arrow.RecordBatch{rec}
			if rg != nil {
				want = nil
				for _, x := range rg {
					want = append(want, rec.NewSlice(int64(x.Start), int64(x.End)))
				}
			}
			row := int64(0)
			for _, w := range want {
				for c := range int(w.NumCols()) {
					g := array.NewSlice(got.Column(c), row, row+w.NumRows())
					if !array.Equal(g, w.Column(c)) {
						t.Errorf("%s ranges %v column %s differs from the written values", v, rg, sch.Field(c).Name)
					}
					g.Release()
				}
				row += w.NumRows()
				if rg != nil {
					w.Release()
				}
			}
			got.Release()
		}
	}
}
