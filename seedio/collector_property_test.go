package seedio

// Property test of the collector against a naive reference (issue 3 §4):
// random arrays (nulls, NaNs of both signs with non-canonical payloads, ±0,
// ±Inf, extremes, long and non-ASCII strings), random rows_per_zone, random
// batch splits and slice offsets. The reference works row by row on the Go
// values the arrays were built from, with its own ordering and truncation
// code; the collector's zones, its IPC bytes (read back with arrow-go) and its
// null bitmap must all equal the reference.

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

// wRefKind says how the reference computes bounds.
type wRefKind int

const (
	wRefNoBounds wRefKind = iota // null bounds (nested, REE, null, interval, extension)
	wRefExact                    // exact extrema (numbers, bool, fsb, dictionary values)
	wRefString                   // truncated per §6.2, UTF-8
	wRefBinary                   // truncated per §6.2, bytes
)

// wPropCase is one generated column: the logical Go value of every row (nil
// for a logical null) and a function that builds the Arrow array for rows
// [lo, hi) (possibly as a slice of a larger array).
type wPropCase struct {
	dt      arrow.DataType
	logical []any
	isFloat bool // counts NaNs (R25, Q2, Q4)
	kind    wRefKind
	build   func(rng *rand.Rand) arrow.Array // whole column
	// boundOK, when set, says whether a value is a valid bound of the type
	// (decimal precision); an invalid extremum gives a null bound (R38).
	boundOK func(v any) bool
}

func TestWriterPropertyR30_R34_R36_R45_R49_CollectorMatchesNaiveReference(t *testing.T) {
	cases := 12000
	if testing.Short() {
		cases = 1500
	}
	rng := rand.New(rand.NewPCG(2024, 3))
	gens := wPropGenerators()
	for i := 0; i < cases; i++ {
		g := gens[i%len(gens)]
		n := rng.IntN(40)
		switch rng.IntN(10) {
		case 0:
			n = rng.IntN(600)
		case 1:
			n = 1 + rng.IntN(3)
		}
		pc := g.gen(rng, n)
		rpz := uint64(1 + rng.IntN(12))
		switch rng.IntN(8) {
		case 0:
			rpz = uint64(1 + rng.IntN(200))
		case 1:
			rpz = DefaultRowsPerZone
		}
		if n > 100 && rng.IntN(2) == 0 {
			rpz = uint64(16 + rng.IntN(n)) // long zones: exercises the SIMD kernels
		}
		maxBound := 0
		if rng.IntN(3) == 0 {
			maxBound = 1 + rng.IntN(20)
		}
		if !wPropRunOne(t, rng, g.name, pc, rpz, maxBound) {
			t.Fatalf("case %d (%s, n=%d, rpz=%d, L=%d) failed", i, g.name, n, rpz, maxBound)
		}
	}
}

func wPropRunOne(t *testing.T, rng *rand.Rand, name string, pc wPropCase, rpz uint64, maxBound int) bool {
	t.Helper()
	whole := pc.build(rng)
	n := len(pc.logical)
	if whole.Len() != n {
		t.Errorf("%s: generator built %d rows for %d values", name, whole.Len(), n)
		return false
	}
	// random batch split of the rows, with occasional empty batches
	var batches []arrow.Array
	for lo := 0; lo < n; {
		size := 1 + rng.IntN(max(1, n/3))
		switch rng.IntN(6) {
		case 0:
			size = 1
		case 1:
			batches = append(batches, array.NewSlice(whole, int64(lo), int64(lo)))
		}
		hi := min(lo+size, n)
		batches = append(batches, array.NewSlice(whole, int64(lo), int64(hi)))
		lo = hi
	}
	if n == 0 {
		batches = append(batches, whole)
	}
	field := arrow.Field{Name: "p", Type: pc.dt, Nullable: true}
	c, err := NewCollector(field, CollectorOptions{RowsPerZone: rpz, MaxBoundBytes: maxBound})
	if err != nil {
		t.Errorf("%s: NewCollector: %v", name, err)
		return false
	}
	for _, b := range batches {
		if err := c.Observe(b); err != nil {
			t.Errorf("%s: Observe: %v", name, err)
			return false
		}
	}
	seed, err := c.Finish()
	if err != nil {
		t.Errorf("%s: Finish: %v", name, err)
		return false
	}
	// AppendFinish writes the same bytes as Finish, after any prefix, and
	// again on its reused working memory (a second data file's column).
	for round := range 2 {
		for _, b := range batches {
			if err := c.Observe(b); err != nil {
				t.Errorf("%s: Observe (AppendFinish round %d): %v", name, round, err)
				return false
			}
		}
		prefix := make([]byte, rng.IntN(9), 16+rng.IntN(64))
		got, err := c.AppendFinish(prefix)
		if err != nil {
			t.Errorf("%s: AppendFinish round %d: %v", name, round, err)
			return false
		}
		var wantIPC []byte
		if seed != nil {
			wantIPC = seed.IPC
		}
		if !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], wantIPC) {
			t.Errorf("%s: AppendFinish round %d: %d bytes after a %d-byte prefix, Finish wrote %d different bytes", name, round, len(got)-len(prefix), len(prefix), len(wantIPC))
			return false
		}
	}
	L := maxBound
	if L == 0 {
		L = DefaultMaxBoundBytes
	}
	want, wantNulls := wRefZones(pc, rpz, L, max(L, HardCapBoundBytes))
	if n == 0 {
		if seed != nil {
			t.Errorf("%s: R11: seed for zero rows", name)
			return false
		}
		return true
	}
	if seed == nil {
		t.Errorf("%s: no seed", name)
		return false
	}
	if !wPropSameZones(t, name+" collector", seed.Zones, want) {
		return false
	}
	if !seed.NullBitmap.Equals(wantNulls) {
		t.Errorf("%s: null bitmap %v, want %v", name, seed.NullBitmap, wantNulls)
		return false
	}
	dec, err := decodeNullBitmapHex(seed.NullBitmapHex)
	if err != nil || !dec.Equals(wantNulls) {
		t.Errorf("%s: seed_null_bitmap hex: %v", name, err)
		return false
	}
	if ref, _ := encodeNullBitmapHex(wantNulls); ref != seed.NullBitmapHex {
		t.Errorf("%s: R48: seed_null_bitmap differs from roaring's run-optimised serialization", name)
		return false
	}
	_, ipcZones := wReadIPC(t, seed.IPC, rpz)
	if SupportsBounds(seedValueType(pc.dt)) {
		if !wPropSameZones(t, name+" IPC", ipcZones, want) {
			return false
		}
	}
	// The package's own reader validates every writer seed (spec §5.1) and
	// sees the same zones.
	rs, err := Decode(seed.IPC, DecodeOptions{RowsPerZone: rpz, NumRows: uint64(n), ColumnType: pc.dt, TableFlagged: true})
	if err != nil {
		t.Errorf("%s: reader-side Decode rejected a collector seed: %v", name, err)
		return false
	}
	for i, z := range rs.Zones {
		w := want[i]
		if z.Rows != w.Rows || z.NullCount != uint64(w.NullCount) || z.NaNCount != uint64(w.NaNCount) ||
			z.NegativeNaNCount != uint64(w.NegativeNaNCount) || !wSameValue(z.Min, w.Min) || !wSameValue(z.Max, w.Max) {
			t.Errorf("%s: Decode zone %d = %+v, want %s", name, i, z.Stats, wFmtZone(w))
			return false
		}
	}
	return true
}

func wPropSameZones(t *testing.T, what string, got, want []Zone) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d zones, want %d", what, len(got), len(want))
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Start != w.Start || g.Rows != w.Rows || g.NullCount != w.NullCount ||
			g.NaNCount != w.NaNCount || g.NegativeNaNCount != w.NegativeNaNCount ||
			!wSameValue(g.Min, w.Min) || !wSameValue(g.Max, w.Max) {
			t.Errorf("%s: zone %d\n got  %s\n want %s", what, i, wFmtZone(g), wFmtZone(w))
			return false
		}
	}
	return true
}

func wFmtZone(z Zone) string {
	f := func(v any) string {
		switch x := v.(type) {
		case float64:
			return fmt.Sprintf("%v(%#x)", x, math.Float64bits(x))
		case string:
			if len(x) > 40 {
				return fmt.Sprintf("%q…(%d)", x[:40], len(x))
			}
			return fmt.Sprintf("%q", x)
		}
		return fmt.Sprintf("%v", v)
	}
	return fmt.Sprintf("start %d len %d nulls %d nans %d neg %d min %s max %s",
		z.Start, z.Rows, z.NullCount, z.NaNCount, z.NegativeNaNCount, f(z.Min), f(z.Max))
}

// ---- the naive reference -------------------------------------------------

// wRefIsNaN reports NaN and sign for the float Go types, without the
// package's bit helpers.
func wRefIsNaN(v any) (nan, neg bool) {
	switch x := v.(type) {
	case float64:
		return x != x, math.Signbit(x)
	case float32:
		return x != x, math.Signbit(float64(x))
	case float16.Num:
		f := x.Float32()
		return f != f, x.Uint16()&0x8000 != 0
	}
	return false, false
}

// wRefLess is Arrow Rust order for non-NaN values, written independently of
// order.go: IEEE < plus -0 < +0 for floats, Go < for strings, bytes.Compare.
func wRefLess(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		if x == y {
			return math.Signbit(x) && !math.Signbit(y)
		}
		return x < y
	case float32:
		y := b.(float32)
		if x == y {
			return math.Signbit(float64(x)) && !math.Signbit(float64(y))
		}
		return x < y
	case float16.Num:
		y := b.(float16.Num)
		fx, fy := x.Float32(), y.Float32()
		if fx == fy {
			return x.Uint16()&0x8000 != 0 && y.Uint16()&0x8000 == 0
		}
		return fx < fy
	case string:
		return x < b.(string)
	case []byte:
		return bytes.Compare(x, b.([]byte)) < 0
	case bool:
		return !x && b.(bool)
	case int8:
		return x < b.(int8)
	case int32:
		return x < b.(int32)
	case int64:
		return x < b.(int64)
	case uint64:
		return x < b.(uint64)
	case arrow.Timestamp:
		return x < b.(arrow.Timestamp)
	case arrow.Date32:
		return x < b.(arrow.Date32)
	case decimal.Decimal32:
		return x < b.(decimal.Decimal32)
	case decimal128.Num:
		return x.BigInt().Cmp(b.(decimal128.Num).BigInt()) < 0
	}
	panic(fmt.Sprintf("wRefLess: %T", a))
}

// wRefWidenZero applies R39.
func wRefWidenZero(mn, mx any) (any, any) {
	switch x := mn.(type) {
	case float64:
		if x == 0 {
			mn = math.Copysign(0, -1)
		}
		if mx.(float64) == 0 {
			mx = 0.0
		}
	case float32:
		if x == 0 {
			mn = float32(math.Copysign(0, -1))
		}
		if mx.(float32) == 0 {
			mx = float32(0)
		}
	case float16.Num:
		if x.Uint16()&0x7FFF == 0 {
			mn = float16.FromBits(0x8000)
		}
		if mx.(float16.Num).Uint16()&0x7FFF == 0 {
			mx = float16.FromBits(0)
		}
	}
	return mn, mx
}

// refTruncMin / refTruncMax re-implement §6.2 over runes.
func wRefTruncMinString(s string, l int) string {
	if len(s) <= l {
		return s
	}
	out := ""
	for _, r := range s {
		next := out + string(r)
		if len(next) > l {
			break
		}
		out = next
	}
	return out
}

func wRefTruncMaxString(s string, l, h int) (string, bool) {
	if len(s) <= l {
		return s, true
	}
	runes := []rune(wRefTruncMinString(s, l))
	for i := len(runes) - 1; i >= 0; i-- {
		r := runes[i]
		if r == 0x10FFFF {
			continue
		}
		succ := r + 1
		if succ == 0xD800 {
			succ = 0xE000
		}
		if utf8.RuneLen(succ) != utf8.RuneLen(r) {
			continue
		}
		return string(runes[:i]) + string(succ), true
	}
	if len(s) <= h {
		return s, true
	}
	return "", false
}

func wRefTruncMaxBinary(b []byte, l, h int) ([]byte, bool) {
	if len(b) <= l {
		return b, true
	}
	p := append([]byte(nil), b[:l]...)
	for len(p) > 0 {
		if p[len(p)-1] != 0xFF {
			p[len(p)-1]++
			return p, true
		}
		p = p[:len(p)-1]
	}
	if len(b) <= h {
		return b, true
	}
	return nil, false
}

// wRefZones computes the expected zones and null offsets.
func wRefZones(pc wPropCase, rpz uint64, l, h int) ([]Zone, *roaring.Bitmap) {
	nulls := roaring.New()
	var zones []Zone
	n := uint64(len(pc.logical))
	for start := uint64(0); start < n; start += rpz {
		end := min(start+rpz, n)
		z := Zone{Start: start, Stats: Stats{Rows: end - start}}
		var mn, mx any
		for r := start; r < end; r++ {
			v := pc.logical[r]
			if v == nil {
				z.NullCount++
				nulls.Add(uint32(r))
				continue
			}
			if pc.isFloat {
				if nan, neg := wRefIsNaN(v); nan {
					z.NaNCount++
					if neg {
						z.NegativeNaNCount++
					}
					continue
				}
			}
			if pc.kind == wRefNoBounds {
				continue
			}
			if mn == nil || wRefLess(v, mn) {
				mn = v
			}
			if mx == nil || wRefLess(mx, v) {
				mx = v
			}
		}
		if mn != nil {
			mn, mx = wRefWidenZero(mn, mx)
			switch pc.kind {
			case wRefString:
				s := wRefTruncMinString(mn.(string), l)
				mn = s
				if m, ok := wRefTruncMaxString(mx.(string), l, h); ok {
					mx = m
				} else {
					mx = nil
				}
			case wRefBinary:
				b := mn.([]byte)
				if len(b) > l {
					b = b[:l]
				}
				mn = b
				if m, ok := wRefTruncMaxBinary(mx.([]byte), l, h); ok {
					mx = m
				} else {
					mx = nil
				}
			}
		}
		if pc.boundOK != nil {
			if mn != nil && !pc.boundOK(mn) {
				mn = nil
			}
			if mx != nil && !pc.boundOK(mx) {
				mx = nil
			}
		}
		z.Min, z.Max = mn, mx
		zones = append(zones, z)
	}
	return zones, nulls
}

// ---- generators ------------------------------------------------------------

type wPropGen struct {
	name string
	gen  func(rng *rand.Rand, n int) wPropCase
}

// wNullRate picks a per-case null probability, often 0, sometimes 1.
func wNullRate(rng *rand.Rand) float64 {
	switch rng.IntN(5) {
	case 0:
		return 0
	case 1:
		return 1
	}
	return rng.Float64() * 0.6
}

func wRandF64(rng *rand.Rand) float64 {
	switch rng.IntN(14) {
	case 0: // NaN, random sign and non-canonical payload
		bits := uint64(0x7FF0_0000_0000_0000) | (1 + rng.Uint64()%(1<<52-1))
		if rng.IntN(2) == 0 {
			bits |= 1 << 63
		}
		return math.Float64frombits(bits)
	case 1:
		return 0
	case 2:
		return math.Copysign(0, -1)
	case 3:
		return math.Inf(1)
	case 4:
		return math.Inf(-1)
	case 5:
		return math.MaxFloat64
	case 6:
		return -math.SmallestNonzeroFloat64
	case 7:
		return math.Float64frombits(rng.Uint64()) // anything, incl. NaN
	}
	return rng.NormFloat64() * 100
}

func wRandF32(rng *rand.Rand) float32 {
	switch rng.IntN(8) {
	case 0:
		bits := uint32(0x7F80_0000) | (1 + rng.Uint32()%(1<<23-1))
		if rng.IntN(2) == 0 {
			bits |= 1 << 31
		}
		return math.Float32frombits(bits)
	case 1:
		return float32(math.Copysign(0, -1))
	case 2:
		return float32(math.Inf(-1))
	}
	return float32(rng.NormFloat64() * 10)
}

func wRandString(rng *rand.Rand) string {
	pieces := []string{"a", "b", "z", "é", "日本", "\U0010FFFF", "\uD7FF", "\u007F", "\uFFFF", "\x00", "~", "ab"}
	var sb strings.Builder
	n := rng.IntN(8)
	switch rng.IntN(10) {
	case 0:
		n = 20 + rng.IntN(60) // long: beyond L
	case 1:
		n = 1100 + rng.IntN(300) // very long: some beyond H in bytes
	}
	for i := 0; i < n; i++ {
		sb.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return sb.String()
}

func wRandBytes(rng *rand.Rand) []byte {
	n := rng.IntN(10)
	if rng.IntN(8) == 0 {
		n = 60 + rng.IntN(5000)
	}
	b := make([]byte, n)
	for i := range b {
		switch rng.IntN(4) {
		case 0:
			b[i] = 0xFF
		case 1:
			b[i] = 0
		default:
			b[i] = byte(rng.IntN(256))
		}
	}
	return b
}

// wScalarCase builds a column of type dt from generated values.
func wScalarCase(dt arrow.DataType, kind wRefKind, isFloat bool, rng *rand.Rand, n int, val func() any) wPropCase {
	p := wNullRate(rng)
	vals := make([]any, n)
	for i := range vals {
		if rng.Float64() >= p {
			vals[i] = val()
		}
	}
	return wPropCase{dt: dt, logical: vals, isFloat: isFloat, kind: kind, build: func(rng *rand.Rand) arrow.Array {
		return wBuildPadded(rng, dt, vals, val)
	}}
}

// wBuildPadded builds vals, sometimes behind a prefix that is then sliced
// off, so that arrays have non-zero offsets (validity bit offsets too).
func wBuildPadded(rng *rand.Rand, dt arrow.DataType, vals []any, val func() any) arrow.Array {
	pad := 0
	if rng.IntN(2) == 0 {
		pad = 1 + rng.IntN(70)
	}
	all := make([]any, 0, pad+len(vals)+3)
	for i := 0; i < pad; i++ {
		if rng.IntN(3) == 0 {
			all = append(all, nil)
		} else {
			all = append(all, val())
		}
	}
	all = append(all, vals...)
	all = append(all, val(), nil)
	arr, err := buildValues(wMem, dt, all)
	if err != nil {
		panic(err)
	}
	return array.NewSlice(arr, int64(pad), int64(pad+len(vals)))
}

func wPropGenerators() []wPropGen {
	tsTZ := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}
	return []wPropGen{
		{"int64", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Int64, wRefExact, false, rng, n, func() any {
				switch rng.IntN(6) {
				case 0:
					return int64(math.MinInt64)
				case 1:
					return int64(math.MaxInt64)
				}
				return int64(rng.Uint64())
			})
		}},
		{"uint64", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Uint64, wRefExact, false, rng, n, func() any {
				switch rng.IntN(5) {
				case 0:
					return uint64(math.MaxUint64)
				case 1:
					return uint64(1 << 63)
				case 2:
					return uint64(0)
				}
				return rng.Uint64()
			})
		}},
		{"int32", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Int32, wRefExact, false, rng, n, func() any { return int32(rng.Uint32()) })
		}},
		{"int8", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Int8, wRefExact, false, rng, n, func() any { return int8(rng.Uint32()) })
		}},
		{"float64", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Float64, wRefExact, true, rng, n, func() any { return wRandF64(rng) })
		}},
		{"float32", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.PrimitiveTypes.Float32, wRefExact, true, rng, n, func() any { return wRandF32(rng) })
		}},
		{"float16", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.FixedWidthTypes.Float16, wRefExact, true, rng, n, func() any {
				specials := []uint16{0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7C00, 0xFC00, 0, 0x8000, 0x3C00, 0x7BFF}
				if rng.IntN(2) == 0 {
					return float16.FromBits(specials[rng.IntN(len(specials))])
				}
				return float16.FromBits(uint16(rng.Uint32()))
			})
		}},
		{"decimal128", func(rng *rand.Rand, n int) wPropCase {
			// Values beyond precision 38 are invalid column data; the writer
			// must not turn them into invalid bounds (R38, E19).
			pc := wScalarCase(&arrow.Decimal128Type{Precision: 38, Scale: 2}, wRefExact, false, rng, n, func() any {
				return decimal128.New(int64(rng.Uint64())>>rng.IntN(64), rng.Uint64())
			})
			pc.boundOK = func(v any) bool {
				b := v.(decimal128.Num).BigInt()
				lim := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
				return b.CmpAbs(lim) < 0
			}
			return pc
		}},
		{"decimal32", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(&arrow.Decimal32Type{Precision: 9, Scale: 0}, wRefExact, false, rng, n, func() any {
				return decimal.Decimal32(rng.Int32N(2*999999999) - 999999999)
			})
		}},
		{"bool", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.FixedWidthTypes.Boolean, wRefExact, false, rng, n, func() any { return rng.IntN(3) == 0 })
		}},
		{"timestamp_tz", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(tsTZ, wRefExact, false, rng, n, func() any { return arrow.Timestamp(int64(rng.Uint64())) })
		}},
		{"date32", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.FixedWidthTypes.Date32, wRefExact, false, rng, n, func() any { return arrow.Date32(rng.Int32N(1 << 20)) })
		}},
		{"utf8", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.BinaryTypes.String, wRefString, false, rng, n, func() any { return wRandString(rng) })
		}},
		{"large_utf8", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.BinaryTypes.LargeString, wRefString, false, rng, n, func() any { return wRandString(rng) })
		}},
		{"utf8_view", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.BinaryTypes.StringView, wRefString, false, rng, n, func() any { return wRandString(rng) })
		}},
		{"binary", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.BinaryTypes.Binary, wRefBinary, false, rng, n, func() any { return wRandBytes(rng) })
		}},
		{"binary_view", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(arrow.BinaryTypes.BinaryView, wRefBinary, false, rng, n, func() any { return wRandBytes(rng) })
		}},
		{"fixed_size_binary", func(rng *rand.Rand, n int) wPropCase {
			return wScalarCase(&arrow.FixedSizeBinaryType{ByteWidth: 3}, wRefExact, false, rng, n, func() any {
				return []byte{byte(rng.IntN(3)) * 0x7F, byte(rng.IntN(256)), 0xFF}
			})
		}},
		{"dict_utf8", wGenDictUtf8},
		{"dict_float64", wGenDictFloat64},
		{"ree_float32", wGenREE},
		{"struct", wGenStruct},
		{"list_float32", wGenList},
		{"null", func(rng *rand.Rand, n int) wPropCase {
			vals := make([]any, n)
			return wPropCase{dt: arrow.Null, logical: vals, build: func(rng *rand.Rand) arrow.Array {
				pad := rng.IntN(5)
				return array.NewSlice(array.NewNull(pad+n+2), int64(pad), int64(pad+n))
			}}
		}},
		{"extension_float", func(rng *rand.Rand, n int) wPropCase {
			pc := wScalarCase(arrow.PrimitiveTypes.Float64, wRefNoBounds, true, rng, n, func() any { return wRandF64(rng) })
			inner := pc.build
			pc.dt = wFloatExtType()
			pc.build = func(rng *rand.Rand) arrow.Array {
				return array.NewExtensionArrayWithStorage(wFloatExtType(), inner(rng))
			}
			return pc
		}},
	}
}

func wGenDictUtf8(rng *rand.Rand, n int) wPropCase {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	dsize := 1 + rng.IntN(12)
	dict := make([]any, dsize)
	for i := range dict {
		if rng.IntN(5) != 0 {
			dict[i] = wRandString(rng)
		}
	}
	p := wNullRate(rng)
	keys := make([]any, n)
	logical := make([]any, n)
	for i := range keys {
		if rng.Float64() < p {
			continue
		}
		k := rng.IntN(dsize)
		keys[i] = int16(k)
		logical[i] = dict[k]
	}
	// Dictionary values are never truncated (T-R1): exact reference.
	return wPropCase{dt: dt, logical: logical, kind: wRefExact, build: func(rng *rand.Rand) arrow.Array {
		d, _ := buildValues(wMem, dt.ValueType, dict)
		idx, _ := buildValues(wMem, dt.IndexType, keys)
		return array.NewDictionaryArray(dt, idx, d)
	}}
}

func wGenDictFloat64(rng *rand.Rand, n int) wPropCase {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.PrimitiveTypes.Float64}
	dsize := 1 + rng.IntN(10)
	dict := make([]any, dsize)
	for i := range dict {
		if rng.IntN(6) != 0 {
			dict[i] = wRandF64(rng)
		}
	}
	p := wNullRate(rng)
	keys := make([]any, n)
	logical := make([]any, n)
	for i := range keys {
		if rng.Float64() < p {
			continue
		}
		k := rng.IntN(dsize)
		keys[i] = uint8(k)
		logical[i] = dict[k]
	}
	return wPropCase{dt: dt, logical: logical, isFloat: true, kind: wRefExact, build: func(rng *rand.Rand) arrow.Array {
		d, _ := buildValues(wMem, dt.ValueType, dict)
		pad := rng.IntN(4)
		all := append(make([]any, pad), keys...)
		idx, _ := buildValues(wMem, dt.IndexType, all)
		full := array.NewDictionaryArray(dt, idx, d)
		return array.NewSlice(full, int64(pad), int64(pad+n))
	}}
}

func wGenREE(rng *rand.Rand, n int) wPropCase {
	dt := arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32)
	pad := rng.IntN(5)
	total := pad + n + rng.IntN(3)
	var ends, values []any
	logicalAll := make([]any, total)
	for pos := 0; pos < total; {
		run := 1 + rng.IntN(6)
		end := min(pos+run, total)
		var v any
		if rng.IntN(3) != 0 {
			v = wRandF32(rng)
		}
		for r := pos; r < end; r++ {
			logicalAll[r] = v
		}
		ends = append(ends, int32(end))
		values = append(values, v)
		pos = end
	}
	return wPropCase{dt: dt, logical: logicalAll[pad : pad+n], isFloat: true, kind: wRefNoBounds, build: func(rng *rand.Rand) arrow.Array {
		re, _ := buildValues(wMem, arrow.PrimitiveTypes.Int32, ends)
		vs, _ := buildValues(wMem, arrow.PrimitiveTypes.Float32, values)
		if total == 0 {
			return array.NewSlice(array.NewRunEndEncodedArray(re, vs, 0, 0), 0, 0)
		}
		full := array.NewRunEndEncodedArray(re, vs, total, 0)
		return array.NewSlice(full, int64(pad), int64(pad+n))
	}}
}

func wGenStruct(rng *rand.Rand, n int) wPropCase {
	dt := arrow.StructOf(arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	p := wNullRate(rng)
	logical := make([]any, n)
	outer := make([]bool, n)
	child := make([]any, n)
	for i := range logical {
		outer[i] = rng.Float64() >= p
		if outer[i] {
			logical[i] = struct{}{}
		}
		if rng.IntN(3) != 0 {
			child[i] = wRandF64(rng) // NaN children never count (R27)
		}
	}
	return wPropCase{dt: dt, logical: logical, kind: wRefNoBounds, build: func(rng *rand.Rand) arrow.Array {
		b := array.NewStructBuilder(wMem, dt)
		fb := b.FieldBuilder(0).(*array.Float64Builder)
		b.AppendNull() // padding row
		fb.Append(1)
		for i := 0; i < n; i++ {
			b.Append(outer[i])
			if child[i] == nil {
				fb.AppendNull()
			} else {
				fb.Append(child[i].(float64))
			}
		}
		return array.NewSlice(b.NewArray(), 1, int64(1+n))
	}}
}

func wGenList(rng *rand.Rand, n int) wPropCase {
	dt := arrow.ListOf(arrow.PrimitiveTypes.Float32)
	p := wNullRate(rng)
	logical := make([]any, n)
	lists := make([][]float32, n)
	for i := range logical {
		if rng.Float64() < p {
			continue
		}
		logical[i] = struct{}{}
		for k := rng.IntN(4); k > 0; k-- {
			lists[i] = append(lists[i], wRandF32(rng))
		}
	}
	return wPropCase{dt: dt, logical: logical, kind: wRefNoBounds, build: func(rng *rand.Rand) arrow.Array {
		b := array.NewListBuilder(wMem, arrow.PrimitiveTypes.Float32)
		vb := b.ValueBuilder().(*array.Float32Builder)
		for i := 0; i < n; i++ {
			if logical[i] == nil {
				b.AppendNull()
				continue
			}
			b.Append(true)
			vb.AppendValues(lists[i], nil)
		}
		return b.NewArray()
	}}
}
