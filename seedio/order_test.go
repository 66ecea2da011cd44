package seedio

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

func TestR25_IsNaNValueAnyPayloadAnySign(t *testing.T) {
	if !isNaNValue(math.Float64frombits(0xFFF8_0000_0000_0000)) || !isNaNValue(float16.FromBits(0x7E00)) ||
		!isNaNValue(math.Float32frombits(0x7FC0_0001)) || isNaNValue(1.5) || isNaNValue(int64(3)) {
		t.Error("isNaNValue")
	}
}

// §4.1 table, per type.
func TestR29_CompareValuesArrowRustOrder(t *testing.T) {
	cases := []struct {
		name string
		a, b any
		want int
	}{
		{"bool", false, true, -1},
		{"int8", int8(-128), int8(127), -1},
		{"int64 min", int64(math.MinInt64), int64(0), -1},
		{"uint64 >= 2^63 unsigned", uint64(1 << 63), uint64(1), 1},
		{"uint8", uint8(255), uint8(0), 1},
		{"float64 -0 < +0", math.Copysign(0, -1), 0.0, -1},
		{"float64 -NaN < -Inf", math.Float64frombits(0xFFF8_0000_0000_0000), math.Inf(-1), -1},
		{"float64 +NaN > +Inf", math.Float64frombits(0x7FF8_0000_0000_0000), math.Inf(1), 1},
		{"float64 NaN payloads differ", math.Float64frombits(0x7FF8_0000_0000_0000), math.NaN(), -1},
		{"float32 -0 < +0", float32(math.Copysign(0, -1)), float32(0), -1},
		{"float16 -0 < +0", float16.FromBits(0x8000), float16.FromBits(0), -1},
		{"float16 1 < 2", float16.New(1), float16.New(2), -1},
		{"decimal32", decimal.Decimal32(-5), decimal.Decimal32(3), -1},
		{"decimal64", decimal.Decimal64(7), decimal.Decimal64(7), 0},
		{"decimal128 negative", decimal128.FromI64(-1), decimal128.FromI64(1), -1},
		{"decimal128 hi word", decimal128.New(1, 0), decimal128.New(0, math.MaxUint64), 1},
		{"decimal256 > 2^128", decimal256.New(0, 1, 0, 0), decimal256.New(0, 0, math.MaxUint64, math.MaxUint64), 1},
		{"decimal256 negative", decimal256.FromI64(-2), decimal256.FromI64(-1), -1},
		{"date32", arrow.Date32(-1), arrow.Date32(0), -1},
		{"timestamp", arrow.Timestamp(5), arrow.Timestamp(-5), 1},
		{"duration", arrow.Duration(1), arrow.Duration(1), 0},
		{"time32", arrow.Time32(1), arrow.Time32(2), -1},
		{"time64", arrow.Time64(2), arrow.Time64(1), 1},
		{"date64", arrow.Date64(2), arrow.Date64(1), 1},
		{"utf8 bytewise é > z (T43)", "é", "z", 1},
		{"utf8 empty first", "", "a", -1},
		{"binary prefix first (T44)", []byte("ab"), []byte("ab\x00"), -1},
		{"binary unsigned 0xFF", []byte{0xFF}, []byte{0x00, 0x01}, 1},
	}
	for _, c := range cases {
		got, err := CompareValues(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("%s: CompareValues(%v, %v) = %d, %v; want %d", c.name, c.a, c.b, got, err, c.want)
		}
		back, err := CompareValues(c.b, c.a)
		if err != nil || back != -c.want {
			t.Errorf("%s: reversed = %d, %v", c.name, back, err)
		}
	}
	if _, err := CompareValues(int32(1), int64(1)); !errors.Is(err, ErrNotComparable) {
		t.Errorf("mixed types: %v", err)
	}
	if _, err := CompareValues(arrow.MonthInterval(1), arrow.MonthInterval(2)); !errors.Is(err, ErrNotComparable) {
		t.Errorf("interval (Q5): %v", err)
	}
}

func TestR35_SupportsBoundsTable(t *testing.T) {
	yes := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint64,
		arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		&arrow.Decimal32Type{Precision: 9, Scale: 2}, &arrow.Decimal64Type{Precision: 18, Scale: 2},
		&arrow.Decimal128Type{Precision: 38, Scale: 2}, &arrow.Decimal256Type{Precision: 76, Scale: 2},
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, arrow.FixedWidthTypes.Time32s,
		arrow.FixedWidthTypes.Time64ns, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"},
		arrow.FixedWidthTypes.Duration_ms, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString,
		arrow.BinaryTypes.StringView, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary,
		arrow.BinaryTypes.BinaryView, &arrow.FixedSizeBinaryType{ByteWidth: 16},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.PrimitiveTypes.Float64},
	}
	no := []arrow.DataType{
		arrow.Null, arrow.FixedWidthTypes.MonthInterval, arrow.FixedWidthTypes.DayTimeInterval,
		arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.ListOf(arrow.PrimitiveTypes.Int32),
		arrow.LargeListOf(arrow.PrimitiveTypes.Int32), arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32),
		arrow.ListViewOf(arrow.PrimitiveTypes.Int32), arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32),
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64),
		arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}}, []arrow.UnionTypeCode{0}),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		wUUIDType(),
	}
	for _, dt := range yes {
		if !SupportsBounds(dt) {
			t.Errorf("SupportsBounds(%s) = false", dt)
		}
	}
	for _, dt := range no {
		if SupportsBounds(dt) {
			t.Errorf("SupportsBounds(%s) = true", dt)
		}
	}
}

func TestR27_CountsNaNOnlyForFloatSeeds(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		want bool
	}{
		{arrow.FixedWidthTypes.Float16, true},
		{arrow.PrimitiveTypes.Float32, true},
		{arrow.PrimitiveTypes.Float64, true},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float32}, true}, // Q2
		{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64), true},                      // Q2
		{wFloatExtType(), true},                             // Q4: seed value type is the float storage
		{arrow.ListOf(arrow.PrimitiveTypes.Float32), false}, // R27, T21
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), false},
		{arrow.PrimitiveTypes.Int64, false},
		{arrow.BinaryTypes.String, false},
		{&arrow.Decimal128Type{Precision: 10, Scale: 1}, false},
	}
	for _, c := range cases {
		if got := CountsNaN(c.dt); got != c.want {
			t.Errorf("CountsNaN(%s) = %v, want %v", c.dt, got, c.want)
		}
	}
}

func TestR40_ValueAtDecodesDictionaryAndLogicalNulls(t *testing.T) {
	dict := wArr(t, arrow.BinaryTypes.String, "b", nil, "a")
	defer dict.Release()
	idx := wArr(t, arrow.PrimitiveTypes.Int32, int32(0), int32(1), nil, int32(2))
	defer idx.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	d := array.NewDictionaryArray(dt, idx, dict)
	defer d.Release()
	var got []any
	for i := 0; i < d.Len(); i++ {
		v, err := ValueAt(d, i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	want := []any{"b", nil, nil, "a"}
	if !slices.Equal(got, want) {
		t.Errorf("ValueAt = %v, want %v", got, want)
	}
	if c, err := compareAt(d, 0, d, 3); err != nil || c != 1 {
		t.Errorf("compareAt(b, a) = %d, %v", c, err)
	}
	if _, err := compareAt(d, 0, d, 1); !errors.Is(err, ErrNotComparable) {
		t.Errorf("compareAt with a null: %v", err)
	}
	if _, err := ValueAt(d, 9); err == nil {
		t.Error("ValueAt out of range: no error")
	}
}
