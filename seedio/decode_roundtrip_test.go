package seedio

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestT42_CollectorSeedsDecodeForEveryType writes a seed with the Collector
// for every Arrow type of spec §4.1 and decodes it with the column's type:
// it validates (R15 exact value type included), the counts match the rows,
// and for types with bounds the decoded bounds contain every ordinary value
// of their zone (R30) and equal the exact extrema (no value here exceeds the
// truncation length).
func TestR36_T42_CollectorSeedsDecodeForEveryType(t *testing.T) {
	mem := memory.NewGoAllocator()
	type col struct {
		dt  arrow.DataType
		arr func() arrow.Array
	}
	build := func(dt arrow.DataType, vals ...any) func() arrow.Array {
		return func() arrow.Array {
			b := array.NewBuilder(mem, dt)
			defer b.Release()
			for _, v := range vals {
				appendValue(t, b, v)
			}
			return b.NewArray()
		}
	}
	tsParis := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}
	dictStr := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	dictF64 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Float64}
	cols := []col{
		{arrow.FixedWidthTypes.Boolean, build(arrow.FixedWidthTypes.Boolean, true, nil, true, false, true)},
		{arrow.PrimitiveTypes.Int8, build(arrow.PrimitiveTypes.Int8, int8(-128), int8(5), nil, int8(127), int8(0))},
		{arrow.PrimitiveTypes.Int16, build(arrow.PrimitiveTypes.Int16, int16(-3), nil, int16(9), int16(1), int16(2))},
		{arrow.PrimitiveTypes.Int32, build(arrow.PrimitiveTypes.Int32, int32(7), int32(-7), int32(0), nil, int32(1))},
		{arrow.PrimitiveTypes.Int64, build(arrow.PrimitiveTypes.Int64, int64(-1<<63), int64(1<<63-1), nil, nil, int64(3))},
		{arrow.PrimitiveTypes.Uint8, build(arrow.PrimitiveTypes.Uint8, uint8(255), uint8(0), uint8(1), uint8(2), nil)},
		{arrow.PrimitiveTypes.Uint16, build(arrow.PrimitiveTypes.Uint16, uint16(65535), nil, uint16(1), uint16(2), uint16(3))},
		{arrow.PrimitiveTypes.Uint32, build(arrow.PrimitiveTypes.Uint32, uint32(1<<31), uint32(1), nil, uint32(9), uint32(8))},
		{arrow.PrimitiveTypes.Uint64, build(arrow.PrimitiveTypes.Uint64, uint64(1<<63), uint64(1<<64-1), uint64(1), nil, uint64(2))},
		{arrow.FixedWidthTypes.Float16, build(arrow.FixedWidthTypes.Float16, float16.New(1.5), float16.FromBits(f16NegNaN), nil, float16.New(-2), float16.FromBits(f16PosNaN))},
		{arrow.PrimitiveTypes.Float32, build(arrow.PrimitiveTypes.Float32, float32(1), f32bits(negNaN32), nil, float32(-0.5), f32bits(negZero32))},
		{arrow.PrimitiveTypes.Float64, build(arrow.PrimitiveTypes.Float64, 2.0, f64bits(goNaN64), nil, f64bits(negZero64), -1e300)},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, build(&arrow.Decimal32Type{Precision: 9, Scale: 2}, decimal.Decimal32(-5), decimal.Decimal32(7), nil, decimal.Decimal32(0), decimal.Decimal32(1))},
		{&arrow.Decimal64Type{Precision: 18, Scale: 3}, build(&arrow.Decimal64Type{Precision: 18, Scale: 3}, decimal.Decimal64(-5), nil, decimal.Decimal64(70), decimal.Decimal64(0), decimal.Decimal64(1))},
		{&arrow.Decimal128Type{Precision: 38, Scale: 10}, build(&arrow.Decimal128Type{Precision: 38, Scale: 10}, decimal128.FromI64(-500), decimal128.FromI64(3), nil, decimal128.FromI64(9), decimal128.FromI64(-1))},
		{&arrow.Decimal256Type{Precision: 76, Scale: 0}, build(&arrow.Decimal256Type{Precision: 76, Scale: 0}, decimal256.New(1, 0, 0, 0), decimal256.FromI64(-4), nil, decimal256.FromI64(4), decimal256.FromI64(0))},
		{arrow.FixedWidthTypes.Date32, build(arrow.FixedWidthTypes.Date32, arrow.Date32(-5), arrow.Date32(5), nil, arrow.Date32(0), arrow.Date32(1))},
		{arrow.FixedWidthTypes.Date64, build(arrow.FixedWidthTypes.Date64, arrow.Date64(86400000), nil, arrow.Date64(0), arrow.Date64(-86400000), arrow.Date64(1))},
		{arrow.FixedWidthTypes.Time32s, build(arrow.FixedWidthTypes.Time32s, arrow.Time32(5), arrow.Time32(1), nil, arrow.Time32(86399), arrow.Time32(0))},
		{arrow.FixedWidthTypes.Time64ns, build(arrow.FixedWidthTypes.Time64ns, arrow.Time64(5), nil, arrow.Time64(1), arrow.Time64(2), arrow.Time64(3))},
		{tsParis, build(tsParis, arrow.Timestamp(100), arrow.Timestamp(-100), nil, arrow.Timestamp(0), arrow.Timestamp(1))},
		{arrow.FixedWidthTypes.Duration_us, build(arrow.FixedWidthTypes.Duration_us, arrow.Duration(-9), nil, arrow.Duration(9), arrow.Duration(0), arrow.Duration(1))},
		{arrow.BinaryTypes.String, build(arrow.BinaryTypes.String, "é", "z", nil, "", "日本")},
		{arrow.BinaryTypes.LargeString, build(arrow.BinaryTypes.LargeString, "b", nil, "a", "c", "d")},
		{arrow.BinaryTypes.StringView, build(arrow.BinaryTypes.StringView, "short", "a value longer than twelve", nil, "zz", "a")},
		{arrow.BinaryTypes.Binary, build(arrow.BinaryTypes.Binary, []byte("ab"), []byte("ab\x00"), nil, []byte{0xFF}, []byte{})},
		{arrow.BinaryTypes.BinaryView, build(arrow.BinaryTypes.BinaryView, []byte("0123456789abcdef"), []byte("a"), nil, []byte{0}, []byte("b"))},
		{&arrow.FixedSizeBinaryType{ByteWidth: 4}, build(&arrow.FixedSizeBinaryType{ByteWidth: 4}, []byte("abcd"), []byte{0, 0, 0, 0}, nil, []byte{0xFF, 0, 0, 1}, []byte("zzzz"))},
		{dictStr, build(dictStr, "pear", "apple", nil, "kiwi", "apple")},
		{dictF64, build(dictF64, 1.5, f64bits(negNaN64), nil, -2.0, 1.5)},
		{arrow.FixedWidthTypes.MonthInterval, build(arrow.FixedWidthTypes.MonthInterval, nonNullNested, nil, nonNullNested, nonNullNested, nil)},
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), build(arrow.ListOf(arrow.PrimitiveTypes.Int32), nonNullNested, nil, nonNullNested, nil, nonNullNested)},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}),
			build(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), nonNullNested, nil, nonNullNested, nonNullNested, nil)},
		{arrow.Null, func() arrow.Array { return array.NewNull(5) }},
		{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64), func() arrow.Array {
			// Runs: [1.5 x1] [null x2] [NaN x1] [2.0 x1] (T19: logical nulls from null runs).
			ends := array.NewInt32Builder(mem)
			defer ends.Release()
			ends.AppendValues([]int32{1, 3, 4, 5}, nil)
			vals := array.NewFloat64Builder(mem)
			defer vals.Release()
			vals.AppendValues([]float64{1.5, 0, f64bits(posNaN64), 2.0}, []bool{true, false, true, true})
			e, v := ends.NewArray(), vals.NewArray()
			defer e.Release()
			defer v.Release()
			return array.NewRunEndEncodedArray(e, v, 5, 0)
		}},
	}
	for _, c := range cols {
		t.Run(fmt.Sprint(c.dt), func(t *testing.T) {
			arr := c.arr()
			defer arr.Release()
			rpz := uint64(2)
			coll, err := NewCollector(arrow.Field{Name: "c", Type: c.dt, Nullable: true}, CollectorOptions{RowsPerZone: rpz})
			if err != nil {
				t.Fatal(err)
			}
			if err := coll.Observe(arr); err != nil {
				t.Fatal(err)
			}
			enc, err := coll.Finish()
			if err != nil {
				t.Fatal(err)
			}
			s := mustDecode(t, enc.IPC, decodeOpts(c.dt, rpz, uint64(arr.Len())))
			if s.Version != 1 || len(s.Zones) != 3 || s.NullBitmap == nil || !s.NullPositionsExact {
				t.Fatalf("seed %+v", s)
			}
			for _, z := range s.Zones {
				var nulls, nans uint64
				for i := z.Start; i < z.End(); i++ {
					if isLogicalNull(arr, int(i)) {
						nulls++
						if !s.NullBitmap.Contains(uint32(i)) {
							t.Fatalf("row %d null but not in the bitmap", i)
						}
						continue
					}
					if ree, ok := arr.(*array.RunEndEncoded); ok {
						// Q2: run-end-encoded floats count NaNs by value; no bounds.
						if v, err := ValueAt(ree.Values(), ree.GetPhysicalIndex(int(i))); err == nil && isNaNValue(v) {
							nans++
						}
						continue
					}
					if !SupportsBounds(c.dt) {
						continue
					}
					v, err := ValueAt(arr, int(i))
					if err != nil {
						t.Fatal(err)
					}
					if isNaNValue(v) {
						nans++
						continue
					}
					// R30: every ordinary value lies within the bounds.
					if c1, _ := CompareValues(z.Min, v); c1 > 0 {
						t.Fatalf("zone %d: min %s above value %s", z.Index, describeValue(z.Min), describeValue(v))
					}
					if c2, _ := CompareValues(v, z.Max); c2 > 0 {
						t.Fatalf("zone %d: max %s below value %s", z.Index, describeValue(z.Max), describeValue(v))
					}
				}
				if z.NullCount != nulls || (CountsNaN(c.dt) && z.NaNCount != nans) {
					t.Fatalf("zone %d: null %d nan %d, rows say %d / %d", z.Index, z.NullCount, z.NaNCount, nulls, nans)
				}
				if !SupportsBounds(c.dt) && (z.Min != nil || z.Max != nil) {
					t.Fatalf("zone %d: bounds on %s", z.Index, c.dt)
				}
				if SupportsBounds(c.dt) && z.Ordinary() > 0 && (z.Min == nil || z.Max == nil) {
					t.Fatalf("zone %d: R36 bounds missing", z.Index)
				}
			}
		})
	}
}
