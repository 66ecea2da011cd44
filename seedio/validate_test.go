package seedio

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

var i64 = arrow.PrimitiveTypes.Int64

func errZone(t *testing.T, err error) int {
	t.Helper()
	var se *SeedError
	if !errors.As(err, &se) {
		t.Fatalf("want *SeedError, got %T %v", err, err)
	}
	return se.Zone
}

func TestR19_R20_T08_ZoneGeometry(t *testing.T) {
	cases := []struct {
		name     string
		lens     []uint64
		rpz, n   uint64
		sentinel error
		zone     int
	}{
		{"non-final shorter", []uint64{3, 4, 1}, 4, 8, ErrSeedZoneLength, 0},
		{"non-final longer", []uint64{4, 5, 1}, 4, 10, ErrSeedZoneLength, 1},
		{"final longer", []uint64{4, 5}, 4, 9, ErrSeedZoneLength, 1},
		{"zero length", []uint64{4, 0}, 4, 4, ErrSeedZoneLength, 1},
		{"zero length final only", []uint64{0}, 4, 0, ErrSeedZoneLength, 0},
		{"sum below N", []uint64{4, 1}, 4, 6, ErrSeedCoverage, NoZone},
		{"sum above N", []uint64{4, 3}, 4, 6, ErrSeedCoverage, 1},
		{"one zone too many", []uint64{4, 4, 1}, 4, 8, ErrSeedCoverage, NoZone},
		{"one zone too few", []uint64{4}, 4, 8, ErrSeedCoverage, NoZone},
		{"no zones for N>0", []uint64{}, 4, 3, ErrSeedCoverage, NoZone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: i64, lens: c.lens}
			err := wantCode(t, spec.bytes(t), decodeOpts(i64, c.rpz, c.n), c.sentinel)
			if z := errZone(t, err); z != c.zone {
				t.Fatalf("error names zone %d, want %d: %v", z, c.zone, err)
			}
		})
	}
}

func TestT02_T03_T04_T05_ValidLayouts(t *testing.T) {
	cases := []struct {
		name   string
		rpz, n uint64
	}{{"T02 N = rpz", 4, 4}, {"T03 N = 2rpz+1", 4, 9}, {"T04 rpz = 1", 1, 5}, {"T05 rpz > N", 8192, 10}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lens := uniformLens(c.n, c.rpz)
			spec := seedSpec{version: 1, valueType: i64, lens: lens}
			s := mustDecode(t, spec.bytes(t), decodeOpts(i64, c.rpz, c.n))
			if len(s.Zones) != len(lens) {
				t.Fatalf("%d zones", len(s.Zones))
			}
			for i, z := range s.Zones {
				// R19/R21/R23: zone i starts at i*rpz, restarting at 0 per file.
				if z.Start != uint64(i)*c.rpz || z.Rows != lens[i] || z.End() != z.Start+lens[i] {
					t.Fatalf("zone %d: %+v", i, z)
				}
			}
		})
	}
}

func TestT09_OverflowingGeometry(t *testing.T) {
	// rpz = 2^63 with 3 records: zone 2 starts at 2^64 (overflow).
	spec := seedSpec{version: 1, valueType: i64, lens: []uint64{1 << 63, 1 << 63, 1}}
	wantCode(t, spec.bytes(t), decodeOpts(i64, 1<<63, math.MaxUint64), ErrSeedCoverage)
	// rpz = 2^64-1 with 2 records: the sum overflows.
	spec = seedSpec{version: 1, valueType: i64, lens: []uint64{math.MaxUint64, 5}}
	wantCode(t, spec.bytes(t), decodeOpts(i64, math.MaxUint64, math.MaxUint64), ErrSeedCoverage)
	// Consistent zone count but the end of a zone overflows.
	spec = seedSpec{version: 1, valueType: i64, lens: []uint64{1 << 63, 1 << 63}}
	wantCode(t, spec.bytes(t), decodeOpts(i64, 1<<63, math.MaxUint64), ErrSeedCoverage)
}

func TestR27_R28_T21_T36_T37_T38_T40_CountInvariants(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	cases := []struct {
		name       string
		vt         arrow.DataType
		version    int
		nulls      uint32
		nans, negs uint32
		length     uint64
		sentinel   error
	}{
		{"T38 null+nan = len+1", f64, 1, 3, 2, 0, 4, ErrSeedCountExceedsLength},
		{"T40 u32 wrap trap", f64, 1, math.MaxUint32, 1, 0, 1, ErrSeedCountExceedsLength},
		{"T40 u32 wrap trap v0", f64, 0, math.MaxUint32, 1, 0, 1, ErrSeedCountExceedsLength},
		{"null > len", i64, 1, 5, 0, 0, 4, ErrSeedCountExceedsLength},
		{"T36 negative > nan", f64, 1, 0, 1, 2, 4, ErrSeedNegativeNaN},
		{"T37 nan on utf8", arrow.BinaryTypes.String, 1, 0, 1, 0, 4, ErrSeedNaNOnNonFloat},
		{"negative nan on int", i64, 1, 0, 0, 0, 4, nil},
		{"T37 nan on utf8 v0", arrow.BinaryTypes.String, 0, 0, 1, 0, 4, ErrSeedNaNOnNonFloat},
		{"R27/T21 nan on list<float32>", arrow.ListOf(arrow.PrimitiveTypes.Float32), 1, 0, 2, 0, 4, ErrSeedNaNOnNonFloat},
		{"R27 nan on fixed_size_list<float32>", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), 1, 0, 2, 0, 4, ErrSeedNaNOnNonFloat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: c.version, valueType: c.vt, lens: []uint64{c.length},
				nulls: []uint32{c.nulls}, nans: []uint32{c.nans}, negs: []uint32{c.negs}}
			o := decodeOpts(c.vt, 4, c.length)
			if c.sentinel == nil {
				mustDecode(t, spec.bytes(t), o)
				return
			}
			wantCode(t, spec.bytes(t), o, c.sentinel)
		})
	}
	// negative_nan_count on a non-float type is E14 too.
	spec := seedSpec{version: 1, valueType: i64, lens: []uint64{4}, negs: []uint32{1}}
	wantCode(t, spec.bytes(t), decodeOpts(i64, 4, 4), ErrSeedNegativeNaN)
}

func TestT39_LargestZoneNoFalseE12(t *testing.T) {
	// rpz = N = zone_length = 2^32, null_count = nan_count = 2^31: valid.
	f64 := arrow.PrimitiveTypes.Float64
	spec := seedSpec{version: 1, valueType: f64, lens: []uint64{1 << 32}, nulls: []uint32{1 << 31}, nans: []uint32{1 << 31}, negs: []uint32{5},
		meta: [][2]string{{metaVersion, "1"}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 1<<32, 1<<32))
	z := s.Zones[0]
	if z.Ordinary() != 0 || z.NullCount != 1<<31 || z.NaNCount != 1<<31 {
		t.Fatalf("%+v", z)
	}
}

func TestR31_T35_V1BoundNaN(t *testing.T) {
	f64, f32, f16 := arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Float16
	cases := []struct {
		name     string
		vt       arrow.DataType
		min, max any
	}{
		{"max +NaN", f64, 1.0, f64bits(posNaN64)},
		{"min -NaN", f64, f64bits(negNaN64), 1.0},
		{"max payload NaN", f64, 1.0, f64bits(goNaN64)},
		{"f32 max NaN", f32, float32(1), f32bits(posNaN32)},
		{"f16 min signalling NaN", f16, float16.FromBits(f16SigNaN), float16.FromBits(f16One)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, mins: []any{c.min}, maxs: []any{c.max}, nans: []uint32{1}}
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundNaN)
		})
	}
}

func TestT33_T34_V0NaNBoundsUnknown(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	cases := []struct {
		name             string
		min, max         any
		nans             uint32
		wantMin, wantMax any
	}{
		{"T33 Gen B/C +NaN max marker", 1.0, f64bits(posNaN64), 1, 1.0, nil},
		{"T34 Gen A -NaN min", f64bits(negNaN64), 2.0, 1, nil, 2.0},
		{"both NaN", f64bits(negNaN64), f64bits(posNaN64), 2, nil, nil},
		{"NaN bound with nan_count 0 is contradictory: unknown", 1.0, f64bits(posNaN64), 0, 1.0, nil},
		{"negative-zero payload NaN", 1.0, f64bits(0xFFF0000000000001), 1, 1.0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 0, valueType: f64, lens: []uint64{4}, mins: []any{c.min}, maxs: []any{c.max}, nans: []uint32{c.nans}}
			s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 4, 4))
			z := s.Zones[0]
			if !boundsIdentical(z.Min, c.wantMin) || !boundsIdentical(z.Max, c.wantMax) {
				t.Fatalf("bounds %v %v, want %v %v", z.Min, z.Max, c.wantMin, c.wantMax)
			}
			// The unknown side never excludes: x > 1e300 keeps, x < -1e300 keeps.
			if k, _ := s.Prune(Gt(1e300)); !k[0] && (c.nans > 0 || z.Max == nil) {
				t.Fatal("x > 1e300 pruned a zone whose upper side is unknown")
			}
			if k, _ := s.Prune(Lt(-1e300)); !k[0] && (c.nans > 0 || z.Min == nil) {
				t.Fatal("x < -1e300 pruned a zone whose lower side is unknown")
			}
		})
	}
}

func TestR29_R34_T50_BoundOrder(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	cases := []struct {
		name     string
		vt       arrow.DataType
		min, max any
	}{
		{"int", i64, int64(5), int64(3)},
		{"+0 > -0 in total order", f64, 0.0, math.Copysign(0, -1)},
		{"uint64 >= 2^63", arrow.PrimitiveTypes.Uint64, uint64(1 << 63), uint64(1)},
		{"utf8 é > z bytewise", arrow.BinaryTypes.String, "é", "z"},
		{"binary prefix", arrow.BinaryTypes.Binary, []byte("ab\x00"), []byte("ab")},
		{"bool", arrow.FixedWidthTypes.Boolean, true, false},
		{"decimal128 negative", &arrow.Decimal128Type{Precision: 10, Scale: 0}, decimal128.FromI64(-1), decimal128.FromI64(-2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, mins: []any{c.min}, maxs: []any{c.max}}
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundOrder)
			// v0 checks order as well (§5.2: ✓ for v0).
			spec.version = 0
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundOrder)
			// Swapped they are valid.
			spec.version = 1
			spec.mins, spec.maxs = spec.maxs, spec.mins
			mustDecode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4))
		})
	}
}

func TestR35_T20_T48_T50_BoundOnUnsupportedType(t *testing.T) {
	cases := []struct {
		name string
		vt   arrow.DataType
	}{
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Int32)},
		{"struct", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		{"T48 interval months", arrow.FixedWidthTypes.MonthInterval},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, mins: []any{nonNullNested}}
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundUnsupported)
			spec.version = 0
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundUnsupported)
			// Null bounds with exact outer counts are the valid shape (T20/T48).
			ok := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, nulls: []uint32{2},
				meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 1, 3)}}}
			s := mustDecode(t, ok.bytes(t), decodeOpts(c.vt, 4, 4))
			if s.Zones[0].Min != nil || s.Zones[0].NullCount != 2 {
				t.Fatalf("%+v", s.Zones[0])
			}
			// Only counts can prune nested / unsupported columns (§5.4).
			keep, err := s.Prune(Eq(nonNullNested))
			if err != nil || !keep[0] {
				t.Fatalf("%v %v", keep, err)
			}
		})
	}
}

func TestR33_T50_BoundWithoutOrdinaryValues(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	// All-null zone with a bound (T50), all-NaN zone with a bound.
	for _, c := range []struct {
		name        string
		nulls, nans uint32
	}{{"all null", 4, 0}, {"all NaN", 0, 4}, {"nulls and NaNs", 2, 2}} {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: f64, lens: []uint64{4}, mins: []any{1.0}, nulls: []uint32{c.nulls}, nans: []uint32{c.nans},
				meta: [][2]string{{metaVersion, "1"}}}
			wantCode(t, spec.bytes(t), decodeOpts(f64, 4, 4), ErrSeedBoundWithoutValues)
			// v0: the bound is ignored (§5.2 "(ignore bound)").
			spec.version = 0
			spec.meta = [][2]string{}
			s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 4, 4))
			if s.Zones[0].Min != nil || s.Zones[0].Max != nil {
				t.Fatalf("v0 bound without values must be ignored: %+v", s.Zones[0])
			}
		})
	}
}

func TestR38_T50_BoundEncoding(t *testing.T) {
	cases := []struct {
		name string
		vt   arrow.DataType
		min  any
		max  any
	}{
		{"invalid UTF-8 in utf8", arrow.BinaryTypes.String, "a", "\xff\xfe"},
		{"truncated multibyte char", arrow.BinaryTypes.String, "a", "\xe6\x97"},
		{"decimal128 beyond precision", &arrow.Decimal128Type{Precision: 3, Scale: 0}, decimal128.FromI64(1), decimal128.FromI64(1000)},
		{"decimal256 beyond precision", &arrow.Decimal256Type{Precision: 3, Scale: 0}, decimal256.FromI64(-1000), decimal256.FromI64(1)},
		{"decimal32 beyond precision", &arrow.Decimal32Type{Precision: 2, Scale: 0}, decimal.Decimal32(-100), decimal.Decimal32(1)},
		{"decimal64 beyond precision", &arrow.Decimal64Type{Precision: 2, Scale: 0}, decimal.Decimal64(1), decimal.Decimal64(100)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, mins: []any{c.min}, maxs: []any{c.max}}
			wantCode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4), ErrSeedBoundEncoding)
		})
	}
}

func TestR37_HalfKnownBounds(t *testing.T) {
	spec := int64Spec(1, 4, 8, [2]any{int64(10), nil}, [2]any{nil, int64(20)})
	s := mustDecode(t, spec.bytes(t), decodeOpts(i64, 4, 8))
	if s.Zones[0].Min != int64(10) || s.Zones[0].Max != nil || s.Zones[1].Min != nil || s.Zones[1].Max != int64(20) {
		t.Fatalf("%+v", s.Zones)
	}
	keep, _ := s.Prune(Lt(int64(5)))
	if keep[0] || !keep[1] {
		t.Fatalf("x < 5: %v (zone 0 min is 10, zone 1 lower side unknown)", keep)
	}
	keep, _ = s.Prune(Gt(int64(25)))
	if !keep[0] || keep[1] {
		t.Fatalf("x > 25: %v", keep)
	}
}

func TestR32_NullBoundsUnknown(t *testing.T) {
	// v0 decimal128 and FSB (Lance 12 writes null bounds even with values):
	// unknown, never "empty".
	dt := &arrow.Decimal128Type{Precision: 12, Scale: 3}
	spec := seedSpec{version: 0, valueType: dt, lens: []uint64{4}, nulls: []uint32{1},
		meta: [][2]string{{metaNullBitmap, hexOf(t, 2)}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(dt, 4, 4))
	for _, p := range []Predicate{Eq(decimal128.FromI64(7)), Lt(decimal128.FromI64(-1 << 40)), Gt(decimal128.FromI64(1 << 40)), NotIsNaN(), IsNotNull(), IsNull()} {
		if k, err := s.Prune(p); err != nil || !k[0] {
			t.Fatalf("%v pruned a zone with unknown bounds (%v)", p, err)
		}
	}
	if k, _ := s.Prune(IsNaN()); k[0] {
		t.Fatal("isnan on a decimal column keeps nothing")
	}
}

func TestR41_R45_T14_T15_Bitmap(t *testing.T) {
	// 3 zones of 4 over 10 rows; nulls at 0, 3, 4 (run across a zone
	// boundary) and 9 (last row).
	base := func(hex string) seedSpec {
		return seedSpec{version: 1, valueType: i64, lens: []uint64{4, 4, 2}, nulls: []uint32{2, 1, 1},
			mins: []any{int64(1), int64(1), nil}, maxs: []any{int64(2), int64(2), nil},
			meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hex}}}
	}
	o := decodeOpts(i64, 4, 10)
	good := hexOf(t, 0, 3, 4, 9)
	s := mustDecode(t, base(good).bytes(t), o)
	if got := s.NullBitmap.ToArray(); len(got) != 4 || got[3] != 9 {
		t.Fatalf("bitmap %v", got)
	}
	if !s.NullPositionsExact {
		t.Fatal("v1 bitmap is exact")
	}
	mustDecode(t, base(strings.ToUpper(good)).bytes(t), o) // uppercase accepted (T15, R43)

	cases := []struct {
		name     string
		hex      string
		sentinel error
	}{
		{"E22 offset >= N", hexOf(t, 0, 3, 4, 10), ErrSeedBitmapRange},
		{"E23 count mismatch", hexOf(t, 0, 1, 3, 4, 9), ErrSeedBitmapMismatch},
		{"E23 missing null", hexOf(t, 0, 3, 4), ErrSeedBitmapMismatch},
		{"E20 odd length", good[:len(good)-1], ErrSeedBitmapHex},
		{"E20 +f pair", "+f" + good[2:], ErrSeedBitmapHex},
		{"E20 non-ASCII", "a\u00e90" + good[4:], ErrSeedBitmapHex},
		{"E20 space", " " + good[1:], ErrSeedBitmapHex},
		{"E21 trailing bytes", good + "00", ErrSeedBitmapDecode},
		{"E21 bad cookie", "0000" + good[4:], ErrSeedBitmapDecode},
		{"E21 truncated", good[:len(good)-4], ErrSeedBitmapDecode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, base(c.hex).bytes(t), o, c.sentinel)
		})
	}
}

func TestR44_T13_EmptyBitmapForms(t *testing.T) {
	for _, h := range []string{"", emptyNullBitmapHex, strings.ToUpper(emptyNullBitmapHex)} {
		spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
		spec.meta = [][2]string{{metaVersion, "1"}, {metaNullBitmap, h}}
		s := mustDecode(t, spec.bytes(t), decodeOpts(i64, 4, 4))
		if s.NullBitmap == nil || !s.NullBitmap.IsEmpty() {
			t.Fatalf("%q: want a present, empty bitmap", h)
		}
	}
	// An empty bitmap while a zone has nulls is E23.
	spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	spec.nulls = []uint32{1}
	spec.meta = [][2]string{{metaVersion, "1"}, {metaNullBitmap, ""}}
	wantCode(t, spec.bytes(t), decodeOpts(i64, 4, 4), ErrSeedBitmapMismatch)
}

func TestR46_T16_AbsentBitmapMeansUnknown(t *testing.T) {
	spec := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	spec.nulls = []uint32{1}
	spec.meta = [][2]string{{metaVersion, "1"}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(i64, 4, 4))
	if s.NullBitmap != nil {
		t.Fatal("absent key must give a nil bitmap (positions unknown), not an empty one")
	}
	// IS NULL still prunes by counts only (keeps zones with null_count > 0).
	if k, _ := s.Prune(IsNull()); !k[0] {
		t.Fatal("IS NULL dropped a zone with nulls")
	}
}

func TestT12_WholeFileNullBitmap(t *testing.T) {
	// Whole file null: the bitmap is one run-optimised range (cookie 12347).
	h := hexOf(t, 0, 1, 2, 3, 4, 5, 6, 7, 8)
	if !strings.HasPrefix(h, "3b30") {
		t.Fatalf("run-optimised cookie expected: %s", h)
	}
	spec := seedSpec{version: 1, valueType: i64, lens: []uint64{4, 4, 1}, nulls: []uint32{4, 4, 1},
		meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, h}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(i64, 4, 9))
	if s.NullBitmap.GetCardinality() != 9 {
		t.Fatal(s.NullBitmap.String())
	}
	keep, _ := s.Prune(IsNotNull())
	for i, k := range keep {
		if k {
			t.Fatalf("T11: all-null zone %d kept by IS NOT NULL", i)
		}
	}
}

func TestT22_T23_T24_T31_NaNZones(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	spec := seedSpec{version: 1, valueType: f64, lens: []uint64{4, 4, 4, 4},
		// T22 all +NaN; T23 all -NaN; T24 {+NaN, math.NaN(), -NaN, 2.0}; T31 NaN + nulls only.
		nans:  []uint32{4, 4, 3, 2},
		negs:  []uint32{0, 4, 1, 1},
		nulls: []uint32{0, 0, 0, 2},
		mins:  []any{nil, nil, 2.0, nil}, maxs: []any{nil, nil, 2.0, nil},
		meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 12, 13)}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 4, 16))
	if s.Zones[0].Ordinary() != 0 || s.Zones[3].Ordinary() != 0 || s.Zones[2].Ordinary() != 1 {
		t.Fatal("ordinary counts")
	}
	check := func(p Predicate, want ...bool) {
		t.Helper()
		got, err := s.Prune(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: keep %v, want %v", p, got, want)
			}
		}
	}
	check(IsNaN(), true, true, true, true)
	check(NotIsNaN(), false, false, true, false)
	check(Gt(100.0), true, false, true, true) // positive NaNs sort above 100
	check(Lt(-100.0), false, true, true, true)
	check(Eq(2.0), false, false, true, false)
	check(Eq(f64bits(negNaN64)), false, true, true, true)
	check(Eq(f64bits(posNaN64)), true, false, true, true)
	check(Between(1.0, 3.0), false, false, true, false)
	check(IsNull(), false, false, false, true)
}

func TestT25_T26_T27_T28_ZerosAndInfinities(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	negZero := math.Copysign(0, -1)
	spec := seedSpec{version: 1, valueType: f64, lens: []uint64{4, 4, 4},
		mins: []any{negZero, 0.0, math.Inf(-1)}, maxs: []any{0.0, 0.0, math.Inf(1)}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 4, 12))
	if math.Float64bits(s.Zones[0].Min.(float64)) != negZero64 || !math.IsInf(s.Zones[2].Max.(float64), 1) {
		t.Fatal("bounds")
	}
	check := func(p Predicate, want ...bool) {
		t.Helper()
		got, _ := s.Prune(p)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: keep %v, want %v", p, got, want)
			}
		}
	}
	// Zone 1 claims exactly +0 (no R39 widening: Lance 12's v0 seeds, or
	// another writer): an IEEE engine's x = -0.0 matches +0, so a zero
	// literal is [-0, +0] (§5.4); and its min +0 is read as -0 (R39 on
	// read, WidenZeroBound), since a writer comparing with IEEE equality
	// may have kept +0 over a real -0.
	check(Eq(negZero), true, true, true)
	check(Eq(0.0), true, true, true)
	check(Lt(negZero), false, false, true) // only negative numbers match, under either semantics
	check(Lt(0.0), true, true, true)       // total order: -0 < +0, and zone 1's min +0 reads -0
	check(Gt(0.0), false, false, true)
	check(Gt(negZero), true, true, true) // total order: +0 > -0
	check(Ge(0.0), true, true, true)     // IEEE: -0 >= +0
	check(Le(negZero), true, true, true) // IEEE: +0 <= -0
	check(Between(0.0, 0.0), true, true, true)
	check(Between(1.0, 2.0), false, false, true)
	check(Eq(math.Inf(1)), false, false, true)
	check(Gt(1e308), false, false, true)
}

// TestR39_Q16_ZeroBoundsReadWidened: a float min of ±0 reads −0 and a max
// of ±0 reads +0, for every float width; other values and types are left
// alone. A zone whose stored min is +0 but holds −0 (an IEEE-equality
// writer's choice) is kept by every predicate −0 matches under totalOrder;
// one whose stored max is −0 but holds +0 likewise.
func TestR39_Q16_ZeroBoundsReadWidened(t *testing.T) {
	n64, n32, n16 := math.Copysign(0, -1), math.Float32frombits(1<<31), float16.FromBits(1<<15)
	cases := []struct {
		in      any
		isMax   bool
		want    any
		widened bool
	}{
		{0.0, false, n64, true}, {n64, false, n64, false}, {n64, true, 0.0, true}, {0.0, true, 0.0, false},
		{float32(0), false, n32, true}, {n32, false, n32, false}, {n32, true, float32(0), true}, {float32(0), true, float32(0), false},
		{float16.FromBits(0), false, n16, true}, {n16, false, n16, false}, {n16, true, float16.FromBits(0), true}, {float16.FromBits(0), true, float16.FromBits(0), false},
		{1.0, false, 1.0, false}, {-1.0, true, -1.0, false}, {math.NaN(), true, nil, false},
		{int64(0), false, int64(0), false}, {"", true, "", false}, {nil, false, nil, false},
	}
	bits := func(v any) string { return fmt.Sprintf("%T %v %x", v, v, zeroTestBits(v)) }
	for _, c := range cases {
		got, widened := WidenZeroBound(c.in, c.isMax)
		if c.want == nil && c.in != nil { // NaN: unchanged
			if widened || bits(got) != bits(c.in) {
				t.Errorf("WidenZeroBound(%v, %v) = %v, %v", c.in, c.isMax, got, widened)
			}
			continue
		}
		if widened != c.widened || bits(got) != bits(c.want) {
			t.Errorf("WidenZeroBound(%s, max=%v) = %s, %v; want %s, %v", bits(c.in), c.isMax, bits(got), widened, bits(c.want), c.widened)
		}
	}
	// Pruning with stored bounds that hide the other zero.
	for _, vt := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Float16} {
		conv := func(x float64) any {
			switch vt.ID() {
			case arrow.FLOAT32:
				return float32(x)
			case arrow.FLOAT16:
				return float16.New(float32(x))
			}
			return x
		}
		zones := []Zone{
			{Stats: Stats{Rows: 2, Min: conv(0), Max: conv(1), NullCountExact: true, NaNCountExact: true, NaNSignKnown: true}},    // holds -0 and 1 (min +0 hides -0)
			{Stats: Stats{Rows: 2, Min: conv(-1), Max: conv(n64), NullCountExact: true, NaNCountExact: true, NaNSignKnown: true}}, // holds -1 and +0 (max -0 hides +0)
		}
		for _, p := range []Predicate{Lt(conv(0)), Le(conv(n64)), Eq(conv(n64)), Between(conv(n64), conv(n64)), In(conv(n64))} {
			keep, err := PruneZones(vt, zones[:1], p)
			if err != nil || !keep[0] {
				t.Errorf("%s %v: keep %v (%v); the zone holds -0", vt, p, keep, err)
			}
		}
		for _, p := range []Predicate{Gt(conv(n64)), Ge(conv(0)), Eq(conv(0)), Between(conv(0), conv(0)), In(conv(0))} {
			keep, err := PruneZones(vt, zones[1:], p)
			if err != nil || !keep[0] {
				t.Errorf("%s %v: keep %v (%v); the zone holds +0", vt, p, keep, err)
			}
		}
	}
}

func zeroTestBits(v any) uint64 {
	switch x := v.(type) {
	case float64:
		return math.Float64bits(x)
	case float32:
		return uint64(math.Float32bits(x))
	case float16.Num:
		return uint64(x.Uint16())
	}
	return 0
}

func TestT42_T43_T44_T45_T46_T47_BoundsPerType(t *testing.T) {
	cases := []struct {
		name     string
		vt       arrow.DataType
		min, max any
		in, out  any // a literal inside and one outside [min, max]
	}{
		{"uint64 >= 2^63", arrow.PrimitiveTypes.Uint64, uint64(1 << 63), uint64(math.MaxUint64), uint64(1<<63 + 5), uint64(5)},
		{"int64 min", i64, int64(math.MinInt64), int64(-1), int64(-7), int64(0)},
		{"int8", arrow.PrimitiveTypes.Int8, int8(-128), int8(-3), int8(-100), int8(0)},
		{"uint16", arrow.PrimitiveTypes.Uint16, uint16(3), uint16(9), uint16(5), uint16(10)},
		{"decimal128 negative", &arrow.Decimal128Type{Precision: 20, Scale: 2}, decimal128.FromI64(-500), decimal128.FromI64(-100), decimal128.FromI64(-200), decimal128.FromI64(0)},
		{"decimal256 > 2^128", &arrow.Decimal256Type{Precision: 76, Scale: 0}, decimal256.New(1, 0, 0, 0), decimal256.New(2, 0, 0, 0), decimal256.New(1, 5, 0, 0), decimal256.FromI64(1)},
		{"decimal32", &arrow.Decimal32Type{Precision: 9, Scale: 2}, decimal.Decimal32(-5), decimal.Decimal32(5), decimal.Decimal32(0), decimal.Decimal32(6)},
		{"decimal64", &arrow.Decimal64Type{Precision: 18, Scale: 2}, decimal.Decimal64(-5), decimal.Decimal64(5), decimal.Decimal64(0), decimal.Decimal64(-6)},
		{"timestamp Europe/Paris", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Paris"}, arrow.Timestamp(100), arrow.Timestamp(200), arrow.Timestamp(150), arrow.Timestamp(201)},
		{"date64", arrow.FixedWidthTypes.Date64, arrow.Date64(86400000), arrow.Date64(2 * 86400000), arrow.Date64(86400000), arrow.Date64(0)},
		{"date32", arrow.FixedWidthTypes.Date32, arrow.Date32(-5), arrow.Date32(5), arrow.Date32(0), arrow.Date32(6)},
		{"time32 s", arrow.FixedWidthTypes.Time32s, arrow.Time32(10), arrow.Time32(20), arrow.Time32(15), arrow.Time32(9)},
		{"time64 ns", arrow.FixedWidthTypes.Time64ns, arrow.Time64(10), arrow.Time64(20), arrow.Time64(15), arrow.Time64(21)},
		{"duration ms", arrow.FixedWidthTypes.Duration_ms, arrow.Duration(-10), arrow.Duration(20), arrow.Duration(0), arrow.Duration(21)},
		{"T43 utf8 non-ASCII", arrow.BinaryTypes.String, "", "é", "z", "éa"},
		{"large utf8", arrow.BinaryTypes.LargeString, "b", "d", "c", "a"},
		{"T45 utf8 view long", arrow.BinaryTypes.StringView, strings.Repeat("a", 20), strings.Repeat("c", 20), "b", "d"},
		{"T44 binary 0x00 0xFF", arrow.BinaryTypes.Binary, []byte("ab"), []byte{0xFF, 0}, []byte("ab\x00"), []byte("a")},
		{"T45 binary view short", arrow.BinaryTypes.BinaryView, []byte("ab"), []byte("ad"), []byte("ac"), []byte("ae")},
		{"T46 fixed_size_binary(16)", &arrow.FixedSizeBinaryType{ByteWidth: 16}, []byte(strings.Repeat("\x01", 16)), []byte(strings.Repeat("\x05", 16)), []byte(strings.Repeat("\x02", 16)), []byte(strings.Repeat("\x06", 16))},
		{"T47 bool all true", arrow.FixedWidthTypes.Boolean, true, true, true, false},
		{"float32", arrow.PrimitiveTypes.Float32, float32(-1.5), float32(2.5), float32(0), float32(3)},
		{"float16", arrow.FixedWidthTypes.Float16, float16.New(-1), float16.New(1), float16.New(0.5), float16.New(2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := seedSpec{version: 1, valueType: c.vt, lens: []uint64{4}, mins: []any{c.min}, maxs: []any{c.max}}
			s := mustDecode(t, spec.bytes(t), decodeOpts(c.vt, 4, 4))
			z := s.Zones[0]
			if !boundsIdentical(z.Min, c.min) || !boundsIdentical(z.Max, c.max) {
				t.Fatalf("bounds %v %v, want %v %v", z.Min, z.Max, c.min, c.max)
			}
			if k, err := s.Prune(Eq(c.in)); err != nil || !k[0] {
				t.Fatalf("= in-range literal pruned: %v %v", k, err)
			}
			if k, err := s.Prune(Eq(c.out)); err != nil || k[0] {
				t.Fatalf("= out-of-range literal kept: %v %v", k, err)
			}
		})
	}
}

func TestT49_DictionaryBoundsFromReferencedValues(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	spec := seedSpec{version: 1, valueType: dt, lens: []uint64{4}, mins: []any{"m"}, maxs: []any{"p"}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(dt, 4, 4))
	if s.Zones[0].Min != "m" || s.Zones[0].Max != "p" {
		t.Fatalf("%+v", s.Zones[0])
	}
	if k, _ := s.Prune(Eq("a")); k[0] {
		t.Fatal("literal below min kept")
	}
}
