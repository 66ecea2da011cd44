package seedio

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Property test (issue §4, spec R30, R49, R65, §5.4): random columns with
// nulls, NaNs of both signs and non-canonical payloads, ±0, ±Inf, extremes,
// long and non-ASCII strings; random rows_per_zone and batch splits. For
// every case:
//   - the Collector's seed decodes and validates, and its zones equal a
//     naive reference computed here row by row;
//   - a v0 seed built from the same reference in Lance 12's shape (NaN max
//     marker, no sign counts) decodes too;
//   - Prune on v1 and v0 zones, on per-file summaries and on a folded
//     segment summary never drops anything that holds a matching row, for
//     random predicates evaluated under both Arrow total-order and IEEE
//     semantics.

const propertyCases = 10000

// refRow is one generated row: null, or a value in the Go type ValueAt returns.
type refRow struct {
	null bool
	v    any
}

type propType struct {
	name  string
	dt    arrow.DataType
	gen   func(r *rand.Rand) any
	build func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array
}

func TestR49_R65_T29_PropertySeedRoundTripAndPruneSoundness(t *testing.T) {
	r := rand.New(rand.NewSource(20261130))
	mem := memory.NewGoAllocator()
	types := propTypes()
	predicates := 0
	for c := 0; c < propertyCases; c++ {
		pt := types[c%len(types)]
		nFiles := 1 + r.Intn(3)
		rpz := uint64(1 + r.Intn(40))
		if r.Intn(10) == 0 {
			rpz = uint64(100 + r.Intn(8192))
		}
		nullP := []float64{0, 0, 0.1, 0.5, 1}[r.Intn(5)]
		var files [][]refRow
		var seedsV1, seedsV0 []*Seed
		for f := 0; f < nFiles; f++ {
			n := r.Intn(120)
			if f == 0 && n == 0 {
				n = 1 + r.Intn(50)
			}
			rows := make([]refRow, n)
			for i := range rows {
				if r.Float64() < nullP {
					rows[i] = refRow{null: true}
				} else {
					rows[i] = refRow{v: pt.gen(r)}
				}
			}
			if n == 0 {
				continue // R11: no seed for an empty data file
			}
			files = append(files, rows)
			arr := pt.build(mem, rows, r)
			enc := collectInBatches(t, pt, arr, rpz, r)
			arr.Release()
			ctx := fmt.Sprintf("case %d type %s rpz %d file %d", c, pt.name, rpz, f)
			s1, err := Decode(enc.IPC, DecodeOptions{RowsPerZone: rpz, NumRows: uint64(n), ColumnType: pt.dt, TableFlagged: true})
			if err != nil {
				t.Fatalf("%s: collector seed does not validate: %v", ctx, err)
			}
			ref := referenceZones(rows, rpz)
			compareWithReference(t, ctx, pt, s1, ref)
			spec := v0SpecFromReference(pt.dt, ref, rows)
			s0, err := Decode(spec.bytes(t), DecodeOptions{RowsPerZone: rpz, NumRows: uint64(n), ColumnType: pt.dt})
			if err != nil {
				t.Fatalf("%s: v0 seed from the reference does not validate: %v", ctx, err)
			}
			seedsV1 = append(seedsV1, s1)
			seedsV0 = append(seedsV0, s0)
		}
		for k := 0; k < 4; k++ {
			p := randomPredicate(r, pt, files)
			predicates++
			checkPruneSound(t, c, pt, p, files, seedsV1, rpz, "v1")
			checkPruneSound(t, c, pt, p, files, seedsV0, rpz, "v0")
		}
	}
	t.Logf("%d cases, %d predicates checked against zones, files and segments (v0 and v1)", propertyCases, predicates)
}

// collectInBatches feeds arr to a Collector in random slices (R49).
func collectInBatches(t *testing.T, pt propType, arr arrow.Array, rpz uint64, r *rand.Rand) *EncodedSeed {
	t.Helper()
	c, err := NewCollector(arrow.Field{Name: "c", Type: pt.dt, Nullable: true}, CollectorOptions{RowsPerZone: rpz})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < arr.Len(); {
		hi := lo + 1 + r.Intn(arr.Len()-lo)
		if r.Intn(3) == 0 {
			hi = arr.Len()
		}
		s := array.NewSlice(arr, int64(lo), int64(hi))
		if err := c.Observe(s); err != nil {
			t.Fatal(err)
		}
		s.Release()
		lo = hi
	}
	enc, err := c.Finish()
	if err != nil || enc == nil {
		t.Fatalf("Finish: %v %v", enc, err)
	}
	return enc
}

// refZone is the naive reference of one zone.
type refZone struct {
	start, length      uint64
	nulls, nans, negs  uint64
	min, max           any // exact extrema over ordinary values (nil when none)
	minNaNMarker, hasO bool
}

func referenceZones(rows []refRow, rpz uint64) []refZone {
	var out []refZone
	for start := uint64(0); start < uint64(len(rows)); start += rpz {
		end := min(start+rpz, uint64(len(rows)))
		z := refZone{start: start, length: end - start}
		for _, row := range rows[start:end] {
			switch {
			case row.null:
				z.nulls++
			case refIsNaN(row.v):
				z.nans++
				if refNegative(row.v) {
					z.negs++
				}
			default:
				z.hasO = true
				if z.min == nil || refCmp(row.v, z.min) < 0 {
					z.min = row.v
				}
				if z.max == nil || refCmp(row.v, z.max) > 0 {
					z.max = row.v
				}
			}
		}
		out = append(out, z)
	}
	return out
}

func compareWithReference(t *testing.T, ctx string, pt propType, s *Seed, ref []refZone) {
	t.Helper()
	if len(s.Zones) != len(ref) {
		t.Fatalf("%s: %d zones, reference %d", ctx, len(s.Zones), len(ref))
	}
	for i, z := range s.Zones {
		w := ref[i]
		if z.Start != w.start || z.Rows != w.length || z.NullCount != w.nulls || z.NaNCount != w.nans || z.NegativeNaNCount != w.negs {
			t.Fatalf("%s zone %d: start/len/null/nan/neg %d/%d/%d/%d/%d, reference %d/%d/%d/%d/%d", ctx, i,
				z.Start, z.Rows, z.NullCount, z.NaNCount, z.NegativeNaNCount, w.start, w.length, w.nulls, w.nans, w.negs)
		}
		if !w.hasO {
			if z.Min != nil || z.Max != nil {
				t.Fatalf("%s zone %d: bounds without ordinary values", ctx, i)
			}
			continue
		}
		wantMin, wantMax := w.min, w.max
		// R39: a ±0 extremum is widened to −0 (min) / +0 (max).
		if refIsZero(wantMin) {
			wantMin = refNegZeroLike(wantMin)
		}
		if refIsZero(wantMax) {
			wantMax = refPosZeroLike(wantMax)
		}
		// §6.2: long string/binary bounds are truncated (T-R2/T-R3/T-R4/T-R5):
		// they must still bound the exact extrema; short ones are exact.
		if z.Min == nil || (refLen(wantMin) <= DefaultMaxBoundBytes && !refSame(z.Min, wantMin)) || refCmp(z.Min, wantMin) > 0 {
			t.Fatalf("%s zone %d: min %s, reference %s", ctx, i, describeValue(z.Min), describeValue(wantMin))
		}
		if refLen(wantMax) <= DefaultMaxBoundBytes && !refSame(z.Max, wantMax) {
			t.Fatalf("%s zone %d: max %s, reference %s", ctx, i, describeValue(z.Max), describeValue(wantMax))
		}
		if z.Max != nil && refCmp(z.Max, wantMax) < 0 {
			t.Fatalf("%s zone %d: max %s below the exact max %s", ctx, i, describeValue(z.Max), describeValue(wantMax))
		}
		if s, ok := z.Min.(string); ok && !utf8.ValidString(s) {
			t.Fatalf("%s zone %d: invalid UTF-8 min", ctx, i)
		}
	}
}

// v0SpecFromReference builds the seed Lance 12 would have written (§3.6):
// exact bounds, max = canonical +NaN whenever nan_count > 0, min null when
// no ordinary value, no sign counts, bitmap "" when there are no nulls.
func v0SpecFromReference(dt arrow.DataType, ref []refZone, rows []refRow) seedSpec {
	s := seedSpec{version: 0, valueType: dt}
	var nullRows []uint32
	for i, row := range rows {
		if row.null {
			nullRows = append(nullRows, uint32(i))
		}
	}
	for _, z := range ref {
		s.lens = append(s.lens, z.length)
		s.nulls = append(s.nulls, uint32(z.nulls))
		s.nans = append(s.nans, uint32(z.nans))
		mn, mx := z.min, z.max
		if z.nans > 0 {
			mx = canonicalNaNLike(dt)
		}
		s.mins = append(s.mins, mn)
		s.maxs = append(s.maxs, mx)
	}
	h := ""
	if len(nullRows) > 0 {
		h, _ = encodeNullBitmapHex(roaring.BitmapOf(nullRows...))
	}
	s.meta = [][2]string{{metaNullBitmap, h}}
	return s
}

func checkPruneSound(t *testing.T, c int, pt propType, p Predicate, files [][]refRow, seeds []*Seed, rpz uint64, ver string) {
	t.Helper()
	var summaries []Stats
	anyMatch := false
	for f, rows := range files {
		s := seeds[f]
		keep, err := s.Prune(p)
		if err != nil {
			t.Fatalf("case %d %s: Prune(%v): %v", c, ver, p, err)
		}
		fileMatch := false
		for zi, z := range s.Zones {
			match := false
			for _, row := range rows[z.Start:z.End()] {
				if rowMatches(row, p) {
					match = true
					break
				}
			}
			if match && !keep[zi] {
				t.Fatalf("case %d %s type %s rpz %d: %v dropped zone %d %+v which holds a match (rows %v)",
					c, ver, pt.name, rpz, p, zi, z.Stats, describeRows(rows[z.Start:z.End()]))
			}
			fileMatch = fileMatch || match
		}
		sum, err := s.Summary()
		if err != nil {
			t.Fatal(err)
		}
		summaries = append(summaries, sum)
		if k, err := p.Keep(pt.dt, sum); err != nil || (fileMatch && !k) {
			t.Fatalf("case %d %s: %v dropped file %d summary %+v with a match (%v)", c, ver, p, f, sum, err)
		}
		anyMatch = anyMatch || fileMatch
	}
	seg, err := Aggregate(summaries)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := p.Keep(pt.dt, seg); err != nil || (anyMatch && !k) {
		t.Fatalf("case %d %s: %v dropped the segment summary %+v with a match (%v)", c, ver, p, seg, err)
	}
}

func describeRows(rows []refRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.null {
			b.WriteString("null ")
		} else {
			b.WriteString(describeValue(r.v) + " ")
		}
	}
	return b.String()
}

// rowMatches evaluates p on one row; a row matches if it matches under
// Arrow total-order semantics or under IEEE semantics (§5.4: both must be
// sound).
func rowMatches(row refRow, p Predicate) bool {
	switch p.Op {
	case OpIsNull:
		return row.null
	case OpIsNotNull:
		return !row.null
	case OpIsNaN:
		return !row.null && refIsNaN(row.v)
	case OpNotIsNaN:
		return !row.null && !refIsNaN(row.v)
	}
	if row.null {
		return false
	}
	v := row.v
	cmpBoth := func(lit any, ok func(c int) bool) bool {
		if ok(refCmp(v, lit)) {
			return true // total order
		}
		if c, comparable := refIEEECmp(v, lit); comparable && ok(c) {
			return true
		}
		return false
	}
	switch p.Op {
	case OpEq:
		return cmpBoth(p.Values[0], func(c int) bool { return c == 0 })
	case OpIn:
		for _, l := range p.Values {
			if cmpBoth(l, func(c int) bool { return c == 0 }) {
				return true
			}
		}
		return false
	case OpLt:
		return cmpBoth(p.Values[0], func(c int) bool { return c < 0 })
	case OpLe:
		return cmpBoth(p.Values[0], func(c int) bool { return c <= 0 })
	case OpGt:
		return cmpBoth(p.Values[0], func(c int) bool { return c > 0 })
	case OpGe:
		return cmpBoth(p.Values[0], func(c int) bool { return c >= 0 })
	case OpBetween:
		tot := refCmp(v, p.Values[0]) >= 0 && refCmp(v, p.Values[1]) <= 0
		c1, ok1 := refIEEECmp(v, p.Values[0])
		c2, ok2 := refIEEECmp(v, p.Values[1])
		return tot || (ok1 && ok2 && c1 >= 0 && c2 <= 0)
	}
	panic("op")
}

func randomPredicate(r *rand.Rand, pt propType, files [][]refRow) Predicate {
	lit := func() any {
		if r.Intn(2) == 0 {
			rows := files[r.Intn(len(files))]
			row := rows[r.Intn(len(rows))]
			if !row.null {
				return row.v
			}
		}
		return pt.gen(r)
	}
	switch r.Intn(11) {
	case 0:
		return Eq(lit())
	case 1:
		return Lt(lit())
	case 2:
		return Le(lit())
	case 3:
		return Gt(lit())
	case 4:
		return Ge(lit())
	case 5:
		a, b := lit(), lit()
		if r.Intn(4) != 0 && refCmp(a, b) > 0 {
			a, b = b, a
		}
		return Between(a, b)
	case 6:
		return In(lit(), lit(), lit())
	case 7:
		return IsNull()
	case 8:
		return IsNotNull()
	case 9:
		return IsNaN()
	}
	return NotIsNaN()
}

// ---- independent reference ordering (not the package's CompareValues) ----

func refKey64(b uint64) uint64 {
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func refFloatBits(v any) (uint64, int, bool) {
	switch x := v.(type) {
	case float64:
		return math.Float64bits(x), 64, true
	case float32:
		return uint64(math.Float32bits(x)), 32, true
	case float16.Num:
		return uint64(x.Uint16()), 16, true
	}
	return 0, 0, false
}

// refCmp is Arrow Rust order (§4): floats by totalOrder on their bit pattern
// widened to 64 bits with the sign moved to bit 63, bytes/strings bytewise,
// integers numerically, false < true.
func refCmp(a, b any) int {
	if ab, w, ok := refFloatBits(a); ok {
		bb, _, _ := refFloatBits(b)
		ka, kb := refKey64(ab<<(64-w)), refKey64(bb<<(64-w))
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	}
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	panic(fmt.Sprintf("refCmp %T", a))
}

// refIEEECmp compares under IEEE semantics (NaN unordered, −0 = +0); the
// second result is false when the values are unordered. Non-floats use refCmp.
func refIEEECmp(a, b any) (int, bool) {
	fa, okA := refFloat64(a)
	if !okA {
		return refCmp(a, b), true
	}
	fb, _ := refFloat64(b)
	switch {
	case math.IsNaN(fa) || math.IsNaN(fb):
		return 0, false
	case fa < fb:
		return -1, true
	case fa > fb:
		return 1, true
	}
	return 0, true
}

func refFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case float16.Num:
		if refIsNaN(x) {
			return math.NaN(), true
		}
		return float64(x.Float32()), true
	}
	return 0, false
}

func refIsNaN(v any) bool {
	b, w, ok := refFloatBits(v)
	if !ok {
		return false
	}
	expMask := map[int]uint64{64: 0x7FF0000000000000, 32: 0x7F800000, 16: 0x7C00}[w]
	fracMask := map[int]uint64{64: 1<<52 - 1, 32: 1<<23 - 1, 16: 1<<10 - 1}[w]
	return b&expMask == expMask && b&fracMask != 0
}

func refNegative(v any) bool {
	b, w, _ := refFloatBits(v)
	return b>>(w-1)&1 == 1
}

func refIsZero(v any) bool {
	b, w, ok := refFloatBits(v)
	return ok && b&^(1<<(w-1)) == 0
}

func refNegZeroLike(v any) any {
	switch v.(type) {
	case float64:
		return math.Copysign(0, -1)
	case float32:
		return math.Float32frombits(1 << 31)
	}
	return float16.FromBits(1 << 15)
}

func refPosZeroLike(v any) any {
	switch v.(type) {
	case float64:
		return float64(0)
	case float32:
		return float32(0)
	}
	return float16.FromBits(0)
}

func refLen(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 0
}

// refSame is bit-exact identity.
func refSame(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if ab, _, ok := refFloatBits(a); ok {
		bb, _, ok2 := refFloatBits(b)
		return ok2 && ab == bb
	}
	return refCmp(a, b) == 0
}

func canonicalNaNLike(dt arrow.DataType) any {
	switch dt.ID() {
	case arrow.FLOAT64:
		return math.Float64frombits(0x7FF8000000000000)
	case arrow.FLOAT32:
		return math.Float32frombits(0x7FC00000)
	}
	return float16.FromBits(0x7E00)
}

// ---- generators ----

func randomNaN64(r *rand.Rand) uint64 {
	b := uint64(0x7FF0000000000000) | (1 + uint64(r.Int63n(1<<52-1)))
	if r.Intn(4) == 0 {
		b = 0x7FF8000000000000 | uint64(r.Intn(3)) // canonical, math.NaN()-like payload 1
	}
	if r.Intn(2) == 0 {
		b |= 1 << 63
	}
	return b
}

func genFloat64(r *rand.Rand) any {
	switch r.Intn(12) {
	case 0:
		return math.Float64frombits(randomNaN64(r))
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return 0.0
	case 3:
		return math.Inf(1 - 2*r.Intn(2))
	case 4:
		return []float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}[r.Intn(4)]
	}
	return float64(r.Intn(21)-10) / 2
}

func genFloat32(r *rand.Rand) any {
	switch r.Intn(12) {
	case 0:
		b := uint32(0x7F800000) | uint32(1+r.Intn(1<<23-1))
		if r.Intn(2) == 0 {
			b |= 1 << 31
		}
		return math.Float32frombits(b)
	case 1:
		return math.Float32frombits(1 << 31)
	case 2:
		return float32(0)
	case 3:
		return float32(math.Inf(1 - 2*r.Intn(2)))
	case 4:
		return []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32}[r.Intn(3)]
	}
	return float32(r.Intn(21)-10) / 4
}

func genFloat16(r *rand.Rand) any {
	switch r.Intn(10) {
	case 0:
		b := uint16(0x7C00) | uint16(1+r.Intn(1<<10-1))
		if r.Intn(2) == 0 {
			b |= 1 << 15
		}
		return float16.FromBits(b)
	case 1:
		return float16.FromBits(1 << 15)
	case 2:
		return float16.FromBits(0)
	case 3:
		return float16.FromBits([]uint16{0x7C00, 0xFC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400}[r.Intn(9)])
	case 4:
		// Subnormals of both signs (issue 15 item 7).
		b := uint16(1 + r.Intn(0x3FF))
		if r.Intn(2) == 0 {
			b |= 1 << 15
		}
		return float16.FromBits(b)
	}
	return float16.New(float32(r.Intn(21)-10) / 8)
}

func genInt64(r *rand.Rand) any {
	switch r.Intn(8) {
	case 0:
		return int64(math.MinInt64)
	case 1:
		return int64(math.MaxInt64)
	case 2:
		return r.Int63() - r.Int63()
	}
	return int64(r.Intn(41) - 20)
}

var propStringPieces = []string{"", "a", "b", "é", "z", "日本", "\u007f", "\U0010FFFF", "\ud7ff", "s0", "ü-1", "ab", "ab\x00"}

func genString(r *rand.Rand) any {
	if r.Intn(6) == 0 {
		// Long values (truncation, §6.2), including multibyte characters at the cut.
		var b strings.Builder
		for b.Len() < 60+r.Intn(120) {
			b.WriteString(propStringPieces[r.Intn(len(propStringPieces))])
		}
		return b.String()
	}
	return propStringPieces[r.Intn(len(propStringPieces))] + propStringPieces[r.Intn(len(propStringPieces))]
}

func genBinary(r *rand.Rand) any {
	n := r.Intn(5)
	if r.Intn(6) == 0 {
		n = 60 + r.Intn(100)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = []byte{0x00, 0x01, 'a', 0xFE, 0xFF}[r.Intn(5)]
	}
	if n > 0 && r.Intn(4) == 0 {
		for i := n / 2; i < n; i++ {
			b[i] = 0xFF
		}
	}
	return b
}

func genBool(r *rand.Rand) any { return r.Intn(2) == 0 }

// buildFixed builds a fixed-width column whose null slots hold garbage
// (NaN bit patterns for floats, T29) instead of zeros.
func buildFixed(mem memory.Allocator, dt arrow.DataType, rows []refRow, width int, put func(dst []byte, v any), junk func() any) arrow.Array {
	n := len(rows)
	vals := make([]byte, n*width)
	valid := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for i, row := range rows {
		if row.null {
			nulls++
			put(vals[i*width:], junk())
			continue
		}
		bitutil.SetBit(valid, i)
		put(vals[i*width:], row.v)
	}
	data := array.NewData(dt, n, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(vals)}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func propTypes() []propType {
	le := func(dst []byte, b uint64, w int) {
		for i := 0; i < w/8; i++ {
			dst[i] = byte(b >> (8 * i))
		}
	}
	return []propType{
		{name: "float64", dt: arrow.PrimitiveTypes.Float64, gen: genFloat64, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			return buildFixed(mem, arrow.PrimitiveTypes.Float64, rows, 8, func(d []byte, v any) { le(d, math.Float64bits(v.(float64)), 64) },
				func() any { return math.Float64frombits(randomNaN64(r)) })
		}},
		{name: "float32", dt: arrow.PrimitiveTypes.Float32, gen: genFloat32, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			return buildFixed(mem, arrow.PrimitiveTypes.Float32, rows, 4, func(d []byte, v any) { le(d, uint64(math.Float32bits(v.(float32))), 32) },
				func() any { return math.Float32frombits(0xFFC00001) })
		}},
		{name: "float16", dt: arrow.FixedWidthTypes.Float16, gen: genFloat16, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			return buildFixed(mem, arrow.FixedWidthTypes.Float16, rows, 2, func(d []byte, v any) { le(d, uint64(v.(float16.Num).Uint16()), 16) },
				func() any { return float16.FromBits(0x7E01) })
		}},
		{name: "int64", dt: arrow.PrimitiveTypes.Int64, gen: genInt64, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			return buildFixed(mem, arrow.PrimitiveTypes.Int64, rows, 8, func(d []byte, v any) { le(d, uint64(v.(int64)), 64) },
				func() any { return int64(math.MaxInt64) })
		}},
		{name: "utf8", dt: arrow.BinaryTypes.String, gen: genString, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			b := array.NewStringBuilder(mem)
			defer b.Release()
			for _, row := range rows {
				if row.null {
					b.AppendNull()
				} else {
					b.Append(row.v.(string))
				}
			}
			return b.NewArray()
		}},
		{name: "binary", dt: arrow.BinaryTypes.Binary, gen: genBinary, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
			defer b.Release()
			for _, row := range rows {
				if row.null {
					b.AppendNull()
				} else {
					b.Append(row.v.([]byte))
				}
			}
			return b.NewArray()
		}},
		{name: "bool", dt: arrow.FixedWidthTypes.Boolean, gen: genBool, build: func(mem memory.Allocator, rows []refRow, r *rand.Rand) arrow.Array {
			b := array.NewBooleanBuilder(mem)
			defer b.Release()
			for _, row := range rows {
				if row.null {
					b.AppendNull()
				} else {
					b.Append(row.v.(bool))
				}
			}
			return b.NewArray()
		}},
	}
}
