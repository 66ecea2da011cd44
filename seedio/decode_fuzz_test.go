package seedio

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fuzzColumnTypes are the column types FuzzDecode validates against; the
// fuzzer picks one with a selector byte.
var fuzzColumnTypes = []arrow.DataType{
	nil, // take the seed's own type
	arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Float64,
	arrow.BinaryTypes.String,
	arrow.BinaryTypes.Binary,
	arrow.FixedWidthTypes.Float16,
	arrow.PrimitiveTypes.Float32,
	arrow.PrimitiveTypes.Int32,
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
}

// FuzzDecode feeds arbitrary bytes and options to Decode: it must never
// panic, any seed it accepts must satisfy the documented invariants, and an
// accepted v1 seed must survive decode → encode → decode (checkRoundTrip).
func FuzzDecode(f *testing.F) {
	// Real Lance 12 v0 seeds.
	files, _ := filepath.Glob(filepath.Join("testdata", "lance12_v0", "*.arrow"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint64(16), uint64(100), uint8(0), true)
		f.Add(b, uint64(16), uint64(40), uint8(0), true)
	}
	// Hand-built v0/v1 seeds, compressed ones, and collector outputs.
	for _, s := range fuzzSeedSpecs() {
		f.Add(s.bytes(f), uint64(4), s.totalRows(), uint8(0), true)
	}
	for _, enc := range fuzzCollectorSeeds(f) {
		f.Add(enc.IPC, enc.RowsPerZone, enc.NumRows, uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, rpz, n uint64, sel uint8, flagged bool) {
		if rpz == 0 {
			rpz = 1
		}
		o := DecodeOptions{RowsPerZone: rpz, NumRows: n, TableFlagged: flagged, MaxDecodedBytes: 1 << 20,
			ColumnType: fuzzColumnTypes[int(sel)%len(fuzzColumnTypes)]}
		s, err := Decode(b, o)
		if err != nil {
			var se *SeedError
			if !errors.As(err, &se) && !errors.Is(err, ErrSeedBitmapHex) && !errors.Is(err, ErrSeedBitmapDecode) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if s != nil {
				t.Fatal("seed returned with an error")
			}
			return
		}
		checkSeedInvariants(t, s)
		if s.Version == 1 {
			checkRoundTrip(t, "fuzz", s, o)
		}
	})
}

// checkSeedInvariants asserts what Decode documents for an accepted seed.
func checkSeedInvariants(t *testing.T, s *Seed) {
	t.Helper()
	var sum uint64
	for i, z := range s.Zones {
		if z.Index != i || z.Start != uint64(i)*s.RowsPerZone || z.Rows == 0 || z.Rows > s.RowsPerZone {
			t.Fatalf("zone %d geometry %+v", i, z)
		}
		if z.NullCount+z.NaNCount > z.Rows || z.NegativeNaNCount > z.NaNCount {
			t.Fatalf("zone %d counts %+v", i, z)
		}
		if z.Ordinary() == 0 && (z.Min != nil || z.Max != nil) {
			t.Fatalf("zone %d bounds without ordinary values", i)
		}
		if isNaNValue(z.Min) || isNaNValue(z.Max) {
			t.Fatalf("zone %d NaN bound survived", i)
		}
		if z.Min != nil && z.Max != nil {
			if c, err := CompareValues(z.Min, z.Max); err != nil || c > 0 {
				t.Fatalf("zone %d min > max (%v)", i, err)
			}
		}
		if s.NullBitmap != nil && s.NullBitmap.CardinalityInRange(z.Start, z.End()) != z.NullCount {
			t.Fatalf("zone %d bitmap mismatch", i)
		}
		sum += z.Rows
	}
	if sum != s.NumRows {
		t.Fatalf("zones cover %d of %d rows", sum, s.NumRows)
	}
	for _, p := range []Predicate{IsNull(), IsNotNull(), IsNaN(), NotIsNaN()} {
		if _, err := s.Prune(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Summary(); err != nil {
		t.Fatal(err)
	}
}

func (s seedSpec) totalRows() uint64 {
	var n uint64
	for _, l := range s.lens {
		n += l
	}
	return n
}

func fuzzSeedSpecs() []seedSpec {
	f64 := arrow.PrimitiveTypes.Float64
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	return []seedSpec{
		int64Spec(1, 4, 10, [2]any{int64(1), int64(2)}, [2]any{int64(3), int64(4)}, [2]any{nil, int64(9)}),
		int64Spec(0, 4, 6, [2]any{int64(-1), int64(2)}, [2]any{int64(3), int64(3)}),
		{version: 1, valueType: f64, lens: []uint64{4, 4}, mins: []any{1.0, nil}, maxs: []any{2.0, nil}, nans: []uint32{1, 4}, negs: []uint32{1, 2}},
		{version: 0, valueType: f64, lens: []uint64{4}, mins: []any{1.0}, maxs: []any{f64bits(posNaN64)}, nans: []uint32{1}},
		{version: 1, valueType: arrow.BinaryTypes.String, lens: []uint64{4, 1}, mins: []any{"a", "é"}, maxs: []any{"zz", "é"}, opts: []ipc.Option{ipc.WithZstd(), ipc.WithMinSpaceSavings(0)}},
		{version: 1, valueType: arrow.BinaryTypes.Binary, lens: []uint64{4}, mins: []any{[]byte{0}}, maxs: []any{[]byte{0xff}}, opts: []ipc.Option{ipc.WithLZ4(), ipc.WithMinSpaceSavings(0)}},
		{version: 1, valueType: dict, lens: []uint64{4, 2}, mins: []any{"apple", "kiwi"}, maxs: []any{"pear", "kiwi"}},
	}
}

// fuzzCollectorSeeds runs the writer's Collector over a few columns.
func fuzzCollectorSeeds(tb testing.TB) []*EncodedSeed {
	mem := memory.NewGoAllocator()
	var out []*EncodedSeed
	add := func(field arrow.Field, arr arrow.Array, rpz uint64) {
		defer arr.Release()
		c, err := NewCollector(field, CollectorOptions{RowsPerZone: rpz})
		if err != nil {
			tb.Fatal(err)
		}
		if err := c.Observe(arr); err != nil {
			tb.Fatal(err)
		}
		enc, err := c.Finish()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, enc)
	}
	fb := array.NewFloat64Builder(mem)
	for i := 0; i < 20; i++ {
		switch i % 5 {
		case 0:
			fb.AppendNull()
		case 1:
			fb.Append(f64bits(negNaN64))
		default:
			fb.Append(float64(i) - 7)
		}
	}
	add(arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, fb.NewArray(), 4)
	sb := array.NewStringBuilder(mem)
	for i := 0; i < 9; i++ {
		if i == 3 {
			sb.AppendNull()
			continue
		}
		sb.Append(string(rune('a'+i)) + "ü")
	}
	add(arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, sb.NewArray(), 4)
	ib := array.NewInt64Builder(mem)
	for i := 0; i < 7; i++ {
		ib.Append(int64(i * i))
	}
	add(arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int64}, ib.NewArray(), 3)
	return out
}

// TestFuzzDecodeRegressions replays hostile inputs derived from valid seeds:
// every truncation and a sweep of single-byte corruptions (flipping each
// byte of header and footer regions) must give an error or a valid seed,
// never a panic.
func TestFuzzDecodeRegressions(t *testing.T) {
	var seeds [][]byte
	for _, s := range fuzzSeedSpecs() {
		seeds = append(seeds, s.bytes(t))
	}
	for _, enc := range fuzzCollectorSeeds(t) {
		seeds = append(seeds, enc.IPC)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "lance12_v0", "10111000_f.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, b)
	o := DecodeOptions{RowsPerZone: 4, NumRows: 10, TableFlagged: true, MaxDecodedBytes: 1 << 20}
	for _, seed := range seeds {
		for cut := 0; cut < len(seed); cut += 7 {
			if s, err := Decode(seed[:cut], o); err == nil {
				checkSeedInvariants(t, s)
			}
		}
		for i := 0; i < len(seed); i += 3 {
			mut := append([]byte{}, seed...)
			mut[i] ^= 0xA5
			if s, err := Decode(mut, o); err == nil {
				checkSeedInvariants(t, s)
			}
			// Large length fields in every 4-byte-aligned word.
			if i%4 == 0 && i+4 <= len(mut) {
				mut2 := append([]byte{}, seed...)
				binary.LittleEndian.PutUint32(mut2[i:], 0x7FFFFFF0)
				if s, err := Decode(mut2, o); err == nil {
					checkSeedInvariants(t, s)
				}
			}
		}
	}
}
