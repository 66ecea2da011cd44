package peerlance

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestValueEncoding checks the Go side of the peer's JSON value encoding
// (tests/peer/README.md) type by type; TestPeerAgreesWithGoValueEncoding
// checks that Lance + the node driver produce the same strings.
func TestValueEncoding(t *testing.T) {
	mem := memory.NewGoAllocator()
	build := func(dt arrow.DataType, fill func(b array.Builder)) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		fill(b)
		return b.NewArray()
	}
	tests := []struct {
		name string
		arr  arrow.Array
		want []string
	}{
		{"float64 specials keep sign, payload and -0", build(arrow.PrimitiveTypes.Float64, func(b array.Builder) {
			fb := b.(*array.Float64Builder)
			fb.Append(math.Float64frombits(0xfff8000000000001))
			fb.Append(math.Copysign(0, -1))
			fb.Append(math.Inf(1))
			fb.AppendNull()
		}), []string{`{"f64":"0xfff8000000000001"}`, `{"f64":"0x8000000000000000"}`, `{"f64":"0x7ff0000000000000"}`, `null`}},
		{"float32 bits", build(arrow.PrimitiveTypes.Float32, func(b array.Builder) {
			b.(*array.Float32Builder).Append(math.Float32frombits(0x7fc0beef))
		}), []string{`{"f32":"0x7fc0beef"}`}},
		{"float16 bits", build(arrow.FixedWidthTypes.Float16, func(b array.Builder) {
			b.(*array.Float16Builder).Append(float16.FromBits(0xfe00))
		}), []string{`{"f16":"0xfe00"}`}},
		{"int64 and uint64 extremes are strings", build(arrow.PrimitiveTypes.Int64, func(b array.Builder) {
			b.(*array.Int64Builder).AppendValues([]int64{math.MinInt64, math.MaxInt64}, nil)
		}), []string{`"-9223372036854775808"`, `"9223372036854775807"`}},
		{"uint64 max", build(arrow.PrimitiveTypes.Uint64, func(b array.Builder) {
			b.(*array.Uint64Builder).Append(math.MaxUint64)
		}), []string{`"18446744073709551615"`}},
		{"int32 and uint32 are numbers", build(arrow.PrimitiveTypes.Uint32, func(b array.Builder) {
			b.(*array.Uint32Builder).Append(math.MaxUint32)
		}), []string{`4294967295`}},
		{"timestamp raw integer string", build(&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, func(b array.Builder) {
			b.(*array.TimestampBuilder).Append(-1)
		}), []string{`"-1"`}},
		{"decimal128 scale digits", build(&arrow.Decimal128Type{Precision: 9, Scale: 2}, func(b array.Builder) {
			db := b.(*array.Decimal128Builder)
			db.Append(decimal128.FromI64(-150))
			db.Append(decimal128.FromI64(5))
			db.Append(decimal128.FromI64(0))
		}), []string{`"-1.50"`, `"0.05"`, `"0.00"`}},
		{"utf8 multi-byte and invalid", build(arrow.BinaryTypes.String, func(b array.Builder) {
			sb := b.(*array.StringBuilder)
			sb.Append("日本 <&>")
			sb.Append("\xff")
		}), []string{`"日本 <&>"`, `{"invalid_utf8_hex":"ff"}`}},
		{"binary hex", build(arrow.BinaryTypes.Binary, func(b array.Builder) {
			b.(*array.BinaryBuilder).Append([]byte{0, 0xab})
		}), []string{`"00ab"`}},
		{"list with null item", build(arrow.ListOf(arrow.PrimitiveTypes.Int32), func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(7)
			lb.ValueBuilder().AppendNull()
			lb.Append(true)
		}), []string{`[7,null]`, `[]`}},
		{"struct", build(arrow.StructOf(arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "a", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), func(b array.Builder) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.StringBuilder).Append("x")
			sb.FieldBuilder(1).AppendNull()
		}), []string{`{"a":null,"b":"x"}`}},
		{"map as key/value entries", build(arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), func(b array.Builder) {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).Append("k")
			mb.ItemBuilder().(*array.Int32Builder).Append(1)
		}), []string{`[{"key":"k","value":1}]`}},
		{"dictionary decodes to its value", build(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, func(b array.Builder) {
			db := b.(*array.BinaryDictionaryBuilder)
			_ = db.AppendString("red")
			_ = db.AppendString("blue")
			_ = db.AppendString("red")
		}), []string{`"red"`, `"blue"`, `"red"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.arr.Release()
			if tc.arr.Len() != len(tc.want) {
				t.Fatalf("array has %d values, want %d", tc.arr.Len(), len(tc.want))
			}
			for i, want := range tc.want {
				got, err := Value(tc.arr, i)
				if err != nil {
					t.Fatalf("Value(%d): %v", i, err)
				}
				if got != want {
					t.Errorf("Value(%d) = %s, want %s", i, got, want)
				}
			}
		})
	}
}

func TestFormatDecimalScales(t *testing.T) {
	tests := []struct {
		v     int64
		scale int32
		want  string
	}{
		{1, 10, "0.0000000001"}, {-1, 10, "-0.0000000001"}, {12345, 2, "123.45"},
		{0, 0, "0"}, {7, -2, "700"}, {0, -3, "0"}, {-100, 2, "-1.00"},
	}
	for _, tc := range tests {
		if got := formatDecimal(big.NewInt(tc.v), tc.scale); got != tc.want {
			t.Errorf("formatDecimal(%d, %d) = %s, want %s", tc.v, tc.scale, got, tc.want)
		}
	}
}

func TestCanonicalSortsKeysAndKeepsNumbers(t *testing.T) {
	got, err := Canonical(json.RawMessage(`{"b": 1.50, "a": "<é>", "c": [1e3]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"<é>","b":1.50,"c":[1e3]}`; got != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
	if _, err := Canonical(json.RawMessage(`{`)); err == nil {
		t.Error("Canonical accepted truncated JSON")
	}
}

func TestFloatBits(t *testing.T) {
	tests := []struct {
		raw   string
		width int
		bits  uint64
		ok    bool
	}{
		{`{"f64":"0xfff8000000000001"}`, 64, 0xfff8000000000001, true},
		{`{"f32":"0x80000000"}`, 32, 0x80000000, true},
		{`{"f16":"0x7e00"}`, 16, 0x7e00, true},
		{`{"f16":"0x17e00"}`, 0, 0, false},
		{`{"f64":"7ff8"}`, 0, 0, false},
		{`"1.5"`, 0, 0, false},
		{`{"f64":"0x1","f32":"0x1"}`, 0, 0, false},
	}
	for _, tc := range tests {
		w, b, err := FloatBits(json.RawMessage(tc.raw))
		if (err == nil) != tc.ok || w != tc.width || b != tc.bits {
			t.Errorf("FloatBits(%s) = %d, %#x, %v; want %d, %#x, ok=%v", tc.raw, w, b, err, tc.width, tc.bits, tc.ok)
		}
	}
}

func TestNormalizeMessageReplacesBothPathSpellings(t *testing.T) {
	msg := "Not found: tmp/x/ds.lance/_versions, /tmp/x/ds.lance/data/a.lance at tmp/x/ds.lance.bak"
	got := NormalizeMessage(msg, "/tmp/x", "/tmp/x/ds.lance")
	want := "Not found: <dataset>/_versions, <dataset>/data/a.lance at <dataset>.bak"
	if got != want {
		t.Errorf("NormalizeMessage = %q, want %q", got, want)
	}
}

func TestTypeStringCorpusNotation(t *testing.T) {
	tests := []struct {
		dt   arrow.DataType
		want string
	}{
		{arrow.PrimitiveTypes.Uint16, "uint16"},
		{arrow.BinaryTypes.LargeString, "large_utf8"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 4}, "fixed_size_binary[4]"},
		{&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}, "timestamp[ms, tz=America/New_York]"},
		{&arrow.TimestampType{Unit: arrow.Second}, "timestamp[s]"},
		{arrow.FixedWidthTypes.Time32ms, "time32[ms]"},
		{arrow.FixedWidthTypes.Duration_ns, "duration[ns]"},
		{&arrow.Decimal256Type{Precision: 76, Scale: 20}, "decimal256(76, 20)"},
		{arrow.LargeListOf(arrow.BinaryTypes.String), "large_list<utf8>"},
		{arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), "fixed_size_list<float32>[4]"},
		{arrow.StructOf(arrow.Field{Name: "inner", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64})}), "struct<inner: struct<x: float64>>"},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), "map<utf8, int32>"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, "dictionary<int32, utf8>"},
	}
	for _, tc := range tests {
		got, err := TypeString(tc.dt)
		if err != nil || got != tc.want {
			t.Errorf("TypeString(%s) = %q, %v; want %q", tc.dt, got, err, tc.want)
		}
	}
}
