package zonemap

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
)

func sampleSegment() *Segment {
	nulls := roaring.New()
	nulls.AddMany([]uint32{1, 5})
	return &Segment{
		ValueType:   arrow.PrimitiveTypes.Float64,
		RowsPerZone: 4,
		Zones: []Zone{
			{FragmentID: 0, Start: 0, Length: 4, NullCount: 1, NaNCount: 1, Min: 1.5, Max: posNaN64},
			{FragmentID: 0, Start: 4, Length: 2, NullCount: 1, Min: -2.0, Max: 7.0},
			{FragmentID: 3, Start: 0, Length: 4, NaNCount: 4, Min: math.Inf(1), Max: posNaN64},
			{FragmentID: 3, Start: 4, Length: 4, NaNCount: 4, Min: math.Inf(-1), Max: math.Inf(-1)},
		},
		NullRows: map[uint32]*roaring.Bitmap{0: nulls},
	}
}

// TestSegmentRoundTrip: WriteSegment → DecodeSegment gives back the same
// segment, the file has Lance's schema, metadata and null-bitmap buffer.
func TestSegmentRoundTrip(t *testing.T) {
	seg := sampleSegment()
	b, err := EncodeSegment(seg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSegment(b, ReadOptions{ValueType: arrow.PrimitiveTypes.Float64})
	if err != nil {
		t.Fatal(err)
	}
	if !sameSegment(seg, got) {
		t.Fatalf("round trip:\n%+v\n%+v", seg, got)
	}
	f, err := datafile.OpenReaderAt(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if f.Version() != datafile.V2_0 || f.NumRows() != 4 {
		t.Fatalf("file version %s, %d rows", f.Version(), f.NumRows())
	}
	var names []string
	for _, fl := range f.Schema().Fields {
		names = append(names, fl.Name+":"+fl.LogicalType)
	}
	if want := "min:double max:double null_count:uint32 nan_count:uint32 fragment_id:uint64 zone_start:uint64 zone_length:uint64"; strings.Join(names, " ") != want {
		t.Fatalf("schema %v, want %s", names, want)
	}
	if md := f.Metadata(); md[MetaRowsPerZone] != "4" || md[MetaNullBitmap] != "1" || len(f.GlobalBuffers()) != 2 {
		t.Fatalf("metadata %v, %d global buffers", md, len(f.GlobalBuffers()))
	}
	// Without a null bitmap there is no null_bitmap key and no buffer.
	seg.NullRows = nil
	b, err = EncodeSegment(seg)
	if err != nil {
		t.Fatal(err)
	}
	got, err = DecodeSegment(b, ReadOptions{})
	if err != nil || got.NullRows != nil {
		t.Fatalf("no bitmap: %v %v", got.NullRows, err)
	}
}

// TestRowAddrMapFormat pins Lance's row-address tree map bytes.
func TestRowAddrMapFormat(t *testing.T) {
	bm := roaring.New()
	bm.AddMany([]uint32{1, 3, 5, 9})
	b, err := EncodeRowAddrMap(map[uint32]*roaring.Bitmap{7: bm, 2: roaring.New()})
	if err != nil {
		t.Fatal(err)
	}
	// 1 entry (the empty bitmap of fragment 2 is left out), fragment 7,
	// 24 bytes of portable roaring ({1,3,5,9}, zone-seeds.md App. B).
	want := "01000000" + "07000000" + "18000000" + "3a3000000100000000000300100000000100030005000900"
	if hex.EncodeToString(b) != want {
		t.Fatalf("got %x\nwant %s", b, want)
	}
	m, err := DecodeRowAddrMap(b)
	if err != nil || !m.Rows[7].Equals(bm) || len(m.Rows) != 1 {
		t.Fatalf("decode: %v %v", m, err)
	}
	full, _ := hex.DecodeString("01000000" + "04000000" + "00000000")
	m, err = DecodeRowAddrMap(full)
	if err != nil || !m.Full[4] {
		t.Fatalf("full entry: %v %v", m, err)
	}
}

// TestRowAddrMapHostile: malformed null bitmaps are errors, never panics.
func TestRowAddrMapHostile(t *testing.T) {
	cases := map[string]string{
		"empty":             "",
		"short count":       "0100",
		"count too large":   "ffffffff",
		"truncated entry":   "01000000070000",
		"size past end":     "010000000700000018000000",
		"descending":        "02000000" + "05000000" + "00000000" + "04000000" + "00000000",
		"trailing":          "00000000" + "ff",
		"bad roaring":       "01000000" + "01000000" + "04000000" + "deadbeef",
		"roaring + garbage": "01000000" + "01000000" + "0a000000" + "3a30000000000000" + "0000",
	}
	for name, h := range cases {
		b, _ := hex.DecodeString(h)
		if _, err := DecodeRowAddrMap(b); !errors.Is(err, ErrInvalidIndex) {
			t.Errorf("%s: %v, want ErrInvalidIndex", name, err)
		}
	}
}

// TestCheckCatalogue: every segment that breaks an invariant is refused by
// Check (and so by ReadSegment and WriteSegment).
func TestCheckCatalogue(t *testing.T) {
	mod := func(f func(s *Segment)) *Segment {
		s := sampleSegment()
		f(s)
		return s
	}
	cases := map[string]*Segment{
		"no value type":       mod(func(s *Segment) { s.ValueType = nil }),
		"unsupported type":    mod(func(s *Segment) { s.ValueType = arrow.ListOf(arrow.PrimitiveTypes.Int32) }),
		"zero rows per zone":  mod(func(s *Segment) { s.RowsPerZone = 0 }),
		"no zones":            mod(func(s *Segment) { s.Zones = nil }),
		"empty zone":          mod(func(s *Segment) { s.Zones[1].Length = 0 }),
		"overlap":             mod(func(s *Segment) { s.Zones[1].Start = 3 }),
		"unsorted fragments":  mod(func(s *Segment) { s.Zones[0].FragmentID = 9 }),
		"past 32-bit offsets": mod(func(s *Segment) { s.Zones[3].Start = math.MaxUint32 }),
		"fragment id > u32":   mod(func(s *Segment) { s.Zones[3].FragmentID = 1 << 33; s.Zones[2].FragmentID = 1 << 33 }),
		"counts > length":     mod(func(s *Segment) { s.Zones[1].NullCount = 3 }),
		"NaN min":             mod(func(s *Segment) { s.Zones[1].Min = posNaN64 }),
		"NaN max, no NaNs":    mod(func(s *Segment) { s.Zones[1].Max = posNaN64 }),
		"min > max":           mod(func(s *Segment) { s.Zones[1].Min = 8.0 }),
		"one bound null":      mod(func(s *Segment) { s.Zones[1].Max = nil }),
		"bound without values": mod(func(s *Segment) {
			s.Zones[2].NaNCount = 0
			s.Zones[2].NullCount = 4
			s.NullRows[3] = roaring.New()
			s.NullRows[3].AddRange(0, 4)
		}),
		"bitmap count mismatch": mod(func(s *Segment) { s.NullRows[0].Add(2) }),
		"bitmap outside zones":  mod(func(s *Segment) { s.NullRows[0].Add(100) }),
		"bitmap unknown frag":   mod(func(s *Segment) { s.NullRows[8] = roaring.BitmapOf(0) }),
		"wrong bound type":      mod(func(s *Segment) { s.Zones[1].Min = int64(1) }),
	}
	for name, s := range cases {
		err := s.Check()
		if !errors.Is(err, ErrInvalidIndex) {
			t.Errorf("%s: Check = %v, want ErrInvalidIndex", name, err)
		}
		if _, err := EncodeSegment(s); err == nil {
			t.Errorf("%s: WriteSegment wrote an invalid segment", name)
		}
	}
	// Lance writes null bounds beside values for some types: readable,
	// never written.
	s := sampleSegment()
	s.Zones[1].Min, s.Zones[1].Max = nil, nil
	if err := s.Check(); err != nil {
		t.Fatalf("null bounds: %v", err)
	}
	if _, err := EncodeSegment(s); !errors.Is(err, ErrInvalidIndex) {
		t.Fatalf("WriteSegment with null bounds beside values: %v", err)
	}
}

// writeRaw writes an arbitrary record batch as a Lance file (for hostile
// index files).
func writeRaw(t *testing.T, rec arrow.RecordBatch, md map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := datafile.NewWriter(&buf, rec.Schema(), datafile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range md {
		if err := w.SetSchemaMetadata(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadSegmentHostile: files that are not valid ZoneMap segments are
// refused with ErrInvalidIndex (the scan then ignores the segment).
func TestReadSegmentHostile(t *testing.T) {
	good, err := EncodeSegment(sampleSegment())
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewGoAllocator()
	u64 := func(vs ...uint64) arrow.Array {
		b := array.NewUint64Builder(mem)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	u32 := func(vs ...uint32) arrow.Array {
		b := array.NewUint32Builder(mem)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	i64 := func(vs ...int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	rec := func(fields []arrow.Field, cols ...arrow.Array) arrow.RecordBatch {
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
	}
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	std := []arrow.Field{f("min", arrow.PrimitiveTypes.Int64), f("max", arrow.PrimitiveTypes.Int64), f("null_count", arrow.PrimitiveTypes.Uint32),
		f("nan_count", arrow.PrimitiveTypes.Uint32), f("fragment_id", arrow.PrimitiveTypes.Uint64), f("zone_start", arrow.PrimitiveTypes.Uint64), f("zone_length", arrow.PrimitiveTypes.Uint64)}
	valid := func() []arrow.Array {
		return []arrow.Array{i64(1), i64(5), u32(0), u32(0), u64(0), u64(0), u64(10)}
	}
	cases := map[string][]byte{
		"not a lance file": []byte("hello world, this is not a Lance file at all......"),
		"truncated":        good[:len(good)-7],
		"missing column":   writeRaw(t, rec(std[:6], valid()[:6]...), nil),
		"count type": writeRaw(t, rec([]arrow.Field{std[0], std[1], f("null_count", arrow.PrimitiveTypes.Uint64), std[3], std[4], std[5], std[6]},
			i64(1), i64(5), u64(0), u32(0), u64(0), u64(0), u64(10)), nil),
		"min/max types differ": writeRaw(t, rec([]arrow.Field{std[0], f("max", arrow.PrimitiveTypes.Uint64), std[2], std[3], std[4], std[5], std[6]},
			i64(1), u64(5), u32(0), u32(0), u64(0), u64(0), u64(10)), nil),
		"bad rows_per_zone":    writeRaw(t, rec(std, valid()...), map[string]string{MetaRowsPerZone: "0x10"}),
		"null_bitmap missing":  writeRaw(t, rec(std, valid()...), map[string]string{MetaNullBitmap: "3"}),
		"null_bitmap buffer 0": writeRaw(t, rec(std, valid()...), map[string]string{MetaNullBitmap: "0"}),
		"min > max":            writeRaw(t, rec(std, i64(9), i64(5), u32(0), u32(0), u64(0), u64(0), u64(10)), nil),
		"nan on int":           writeRaw(t, rec(std, i64(1), i64(5), u32(0), u32(1), u64(0), u64(0), u64(10)), nil),
	}
	for name, b := range cases {
		if _, err := DecodeSegment(b, ReadOptions{}); !errors.Is(err, ErrInvalidIndex) {
			t.Errorf("%s: %v, want ErrInvalidIndex", name, err)
		}
	}
	if _, err := DecodeSegment(writeRaw(t, rec(std, valid()...), nil), ReadOptions{ValueType: arrow.PrimitiveTypes.Int32}); !errors.Is(err, ErrInvalidIndex) {
		t.Errorf("value type mismatch: %v", err)
	}
	if s, err := DecodeSegment(writeRaw(t, rec(std, valid()...), nil), ReadOptions{ValueType: arrow.PrimitiveTypes.Int64}); err != nil || s.RowsPerZone != DefaultRowsPerZone {
		t.Errorf("minimal valid file (no rows_per_zone key: Lance's default): %v %v", s, err)
	}
}

// TestPrune: the zone semantics the scan gets, including Lance-written
// null bounds (unknown) and the NaN markers.
func TestPrune(t *testing.T) {
	seg := sampleSegment()
	cases := []struct {
		p    seedio.Predicate
		keep []bool
	}{
		{pred(seedio.OpGt, 100.0), []bool{true, false, true, true}},  // NaN signs unknown in an index: keep
		{pred(seedio.OpLt, -100.0), []bool{true, false, true, true}}, // NaN signs unknown in an index
		{pred(seedio.OpEq, 7.0), []bool{true, true, false, false}},   // zones 2, 3 have no ordinary values
		{pred(seedio.OpIsNull), []bool{true, true, false, false}},
		{pred(seedio.OpIsNaN), []bool{true, false, true, true}},
		{pred(seedio.OpBetween, 3.0, 4.0), []bool{true, true, false, false}},
	}
	for _, c := range cases {
		got, err := seg.Prune(c.p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != c.keep[i] {
				t.Errorf("%v: zone %d kept=%v, want %v", c.p, i, got[i], c.keep[i])
			}
		}
	}
	cand, err := seg.Candidates(pred(seedio.OpIsNull))
	if err != nil || len(cand[0]) != 2 || cand[0][0] != (datafile.RowRange{Start: 1, End: 2}) || len(cand[3]) != 0 {
		t.Fatalf("IS NULL candidates %v %v", cand, err)
	}
	cand, err = seg.Candidates(pred(seedio.OpEq, 7.0))
	if err != nil || len(cand[0]) != 1 || cand[0][0] != (datafile.RowRange{Start: 0, End: 6}) || len(cand[3]) != 0 {
		t.Fatalf("= 7 candidates %v %v", cand, err)
	}
}

func pred(op seedio.Op, vals ...any) seedio.Predicate { return seedio.Predicate{Op: op, Values: vals} }
