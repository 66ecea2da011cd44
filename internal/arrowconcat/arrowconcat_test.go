package arrowconcat

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// floatDict builds a dictionary<int16, float of bits> array whose rows are
// the given bit patterns (each its own dictionary item, in order).
func floatDict(bits int, pats ...uint64) arrow.Array {
	vt := map[int]arrow.DataType{16: arrow.FixedWidthTypes.Float16, 32: arrow.PrimitiveTypes.Float32, 64: arrow.PrimitiveTypes.Float64}[bits]
	w := bits / 8
	items := make([]byte, len(pats)*w)
	keys := make([]byte, len(pats)*2)
	for i, p := range pats {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], p)
		copy(items[i*w:], b[:w])
		binary.LittleEndian.PutUint16(keys[i*2:], uint16(i))
	}
	dict := array.NewData(vt, len(pats), []*memory.Buffer{nil, memory.NewBufferBytes(items)}, nil, 0, 0)
	defer dict.Release()
	d := array.NewDataWithDictionary(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vt}, len(pats), []*memory.Buffer{nil, memory.NewBufferBytes(keys)}, 0, 0, dict)
	defer d.Release()
	return array.MakeFromData(d)
}

// rowBits returns the bit patterns of the rows of a float dictionary array.
func rowBits(t *testing.T, a arrow.Array, bits int) []uint64 {
	t.Helper()
	d := a.(*array.Dictionary)
	raw := d.Dictionary().Data().Buffers()[1].Bytes()
	off, w := d.Dictionary().Data().Offset(), bits/8
	out := make([]uint64, d.Len())
	for i := range out {
		var b [8]byte
		k := d.GetValueIndex(i)
		copy(b[:], raw[(off+k)*w:(off+k+1)*w])
		out[i] = binary.LittleEndian.Uint64(b[:])
	}
	return out
}

// TestIssue12_1_ExactKeepsFloatDictionaryBitPatterns: concatenating
// dictionary arrays of float16/32/64 — also inside list and struct —
// returns every row's bit pattern unchanged: NaN payloads and signs, -0.0
// vs +0.0, whether the parts' dictionaries are equal, differ, or are the
// same NaN-holding dictionary (array.Concatenate folds all of these onto
// one NaN or one zero).
func TestIssue12_1_ExactKeepsFloatDictionaryBitPatterns(t *testing.T) {
	cases := []struct {
		name   string
		bits   int
		a, b   []uint64
		nested string // "", "list", "struct"
	}{
		{"f64_distinct_nans", 64, []uint64{0x7ff8000000000000, 0x3ff0000000000000}, []uint64{0x7ff8dead0000beef, 0xfff4000000000123}, ""},
		{"f64_same_nan_dictionary", 64, []uint64{0x7ff8dead0000beef, 0xfff8000000000000}, []uint64{0x7ff8dead0000beef, 0xfff8000000000000}, ""},
		{"f64_signed_zeros_same_index", 64, []uint64{0x0000000000000000, 1}, []uint64{0x8000000000000000, 1}, ""},
		{"f32_nans", 32, []uint64{0x7fc00000, 0xff812345}, []uint64{0x7fadbeef, 0x80000000}, ""},
		{"f16_nans", 16, []uint64{0x7e00, 0xfe01}, []uint64{0x7d23, 0x8000}, ""},
		{"list_of_f64_dict", 64, []uint64{0x7ff8000000000000, 0}, []uint64{0xfff4000000000123, 0x8000000000000000}, "list"},
		{"struct_of_f32_dict", 32, []uint64{0x7fc00000, 0}, []uint64{0xffc00001, 0x80000000}, "struct"},
		// One part (a copy that rebases a slice): arrow-go still unifies
		// the dictionary with itself.
		{"f64_single_part", 64, []uint64{0x7ff8dead0000beef, 0xfff4000000000123}, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			da, db := floatDict(c.bits, c.a...), floatDict(c.bits, c.b...)
			defer da.Release()
			defer db.Release()
			wrap := func(d arrow.Array) arrow.Array {
				switch c.nested {
				case "list":
					lt := arrow.ListOf(d.DataType())
					offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, int32(d.Len())}))
					ld := array.NewData(lt, 1, []*memory.Buffer{nil, offs}, []arrow.ArrayData{d.Data()}, 0, 0)
					defer ld.Release()
					return array.MakeFromData(ld)
				case "struct":
					st := arrow.StructOf(arrow.Field{Name: "x", Type: d.DataType(), Nullable: true})
					sd := array.NewData(st, d.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{d.Data()}, 0, 0)
					defer sd.Release()
					return array.MakeFromData(sd)
				}
				d.Retain()
				return d
			}
			pa, pb := wrap(da), wrap(db)
			defer pa.Release()
			defer pb.Release()
			parts := []arrow.Array{pa, pb}
			if c.b == nil {
				parts = parts[:1]
			}
			got, err := Exact(parts, memory.NewGoAllocator())
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if !arrow.TypeEqual(got.DataType(), pa.DataType()) {
				t.Fatalf("type %s, want %s", got.DataType(), pa.DataType())
			}
			var leaf arrow.Array = got
			switch c.nested {
			case "list":
				leaf = got.(*array.List).ListValues()
			case "struct":
				leaf = got.(*array.Struct).Field(0)
			}
			want := append(append([]uint64{}, c.a...), c.b...)
			g := rowBits(t, leaf, c.bits)
			if len(g) != len(want) {
				t.Fatalf("%d rows, want %d", len(g), len(want))
			}
			for i := range want {
				if g[i] != want[i] {
					t.Fatalf("row %d: bits %#x, want %#x (all %#x)", i, g[i], want[i], g)
				}
			}
		})
	}
}
