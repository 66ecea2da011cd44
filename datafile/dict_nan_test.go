package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestIssue12_1_NaNPayloadsPreservedThroughDictionaryPages: a dictionary
// column of float16/float32/float64 values decodes to exactly the bit
// patterns the dictionary page stores — every NaN payload and sign
// (quiet, signalling, negative) and -0.0 vs +0.0 — as Lance 12 returns
// them (issue 12 item 1, "including NaN bit patterns"; spec 2.1 §4.5).
// The reader used to re-encode the decoded values with arrow-go's
// dictionary builder, whose float memo table treats all NaNs as one: every
// NaN of a read came back as the first NaN it met (found on a table Lance
// 12 had compacted, tests/compat TestUsToLance21_R_W1_W14_EveryTypeReadByLance12).
// The seeds of such a column (NaN and negative-NaN counts) verify sound.
func TestIssue12_1_NaNPayloadsPreservedThroughDictionaryPages(t *testing.T) {
	const rows = 3000
	rec, rowBits := nanDictRecord(rows)
	defer rec.Release()
	fields := rec.Schema().Fields()
	cols := rec.Columns()
	type tc struct {
		v        FileVersion
		plain    bool
		pageSize int
		ranges   bool // ReadRows over several row ranges (concatenated)
	}
	var cases []tc
	for _, v := range []FileVersion{V2_0, V2_1, V2_2} {
		for _, plain := range []bool{false, true} {
			for _, ps := range []int{0, 1024} {
				for _, rg := range []bool{false, true} {
					if v == V2_0 && plain {
						continue
					}
					cases = append(cases, tc{v, plain, ps, rg})
				}
			}
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/nocompression=%v/page=%d/ranges=%v", c.v, c.plain, c.pageSize, c.ranges), func(t *testing.T) {
			f, _ := write21(t, rec, WriterOptions{Version: c.v, NoCompression: c.plain, PageSize: c.pageSize, SeedAllColumns: true})
			if c.pageSize > 0 && len(f.Column(0).Pages) < 2 {
				t.Fatalf("%d page(s) with PageSize %d; the case wants several", len(f.Column(0).Pages), c.pageSize)
			}
			requireSoundSeeds(t, f, len(cols))
			var rr []RowRange
			if c.ranges {
				rr = []RowRange{{5, 700}, {1200, 1201}, {1500, 2999}}
			}
			got, err := f.ReadRows(context.Background(), ReadRequest{Ranges: rr})
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			var rowsOf []int
			if rr == nil {
				rr = []RowRange{{0, rows}}
			}
			for _, r := range rr {
				for i := r.Start; i < r.End; i++ {
					rowsOf = append(rowsOf, int(i))
				}
			}
			for ci, bits := range []int{16, 32, 64} {
				d, ok := got.Column(ci).(*array.Dictionary)
				if !ok {
					t.Fatalf("column %s reads as %T", fields[ci].Name, got.Column(ci))
				}
				raw := d.Dictionary().Data().Buffers()[1].Bytes()
				off := d.Dictionary().Data().Offset()
				w := bits / 8
				for i, r := range rowsOf {
					want, ok := rowBits(bits, r)
					// Logical nulls: a null key, or (2.0) a key of the null item.
					null := d.IsNull(i) || d.Dictionary().IsNull(d.GetValueIndex(i))
					if null != !ok {
						t.Fatalf("%s row %d: null %v, want %v", fields[ci].Name, r, null, !ok)
					}
					if !ok {
						continue
					}
					var b [8]byte
					k := d.GetValueIndex(i)
					copy(b[:], raw[(off+k)*w:(off+k+1)*w])
					if g := binary.LittleEndian.Uint64(b[:]); g != want {
						t.Fatalf("%s row %d: bits %#x, want %#x", fields[ci].Name, r, g, want)
					}
				}
			}
		})
	}
}

// nanDictRecord: rows of dictionary<int16, float16|float32|float64>
// columns (df16, df32, df64) whose values cycle through NaN payloads of
// both signs, quiet and signalling, ±0.0 and ordinary values, with nulls;
// rowBits(bits, r) is the bit pattern row r of the bits-wide column holds
// (ok false: null).
func nanDictRecord(rows int) (arrow.RecordBatch, func(bits, r int) (uint64, bool)) {
	patterns := map[int][]uint64{
		16: {0x7e00, 0xfe01, 0x7c01, 0x7d23, 0x0000, 0x8000, 0x3c00},
		32: {0x7fc00000, 0xffc00001, 0x7f800001, 0x7fadbeef, 0xff812345, 0x00000000, 0x80000000, 0x3f800000},
		64: {0x7ff8000000000000, 0x7ff8dead0000beef, 0xfff4000000000123, 0x7ff0000000000001,
			0xfff8000000000000, 0x7ff8000000000001, 0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000},
	}
	types := map[int]arrow.DataType{16: arrow.FixedWidthTypes.Float16, 32: arrow.PrimitiveTypes.Float32, 64: arrow.PrimitiveTypes.Float64}
	// rowBits is the bit pattern row r holds (ok false: null).
	rowBits := func(bits, r int) (uint64, bool) {
		p := patterns[bits]
		if r%13 == 0 {
			return 0, false
		}
		return p[(r*7+r/100)%len(p)], true
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for _, bits := range []int{16, 32, 64} {
		// The dictionary holds each pattern once; keys pick them row by row.
		p := patterns[bits]
		items := make([]byte, len(p)*bits/8)
		for i, v := range p {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v)
			copy(items[i*bits/8:], b[:bits/8])
		}
		dd := array.NewData(types[bits], len(p), []*memory.Buffer{nil, memory.NewBufferBytes(items)}, nil, 0, 0)
		dict := array.MakeFromData(dd)
		kb := array.NewInt16Builder(memory.NewGoAllocator())
		for r := range rows {
			v, ok := rowBits(bits, r)
			if !ok {
				kb.AppendNull()
				continue
			}
			for i, pv := range p {
				if pv == v {
					kb.Append(int16(i))
				}
			}
		}
		keys := kb.NewArray()
		dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: types[bits]}
		cols = append(cols, array.NewDictionaryArray(dt, keys, dict))
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("df%d", bits), Type: dt, Nullable: true})
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(rows)), rowBits
}

// nanDictFuzzSeeds: 2.1 and 2.2 files of nanDictRecord (dictionary pages
// of float values with NaN payloads) for FuzzReadRows21.
func nanDictFuzzSeeds(f *testing.F) [][]byte {
	rec, _ := nanDictRecord(400)
	defer rec.Release()
	var out [][]byte
	for _, v := range []FileVersion{V2_1, V2_2} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, rec.Schema(), WriterOptions{Version: v})
		if err != nil {
			f.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			f.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			f.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}
