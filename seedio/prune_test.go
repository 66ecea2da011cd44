package seedio

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/lancekeeper/lancekeeper/internal/truncate"
)

func keepOf(t *testing.T, vt arrow.DataType, st Stats, p Predicate) bool {
	t.Helper()
	k, err := p.Keep(vt, st)
	if err != nil {
		t.Fatalf("%v: %v", p, err)
	}
	return k
}

func TestT32_NaNSignPruning(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	posZone := v1Stats(2, 0, 1, 0, 1.0, 1.0) // {1.0, +NaN}
	negZone := v1Stats(2, 0, 1, 1, 1.0, 1.0) // {1.0, -NaN}
	if !keepOf(t, f64, posZone, Gt(100.0)) {
		t.Fatal("{1.0,+NaN}: x > 100 must keep (P = 1)")
	}
	if keepOf(t, f64, negZone, Gt(100.0)) {
		t.Fatal("{1.0,-NaN}: x > 100 must prune")
	}
	if !keepOf(t, f64, negZone, Lt(-100.0)) {
		t.Fatal("{1.0,-NaN}: x < -100 must keep")
	}
	if keepOf(t, f64, posZone, Lt(-100.0)) {
		t.Fatal("{1.0,+NaN}: x < -100 must prune")
	}
	// The same zones as v0 (sign unknown) keep both.
	for _, z := range []Stats{posZone, negZone} {
		z.NaNSignKnown, z.NegativeNaNCount = false, 0
		if !keepOf(t, f64, z, Gt(100.0)) || !keepOf(t, f64, z, Lt(-100.0)) {
			t.Fatal("v0: both NaN signs remain possible (§3.5)")
		}
	}
}

func TestR30_R65_PruneTable(t *testing.T) {
	// §5.4 row by row on an Int64 zone [10, 20] with 2 nulls of 8 rows.
	z := v1Stats(8, 2, 0, 0, int64(10), int64(20))
	allNull := v1Stats(8, 8, 0, 0, nil, nil)
	unknown := v1Stats(8, 2, 0, 0, nil, nil)
	cases := []struct {
		p                  Predicate
		zone, nul, unknown bool
	}{
		{IsNull(), true, true, true},
		{IsNotNull(), true, false, true},
		{Eq(int64(10)), true, false, true},
		{Eq(int64(20)), true, false, true},
		{Eq(int64(9)), false, false, true},
		{Eq(int64(21)), false, false, true},
		{Lt(int64(10)), false, false, true},
		{Le(int64(10)), true, false, true},
		{Gt(int64(20)), false, false, true},
		{Ge(int64(20)), true, false, true},
		{Between(int64(21), int64(30)), false, false, true},
		{Between(int64(0), int64(9)), false, false, true},
		{Between(int64(0), int64(10)), true, false, true},
		{Between(int64(15), int64(16)), true, false, true},
		{In(int64(1), int64(2), int64(30)), false, false, true},
		{In(int64(1), int64(15)), true, false, true},
		{In(), false, false, false},
		{IsNaN(), false, false, false},
		{NotIsNaN(), true, false, true},
	}
	for _, c := range cases {
		if got := keepOf(t, i64, z, c.p); got != c.zone {
			t.Errorf("%v on [10,20]: keep %v, want %v", c.p, got, c.zone)
		}
		if got := keepOf(t, i64, allNull, c.p); got != c.nul {
			t.Errorf("%v on all-null: keep %v, want %v", c.p, got, c.nul)
		}
		if got := keepOf(t, i64, unknown, c.p); got != c.unknown {
			t.Errorf("%v on unknown bounds (R32): keep %v, want %v", c.p, got, c.unknown)
		}
	}
}

func TestR39_ZeroLiteralIsAnInterval(t *testing.T) {
	// A v0 seed (or another writer's v1) holding exact total-order extrema:
	// zone of only +0.0 and zone of only -0.0. An IEEE engine matches both
	// zeros for x = ±0.0, so neither zone may be pruned (§5.4).
	f64 := arrow.PrimitiveTypes.Float64
	negZero := math.Copysign(0, -1)
	plus := v1Stats(4, 0, 0, 0, 0.0, 0.0)
	minus := v1Stats(4, 0, 0, 0, negZero, negZero)
	for _, z := range []Stats{plus, minus} {
		for _, lit := range []float64{0, negZero} {
			if !keepOf(t, f64, z, Eq(lit)) || !keepOf(t, f64, z, In(lit)) || !keepOf(t, f64, z, Ge(lit)) || !keepOf(t, f64, z, Le(lit)) {
				t.Fatalf("zone [%v,%v] pruned for zero literal %v", z.Min, z.Max, lit)
			}
		}
	}
	// Strict comparisons do not need the widening.
	if keepOf(t, f64, plus, Lt(negZero)) || keepOf(t, f64, minus, Gt(0.0)) {
		t.Fatal("strict comparison with zero kept a zone that cannot match")
	}
}

func TestR32_NaNLiteralNeverPrunesOrdinaryRows(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	z := v1Stats(4, 0, 0, 0, 1.0, 2.0)
	nan := f64bits(posNaN64)
	for _, p := range []Predicate{Lt(nan), Gt(nan), Le(nan), Ge(nan), Between(nan, 3.0), Between(0.0, nan)} {
		if !keepOf(t, f64, z, p) {
			t.Fatalf("%v pruned a zone of ordinary values (NaN as range bound, §5.4)", p)
		}
	}
	if keepOf(t, f64, z, Eq(nan)) {
		t.Fatal("x = NaN on a zone without NaNs")
	}
}

func TestPredicateErrors(t *testing.T) {
	z := v1Stats(4, 0, 0, 0, int64(1), int64(2))
	for _, p := range []Predicate{
		{Op: OpEq},
		{Op: OpEq, Values: []any{int64(1), int64(2)}},
		{Op: OpBetween, Values: []any{int64(1)}},
		{Op: OpIsNull, Values: []any{int64(1)}},
		{Op: Op(99)},
		Eq(nil),
		Eq(int32(1)),        // wrong Go type for Int64
		Eq("1"),             // wrong Go type
		In(int64(1), nil),   // null in IN list
		Between(1.0, 2.0),   // float literal for an int column
		Lt(uint64(1 << 63)), // unsigned literal for a signed column
	} {
		if _, err := p.Keep(i64, z); !errors.Is(err, ErrPredicate) {
			t.Errorf("%v: want ErrPredicate, got %v", p, err)
		}
	}
	if _, err := PruneZones(nil, nil, IsNull()); !errors.Is(err, ErrPredicate) {
		t.Fatal("nil value type")
	}
	if s := Eq(int64(1)).String(); !strings.Contains(s, "=") || OpNotIsNaN.String() != "NOT isnan" || Op(42).String() != "Op(42)" {
		t.Fatal(s)
	}
}

func TestT11_AllNullZonePrunedByIsNotNull(t *testing.T) {
	spec := seedSpec{version: 1, valueType: arrow.PrimitiveTypes.Int32, lens: []uint64{4, 4}, nulls: []uint32{4, 1},
		mins: []any{nil, int32(1)}, maxs: []any{nil, int32(3)},
		meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 0, 1, 2, 3, 6)}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int32, 4, 8))
	z := s.Zones[0]
	if z.NullCount != z.Rows || z.NaNCount != 0 || z.Min != nil || z.Max != nil {
		t.Fatalf("%+v", z)
	}
	keep, _ := s.Prune(IsNotNull())
	if keep[0] || !keep[1] {
		t.Fatalf("%v", keep)
	}
	keep, _ = s.Prune(IsNull())
	if !keep[0] || !keep[1] {
		t.Fatalf("%v", keep)
	}
}

func TestR21_R23_ZoneStartsPerDataFile(t *testing.T) {
	// Two data files written back to back: each seed's zones start at local
	// row 0 (no fragment id, no stored start).
	a := int64Spec(1, 4, 6, [2]any{int64(1), int64(2)}, [2]any{int64(3), int64(3)})
	b := int64Spec(1, 4, 3, [2]any{int64(7), int64(9)})
	sa := mustDecode(t, a.bytes(t), decodeOpts(i64, 4, 6))
	sb := mustDecode(t, b.bytes(t), decodeOpts(i64, 4, 3))
	if sa.Zones[1].Start != 4 || sb.Zones[0].Start != 0 || sb.Zones[0].Rows != 3 {
		t.Fatalf("%+v %+v", sa.Zones, sb.Zones)
	}
}

func TestR25_R26_T24_NaNCountsBySign(t *testing.T) {
	// T24: {+NaN, math.NaN() (payload 1), -NaN, 2.0} → nan 3, negative 1, min = max = 2.0.
	f64 := arrow.PrimitiveTypes.Float64
	spec := seedSpec{version: 1, valueType: f64, lens: []uint64{4}, mins: []any{2.0}, maxs: []any{2.0}, nans: []uint32{3}, negs: []uint32{1}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(f64, 4, 4))
	z := s.Zones[0]
	p, known := z.PositiveNaNCount()
	if z.NaNCount != 3 || z.NegativeNaNCount != 1 || p != 2 || !known || z.Ordinary() != 1 {
		t.Fatalf("%+v", z)
	}
	// With the collector: the same rows give the same counts (R25/R26, T29: null slots with NaN bytes are not NaNs).
	mem := memory.NewGoAllocator()
	bld := array.NewFloat64Builder(mem)
	bld.AppendValues([]float64{f64bits(posNaN64), f64bits(goNaN64), f64bits(negNaN64), 2.0}, nil)
	arr := bld.NewArray()
	defer arr.Release()
	c, err := NewCollector(arrow.Field{Name: "x", Type: f64, Nullable: true}, CollectorOptions{RowsPerZone: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(arr); err != nil {
		t.Fatal(err)
	}
	enc, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s2 := mustDecode(t, enc.IPC, decodeOpts(f64, 4, 4))
	if z2 := s2.Zones[0]; z2.NaNCount != 3 || z2.NegativeNaNCount != 1 || z2.Min != 2.0 || z2.Max != 2.0 {
		t.Fatalf("%+v", z2)
	}
}

func TestR42_R43_BitmapFormats(t *testing.T) {
	// Golden vectors of spec Appendix B decode: array container, run
	// containers (cookie 12347), in lower and upper case.
	cases := []struct {
		hex  string
		rows []uint32
		n    uint64
	}{
		{"3a3000000100000000000300100000000100030005000900", []uint32{1, 3, 5, 9}, 10},
		{"3b3000000100006300010000006300", nil, 100},
		{"3B3000000100000600010002000600", []uint32{2, 3, 4, 5, 6, 7, 8}, 9},
	}
	for _, c := range cases {
		rows := c.rows
		if rows == nil {
			for i := uint32(0); i < 100; i++ {
				rows = append(rows, i)
			}
		}
		lens := uniformLens(c.n, c.n)
		spec := seedSpec{version: 1, valueType: i64, lens: lens, nulls: []uint32{uint32(len(rows))},
			meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, c.hex}}}
		if uint64(len(rows)) < c.n {
			spec.mins, spec.maxs = []any{int64(0)}, []any{int64(0)}
		}
		s := mustDecode(t, spec.bytes(t), decodeOpts(i64, c.n, c.n))
		got := s.NullBitmap.ToArray()
		if len(got) != len(rows) || got[len(got)-1] != rows[len(rows)-1] {
			t.Fatalf("%s: %v", c.hex, got)
		}
	}
}

func TestR47_NestedBitmapMarksOuterNulls(t *testing.T) {
	// A struct column: the bitmap marks the outer-null rows only, and agrees
	// with the outer null counts (T20).
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	spec := seedSpec{version: 1, valueType: st, lens: []uint64{4, 2}, nulls: []uint32{1, 1},
		meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 2, 5)}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(st, 4, 6))
	if s.NullBitmap.GetCardinality() != 2 || s.Zones[0].NullCount != 1 {
		t.Fatal(s.NullBitmap.String())
	}
	// Wrong: bitmap counting child nulls too.
	spec.meta = [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 0, 2, 5)}}
	wantCode(t, spec.bytes(t), decodeOpts(st, 4, 6), ErrSeedBitmapMismatch)
}

func TestR40_DictionaryBoundsPrune(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Float64}
	spec := seedSpec{version: 1, valueType: dt, lens: []uint64{4, 4}, mins: []any{1.0, 5.0}, maxs: []any{2.0, 6.0}, nans: []uint32{0, 1}, negs: []uint32{0, 1}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(dt, 4, 8))
	keep, err := s.Prune(Lt(0.0))
	if err != nil || keep[0] || !keep[1] {
		t.Fatalf("x < 0: %v %v (zone 1 holds a negative NaN)", keep, err)
	}
	keep, _ = s.Prune(Eq(1.5))
	if !keep[0] || keep[1] {
		t.Fatalf("x = 1.5: %v", keep)
	}
}

func TestR38_T60_PrefixPruningWithTruncatedBounds(t *testing.T) {
	// LIKE 'p%' is x >= p AND x < next(p). With string bounds truncated to
	// 64 bytes (§6.2) a zone holding a value with prefix p is never pruned.
	r := rand.New(rand.NewSource(60))
	pieces := []string{"a", "é", "日", "\U0010FFFF", "\ud7ff", "z", "\u007f", "ab"}
	for it := 0; it < 1500; it++ {
		var vals []string
		for k := 0; k < 1+r.Intn(5); k++ {
			var b strings.Builder
			for b.Len() < r.Intn(150) {
				b.WriteString(pieces[r.Intn(len(pieces))])
			}
			vals = append(vals, b.String())
		}
		lo, hi := vals[0], vals[0]
		for _, v := range vals {
			lo, hi = min(lo, v), max(hi, v)
		}
		mn := truncate.MinString(lo, DefaultMaxBoundBytes)
		mx, ok := truncate.MaxString(hi, DefaultMaxBoundBytes, HardCapBoundBytes)
		var maxB any = mx
		if !ok {
			maxB = nil
		}
		if !utf8.ValidString(mn) || (ok && !utf8.ValidString(mx)) {
			t.Fatal("R38: truncated bounds must be valid UTF-8")
		}
		z := v1Stats(uint64(len(vals)), 0, 0, 0, mn, maxB)
		v := vals[r.Intn(len(vals))]
		cut := r.Intn(len(v) + 1)
		for cut > 0 && !utf8.RuneStart(v[cut%len(v)]) && cut < len(v) {
			cut--
		}
		prefix := v[:cut]
		next, hasNext := prefixSuccessor(prefix)
		keep := keepOf(t, arrow.BinaryTypes.String, z, Ge(prefix))
		if hasNext {
			keep = keep && keepOf(t, arrow.BinaryTypes.String, z, Lt(next))
		}
		if !keep {
			t.Fatalf("LIKE %q%% pruned a zone holding %q (bounds %q, %v)", prefix, v, mn, maxB)
		}
	}
}

// prefixSuccessor returns the least string greater than every string with
// the given byte prefix (increment the last byte < 0xFF, drop the rest).
func prefixSuccessor(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xFF {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
