package seedio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

var (
	i32T = arrow.PrimitiveTypes.Int32
	i64T = arrow.PrimitiveTypes.Int64
	f64T = arrow.PrimitiveTypes.Float64
	strT = arrow.BinaryTypes.String
)

// wZ is a compact zone literal: length, nulls, nans, negative nans, min, max.
func wZ(length uint64, nulls, nans, negs uint32, mn, mx any) Zone {
	return Zone{Stats: Stats{Rows: length, NullCount: uint64(nulls), NaNCount: uint64(nans), NegativeNaNCount: uint64(negs), Min: mn, Max: mx}}
}

// wWithStarts fills Start per R19.
func wWithStarts(rpz uint64, zs ...Zone) []Zone {
	for i := range zs {
		zs[i].Start = uint64(i) * rpz
	}
	return zs
}

// wCheck collects arrs, checks the seed against want, re-reads the IPC bytes
// with arrow-go and checks they hold the same zones, and checks the null
// bitmap against the null counts (R45).
func wCheck(t *testing.T, field arrow.Field, opts CollectorOptions, want []Zone, arrs ...arrow.Array) *EncodedSeed {
	t.Helper()
	s := wCollect(t, field, opts, arrs...)
	if s == nil {
		t.Fatal("no seed")
	}
	rpz := opts.RowsPerZone
	if rpz == 0 {
		rpz = DefaultRowsPerZone
	}
	want = wWithStarts(rpz, want...)
	wSameZones(t, "collector", s.Zones, want)
	_, decoded := wReadIPC(t, s.IPC, rpz)
	if SupportsBounds(seedValueType(field.Type)) {
		wSameZones(t, "IPC", decoded, want)
	}
	wCheckBitmap(t, s)
	if len(s.Zones) != len(want) || s.RowsPerZone != rpz || s.Column != field.Name {
		t.Fatalf("seed header %d zones, rpz %d, column %q", len(s.Zones), s.RowsPerZone, s.Column)
	}
	return s
}

// wCheckBitmap: R41, R44, R45: the metadata bitmap decodes, lies in [0, N)
// and agrees with every zone's null_count.
func wCheckBitmap(t *testing.T, s *EncodedSeed) {
	t.Helper()
	bm, err := decodeNullBitmapHex(s.NullBitmapHex)
	if err != nil {
		t.Fatalf("R41: bitmap: %v", err)
	}
	if !bm.Equals(s.NullBitmap) {
		t.Fatal("NullRows differs from NullBitmapHex")
	}
	// R42, R48: byte-identical to roaring's own run-optimised serialization.
	if ref, err := encodeNullBitmapHex(s.NullBitmap); err != nil || ref != s.NullBitmapHex {
		t.Fatalf("R48: seed_null_bitmap %.40s… differs from roaring RunOptimize+ToBytes %.40s…", s.NullBitmapHex, ref)
	}
	if !bm.IsEmpty() && uint64(bm.Maximum()) >= s.NumRows {
		t.Fatalf("R45: offset %d >= N = %d", bm.Maximum(), s.NumRows)
	}
	var sum uint64
	for i, z := range s.Zones {
		if got := bm.CardinalityInRange(z.Start, z.Start+z.Rows); got != uint64(z.NullCount) {
			t.Fatalf("R45: zone %d: %d bitmap offsets, null_count %d", i, got, z.NullCount)
		}
		sum += z.Rows
	}
	if sum != s.NumRows {
		t.Fatalf("R20: Σ zone_length %d != N %d", sum, s.NumRows)
	}
}

// T41, R4, Q14.
func TestWriterT41_R4_RowsPerZoneRange(t *testing.T) {
	f := wField(i32T)
	for _, c := range []struct {
		rpz  uint64
		want uint64
		err  bool
	}{
		{0, 8192, false}, {1, 1, false}, {16, 16, false}, {math.MaxUint32, math.MaxUint32, false},
		{1 << 32, 0, true}, {math.MaxUint64, 0, true},
	} {
		col, err := NewCollector(f, CollectorOptions{RowsPerZone: c.rpz})
		if c.err {
			if !errors.Is(err, ErrCollectorOptions) {
				t.Errorf("rpz %d: err = %v, want ErrCollectorOptions", c.rpz, err)
			}
			continue
		}
		if err != nil || col.RowsPerZone() != c.want {
			t.Errorf("rpz %d: %v, %v", c.rpz, col, err)
		}
	}
	if _, err := NewCollector(f, CollectorOptions{MaxBoundBytes: -1}); !errors.Is(err, ErrCollectorOptions) {
		t.Errorf("negative MaxBoundBytes: %v", err)
	}
	if _, err := NewCollector(arrow.Field{Name: "x"}, CollectorOptions{}); !errors.Is(err, ErrCollectorOptions) {
		t.Errorf("nil type: %v", err)
	}
}

// T01, R11: no rows, no seed.
func TestWriterT01_R11_ZeroRowsNoSeed(t *testing.T) {
	c, _ := NewCollector(wField(i32T), CollectorOptions{})
	if s, err := c.Finish(); s != nil || err != nil {
		t.Fatalf("Finish without rows = %v, %v", s, err)
	}
	empty := wArr(t, i32T)
	if err := c.Observe(empty); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Finish(); s != nil || err != nil {
		t.Fatalf("Finish after empty batch = %v, %v", s, err)
	}
	if _, err := encodeZones(i32T, nil, nil); !errors.Is(err, ErrEncode) {
		t.Fatalf("encodeZones without zones: %v", err)
	}
}

// T02–T05, R19, R20.
func TestWriterR19_R20_ZoneLayout(t *testing.T) {
	seq := func(n int) arrow.Array {
		vals := make([]any, n)
		for i := range vals {
			vals[i] = int32(i * 10)
		}
		return wArr(t, i32T, vals...)
	}
	t.Run("T02_NEqualsRpz", func(t *testing.T) {
		wCheck(t, wField(i32T), CollectorOptions{RowsPerZone: 4}, []Zone{wZ(4, 0, 0, 0, int32(0), int32(30))}, seq(4))
	})
	t.Run("T03_TwoRpzPlusOne", func(t *testing.T) {
		wCheck(t, wField(i32T), CollectorOptions{RowsPerZone: 4}, []Zone{
			wZ(4, 0, 0, 0, int32(0), int32(30)), wZ(4, 0, 0, 0, int32(40), int32(70)), wZ(1, 0, 0, 0, int32(80), int32(80)),
		}, seq(9))
	})
	t.Run("T04_RpzOne", func(t *testing.T) {
		a := wArr(t, i32T, int32(5), nil, int32(-5))
		wCheck(t, wField(i32T), CollectorOptions{RowsPerZone: 1}, []Zone{
			wZ(1, 0, 0, 0, int32(5), int32(5)), wZ(1, 1, 0, 0, nil, nil), wZ(1, 0, 0, 0, int32(-5), int32(-5)),
		}, a)
	})
	t.Run("T05_RpzBeyondN", func(t *testing.T) {
		wCheck(t, wField(i32T), CollectorOptions{}, []Zone{wZ(10, 0, 0, 0, int32(0), int32(90))}, seq(10))
	})
}

// T06, R49: the seed does not depend on batch boundaries: byte-identical IPC.
func TestWriterT06_R49_BatchSplitsGiveIdenticalIPC(t *testing.T) {
	inputs := map[string]arrow.Array{
		"int64": wArr(t, i64T, int64(3), nil, int64(math.MinInt64), int64(7), nil, nil, int64(math.MaxInt64), int64(0), int64(-1), nil, int64(2)),
		"float64": wArr(t, f64T, 1.5, wF64(wNegNaN64), nil, wF64(wNegZero), 0.0, math.Inf(-1), wF64(wGoNaN64), nil, 2.5,
			wF64(wPosNaN64), -3.0),
		"utf8":   wArr(t, strT, "b", "", nil, "é", "z", strings.Repeat("x", 100), nil, "a", "日本", "ab", "ab\x00"),
		"dict":   wDictArr(t),
		"bool":   wArr(t, arrow.FixedWidthTypes.Boolean, true, nil, true, false, nil, true, true, true, false, nil, true),
		"struct": wStructArr(t),
	}
	for name, arr := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, rpz := range []uint64{1, 3, 4, 8192} {
				opts := CollectorOptions{RowsPerZone: rpz}
				f := wField(arr.DataType())
				one := wCollect(t, f, opts, arr)
				var singles []arrow.Array
				for i := 0; i < arr.Len(); i++ {
					singles = append(singles, array.NewSlice(arr, int64(i), int64(i+1)))
				}
				rows := wCollect(t, f, opts, singles...)
				split := wCollect(t, f, opts, array.NewSlice(arr, 0, 5), array.NewSlice(arr, 5, 6), array.NewSlice(arr, 6, 6), array.NewSlice(arr, 6, int64(arr.Len())))
				if !bytes.Equal(one.IPC, rows.IPC) || !bytes.Equal(one.IPC, split.IPC) {
					t.Fatalf("rpz %d: IPC differs between batch splits", rpz)
				}
				wCheckBitmap(t, one)
			}
		})
	}
}

func wDictArr(t *testing.T) arrow.Array {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: strT}
	dict := wArr(t, strT, "m", nil, "a", "zz", "b")
	idx := wArr(t, arrow.PrimitiveTypes.Int8, int8(0), int8(1), nil, int8(3), int8(4), int8(0), nil, int8(1), int8(4), int8(0), int8(3))
	return array.NewDictionaryArray(dt, idx, dict)
}

func wStructArr(t *testing.T) arrow.Array {
	dt := arrow.StructOf(arrow.Field{Name: "x", Type: i32T, Nullable: true}, arrow.Field{Name: "y", Type: strT, Nullable: true})
	b := array.NewStructBuilder(wMem, dt)
	xb := b.FieldBuilder(0).(*array.Int32Builder)
	yb := b.FieldBuilder(1).(*array.StringBuilder)
	for i := 0; i < 11; i++ {
		if i%4 == 1 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		if i%3 == 0 {
			xb.AppendNull() // child null in a valid row: not an outer null (T20)
		} else {
			xb.Append(int32(i))
		}
		yb.Append("v")
	}
	return b.NewArray()
}

// T07, R21, R51: after Finish the collector starts again at row 0.
func TestWriterT07_R21_R51_NextDataFileRestarts(t *testing.T) {
	c, err := NewCollector(wField(i64T), CollectorOptions{RowsPerZone: 4})
	if err != nil {
		t.Fatal(err)
	}
	a := wArr(t, i64T, int64(1), nil, int64(3), int64(4), int64(5), nil)
	b := wArr(t, i64T, nil, int64(9), int64(8))
	for _, arr := range []arrow.Array{a} {
		if err := c.Observe(arr); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(b); err != nil {
		t.Fatal(err)
	}
	second, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if second.NumRows != 3 || len(second.Zones) != 1 || second.Zones[0].Start != 0 || !second.NullBitmap.Equals(roaring.BitmapOf(0)) {
		t.Fatalf("second file: %+v, nulls %v", second.Zones, second.NullBitmap)
	}
	fresh := wCollect(t, wField(i64T), CollectorOptions{RowsPerZone: 4}, b)
	if !bytes.Equal(second.IPC, fresh.IPC) {
		t.Fatal("second file's seed differs from a fresh collector's")
	}
	if first.NumRows != 6 || !first.NullBitmap.Equals(roaring.BitmapOf(1, 5)) {
		t.Fatalf("first file: %d rows, nulls %v", first.NumRows, first.NullBitmap)
	}
}

// R5, R9, R10, R12, R13, R14, R16, R17, R18, R23, R44: the container and schema.
func TestWriterR5_R9_R10_R12_R13_R14_R16_R17_R18_R23_T10_SeedSchemaAndContainer(t *testing.T) {
	arr := wArr(t, i64T, int64(1), int64(2), nil, int64(4), int64(5), int64(6), int64(7), int64(8), int64(9))
	s := wCollect(t, wField(i64T), CollectorOptions{RowsPerZone: 4}, arr)
	schema, zones := wReadIPC(t, s.IPC, 4)
	want := []struct {
		name     string
		dt       arrow.DataType
		nullable bool
	}{
		{"min", i64T, true}, {"max", i64T, true},
		{"null_count", arrow.PrimitiveTypes.Uint32, false}, {"nan_count", arrow.PrimitiveTypes.Uint32, false},
		{"negative_nan_count", arrow.PrimitiveTypes.Uint32, false}, {"zone_length", arrow.PrimitiveTypes.Uint64, false},
	}
	if schema.NumFields() != len(want) {
		t.Fatalf("R14: %d fields", schema.NumFields())
	}
	for i, w := range want {
		f := schema.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.dt) || f.Nullable != w.nullable {
			t.Errorf("R14: field %d = %s %s nullable=%v, want %s %s %v", i, f.Name, f.Type, f.Nullable, w.name, w.dt, w.nullable)
		}
	}
	md := schema.Metadata()
	if keys := md.Keys(); len(keys) != 2 || keys[0] != "version" || keys[1] != "seed_null_bitmap" {
		t.Fatalf("R17/R18/R5: metadata keys %v", keys)
	}
	if md.Values()[0] != "1" {
		t.Fatalf("R17: version %q", md.Values()[0])
	}
	if md.Values()[1] != s.NullBitmapHex || s.NullBitmapHex != "3a3000000100000000000000100000000200" {
		t.Fatalf("R41/R43: seed_null_bitmap %q", md.Values()[1])
	}
	if len(zones) != 3 || zones[2].Rows != 1 {
		t.Fatalf("zones %+v", zones)
	}
	// R5: rows_per_zone appears nowhere in the IPC metadata.
	for _, v := range md.Values() {
		if strings.Contains(v, "rows_per_zone") {
			t.Fatal("R5: rows_per_zone inside the IPC file")
		}
	}
	// R12: the body is not compressed: the zone_length column appears
	// verbatim (little-endian u64 4, 4, 1) and no compression frame magic.
	lens := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 4), 4), 1)
	if !bytes.Contains(s.IPC, lens) {
		t.Fatal("R12: zone_length buffer not found verbatim")
	}
	for _, magic := range [][]byte{{0x28, 0xB5, 0x2F, 0xFD}, {0x04, 0x22, 0x4D, 0x18}} {
		if bytes.Contains(s.IPC, magic) {
			t.Fatalf("R12: compression frame magic %x in seed", magic)
		}
	}
	// The exported schema builder is what the file carries.
	if !seedSchema(i64T, &s.NullBitmapHex).Equal(schema) {
		t.Fatal("seedSchema differs from the written schema")
	}
}

// R8, R15, Q4, T51, T52: value_type is the stored type exactly.
func TestWriterR8_R15_T51_T52_ValueTypeIsStoredType(t *testing.T) {
	cases := []struct {
		name string
		col  arrow.DataType
		want arrow.DataType
		arr  func() arrow.Array
	}{
		{"timestamp tz", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, nil, nil},
		{"timestamp +00:00", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+00:00"}, nil, nil},
		{"timestamp naive", &arrow.TimestampType{Unit: arrow.Nanosecond}, nil, nil},
		{"decimal128 p/s", &arrow.Decimal128Type{Precision: 20, Scale: 3}, nil, nil},
		{"decimal32 p/s", &arrow.Decimal32Type{Precision: 7, Scale: 2}, nil, nil},
		{"fsb", &arrow.FixedSizeBinaryType{ByteWidth: 5}, nil, nil},
		{"dict uint16/large_utf8", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.LargeString}, nil, nil},
		{"time32 s", arrow.FixedWidthTypes.Time32s, nil, nil},
		{"list child name", arrow.ListOfField(arrow.Field{Name: "element", Type: f64T, Nullable: false}), nil,
			func() arrow.Array {
				return array.MakeArrayOfNull(wMem, arrow.ListOfField(arrow.Field{Name: "element", Type: f64T, Nullable: false}), 3)
			}},
		{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: i32T, Nullable: true}), nil,
			func() arrow.Array {
				return array.MakeArrayOfNull(wMem, arrow.StructOf(arrow.Field{Name: "a", Type: i32T, Nullable: true}), 2)
			}},
		{"map", arrow.MapOf(strT, i64T), nil, func() arrow.Array { return array.MakeArrayOfNull(wMem, arrow.MapOf(strT, i64T), 2) }},
		{"extension uuid -> fsb(16)", wUUIDType(), &arrow.FixedSizeBinaryType{ByteWidth: 16},
			func() arrow.Array {
				st := wArr(t, &arrow.FixedSizeBinaryType{ByteWidth: 16}, bytes.Repeat([]byte{1}, 16), nil)
				return array.NewExtensionArrayWithStorage(wUUIDType(), st)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var arr arrow.Array
			if c.arr != nil {
				arr = c.arr()
			} else {
				arr = array.MakeArrayOfNull(wMem, c.col, 3)
			}
			want := c.want
			if want == nil {
				want = c.col
			}
			s := wCollect(t, wField(c.col), CollectorOptions{}, arr)
			schema, _ := wReadIPC(t, s.IPC, DefaultRowsPerZone)
			for i := 0; i < 2; i++ {
				f := schema.Field(i)
				if !arrow.TypeEqual(f.Type, want) {
					t.Errorf("R15: %s type %s, want %s", f.Name, f.Type, want)
				}
				if f.Metadata.Len() != 0 {
					t.Errorf("R15/Q4: %s carries field metadata %v", f.Name, f.Metadata)
				}
			}
		})
	}
}

// T42 and the §4.1 table: every type with bounds round-trips, incl. extremes.
func TestWriterT42_T43_T44_T46_R29_EveryBoundTypeRoundTrips(t *testing.T) {
	tsParis := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}
	d128 := &arrow.Decimal128Type{Precision: 38, Scale: 0}
	d256 := &arrow.Decimal256Type{Precision: 76, Scale: 0}
	big256 := decimal256.New(0, 1, 0, 0) // 2^128
	cases := []struct {
		dt     arrow.DataType
		vals   []any
		mn, mx any
	}{
		{arrow.FixedWidthTypes.Boolean, []any{true, nil, false}, false, true},
		{arrow.PrimitiveTypes.Int8, []any{int8(-128), int8(127), nil}, int8(-128), int8(127)},
		{arrow.PrimitiveTypes.Int16, []any{int16(5), int16(-300)}, int16(-300), int16(5)},
		{arrow.PrimitiveTypes.Int32, []any{int32(math.MaxInt32), int32(0)}, int32(0), int32(math.MaxInt32)},
		{i64T, []any{int64(math.MinInt64), nil, int64(math.MaxInt64)}, int64(math.MinInt64), int64(math.MaxInt64)},
		{arrow.PrimitiveTypes.Uint8, []any{uint8(255), uint8(0)}, uint8(0), uint8(255)},
		{arrow.PrimitiveTypes.Uint16, []any{uint16(65535), uint16(1)}, uint16(1), uint16(65535)},
		{arrow.PrimitiveTypes.Uint32, []any{uint32(1 << 31), uint32(1)}, uint32(1), uint32(1 << 31)},
		{arrow.PrimitiveTypes.Uint64, []any{uint64(1 << 63), uint64(1), uint64(math.MaxUint64)}, uint64(1), uint64(math.MaxUint64)},
		{arrow.FixedWidthTypes.Float16, []any{wF16(0x3C00), wF16(0xC000)}, wF16(0xC000), wF16(0x3C00)},
		{arrow.PrimitiveTypes.Float32, []any{float32(1.5), float32(-2)}, float32(-2), float32(1.5)},
		{f64T, []any{1e300, -1e-300}, -1e-300, 1e300},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, []any{decimal.Decimal32(-99999), decimal.Decimal32(5)}, decimal.Decimal32(-99999), decimal.Decimal32(5)},
		{&arrow.Decimal64Type{Precision: 18, Scale: 2}, []any{decimal.Decimal64(7), decimal.Decimal64(-8)}, decimal.Decimal64(-8), decimal.Decimal64(7)},
		{d128, []any{decimal128.FromI64(-5), decimal128.FromI64(3), decimal128.New(-1, 0)}, decimal128.New(-1, 0), decimal128.FromI64(3)},
		{d256, []any{big256, decimal256.FromI64(-1), nil}, decimal256.FromI64(-1), big256},
		{arrow.FixedWidthTypes.Date32, []any{arrow.Date32(-1), arrow.Date32(19000)}, arrow.Date32(-1), arrow.Date32(19000)},
		{arrow.FixedWidthTypes.Date64, []any{arrow.Date64(86400000), arrow.Date64(-86400000)}, arrow.Date64(-86400000), arrow.Date64(86400000)},
		{arrow.FixedWidthTypes.Time32s, []any{arrow.Time32(86399), arrow.Time32(0)}, arrow.Time32(0), arrow.Time32(86399)},
		{arrow.FixedWidthTypes.Time32ms, []any{arrow.Time32(5)}, arrow.Time32(5), arrow.Time32(5)},
		{arrow.FixedWidthTypes.Time64us, []any{arrow.Time64(5), arrow.Time64(3)}, arrow.Time64(3), arrow.Time64(5)},
		{arrow.FixedWidthTypes.Time64ns, []any{arrow.Time64(9)}, arrow.Time64(9), arrow.Time64(9)},
		{tsParis, []any{arrow.Timestamp(-1), arrow.Timestamp(1)}, arrow.Timestamp(-1), arrow.Timestamp(1)},
		{&arrow.TimestampType{Unit: arrow.Second}, []any{arrow.Timestamp(10)}, arrow.Timestamp(10), arrow.Timestamp(10)},
		{arrow.FixedWidthTypes.Duration_ns, []any{arrow.Duration(math.MinInt64), arrow.Duration(0)}, arrow.Duration(math.MinInt64), arrow.Duration(0)},
		{arrow.FixedWidthTypes.Duration_s, []any{arrow.Duration(3)}, arrow.Duration(3), arrow.Duration(3)},
		{strT, []any{"é", "z", ""}, "", "é"}, // T43
		{arrow.BinaryTypes.LargeString, []any{"b", "a"}, "a", "b"},
		{arrow.BinaryTypes.Binary, []any{[]byte("ab"), []byte("ab\x00"), []byte{0xFF}, []byte{0x00}}, []byte{0x00}, []byte{0xFF}}, // T44
		{arrow.BinaryTypes.LargeBinary, []any{[]byte{}, []byte("x")}, []byte{}, []byte("x")},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, []any{bytes.Repeat([]byte{0xAB}, 16), bytes.Repeat([]byte{0x01}, 16)},
			bytes.Repeat([]byte{0x01}, 16), bytes.Repeat([]byte{0xAB}, 16)}, // T46
	}
	for _, c := range cases {
		t.Run(c.dt.String(), func(t *testing.T) {
			arr := wArr(t, c.dt, c.vals...)
			var nulls uint32
			for _, v := range c.vals {
				if v == nil {
					nulls++
				}
			}
			wCheck(t, wField(c.dt), CollectorOptions{}, []Zone{wZ(uint64(len(c.vals)), nulls, 0, 0, c.mn, c.mx)}, arr)
		})
	}
}

// T45: views give the same bounds as their offset-based twins, for inlined
// (<= 12 bytes) and out-of-line values.
func TestWriterT45_ViewsMatchOffsetTypes(t *testing.T) {
	vals := []any{"short", strings.Repeat("long value ", 3), nil, "a", "zzzzzzzzzzzzzzzz", ""}
	sv := wCollect(t, wField(arrow.BinaryTypes.StringView), CollectorOptions{RowsPerZone: 2}, wArr(t, arrow.BinaryTypes.StringView, vals...))
	s := wCollect(t, wField(strT), CollectorOptions{RowsPerZone: 2}, wArr(t, strT, vals...))
	wSameZones(t, "utf8_view vs utf8", sv.Zones, s.Zones)
	bvals := make([]any, len(vals))
	for i, v := range vals {
		if v != nil {
			bvals[i] = []byte(v.(string))
		}
	}
	bv := wCollect(t, wField(arrow.BinaryTypes.BinaryView), CollectorOptions{RowsPerZone: 2}, wArr(t, arrow.BinaryTypes.BinaryView, bvals...))
	b := wCollect(t, wField(arrow.BinaryTypes.Binary), CollectorOptions{RowsPerZone: 2}, wArr(t, arrow.BinaryTypes.Binary, bvals...))
	wSameZones(t, "binary_view vs binary", bv.Zones, b.Zones)
	_, dec := wReadIPC(t, sv.IPC, 2)
	wSameZones(t, "utf8_view IPC", dec, sv.Zones)
}

// T47: booleans.
func TestWriterT47_Boolean(t *testing.T) {
	b := arrow.FixedWidthTypes.Boolean
	wCheck(t, wField(b), CollectorOptions{RowsPerZone: 3}, []Zone{
		wZ(3, 0, 0, 0, true, true),
		wZ(3, 1, 0, 0, false, true),
		wZ(2, 2, 0, 0, nil, nil),
	}, wArr(t, b, true, true, true, false, nil, true, nil, nil))
}

// T11, R32, R33: an all-null zone has null bounds and O = 0.
func TestWriterT11_R32_R33_AllNullZone(t *testing.T) {
	wCheck(t, wField(i32T), CollectorOptions{RowsPerZone: 4}, []Zone{
		wZ(4, 0, 0, 0, int32(1), int32(4)),
		wZ(4, 4, 0, 0, nil, nil),
		wZ(1, 0, 0, 0, int32(9), int32(9)),
	}, wArr(t, i32T, int32(1), int32(2), int32(3), int32(4), nil, nil, nil, nil, int32(9)))
}

// T12, R48: whole file null -> full-range bitmap, run-optimised (cookie 12347).
func TestWriterT12_R48_WholeFileNullBitmapRunOptimised(t *testing.T) {
	n := 200000
	arr := array.MakeArrayOfNull(wMem, i64T, n)
	s := wCollect(t, wField(i64T), CollectorOptions{}, arr)
	if !strings.HasPrefix(s.NullBitmapHex, "3b30") {
		t.Fatalf("R48: cookie %s, want 3b30 (12347)", s.NullBitmapHex[:8])
	}
	want := roaring.New()
	want.AddRange(0, uint64(n))
	if !s.NullBitmap.Equals(want) {
		t.Fatal("bitmap is not [0, N)")
	}
	if len(s.NullBitmapHex) > 200 {
		t.Fatalf("R48: %d hex chars for one run", len(s.NullBitmapHex))
	}
	wCheckBitmap(t, s)
}

// T13, R44: no nulls -> serialized empty bitmap, not "".
func TestWriterT13_R41_R44_NoNullsWritesEmptyBitmap(t *testing.T) {
	s := wCollect(t, wField(i32T), CollectorOptions{}, wArr(t, i32T, int32(1), int32(2)))
	if s.NullBitmapHex != "3a30000000000000" {
		t.Fatalf("seed_null_bitmap = %q", s.NullBitmapHex)
	}
	schema, _ := wReadIPC(t, s.IPC, DefaultRowsPerZone)
	if v, ok := schema.Metadata().GetValue("seed_null_bitmap"); !ok || v != "3a30000000000000" {
		t.Fatalf("IPC metadata seed_null_bitmap = %q, %v", v, ok)
	}
}

// T14, R45: nulls at offset 0, at the last row, and a run across a zone
// boundary; with sliced input (non-zero array offsets).
func TestWriterT14_R45_NullsAtEdgesAndAcrossZones(t *testing.T) {
	vals := make([]any, 23)
	for i := range vals {
		vals[i] = int64(i)
	}
	for _, i := range []int{0, 3, 4, 5, 22} {
		vals[i] = nil
	}
	full := wArr(t, i64T, append([]any{int64(99), nil, int64(98)}, vals...)...)
	arr := array.NewSlice(full, 3, int64(full.Len())) // offset 3 into the validity bitmap
	s := wCheck(t, wField(i64T), CollectorOptions{RowsPerZone: 4}, []Zone{
		wZ(4, 2, 0, 0, int64(1), int64(2)),
		wZ(4, 2, 0, 0, int64(6), int64(7)),
		wZ(4, 0, 0, 0, int64(8), int64(11)),
		wZ(4, 0, 0, 0, int64(12), int64(15)),
		wZ(4, 0, 0, 0, int64(16), int64(19)),
		wZ(3, 1, 0, 0, int64(20), int64(21)),
	}, arr)
	if !s.NullBitmap.Equals(roaring.BitmapOf(0, 3, 4, 5, 22)) {
		t.Fatalf("bitmap %v", s.NullBitmap)
	}
}

// R45: null positions across many chunks and batch boundaries, with long runs
// (whole 2^16 chunks) and isolated nulls.
func TestWriterR45_NullBitmapLargeLayout(t *testing.T) {
	n := 300000
	b := array.NewInt32Builder(wMem)
	want := roaring.New()
	for i := 0; i < n; i++ {
		null := i%997 == 0 || (i >= 65536 && i < 2*65536+7) || (i >= 200000 && i < 200100)
		if null {
			b.AppendNull()
			want.Add(uint32(i))
		} else {
			b.Append(int32(i))
		}
	}
	arr := b.NewArray()
	var parts []arrow.Array
	for lo := 0; lo < n; lo += 70001 {
		parts = append(parts, array.NewSlice(arr, int64(lo), int64(min(lo+70001, n))))
	}
	s := wCollect(t, wField(i32T), CollectorOptions{RowsPerZone: 1000}, parts...)
	if !s.NullBitmap.Equals(want) {
		t.Fatalf("bitmap has %d offsets, want %d", s.NullBitmap.GetCardinality(), want.GetCardinality())
	}
	wCheckBitmap(t, s)
}

// T17, R24: the Null type: every row is a logical null.
func TestWriterT17_R24_NullTypeCountsEveryRow(t *testing.T) {
	s := wCollect(t, wField(arrow.Null), CollectorOptions{RowsPerZone: 4}, array.NewNull(6))
	want := wWithStarts(4, wZ(4, 4, 0, 0, nil, nil), wZ(2, 2, 0, 0, nil, nil))
	wSameZones(t, "null type", s.Zones, want)
	_, dec := wReadIPC(t, s.IPC, 4)
	wSameZones(t, "null type IPC", dec, want)
	wCheckBitmap(t, s)
}

// T18, R24, R40, Q1: dictionary<Int32, Utf8> whose dictionary holds a null
// entry referenced by a valid key.
func TestWriterT18_DictionaryNullEntryIsNull(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: i32T, ValueType: strT}
	dict := wArr(t, strT, "b", nil, "a", "c")
	idx := wArr(t, i32T, int32(0), int32(1), nil, int32(3), int32(1), int32(0))
	arr := array.NewDictionaryArray(dt, idx, dict)
	s := wCheck(t, wField(dt), CollectorOptions{RowsPerZone: 3}, []Zone{
		wZ(3, 2, 0, 0, "b", "b"),
		wZ(3, 1, 0, 0, "b", "c"),
	}, arr)
	if !s.NullBitmap.Equals(roaring.BitmapOf(1, 2, 4)) {
		t.Fatalf("bitmap %v", s.NullBitmap)
	}
	schema, _ := wReadIPC(t, s.IPC, 3)
	if !arrow.TypeEqual(schema.Field(0).Type, dt) {
		t.Fatalf("R40: min type %s", schema.Field(0).Type)
	}
}

// T49, R40: unreferenced dictionary entries never narrow the bounds; the
// dictionary can differ per batch; NaN counted by value for a float
// dictionary (Q2).
func TestWriterT49_DictionaryBoundsFromReferencedValues(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: strT}
	a1 := array.NewDictionaryArray(dt, wArr(t, arrow.PrimitiveTypes.Int8, int8(2), int8(3)), wArr(t, strT, "A", "B", "m", "n", "zzz"))
	a2 := array.NewDictionaryArray(dt, wArr(t, arrow.PrimitiveTypes.Int8, int8(0), int8(0)), wArr(t, strT, "k", "0"))
	wCheck(t, wField(dt), CollectorOptions{RowsPerZone: 3}, []Zone{
		wZ(3, 0, 0, 0, "k", "n"), wZ(1, 0, 0, 0, "k", "k"),
	}, a1, a2)

	fdt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: f64T}
	fd := array.NewDictionaryArray(fdt,
		wArr(t, arrow.PrimitiveTypes.Uint8, uint8(0), uint8(1), uint8(2), uint8(1), nil, uint8(3)),
		wArr(t, f64T, 2.0, wF64(wNegNaN64), 0.0, -7.0))
	wCheck(t, wField(fdt), CollectorOptions{}, []Zone{
		wZ(6, 1, 2, 2, -7.0, 2.0),
	}, fd)
}

// R40: more distinct bound values than an Int8 index can address: the
// excess bounds are null (unknown), the others exact.
func TestWriterR40_DictionaryBoundIndexOverflowIsNull(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: i64T}
	var batches []arrow.Array
	for i := 0; i < 300; i++ {
		batches = append(batches, array.NewDictionaryArray(dt, wArr(t, arrow.PrimitiveTypes.Int8, int8(0)), wArr(t, i64T, int64(i))))
	}
	s := wCollect(t, wField(dt), CollectorOptions{RowsPerZone: 1}, batches...)
	_, dec := wReadIPC(t, s.IPC, 1)
	known := 0
	for i, z := range dec {
		if z.Min != nil {
			known++
			if z.Min != int64(i) || z.Max != int64(i) {
				t.Fatalf("zone %d: %v..%v", i, z.Min, z.Max)
			}
		}
	}
	if known != 128 {
		t.Fatalf("%d zones kept bounds, want 128 (Int8 index range)", known)
	}
}

// T19, R24, Q1, Q2: run-end-encoded: null runs are logical nulls, NaN runs
// count by value, bounds null; also through a sliced REE array.
func TestWriterT19_RunEndEncodedLogicalCounts(t *testing.T) {
	dt := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, f64T)
	runEnds := wArr(t, arrow.PrimitiveTypes.Int32, int32(3), int32(5), int32(9), int32(10))
	values := wArr(t, f64T, 1.0, nil, wF64(wNegNaN64), wF64(wPosNaN64))
	ree := array.NewRunEndEncodedArray(runEnds, values, 10, 0)
	s := wCollect(t, wField(dt), CollectorOptions{RowsPerZone: 4}, ree)
	want := wWithStarts(4, wZ(4, 1, 0, 0, nil, nil), wZ(4, 1, 3, 3, nil, nil), wZ(2, 0, 2, 1, nil, nil))
	wSameZones(t, "ree", s.Zones, want)
	_, dec := wReadIPC(t, s.IPC, 4)
	wSameZones(t, "ree IPC", dec, want)
	wCheckBitmap(t, s)
	if !s.NullBitmap.Equals(roaring.BitmapOf(3, 4)) {
		t.Fatalf("bitmap %v", s.NullBitmap)
	}
	sliced := array.NewSlice(ree, 4, 9) // rows 4..8: null, NaN-x4
	s2 := wCollect(t, wField(dt), CollectorOptions{RowsPerZone: 4}, sliced)
	wSameZones(t, "ree sliced", s2.Zones, wWithStarts(4, wZ(4, 1, 3, 3, nil, nil), wZ(1, 0, 1, 1, nil, nil)))
}

// T20, R24, R47: struct: only outer nulls count; bounds null.
func TestWriterT20_R47_StructOuterNullsOnly(t *testing.T) {
	arr := wStructArr(t)
	s := wCollect(t, wField(arr.DataType()), CollectorOptions{RowsPerZone: 4}, arr)
	want := wWithStarts(4, wZ(4, 1, 0, 0, nil, nil), wZ(4, 1, 0, 0, nil, nil), wZ(3, 1, 0, 0, nil, nil))
	wSameZones(t, "struct", s.Zones, want)
	if !s.NullBitmap.Equals(roaring.BitmapOf(1, 5, 9)) {
		t.Fatalf("R47: bitmap %v", s.NullBitmap)
	}
	_, dec := wReadIPC(t, s.IPC, 4)
	wSameZones(t, "struct IPC", dec, want)
}

// T21, R27: List<Float32> with NaN elements: not a float column.
func TestWriterT21_R27_ListOfFloatsHasNoNaNCounts(t *testing.T) {
	dt := arrow.ListOf(arrow.PrimitiveTypes.Float32)
	b := array.NewListBuilder(wMem, arrow.PrimitiveTypes.Float32)
	vb := b.ValueBuilder().(*array.Float32Builder)
	b.Append(true)
	vb.Append(wF32(0x7FC0_0000))
	vb.Append(wF32(0xFFC0_0000))
	b.AppendNull()
	b.Append(true)
	vb.AppendNull()
	b.AppendNull()
	arr := b.NewArray()
	s := wCollect(t, wField(dt), CollectorOptions{}, arr)
	want := wWithStarts(DefaultRowsPerZone, wZ(4, 2, 0, 0, nil, nil))
	wSameZones(t, "list", s.Zones, want)
	_, dec := wReadIPC(t, s.IPC, DefaultRowsPerZone)
	wSameZones(t, "list IPC", dec, want)

	// Other nested types: fixed-size list, large list, list view, map.
	for _, arr := range []arrow.Array{
		array.MakeArrayOfNull(wMem, arrow.FixedSizeListOf(2, f64T), 3),
		array.MakeArrayOfNull(wMem, arrow.LargeListOf(f64T), 3),
		array.MakeArrayOfNull(wMem, arrow.ListViewOf(f64T), 3),
		array.MakeArrayOfNull(wMem, arrow.MapOf(strT, f64T), 3),
	} {
		s := wCollect(t, wField(arr.DataType()), CollectorOptions{}, arr)
		wSameZones(t, arr.DataType().String(), s.Zones, wWithStarts(DefaultRowsPerZone, wZ(3, 3, 0, 0, nil, nil)))
		wReadIPC(t, s.IPC, DefaultRowsPerZone)
	}
}

// T22–T31, R25, R26, R31, R39: floats.
func TestWriterR25_R26_R31_R39_FloatCatalogueT22toT31(t *testing.T) {
	negZero := wF64(wNegZero)
	cases := []struct {
		name string
		vals []any
		want Zone
	}{
		{"T22_AllPositiveNaN", []any{wF64(wPosNaN64), wF64(wGoNaN64)}, wZ(2, 0, 2, 0, nil, nil)},
		{"T23_AllNegativeNaN", []any{wF64(wNegNaN64), wF64(0xFFF0_0000_0000_0001)}, wZ(2, 0, 2, 2, nil, nil)},
		{"T24_MixedNaNPayloads", []any{wF64(wPosNaN64), wF64(wGoNaN64), wF64(wNegNaN64), 2.0}, wZ(4, 0, 3, 1, 2.0, 2.0)},
		{"T25_BothZeros", []any{0.0, negZero}, wZ(2, 0, 0, 0, negZero, 0.0)},
		{"T26_PositiveZeroOnly_R39", []any{0.0, 0.0}, wZ(2, 0, 0, 0, negZero, 0.0)},
		{"T27_NegativeZeroOnly_R39", []any{negZero}, wZ(1, 0, 0, 0, negZero, 0.0)},
		{"R39_ZeroMinWithPositives", []any{0.0, 5.0}, wZ(2, 0, 0, 0, negZero, 5.0)},
		{"R39_ZeroMaxWithNegatives", []any{negZero, -5.0}, wZ(2, 0, 0, 0, -5.0, 0.0)},
		{"T28_Infinities", []any{math.Inf(1), 1.0, math.Inf(-1)}, wZ(3, 0, 0, 0, math.Inf(-1), math.Inf(1))},
		{"T31_NaNAndNullsOnly", []any{nil, wF64(wNegNaN64), nil, wF64(wPosNaN64)}, wZ(4, 2, 2, 1, nil, nil)},
		{"Extremes", []any{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}, wZ(3, 0, 0, 0, -math.MaxFloat64, math.MaxFloat64)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wCheck(t, wField(f64T), CollectorOptions{}, []Zone{c.want}, wArr(t, f64T, c.vals...))
		})
	}
	t.Run("T30_Float16", func(t *testing.T) {
		f16 := arrow.FixedWidthTypes.Float16
		wCheck(t, wField(f16), CollectorOptions{}, []Zone{wZ(4, 0, 3, 1, wF16(0x3C00), wF16(0x3C00))},
			wArr(t, f16, wF16(0x7E00), wF16(0xFE00), wF16(0x7C01), wF16(0x3C00)))
		wCheck(t, wField(f16), CollectorOptions{}, []Zone{wZ(2, 0, 0, 0, wF16(0x8000), wF16(0x0000))},
			wArr(t, f16, wF16(0x0000), wF16(0x0000)))
	})
	t.Run("Float32", func(t *testing.T) {
		f32 := arrow.PrimitiveTypes.Float32
		wCheck(t, wField(f32), CollectorOptions{}, []Zone{wZ(5, 1, 2, 1, wF32(0x8000_0000), float32(3))},
			wArr(t, f32, wF32(0x7FC0_0000), float32(3), nil, wF32(0xFF80_0001), float32(0)))
	})
}

// T29, R25: null slots whose bytes are NaN are not NaNs.
func TestWriterT29_NullSlotsWithNaNBytesAreNotNaN(t *testing.T) {
	vals := []float64{wF64(wPosNaN64), 1.0, wF64(wNegNaN64), 2.0}
	valid := []bool{false, true, false, true}
	for _, n := range []int{4, 70} { // short and beyond one 64-row validity word
		var vs []float64
		var vd []bool
		for len(vs) < n {
			vs = append(vs, vals...)
			vd = append(vd, valid...)
		}
		vs, vd = vs[:n], vd[:n]
		b := array.NewFloat64Builder(wMem)
		b.AppendValues(vs, vd) // null slots keep their NaN bytes
		arr := b.NewArray()
		raw := arrow.Float64Traits.CastFromBytes(arr.Data().Buffers()[1].Bytes())
		if !math.IsNaN(raw[0]) {
			t.Fatal("setup: null slot lost its NaN bytes")
		}
		s := wCollect(t, wField(f64T), CollectorOptions{}, arr)
		z := s.Zones[0]
		if z.NaNCount != 0 || z.NegativeNaNCount != 0 || z.NullCount != uint64(n/2) || z.Min != 1.0 || z.Max != 2.0 {
			t.Fatalf("n=%d: zone %+v", n, z)
		}
	}
}

// T48, Q5: intervals: null bounds, exact null counts.
func TestWriterT48_IntervalsNullBounds(t *testing.T) {
	b := array.NewMonthIntervalBuilder(wMem)
	b.Append(1)
	b.AppendNull()
	b.Append(-3)
	s := wCollect(t, wField(arrow.FixedWidthTypes.MonthInterval), CollectorOptions{}, b.NewArray())
	wSameZones(t, "month interval", s.Zones, wWithStarts(DefaultRowsPerZone, wZ(3, 1, 0, 0, nil, nil)))
	wReadIPC(t, s.IPC, DefaultRowsPerZone)
	for _, dt := range []arrow.DataType{arrow.FixedWidthTypes.DayTimeInterval, arrow.FixedWidthTypes.MonthDayNanoInterval} {
		s := wCollect(t, wField(dt), CollectorOptions{}, array.MakeArrayOfNull(wMem, dt, 2))
		wSameZones(t, dt.String(), s.Zones, wWithStarts(DefaultRowsPerZone, wZ(2, 2, 0, 0, nil, nil)))
		wReadIPC(t, s.IPC, DefaultRowsPerZone)
	}
}

// T52, Q4: extension columns: storage type, null bounds, logical counts; a
// float-storage extension still counts NaNs (CountsNaN).
func TestWriterT52_ExtensionColumns(t *testing.T) {
	st := wArr(t, &arrow.FixedSizeBinaryType{ByteWidth: 16}, bytes.Repeat([]byte{2}, 16), nil, bytes.Repeat([]byte{1}, 16))
	uuid := array.NewExtensionArrayWithStorage(wUUIDType(), st)
	s := wCollect(t, wField(wUUIDType()), CollectorOptions{}, uuid)
	wSameZones(t, "uuid", s.Zones, wWithStarts(DefaultRowsPerZone, wZ(3, 1, 0, 0, nil, nil)))
	schema, _ := wReadIPC(t, s.IPC, DefaultRowsPerZone)
	if schema.Field(0).Type.ID() != arrow.FIXED_SIZE_BINARY {
		t.Fatalf("Q4: min type %s", schema.Field(0).Type)
	}
	fs := wArr(t, f64T, 1.0, wF64(wNegNaN64), nil, wF64(wPosNaN64))
	fe := array.NewExtensionArrayWithStorage(wFloatExtType(), fs)
	s2 := wCollect(t, wField(wFloatExtType()), CollectorOptions{}, fe)
	wSameZones(t, "float ext", s2.Zones, wWithStarts(DefaultRowsPerZone, wZ(4, 1, 2, 1, nil, nil)))
}

// Q3: union columns get no seed.
func TestWriterQ3_UnionGetsNoSeed(t *testing.T) {
	u := arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: i32T}}, []arrow.UnionTypeCode{0})
	for _, dt := range []arrow.DataType{
		u,
		arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: i32T}}, []arrow.UnionTypeCode{0}),
		arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, u),
		&arrow.DictionaryType{IndexType: i32T, ValueType: u},
	} {
		if _, err := NewCollector(wField(dt), CollectorOptions{}); !errors.Is(err, ErrNoSeedForType) {
			t.Errorf("%s: %v, want ErrNoSeedForType", dt, err)
		}
	}
	// A list of unions is a list: outer nulls are well defined.
	if _, err := NewCollector(wField(arrow.ListOf(u)), CollectorOptions{}); err != nil {
		t.Errorf("list<union>: %v", err)
	}
}

// R64: errors are sticky; Finish then returns them and no seed.
func TestWriterR64_ObserveErrorsAreStickyAndOmitTheSeed(t *testing.T) {
	c, _ := NewCollector(wField(i32T), CollectorOptions{})
	if err := c.Observe(wArr(t, i32T, int32(1))); err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(wArr(t, i64T, int64(1))); !errors.Is(err, ErrObserveType) {
		t.Fatalf("type mismatch: %v", err)
	}
	if err := c.Observe(wArr(t, i32T, int32(2))); !errors.Is(err, ErrObserveType) {
		t.Fatalf("sticky: %v", err)
	}
	if s, err := c.Finish(); s != nil || !errors.Is(err, ErrObserveType) {
		t.Fatalf("Finish = %v, %v", s, err)
	}
	// Reset after Finish: usable again.
	if err := c.Observe(wArr(t, i32T, int32(3))); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Finish(); err != nil || s.NumRows != 1 {
		t.Fatalf("after reset: %v, %v", s, err)
	}
	if err := c.Observe(nil); !errors.Is(err, ErrObserveType) {
		t.Fatalf("nil array: %v", err)
	}
	// Timestamp time zones are part of the type.
	ts, _ := NewCollector(wField(&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}), CollectorOptions{})
	if err := ts.Observe(wArr(t, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+00:00"}, arrow.Timestamp(1))); !errors.Is(err, ErrObserveType) {
		t.Fatalf("tz mismatch: %v", err)
	}
}

// R28, R64: more than 2^32 rows cannot be described (offsets and counts are
// 32-bit): error, no seed. Exactly 2^32 rows is fine: rpz = 2^32-1 gives
// zones of 2^32-1 and 1 rows with exact counts.
func TestWriterR28_R64_CountOverflowOmitsSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a 2^32-row null bitmap")
	}
	if strconv.IntSize < 64 {
		t.Skip("2^31-row arrays need a 64-bit int")
	}
	shift := 31 // a variable: the constant 1<<31 does not fit a 32-bit int
	half := 1 << shift
	c, _ := NewCollector(wField(arrow.Null), CollectorOptions{RowsPerZone: math.MaxUint32})
	if err := c.Observe(array.NewNull(half)); err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(array.NewNull(half)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if s.NumRows != 1<<32 || len(s.Zones) != 2 || s.Zones[0].NullCount != math.MaxUint32 || s.Zones[1].Rows != 1 || s.Zones[1].NullCount != 1 {
		t.Fatalf("2^32 rows: %+v", s.Zones)
	}
	if s.NullBitmap.GetCardinality() != 1<<32 {
		t.Fatalf("bitmap cardinality %d", s.NullBitmap.GetCardinality())
	}
	if err := c.Observe(array.NewNull(half)); err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(array.NewNull(half + 1)); !errors.Is(err, ErrSeedCountOverflow) {
		t.Fatalf("2^32+1 rows: %v", err)
	}
	if s, err := c.Finish(); s != nil || !errors.Is(err, ErrSeedCountOverflow) {
		t.Fatalf("Finish after overflow = %v, %v", s, err)
	}
}

// §6.2 inside the collector: T53, T56, T57, T58, R37, R38, T-R1, T-R2.
func TestWriterR36_R37_R38_CollectorTruncation(t *testing.T) {
	long := strings.Repeat("abcdefghij", 1024)
	t.Run("T53_DefaultL64", func(t *testing.T) {
		wCheck(t, wField(strT), CollectorOptions{}, []Zone{wZ(2, 0, 0, 0, "a", long[:63]+"e")},
			wArr(t, strT, long, "a"))
	})
	t.Run("T-R2_Configurable", func(t *testing.T) {
		wCheck(t, wField(strT), CollectorOptions{MaxBoundBytes: 4}, []Zone{wZ(2, 0, 0, 0, "abcd", "abcf")},
			wArr(t, strT, "abcdefgh", "abcezzzz"))
	})
	t.Run("T56_R37_MaxNullMinKept", func(t *testing.T) {
		v := strings.Repeat("\U0010FFFF", 2000)
		wCheck(t, wField(strT), CollectorOptions{}, []Zone{wZ(1, 0, 0, 0, v[:64], nil)}, wArr(t, strT, v))
	})
	t.Run("T57_BinaryFFWithinCap", func(t *testing.T) {
		v := bytes.Repeat([]byte{0xFF}, 100)
		wCheck(t, wField(arrow.BinaryTypes.LargeBinary), CollectorOptions{}, []Zone{wZ(1, 0, 0, 0, v[:64], v)},
			wArr(t, arrow.BinaryTypes.LargeBinary, v))
	})
	t.Run("T58_BinaryIncrement", func(t *testing.T) {
		v := append([]byte("ab"), bytes.Repeat([]byte{0xFF}, 100)...)
		wCheck(t, wField(arrow.BinaryTypes.Binary), CollectorOptions{}, []Zone{wZ(1, 0, 0, 0, v[:64], []byte("ac"))},
			wArr(t, arrow.BinaryTypes.Binary, v))
	})
	t.Run("T-R1_FixedSizeBinaryNeverTruncated", func(t *testing.T) {
		dt := &arrow.FixedSizeBinaryType{ByteWidth: 100}
		v := bytes.Repeat([]byte{0xFF}, 100)
		wCheck(t, wField(dt), CollectorOptions{MaxBoundBytes: 8}, []Zone{wZ(1, 0, 0, 0, v, v)}, wArr(t, dt, v))
	})
	t.Run("T-R1_DictionaryValuesNeverTruncated", func(t *testing.T) {
		dt := &arrow.DictionaryType{IndexType: i32T, ValueType: strT}
		wCheck(t, wField(dt), CollectorOptions{MaxBoundBytes: 8}, []Zone{wZ(1, 0, 0, 0, long, long)}, wArr(t, dt, long))
	})
	t.Run("R38_InvalidUTF8InputGivesUnknownBound", func(t *testing.T) {
		wCheck(t, wField(strT), CollectorOptions{}, []Zone{wZ(2, 0, 0, 0, "a", nil)}, wArr(t, strT, "a", "b\xff"))
	})
	t.Run("Views", func(t *testing.T) {
		wCheck(t, wField(arrow.BinaryTypes.StringView), CollectorOptions{MaxBoundBytes: 3}, []Zone{wZ(2, 0, 0, 0, "abc", "xy{")},
			wArr(t, arrow.BinaryTypes.StringView, "abcdef", "xyzzzzzzzzzzzzzzzzz"))
	})
}

// T60: LIKE 'p%' pruning with truncated bounds stays sound: for a zone that
// holds a value with prefix p, max >= p and min <= p-prefix.
func TestWriterT60_PrefixPruningSoundWithTruncation(t *testing.T) {
	vals := []string{"prefix-" + strings.Repeat("z", 200), "aaa", strings.Repeat("\U0010FFFF", 30) + "x", "pre"}
	s := wCollect(t, wField(strT), CollectorOptions{MaxBoundBytes: 8}, wArr(t, strT, anySlice(vals)...))
	z := s.Zones[0]
	for _, v := range vals {
		for k := 0; k <= len(v); k++ {
			p := v[:k]
			if z.Max != nil && z.Max.(string) < p {
				t.Fatalf("max %q < prefix %q of a present value", z.Max, p)
			}
			if z.Min != nil && z.Min.(string) > v {
				t.Fatalf("min %q > present value %q", z.Min, v)
			}
		}
	}
}

func anySlice[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// Encode refuses what it cannot encode (R35, R38, R28) and every version
// but 1.
func TestWriterEncodeRejectsUnencodableSeeds(t *testing.T) {
	cases := []struct {
		name string
		dt   arrow.DataType
		z    Zone
	}{
		{"bound on list (R35)", arrow.ListOf(i32T), wZ(1, 0, 0, 0, int32(1), int32(1))},
		{"wrong Go type", i64T, wZ(1, 0, 0, 0, int32(1), int32(1))},
		{"fsb width (R38)", &arrow.FixedSizeBinaryType{ByteWidth: 4}, wZ(1, 0, 0, 0, []byte("abc"), []byte("abcd"))},
		{"count beyond uint32 (R28)", i64T, Zone{Stats: Stats{Rows: 1 << 33, NullCount: 1 << 32}}},
	}
	for _, c := range cases {
		s := &Seed{Version: 1, ValueType: c.dt, RowsPerZone: 1, NumRows: c.z.Rows, Zones: []Zone{c.z}, NullBitmap: roaring.New()}
		if _, err := Encode(s); !errors.Is(err, ErrEncode) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	ok := &Seed{Version: 1, ValueType: i64T, RowsPerZone: 1, NumRows: 1, Zones: []Zone{wZ(1, 0, 0, 0, int64(1), int64(1))}}
	if _, err := Encode(ok); err != nil {
		t.Fatalf("Encode without a null bitmap: %v", err)
	}
	for _, v := range []int{0, 2} {
		ok.Version = v
		if _, err := Encode(ok); !errors.Is(err, ErrEncode) {
			t.Errorf("Encode of a version %d seed: %v, want ErrEncode", v, err)
		}
	}
	if _, err := Encode(nil); !errors.Is(err, ErrEncode) {
		t.Errorf("Encode(nil): %v", err)
	}
}

// R38, E19: a decimal column holding values beyond its precision (invalid
// data) gives unknown bounds on that side, never an invalid bound.
func TestWriterR38_DecimalBoundsOutsidePrecisionAreNull(t *testing.T) {
	d32 := &arrow.Decimal32Type{Precision: 3, Scale: 0}
	wCheck(t, wField(d32), CollectorOptions{}, []Zone{wZ(2, 0, 0, 0, decimal.Decimal32(-5), nil)},
		wArr(t, d32, decimal.Decimal32(12345), decimal.Decimal32(-5)))
	d128 := &arrow.Decimal128Type{Precision: 2, Scale: 0}
	wCheck(t, wField(d128), CollectorOptions{}, []Zone{wZ(2, 0, 0, 0, nil, decimal128.FromI64(99))},
		wArr(t, d128, decimal128.FromI64(99), decimal128.FromI64(-100)))
}

// R42, R48: dense chunks (bitmap containers), chunks that become run
// containers, and mixed layouts serialize exactly like roaring (checked in
// wCheckBitmap), with the plain cookie when no container is a run.
func TestWriterR48_NullBitmapContainerKinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(48, 48))
	layouts := map[string]func(i int) bool{
		"dense_random_bitmap_containers": func(i int) bool { return rng.IntN(10) < 3 },
		"long_runs_with_gaps":            func(i int) bool { return i%10000 < 9000 && i%777 != 0 },
		"alternating_runs":               func(i int) bool { return (i/3)%2 == 0 },
		"sparse_array_only":              func(i int) bool { return i%1013 == 5 },
	}
	for name, isNull := range layouts {
		t.Run(name, func(t *testing.T) {
			n := 200000
			b := array.NewInt64Builder(wMem)
			for i := 0; i < n; i++ {
				if isNull(i) {
					b.AppendNull()
				} else {
					b.Append(int64(i))
				}
			}
			arr := b.NewArray()
			s := wCollect(t, wField(i64T), CollectorOptions{}, array.NewSlice(arr, 0, 100003), array.NewSlice(arr, 100003, int64(n)))
			wCheckBitmap(t, s)
			if name == "sparse_array_only" && !strings.HasPrefix(s.NullBitmapHex, "3a30") {
				t.Fatalf("array-only bitmap should use cookie 12346: %s", s.NullBitmapHex[:8])
			}
		})
	}
}

// AppendFinish (R11, R21, R51, R64): no rows leaves dst as it was; a sticky
// Observe error leaves dst as it was and is returned; the collector is
// reset either way; a seed is appended after dst's bytes.
func TestWriterR11_R64_AppendFinishNoRowsAndErrorsLeaveDst(t *testing.T) {
	c, _ := NewCollector(wField(i32T), CollectorOptions{})
	dst := []byte("prefix")
	if got, err := c.AppendFinish(dst); err != nil || string(got) != "prefix" {
		t.Fatalf("no rows: %q, %v", got, err)
	}
	if err := c.Observe(wArr(t, i64T, int64(1))); !errors.Is(err, ErrObserveType) {
		t.Fatalf("type mismatch: %v", err)
	}
	if got, err := c.AppendFinish(dst); !errors.Is(err, ErrObserveType) || string(got) != "prefix" {
		t.Fatalf("sticky error: %q, %v", got, err)
	}
	if err := c.Observe(wArr(t, i32T, int32(3), nil)); err != nil {
		t.Fatalf("after reset: %v", err)
	}
	got, err := c.AppendFinish(dst)
	if err != nil || !bytes.HasPrefix(got, dst) {
		t.Fatalf("seed: %v", err)
	}
	s, err := Decode(got[len(dst):], DecodeOptions{RowsPerZone: DefaultRowsPerZone, NumRows: 2, ColumnType: i32T, TableFlagged: true})
	if err != nil || len(s.Zones) != 1 || s.Zones[0].NullCount != 1 || s.Zones[0].Min != int32(3) {
		t.Fatalf("Decode(appended seed) = %+v, %v", s, err)
	}
}

// AppendFinish keeps its working memory (zones, serialized null bitmap,
// record batch body): the next data file's seed, appended to a buffer that
// has room, allocates only a few small objects (the boxed bounds), far less
// than the seed's size — what lets a writer collect seeds without garbage
// proportional to them.
func TestWriterR21_R51_AppendFinishReusesWorkingMemory(t *testing.T) {
	const rows = 200_000
	b := array.NewFloat64Builder(wMem)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range rows {
		if rng.IntN(50) == 0 {
			b.AppendNull()
			continue
		}
		b.Append(float64(i) * 1.5)
	}
	arr := b.NewArray()
	defer arr.Release()
	c, err := NewCollector(wField(f64T), CollectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dst []byte
	once := func() {
		if err := c.Observe(arr); err != nil {
			t.Fatal(err)
		}
		if dst, err = c.AppendFinish(dst[:0]); err != nil {
			t.Fatal(err)
		}
	}
	once()
	seedSize := len(dst)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		once()
	}
	runtime.ReadMemStats(&after)
	perSeed := (after.TotalAlloc - before.TotalAlloc) / n
	if allocs := (after.Mallocs - before.Mallocs) / n; allocs > 8 || perSeed*8 > uint64(seedSize) {
		t.Fatalf("AppendFinish of a %d-byte seed allocates %d objects, %d bytes per seed", seedSize, allocs, perSeed)
	}
	ref, _ := NewCollector(wField(f64T), CollectorOptions{})
	if err := ref.Observe(arr); err != nil {
		t.Fatal(err)
	}
	s, err := ref.Finish()
	if err != nil || !bytes.Equal(s.IPC, dst) {
		t.Fatalf("AppendFinish wrote %d bytes, Finish %d different ones (%v)", len(dst), len(s.IPC), err)
	}
}
