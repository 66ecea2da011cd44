package datafile

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSpec21_4_3_FlatPathMatchesLevelPath: whole mini-block pages of flat
// fixed-width columns decoded on the flat path (windows of chunks, values
// straight into the output, def levels straight into the validity bitmap,
// §4.3) give exactly the written values — nulls, NaN bit patterns,
// nullable columns without nulls, non-nullable columns — alone and mixed
// with pages read through the level streams (ranges starting or ending
// inside a page, which switch the column from bitmap to levels and back),
// at 2.1 and 2.2, with flat and bit-packed values, for every page-size
// threshold.
func TestSpec21_4_3_FlatPathMatchesLevelPath(t *testing.T) {
	const n = 50_000
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "nn", Type: arrow.PrimitiveTypes.Int32},
		{Name: "novalid", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 30, Scale: 2}, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer bld.Release()
	r := rand.New(rand.NewPCG(5, 8))
	for k := 0; k < n; k++ {
		// nulls come in runs so that some pages have none
		null := (k/3000)%3 == 1 && r.IntN(4) == 0
		if null {
			bld.Field(0).AppendNull()
			bld.Field(1).AppendNull()
			bld.Field(4).AppendNull()
			bld.Field(5).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(int64(r.Uint64()))
			f := r.NormFloat64()
			if k%97 == 0 {
				f = math.Float64frombits(0xfff8_0000_0000_0001) // negative NaN with payload
			}
			bld.Field(1).(*array.Float64Builder).Append(f)
			bld.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.Uint32())))
			bld.Field(5).(*array.Uint8Builder).Append(uint8(r.Uint32()))
		}
		bld.Field(2).(*array.Int32Builder).Append(int32(r.Uint32()))
		bld.Field(3).(*array.Float32Builder).Append(float32(k))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	ctx := context.Background()
	for _, c := range []struct {
		v     FileVersion
		plain bool
	}{{V2_1, true}, {V2_2, true}, {V2_2, false}} {
		v := c.v
		// plain: flat values; else our writer bit-packs what it can
		f, _ := write21(t, rec, WriterOptions{Version: v, NoCompression: c.plain, PageSize: 64 << 10})
		if len(f.Column(0).Pages) < 4 {
			t.Fatalf("%s: %d pages for column i, want several", v, len(f.Column(0).Pages))
		}
		for _, flatMin := range []uint64{1, 16 << 10, 1 << 40} {
			for _, rg := range [][]RowRange{nil, {{Start: 10, End: n}}, {{Start: 0, End: 20_000}}, {{Start: 0, End: 7_000}, {Start: 9_001, End: 40_000}}} {
				t.Run(fmt.Sprintf("%s/plain=%v/min=%d/%v", v, c.plain, flatMin, rg), func(t *testing.T) {
					got, err := f.ReadRows(ctx, ReadRequest{Ranges: rg, ReadOptions: ReadOptions{flatMinBytes: flatMin}})
					if err != nil {
						t.Fatal(err)
					}
					defer got.Release()
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
							if !sameBits(g, w.Column(c)) {
								t.Fatalf("column %s rows [%d, +%d) differ", sch.Field(c).Name, row, w.NumRows())
							}
							g.Release()
						}
						row += w.NumRows()
						if rg != nil {
							w.Release()
						}
					}
				})
			}
		}
	}
}

// sameBits compares two fixed-width arrays slot by slot: validity, and the
// value bytes of every valid slot (so NaN payloads count).
func sameBits(a, b arrow.Array) bool {
	if a.Len() != b.Len() || a.NullN() != b.NullN() || !arrow.TypeEqual(a.DataType(), b.DataType()) {
		return false
	}
	w := a.DataType().(arrow.FixedWidthDataType).BitWidth() / 8
	ab, bb := a.Data().Buffers()[1].Bytes(), b.Data().Buffers()[1].Bytes()
	ao, bo := a.Data().Offset(), b.Data().Offset()
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) != b.IsNull(i) {
			return false
		}
		if a.IsValid(i) && string(ab[(ao+i)*w:(ao+i+1)*w]) != string(bb[(bo+i)*w:(bo+i+1)*w]) {
			return false
		}
	}
	return true
}
