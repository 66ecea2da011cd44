package seedio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestR60_DispatchOnVersionKey(t *testing.T) {
	// R60/T75: v0 and v1 seeds of one data file (different columns) are
	// each dispatched by their own `version` key.
	v0 := int64Spec(0, 4, 6, [2]any{int64(1), int64(4)}, [2]any{int64(5), int64(6)})
	v1 := int64Spec(1, 4, 6, [2]any{int64(1), int64(4)}, [2]any{int64(5), int64(6)})
	s0 := mustDecode(t, v0.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 6))
	s1 := mustDecode(t, v1.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 6))
	if s0.Version != 0 || s1.Version != 1 {
		t.Fatalf("versions %d %d", s0.Version, s1.Version)
	}
	if s0.Zones[0].NaNSignKnown || !s1.Zones[0].NaNSignKnown {
		t.Fatal("sign knowledge must follow the version")
	}
	if s0.NullBitmap == nil || !s0.NullBitmap.IsEmpty() || s1.NullBitmap == nil || !s1.NullBitmap.IsEmpty() {
		t.Fatal("bitmaps must be present and empty")
	}
}

func TestT75_V0AndV1InOneFragment(t *testing.T) {
	// Two columns of one data file: the float column has a v0 seed (NaN max
	// marker), the int column a v1 seed; each decodes by its own rules.
	f := seedSpec{version: 0, valueType: arrow.PrimitiveTypes.Float64, lens: []uint64{4},
		mins: []any{1.0}, maxs: []any{f64bits(posNaN64)}, nans: []uint32{1}}
	i := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	sf := mustDecode(t, f.bytes(t), decodeOpts(arrow.PrimitiveTypes.Float64, 4, 4))
	si := mustDecode(t, i.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4))
	if sf.Version != 0 || sf.Zones[0].Max != nil || sf.Zones[0].Min != 1.0 {
		t.Fatalf("v0 float zone %+v", sf.Zones[0])
	}
	if si.Version != 1 || si.Zones[0].Max != int64(2) {
		t.Fatalf("v1 int zone %+v", si.Zones[0])
	}
}

func TestR9_T63_IPCFileExactly(t *testing.T) {
	good := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)}).bytes(t)
	o := decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4)
	mustDecode(t, good, o)

	var stream bytes.Buffer
	spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	sch := spec.schema()
	sw := ipc.NewWriter(&stream, ipc.WithSchema(sch))
	rec := spec.record(t, sch)
	if err := sw.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	sw.Close()

	cases := map[string][]byte{
		"T63 stream format":          stream.Bytes(),
		"trailing byte":              append(bytes.Clone(good), 0),
		"trailing ARROW1":            append(bytes.Clone(good), []byte("ARROW1")...),
		"leading byte":               append([]byte{0}, good...),
		"leading 8 bytes":            append(make([]byte, 8), good...),
		"truncated":                  good[:len(good)-1],
		"footer only":                good[len(good)-64:],
		"T63 not IPC":                []byte("this is not an arrow file at all, just text padding...."),
		"empty":                      nil,
		"magic only":                 []byte("ARROW1\x00\x00ARROW1"),
		"double file":                append(bytes.Clone(good), good...),
		"garbage between EOS/footer": insertBeforeFooter(good, []byte{1, 2, 3, 4, 5, 6, 7, 8}),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			err := wantCode(t, b, o, ErrSeedNotIPCFile)
			var se *SeedError
			if !errors.As(err, &se) || se.Code != "E04" {
				t.Fatalf("want *SeedError E04, got %T %v", err, err)
			}
		})
	}
}

// insertBeforeFooter inserts extra bytes between the messages and the footer
// (footer length unchanged), i.e. bytes no block accounts for.
func insertBeforeFooter(b, extra []byte) []byte {
	flen := int(binary.LittleEndian.Uint32(b[len(b)-10:]))
	start := len(b) - 10 - flen
	out := append([]byte{}, b[:start]...)
	out = append(out, extra...)
	return append(out, b[start:]...)
}

func TestR12_CompressedBodiesAccepted(t *testing.T) {
	// T66 / Q15: ZSTD and LZ4 bodies decode (writers never compress).
	for name, opt := range map[string]ipc.Option{"zstd": ipc.WithZstd(), "lz4": ipc.WithLZ4()} {
		t.Run(name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: arrow.BinaryTypes.String, lens: []uint64{8, 8, 3},
				mins: []any{strings.Repeat("a", 300), "b", "c"}, maxs: []any{strings.Repeat("z", 300), "bb", "cc"},
				nulls: []uint32{1, 0, 0},
				meta:  [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 3)}},
				opts:  []ipc.Option{opt, ipc.WithMinSpaceSavings(0)}}
			b := spec.bytes(t)
			s := mustDecode(t, b, decodeOpts(arrow.BinaryTypes.String, 8, 19))
			if s.Zones[0].Min != strings.Repeat("a", 300) || s.Zones[2].Max != "cc" {
				t.Fatalf("zones %+v", s.Zones)
			}
			lay, err := checkIPCFile(b, DefaultMaxDecodedBytes)
			if err != nil || !lay.compressed {
				t.Fatalf("expected a compressed body (%v)", err)
			}
		})
	}
}

func TestT66_CompressedBodyBudget(t *testing.T) {
	// A compressed buffer claiming more decompressed bytes than the budget is
	// refused before anything is allocated.
	spec := seedSpec{version: 1, valueType: arrow.BinaryTypes.String, lens: []uint64{4},
		mins: []any{strings.Repeat("a", 5000)}, maxs: []any{strings.Repeat("b", 5000)},
		opts: []ipc.Option{ipc.WithZstd(), ipc.WithMinSpaceSavings(0)}}
	b := spec.bytes(t)
	o := decodeOpts(arrow.BinaryTypes.String, 4, 4)
	mustDecode(t, b, o)
	o.MaxDecodedBytes = 1000
	wantCode(t, b, o, ErrSeedNotIPCFile)
}

func hexOf(t testing.TB, offsets ...uint32) string {
	t.Helper()
	h, err := encodeNullBitmapHex(roaring.BitmapOf(offsets...))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestR10_T10_TwoBatchesRejected(t *testing.T) {
	for _, v := range []int{0, 1} {
		spec := int64Spec(v, 4, 4, [2]any{int64(1), int64(2)})
		spec.batches = 2
		wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4), ErrSeedBatchCount)
	}
}

func TestR11_T01_ZeroBatches(t *testing.T) {
	for _, v := range []int{0, 1} {
		spec := seedSpec{version: v, valueType: arrow.PrimitiveTypes.Int64, batches: -1}
		b := spec.bytes(t)
		if v == 0 {
			s := mustDecode(t, b, decodeOpts(arrow.PrimitiveTypes.Int64, 4, 0))
			if len(s.Zones) != 0 {
				t.Fatal("zones from an empty seed")
			}
		} else {
			// Q6: a v1 seed has exactly one batch, even for N = 0.
			wantCode(t, b, decodeOpts(arrow.PrimitiveTypes.Int64, 4, 0), ErrSeedBatchCount)
		}
		wantCode(t, b, decodeOpts(arrow.PrimitiveTypes.Int64, 4, 3), ErrSeedBatchCount)
	}
	// A zero-row batch is accepted only for N = 0.
	spec := seedSpec{version: 1, valueType: arrow.PrimitiveTypes.Int64}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 0))
	if len(s.Zones) != 0 {
		t.Fatal("zones from an empty batch")
	}
	wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 1), ErrSeedCoverage)
}

func TestR17_T64_Version(t *testing.T) {
	for _, v := range []string{"0", "2", "01", "", " 1", "1 ", "v1", "1\x00"} {
		spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
		spec.meta = [][2]string{{metaVersion, v}, {metaNullBitmap, ""}}
		err := wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4), ErrSeedVersionUnsupported)
		if !strings.Contains(err.Error(), "E05") {
			t.Fatalf("message lacks code: %v", err)
		}
	}
}

func TestR5_R18_MetadataKeys(t *testing.T) {
	// Unknown keys are ignored (R18); also a stray rows_per_zone key, which
	// a reader never takes from the IPC file (R5).
	spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	spec.meta = [][2]string{{"rows_per_zone", "999"}, {metaVersion, "1"}, {"x", "y"}, {metaNullBitmap, ""}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4))
	if s.RowsPerZone != 4 {
		t.Fatal("rows_per_zone must come from the locator (R5)")
	}
	// Duplicate keys: E06 (T64), whichever key is duplicated.
	for _, dup := range [][][2]string{
		{{metaVersion, "1"}, {metaVersion, "1"}},
		{{metaVersion, "1"}, {metaNullBitmap, ""}, {metaNullBitmap, emptyNullBitmapHex}},
		{{metaVersion, "1"}, {"x", "1"}, {"x", "2"}},
	} {
		spec.meta = dup
		wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4), ErrSeedSchema)
	}
}

func TestR14_T65_SchemaShape(t *testing.T) {
	u32 := arrow.PrimitiveTypes.Uint32
	u64 := arrow.PrimitiveTypes.Uint64
	i64 := arrow.PrimitiveTypes.Int64
	f := func(name string, dt arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: nullable}
	}
	v1 := []arrow.Field{f("min", i64, true), f("max", i64, true), f("null_count", u32, false), f("nan_count", u32, false), f("negative_nan_count", u32, false), f("zone_length", u64, false)}
	cases := map[string]struct {
		version int
		fields  []arrow.Field
	}{
		"v0 with negative_nan_count": {0, v1},
		"v1 without it":              {1, []arrow.Field{v1[0], v1[1], v1[2], v1[3], v1[5]}},
		"misordered":                 {1, []arrow.Field{v1[1], v1[0], v1[2], v1[3], v1[4], v1[5]}},
		"extra field":                {1, append(append([]arrow.Field{}, v1...), f("extra", u32, false))},
		"missing max":                {1, []arrow.Field{v1[0], v1[2], v1[3], v1[4], v1[5]}},
		"renamed":                    {1, []arrow.Field{v1[0], f("maximum", i64, true), v1[2], v1[3], v1[4], v1[5]}},
		"count uint64":               {1, []arrow.Field{v1[0], v1[1], f("null_count", u64, false), v1[3], v1[4], v1[5]}},
		"count nullable":             {1, []arrow.Field{v1[0], v1[1], v1[2], f("nan_count", u32, true), v1[4], v1[5]}},
		"zone_length uint32":         {1, []arrow.Field{v1[0], v1[1], v1[2], v1[3], v1[4], f("zone_length", u32, false)}},
		"min not nullable":           {1, []arrow.Field{f("min", i64, false), v1[1], v1[2], v1[3], v1[4], v1[5]}},
		"duplicate field":            {1, []arrow.Field{v1[0], v1[0], v1[2], v1[3], v1[4], v1[5]}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := int64Spec(c.version, 4, 4, [2]any{int64(1), int64(2)})
			spec.fields = c.fields
			wantCode(t, spec.bytes(t), decodeOpts(i64, 4, 4), ErrSeedSchema)
		})
	}
}

func TestR15_T51_ValueTypeMustEqualColumnType(t *testing.T) {
	ts := func(tz string) arrow.DataType { return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: tz} }
	cases := []struct {
		name         string
		seed, column arrow.DataType
	}{
		{"LargeUtf8 for Utf8", arrow.BinaryTypes.LargeString, arrow.BinaryTypes.String},
		{"tz UTC vs +00:00", ts("UTC"), ts("+00:00")},
		{"tz vs none", ts("UTC"), ts("")},
		{"unit", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, ts("UTC")},
		{"int32 for int64", arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64},
		{"uint64 for int64", arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64},
		{"decimal precision", &arrow.Decimal128Type{Precision: 10, Scale: 2}, &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{"decimal scale", &arrow.Decimal128Type{Precision: 12, Scale: 3}, &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{"fsb width", &arrow.FixedSizeBinaryType{ByteWidth: 8}, &arrow.FixedSizeBinaryType{ByteWidth: 16}},
		{"dictionary index type", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
			&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
		{"list child name", arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{"struct child name", arrow.StructOf(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true}),
			arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		{"struct child nullability", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}),
			arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		{"time unit", arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time32ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.seed, lens: []uint64{4}}
			wantCode(t, spec.bytes(t), decodeOpts(c.column, 4, 4), ErrSeedValueType)
			mustDecode(t, spec.bytes(t), decodeOpts(c.seed, 4, 4))
		})
	}
	// min and max types differ from each other.
	spec := seedSpec{version: 1, valueType: arrow.PrimitiveTypes.Int64, lens: []uint64{4}, fields: []arrow.Field{
		{Name: "min", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "max", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "null_count", Type: arrow.PrimitiveTypes.Uint32}, {Name: "nan_count", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "negative_nan_count", Type: arrow.PrimitiveTypes.Uint32}, {Name: "zone_length", Type: arrow.PrimitiveTypes.Uint64}}}
	wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4), ErrSeedValueType)
}

func TestR8_T76_StaleSeedCaughtByValueType(t *testing.T) {
	// Column `a` dropped and re-added as another type: the old file's seed
	// (int32) must not be used for the new column (utf8): E07.
	old := seedSpec{version: 1, valueType: arrow.PrimitiveTypes.Int32, lens: []uint64{4}, mins: []any{int32(1)}, maxs: []any{int32(2)}}
	wantCode(t, old.bytes(t), decodeOpts(arrow.BinaryTypes.String, 4, 4), ErrSeedValueType)
}

func TestR16_T09_NullInCounts(t *testing.T) {
	spec := int64Spec(1, 4, 8, [2]any{int64(1), int64(2)}, [2]any{int64(1), int64(2)})
	spec.nullCount = map[int]bool{1: true}
	spec.fields = []arrow.Field{
		{Name: "min", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "max", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "null_count", Type: arrow.PrimitiveTypes.Uint32, Nullable: false}, {Name: "nan_count", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "negative_nan_count", Type: arrow.PrimitiveTypes.Uint32}, {Name: "zone_length", Type: arrow.PrimitiveTypes.Uint64}}
	err := wantCode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 8), ErrSeedNullInCount)
	var se *SeedError
	if !errors.As(err, &se) || se.Zone != 1 || se.Field != fieldNullCount {
		t.Fatalf("error should name zone 1 null_count: %v", err)
	}
}

func TestR61_R62_FeatureFlag(t *testing.T) {
	o := decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4)
	o.TableFlagged = false
	wantCode(t, int64Spec(1, 4, 4, [2]any{int64(1), int64(2)}).bytes(t), o, ErrSeedV1WithoutFlag)
	mustDecode(t, int64Spec(0, 4, 4, [2]any{int64(1), int64(2)}).bytes(t), o) // R62
}

func TestR63_FailedSeedYieldsNothing(t *testing.T) {
	spec := int64Spec(1, 4, 8, [2]any{int64(1), int64(2)}, [2]any{int64(5), int64(3)})
	s, err := Decode(spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 8))
	if err == nil || s != nil {
		t.Fatalf("a seed failing validation must yield no zones at all: %v %v", s, err)
	}
}

func TestE24_RowsPerZoneMismatch(t *testing.T) {
	o := decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4)
	o.ExpectRowsPerZone = 8192
	wantCode(t, int64Spec(0, 4, 4, [2]any{int64(1), int64(2)}).bytes(t), o, ErrSeedRowsPerZoneMismatch)
	o.ExpectRowsPerZone = 4
	mustDecode(t, int64Spec(0, 4, 4, [2]any{int64(1), int64(2)}).bytes(t), o)
}

func TestE02_ZeroRowsPerZoneOption(t *testing.T) {
	wantCode(t, int64Spec(1, 4, 4, [2]any{int64(1), int64(2)}).bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 0, 4), ErrSeedLocatorRange)
}

func TestR13_R40_DictionarySeed(t *testing.T) {
	// R13/R40: dictionary batches appear for a dictionary value type; bounds
	// are decoded values.
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	spec := seedSpec{version: 1, valueType: dt, lens: []uint64{4, 2}, mins: []any{"apple", "kiwi"}, maxs: []any{"pear", "kiwi"}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(dt, 4, 6))
	if s.Zones[0].Min != "apple" || s.Zones[0].Max != "pear" || s.Zones[1].Min != "kiwi" {
		t.Fatalf("zones %+v", s.Zones)
	}
	keep, err := s.Prune(Eq("banana"))
	if err != nil || !keep[0] || keep[1] {
		t.Fatalf("prune %v %v", keep, err)
	}
}

func TestR52_V0NeverGetsSignCounts(t *testing.T) {
	spec := seedSpec{version: 0, valueType: arrow.PrimitiveTypes.Float64, lens: []uint64{4},
		mins: []any{1.0}, maxs: []any{2.0}, nans: []uint32{1}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Float64, 4, 4))
	z := s.Zones[0]
	if z.NaNSignKnown || z.NegativeNaNCount != 0 {
		t.Fatalf("v0 zone invented sign counts: %+v", z)
	}
	if _, known := z.PositiveNaNCount(); known {
		t.Fatal("positive NaN count must be unknown for v0")
	}
	if !z.mayHaveNegativeNaN() || !z.mayHavePositiveNaN() {
		t.Fatal("both NaN signs remain possible (§3.5)")
	}
}

func TestR24_T17_T18_T19_V0NullCountsInexact(t *testing.T) {
	// v0 Lance counted physical validity only for Dictionary, REE and Null
	// columns: the reader marks those counts and the bitmap inexact, so
	// IS NULL never prunes them; v1 counts are exact.
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	ree := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String)
	for _, dt := range []arrow.DataType{dict, arrow.Null, ree} {
		v0 := seedSpec{version: 0, valueType: dt, lens: []uint64{4}}
		s := mustDecode(t, v0.bytes(t), decodeOpts(dt, 4, 4))
		if s.Zones[0].NullCountExact || s.NullPositionsExact {
			t.Fatalf("%s: v0 null counts must be inexact", dt)
		}
		keep, _ := s.Prune(IsNull())
		if !keep[0] {
			t.Fatalf("%s: v0 IS NULL pruned a zone with null_count 0", dt)
		}
		v1 := seedSpec{version: 1, valueType: dt, lens: []uint64{4}, nulls: []uint32{4},
			meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 0, 1, 2, 3)}}}
		s1 := mustDecode(t, v1.bytes(t), decodeOpts(dt, 4, 4))
		if !s1.Zones[0].NullCountExact || !s1.NullPositionsExact {
			t.Fatalf("%s: v1 null counts are exact", dt)
		}
		keep, _ = s1.Prune(IsNotNull())
		if keep[0] {
			t.Fatalf("%s: T17 all-null zone must be pruned by IS NOT NULL", dt)
		}
	}
}

func TestQ2_V0DictionaryFloatNaNsInexact(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Float64}
	v0 := seedSpec{version: 0, valueType: dt, lens: []uint64{4}}
	s := mustDecode(t, v0.bytes(t), decodeOpts(dt, 4, 4))
	keep, err := s.Prune(IsNaN())
	if err != nil || !keep[0] {
		t.Fatalf("v0 dictionary<float> NaN counts are unknown: isnan must keep (%v)", err)
	}
	v1 := seedSpec{version: 1, valueType: dt, lens: []uint64{4}, mins: []any{1.0}, maxs: []any{2.0}}
	s1 := mustDecode(t, v1.bytes(t), decodeOpts(dt, 4, 4))
	keep, _ = s1.Prune(IsNaN())
	if keep[0] {
		t.Fatal("v1 dictionary<float> NaN counts are exact")
	}
}

func TestR15_T52_ExtensionColumnUsesStorageType(t *testing.T) {
	// Q4/T52: an extension column's seed uses the storage type.
	ext := newTestExt()
	spec := seedSpec{version: 1, valueType: arrow.BinaryTypes.Binary, lens: []uint64{4}}
	mustDecode(t, spec.bytes(t), decodeOpts(ext, 4, 4))
	bad := seedSpec{version: 1, valueType: arrow.BinaryTypes.Binary, lens: []uint64{4}, mins: []any{[]byte{1}}, maxs: []any{[]byte{2}}}
	// Binary storage has bounds per §4.1 (only the extension marks it N), so
	// the reader checks bounds by the seed's value type and accepts them.
	mustDecode(t, bad.bytes(t), decodeOpts(ext, 4, 4))
}

type testExt struct{ arrow.ExtensionBase }

func newTestExt() *testExt {
	return &testExt{ExtensionBase: arrow.ExtensionBase{Storage: arrow.BinaryTypes.Binary}}
}
func (e *testExt) ArrayType() reflect.Type { return reflect.TypeOf(array.ExtensionArrayBase{}) }
func (e *testExt) ExtensionName() string   { return "lancekeeper.test" }
func (e *testExt) Serialize() string       { return "" }
func (e *testExt) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == e.ExtensionName()
}
func (e *testExt) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	return newTestExt(), nil
}

func TestDecodeNoColumnTypeUsesSeedType(t *testing.T) {
	spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	o := decodeOpts(nil, 4, 4)
	s := mustDecode(t, spec.bytes(t), o)
	if s.ValueType.ID() != arrow.INT64 {
		t.Fatal(s.ValueType)
	}
}

func TestT30_Float16NaNCounts(t *testing.T) {
	// T30: f16 0x7E00, 0xFE00, 0x7C01 (signalling), 0x3C00 → nan 3, negative 1, bounds 1.0.
	spec := seedSpec{version: 1, valueType: arrow.FixedWidthTypes.Float16, lens: []uint64{4},
		mins: []any{float16.FromBits(f16One)}, maxs: []any{float16.FromBits(f16One)}, nans: []uint32{3}, negs: []uint32{1}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.FixedWidthTypes.Float16, 4, 4))
	z := s.Zones[0]
	if z.NaNCount != 3 || z.NegativeNaNCount != 1 || z.Min.(float16.Num).Uint16() != f16One {
		t.Fatalf("%+v", z)
	}
	keep, _ := s.Prune(Gt(float16.New(5)))
	if !keep[0] {
		t.Fatal("positive NaNs satisfy x > 5")
	}
	_ = math.Inf
	_ = array.NewBuilder
	_ = memory.NewGoAllocator
}
