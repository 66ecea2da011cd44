package datafile

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// allTypesSchema holds every type the 2.0 writer supports, nullable and not.
func allTypesSchema() *arrow.Schema {
	f := func(name string, dt arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: nullable}
	}
	return arrow.NewSchema([]arrow.Field{
		f("id", arrow.PrimitiveTypes.Int64, false),
		f("i8", arrow.PrimitiveTypes.Int8, true),
		f("i16", arrow.PrimitiveTypes.Int16, true),
		f("i32", arrow.PrimitiveTypes.Int32, true),
		f("i64", arrow.PrimitiveTypes.Int64, true),
		f("u8", arrow.PrimitiveTypes.Uint8, true),
		f("u16", arrow.PrimitiveTypes.Uint16, false),
		f("u32", arrow.PrimitiveTypes.Uint32, true),
		f("u64", arrow.PrimitiveTypes.Uint64, true),
		f("f16", arrow.FixedWidthTypes.Float16, true),
		f("f32", arrow.PrimitiveTypes.Float32, true),
		f("f64", arrow.PrimitiveTypes.Float64, true),
		f("f64nn", arrow.PrimitiveTypes.Float64, false),
		f("bool", arrow.FixedWidthTypes.Boolean, true),
		f("boolnn", arrow.FixedWidthTypes.Boolean, false),
		f("utf8", arrow.BinaryTypes.String, true),
		f("utf8nn", arrow.BinaryTypes.String, false),
		f("large_utf8", arrow.BinaryTypes.LargeString, true),
		f("binary", arrow.BinaryTypes.Binary, true),
		f("large_binary", arrow.BinaryTypes.LargeBinary, true),
		f("date32", arrow.FixedWidthTypes.Date32, true),
		f("date64", arrow.FixedWidthTypes.Date64, true),
		f("ts_us_utc", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, true),
		f("ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}, true),
		f("ts_s_ny", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"}, true),
		f("time32ms", arrow.FixedWidthTypes.Time32ms, true),
		f("time64ns", arrow.FixedWidthTypes.Time64ns, true),
		f("dur_ms", arrow.FixedWidthTypes.Duration_ms, true),
		f("fsl_f32", arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), true),
		f("fsl_i16", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16), false),
		f("fsl_u8", arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Uint8), true),
		f("st", arrow.StructOf(
			f("a", arrow.PrimitiveTypes.Int32, true),
			f("b", arrow.BinaryTypes.String, true),
			f("inner", arrow.StructOf(f("x", arrow.PrimitiveTypes.Float64, true)), false),
		), true),
	}, nil)
}

// Interesting float bit patterns: NaN payloads of both signs, ±0, ±Inf,
// subnormals, extremes.
var (
	f64Bits = []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff4000000000123,
		0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
		0x0000000000000001, 0x7fefffffffffffff, 0x3ff8000000000000}
	f32Bits = []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x3fc00000}
	f16Bits = []uint16{0x7e00, 0xfe00, 0x7c01, 0x8000, 0, 0x7c00, 0xfc00, 1, 0x3e00}
	strPool = []string{"", "a", "héllo wörld", "日本語", "emoji 🦀", "tab\there", "nul\x00byte", "ccc"}
)

// nullProb picks a per-column null probability: often none, sometimes all.
func nullProb(r *rand.Rand) float64 {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return 1
	default:
		return r.Float64() * 0.6
	}
}

// randomArray builds a random array of dt with n rows.
func randomArray(r *rand.Rand, dt arrow.DataType, nullable bool, n int) arrow.Array {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return randomFSL(r, t, nullable, n)
	case *arrow.StructType: // 2.0 cannot store struct nulls: never null
		kids := make([]arrow.Array, t.NumFields())
		for i, f := range t.Fields() {
			kids[i] = randomArray(r, f.Type, f.Nullable, n)
			defer kids[i].Release()
		}
		data := array.NewData(dt, n, []*memory.Buffer{nil}, arrayDatas(kids), 0, 0)
		defer data.Release()
		return array.MakeFromData(data)
	}
	mem := memory.DefaultAllocator
	p := 0.0
	if nullable {
		p = nullProb(r)
	}
	valid := func() bool { return r.Float64() >= p }
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < n; i++ {
		if !valid() {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(r.Uint32()))
		case *array.Int16Builder:
			bb.Append(int16(r.Uint32()))
		case *array.Int32Builder:
			bb.Append(int32(r.Uint32()))
		case *array.Int64Builder:
			bb.Append(int64(r.Uint64()))
		case *array.Uint8Builder:
			bb.Append(uint8(r.Uint32()))
		case *array.Uint16Builder:
			bb.Append(uint16(r.Uint32()))
		case *array.Uint32Builder:
			bb.Append(r.Uint32())
		case *array.Uint64Builder:
			bb.Append(r.Uint64())
		case *array.Float16Builder:
			if r.IntN(3) == 0 {
				bb.Append(float16.FromBits(f16Bits[r.IntN(len(f16Bits))]))
			} else {
				bb.Append(float16.FromBits(uint16(r.Uint32())))
			}
		case *array.Float32Builder:
			if r.IntN(3) == 0 {
				bb.Append(math.Float32frombits(f32Bits[r.IntN(len(f32Bits))]))
			} else {
				bb.Append(r.Float32()*2e6 - 1e6)
			}
		case *array.Float64Builder:
			if r.IntN(3) == 0 {
				bb.Append(math.Float64frombits(f64Bits[r.IntN(len(f64Bits))]))
			} else {
				bb.Append(r.NormFloat64() * 1e9)
			}
		case *array.BooleanBuilder:
			bb.Append(r.IntN(2) == 0)
		case *array.StringBuilder:
			bb.Append(randomString(r))
		case *array.LargeStringBuilder:
			bb.Append(randomString(r))
		case *array.BinaryBuilder:
			bb.Append(randomBytes(r))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(int32(r.Uint32())))
		case *array.Date64Builder:
			bb.Append(arrow.Date64(int64(r.Uint64())))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(int64(r.Uint64())))
		case *array.Time32Builder:
			bb.Append(arrow.Time32(r.Int32N(86400000)))
		case *array.Time64Builder:
			bb.Append(arrow.Time64(r.Int64N(86400000000000)))
		case *array.DurationBuilder:
			bb.Append(arrow.Duration(int64(r.Uint64())))
		default:
			panic(fmt.Sprintf("randomArray: no generator for %s", dt))
		}
	}
	return b.NewArray()
}

func arrayDatas(as []arrow.Array) []arrow.ArrayData {
	out := make([]arrow.ArrayData, len(as))
	for i, a := range as {
		out[i] = a.Data()
	}
	return out
}

func randomFSL(r *rand.Rand, t *arrow.FixedSizeListType, nullable bool, n int) arrow.Array {
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, t.Len(), t.Elem())
	defer b.Release()
	p := 0.0
	if nullable {
		p = nullProb(r)
	}
	items := randomArray(r, t.Elem(), true, n*int(t.Len()))
	defer items.Release()
	valid := make([]bool, n)
	for i := range valid {
		valid[i] = r.Float64() >= p
	}
	data := array.NewData(t, n, nil, []arrow.ArrayData{items.Data()}, 0, 0)
	if p > 0 {
		bm := make([]byte, (n+7)/8)
		nulls := 0
		for i, v := range valid {
			if v {
				bm[i/8] |= 1 << (i % 8)
			} else {
				nulls++
			}
		}
		data.Release()
		data = array.NewData(t, n, []*memory.Buffer{memory.NewBufferBytes(bm)}, []arrow.ArrayData{items.Data()}, nulls, 0)
	} else {
		data.Release()
		data = array.NewData(t, n, []*memory.Buffer{nil}, []arrow.ArrayData{items.Data()}, 0, 0)
	}
	defer data.Release()
	return array.MakeFromData(data)
}

func randomString(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return strPool[r.IntN(len(strPool))]
	}
	var b []byte
	for range r.IntN(40) {
		b = utf8.AppendRune(b, rune(0x20+r.IntN(0x2fff)))
	}
	return string(b)
}

func randomBytes(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(30))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// randomRecord builds a record of schema with n random rows; some columns
// are slices of larger arrays (non-zero offsets).
func randomRecord(r *rand.Rand, schema *arrow.Schema, n int) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		if r.IntN(4) == 0 {
			extra := r.IntN(5)
			full := randomArray(r, f.Type, f.Nullable, n+extra)
			cols[i] = array.NewSlice(full, int64(extra), int64(extra+n))
			full.Release()
		} else {
			cols[i] = randomArray(r, f.Type, f.Nullable, n)
		}
		defer cols[i].Release()
	}
	return array.NewRecordBatch(schema, cols, int64(n))
}

// concatRecords concatenates records column by column (the expected content).
func concatRecords(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = c
		defer c.Release()
	}
	return array.NewRecordBatch(schema, cols, n)
}

// TestProperty_RoundTripRandomBatches writes random batches of every
// supported type (nulls, all-null pages, NaN payloads, ±0, empty and
// multi-byte strings, sliced inputs) with random page sizes (§4.9) and
// checks that the reader returns exactly the rows written, that every
// column's page lengths sum to the row count, and that seeds written for
// every column decode and validate (R9–R11, R49: batch split independence is
// covered by comparing with seeds of one concatenated batch).
func TestProperty_RoundTripRandomBatches(t *testing.T) {
	full := allTypesSchema()
	pageSizes := []int{16, 100, 333, 1000, 4096, 1 << 16, 0}
	iters := 60
	if testing.Short() {
		iters = 15
	}
	for it := 0; it < iters; it++ {
		r := newRand(uint64(1000 + it))
		// a random non-empty subset of the columns, in schema order
		var fields []arrow.Field
		for _, f := range full.Fields() {
			if r.IntN(3) != 0 {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			fields = full.Fields()[:1]
		}
		schema := arrow.NewSchema(fields, nil)
		var recs []arrow.RecordBatch
		nb := 1 + r.IntN(4)
		total := 0
		for range nb {
			n := r.IntN(1500)
			if r.IntN(5) == 0 {
				n = 0
			}
			recs = append(recs, randomRecord(r, schema, n))
			total += n
		}
		if total == 0 {
			recs = append(recs, randomRecord(r, schema, 1))
			total = 1
		}
		ps := pageSizes[r.IntN(len(pageSizes))]
		rpz := uint64(1 + r.IntN(700))
		name := fmt.Sprintf("iter%d_rows%d_batches%d_page%d", it, total, len(recs), ps)
		t.Run(name, func(t *testing.T) {
			defer func() {
				for _, rec := range recs {
					rec.Release()
				}
			}()
			opts := WriterOptions{PageSize: ps, SeedAllColumns: true, Seed: seedio.CollectorOptions{RowsPerZone: rpz}}
			raw, res := writeFile(t, schema, opts, recs...)
			want := concatRecords(t, schema, recs)
			defer want.Release()

			f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if f.NumRows() != uint64(total) || res.NumRows != uint64(total) {
				t.Fatalf("rows %d/%d, want %d", f.NumRows(), res.NumRows, total)
			}
			for c := 0; c < f.NumColumns(); c++ {
				if got := f.Column(c).NumRows(); got != uint64(total) {
					t.Fatalf("column %d: pages hold %d rows, want %d", c, got, total)
				}
			}
			got, err := f.ReadColumns(context.Background(), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			assertRecordsEqual(t, want, got)

			// Seeds: one per column that got one, decodable as v1.
			seeds, err := f.Seeds(context.Background(), seedio.DecodeOptions{TableFlagged: true})
			if err != nil {
				t.Fatal(err)
			}
			written := 0
			for _, sr := range res.Seeds {
				if sr.Err == nil {
					written++
				}
			}
			if len(seeds) != written {
				t.Fatalf("%d seeds in file, %d reported written", len(seeds), written)
			}
			for _, s := range seeds {
				if s.Err != nil {
					t.Errorf("seed %q: %v", s.Column, s.Err)
					continue
				}
				if s.Seed.Version != 1 || s.Locator.RowsPerZone != rpz || uint64(len(s.Seed.Zones)) != (uint64(total)+rpz-1)/rpz {
					t.Errorf("seed %q: version %d rpz %d zones %d", s.Column, s.Seed.Version, s.Locator.RowsPerZone, len(s.Seed.Zones))
				}
			}
			// R49: the seed does not depend on how rows were split into batches.
			if len(recs) > 1 {
				raw1, _ := writeFile(t, schema, opts, want)
				f1, err := OpenReaderAt(bytes.NewReader(raw1), int64(len(raw1)))
				if err != nil {
					t.Fatal(err)
				}
				s1, _ := f1.Seeds(context.Background(), seedio.DecodeOptions{TableFlagged: true})
				for i := range s1 {
					if i < len(seeds) && !bytes.Equal(s1[i].Bytes, seeds[i].Bytes) {
						t.Errorf("R49: seed %q differs between batch splits", s1[i].Column)
					}
				}
			}
		})
	}
}
