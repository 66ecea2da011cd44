package zonemap

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// testSchema covers every type the index supports and our writer writes.
func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	}, nil)
}

var (
	posNaN64 = math.Float64frombits(0x7FF8000000000000)
	negNaN64 = math.Float64frombits(0xFFF8000000000001)
	negZero  = math.Copysign(0, -1)
)

// randomBatch makes n rows starting at id first with zone patterns that
// exercise NaN signs, signed zeros, infinities, nulls, long strings.
func randomBatch(rng *rand.Rand, first int64, n int) arrow.RecordBatch {
	sch := testSchema()
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	mode := rng.IntN(4) // per batch: how wild the values are
	for i := 0; i < n; i++ {
		id := first + int64(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		null := func() bool { return rng.IntN(8) == 0 || (mode == 3 && i%16 < 8) }
		if null() {
			b.Field(1).AppendNull()
		} else {
			var v float64
			switch rng.IntN(12) {
			case 0:
				v = posNaN64
			case 1:
				v = negNaN64
			case 2:
				v = negZero
			case 3:
				v = 0
			case 4:
				v = math.Inf(1 - 2*rng.IntN(2))
			default:
				v = rng.NormFloat64() * 100
			}
			b.Field(1).(*array.Float64Builder).Append(v)
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			v := float32(rng.IntN(50) - 25)
			if rng.IntN(10) == 0 {
				v = math.Float32frombits(0xFFC00000 ^ uint32(rng.IntN(2))<<31)
			}
			b.Field(2).(*array.Float32Builder).Append(v)
		}
		if null() {
			b.Field(3).AppendNull()
		} else if rng.IntN(10) == 0 {
			b.Field(3).(*array.Float16Builder).Append(float16.FromBits(0x7E00 | uint16(rng.IntN(2))<<15))
		} else {
			b.Field(3).(*array.Float16Builder).Append(float16.New(float32(rng.IntN(200)) / 4))
		}
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Int8Builder).Append(int8(rng.IntN(256) - 128))
		}
		if null() {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Uint64Builder).Append(rng.Uint64())
		}
		if null() {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BooleanBuilder).Append(rng.IntN(3) == 0)
		}
		if null() {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int64N(1 << 50)))
		}
		if null() {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Date32Builder).Append(arrow.Date32(rng.IntN(40000) - 20000))
		}
		str := func() string {
			if rng.IntN(20) == 0 {
				return strings.Repeat("é", 40+rng.IntN(40)) // longer than the 64-byte bound cap
			}
			return fmt.Sprintf("%c%d", 'a'+rune(rng.IntN(26)), rng.IntN(1000))
		}
		if null() {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.StringBuilder).Append(str())
		}
		if null() {
			b.Field(10).AppendNull()
		} else {
			v := make([]byte, rng.IntN(5))
			for j := range v {
				v[j] = byte(rng.IntN(256))
			}
			b.Field(10).(*array.BinaryBuilder).Append(v)
		}
		if null() {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.LargeStringBuilder).Append(str())
		}
	}
	return b.NewRecordBatch()
}

func reader(t testing.TB, recs ...arrow.RecordBatch) array.RecordReader {
	t.Helper()
	r, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newDataset creates a dataset in a temp dir with our writer.
func newDataset(t testing.TB, opts commit.WriteOptions, recs ...arrow.RecordBatch) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts.Mode = commit.ModeCreate
	opts.Commit.NoHint = false
	if _, err := commit.WriteArrow(context.Background(), st, reader(t, recs...), opts); err != nil {
		t.Fatal(err)
	}
	return st, dir
}

func appendRows(t testing.TB, st *store.Store, opts commit.WriteOptions, recs ...arrow.RecordBatch) *commit.WriteResult {
	t.Helper()
	opts.Mode = commit.ModeAppend
	r, err := commit.WriteArrow(context.Background(), st, reader(t, recs...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// clearZoneSeedFlag rewrites the latest manifest in place without
// FLAG_ZONE_WRITE_SEEDS: a test-only unflagged copy, the way to let Lance
// 12 (or an R61 check) see a table whose files carry v1 seeds.
func clearZoneSeedFlag(t testing.TB, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	f, info, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	m := f.Manifest
	m.ReaderFeatureFlags &^= flags.ZoneWriteSeeds
	m.WriterFeatureFlags &^= flags.ZoneWriteSeeds
	b, err := manifest.EncodePrelude(f.Prelude, m, f.IndexSection, f.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, info.Path, b); err != nil {
		t.Fatal(err)
	}
}

// corruptSeed damages the seed buffer of column in every data file (flips
// bytes of the IPC body, keeping its length), so that it fails validation.
func corruptSeed(t testing.TB, ctx context.Context, st *store.Store, dir, column string) {
	t.Helper()
	for _, fr := range latest(t, st).Manifest.GetFragments() {
		for _, df := range fr.GetFiles() {
			key := manifest.DataDir + "/" + df.GetPath()
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(key), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			loc, err := seedio.ParseLocator(f.Metadata()[seedio.LocatorKey(column)])
			if err != nil {
				t.Fatal(err)
			}
			r := f.GlobalBuffers()[loc.BufferIndex]
			b, err := st.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			// Zero the middle of the IPC file: the record batch body.
			for i := r.Pos + r.Len/3; i < r.Pos+r.Len/2; i++ {
				b[i] ^= 0x5A
			}
			if err := st.Put(ctx, key, b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sameValue compares two bound values, floats by bits (NaN == NaN).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return reflect.DeepEqual(a, b)
}

func sameZone(a, b Zone) bool {
	return a.FragmentID == b.FragmentID && a.Start == b.Start && a.Length == b.Length &&
		a.NullCount == b.NullCount && a.NaNCount == b.NaNCount && sameValue(a.Min, b.Min) && sameValue(a.Max, b.Max)
}

// sameSegment compares two segments zone by zone and null row by null row.
func sameSegment(a, b *Segment) bool {
	if !arrow.TypeEqual(a.ValueType, b.ValueType) || a.RowsPerZone != b.RowsPerZone || len(a.Zones) != len(b.Zones) ||
		(a.NullRows == nil) != (b.NullRows == nil) || len(a.NullRows) != len(b.NullRows) {
		return false
	}
	for i := range a.Zones {
		if !sameZone(a.Zones[i], b.Zones[i]) {
			return false
		}
	}
	for id, bm := range a.NullRows {
		if o := b.NullRows[id]; o == nil || !o.Equals(bm) {
			return false
		}
	}
	return true
}

func uuidOf(t testing.TB, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
