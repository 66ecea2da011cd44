package seedio

// Test helpers of the writer-side tests (prefixed w to keep them apart from
// the reader-side helpers of this package).

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/endian"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var wMem = memory.NewGoAllocator()

// wF64 / wF32 / wF16 build floats from explicit bit patterns (§4.2: never
// math.NaN() when the payload matters).
func wF64(b uint64) float64     { return math.Float64frombits(b) }
func wF32(b uint32) float32     { return math.Float32frombits(b) }
func wF16(b uint16) float16.Num { return float16.FromBits(b) }

const (
	wPosNaN64 = 0x7FF8_0000_0000_0000 // Rust canonical +NaN
	wGoNaN64  = 0x7FF8_0000_0000_0001 // Go math.NaN()
	wNegNaN64 = 0xFFF8_0000_0000_0000
	wNegZero  = 0x8000_0000_0000_0000
)

// wUUIDType is a fixed-size-binary extension type (Q4, T52).
func wUUIDType() arrow.ExtensionType { return extensions.NewUUIDType() }

// wFloatExtType is an extension over Float64 storage.
func wFloatExtType() arrow.ExtensionType {
	return extensions.NewOpaqueType(arrow.PrimitiveTypes.Float64, "test.float", "lancekeeper")
}

// wArr builds an array of a type with supported bounds from Go values as
// ValueAt returns them (nil = null).
func wArr(t testing.TB, dt arrow.DataType, vals ...any) arrow.Array {
	t.Helper()
	if d, ok := dt.(*arrow.DictionaryType); ok {
		// Plain dictionary: entry i = vals[i], key i = i.
		dict, err := buildValues(wMem, d.ValueType, vals)
		if err != nil {
			t.Fatal(err)
		}
		defer dict.Release()
		keys := make([]any, len(vals))
		for i := range vals {
			keys[i] = wKey(d.IndexType, i)
		}
		idx := wArr(t, d.IndexType, keys...)
		defer idx.Release()
		return array.NewDictionaryArray(d, idx, dict)
	}
	a, err := buildValues(wMem, dt, vals)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// wKey converts a dictionary index to the Go type of an index type.
func wKey(dt arrow.DataType, i int) any {
	switch dt.ID() {
	case arrow.INT8:
		return int8(i)
	case arrow.UINT8:
		return uint8(i)
	case arrow.INT16:
		return int16(i)
	case arrow.UINT16:
		return uint16(i)
	case arrow.INT32:
		return int32(i)
	case arrow.UINT32:
		return uint32(i)
	case arrow.UINT64:
		return uint64(i)
	}
	return int64(i)
}

// wCollect feeds batches to a new collector and finishes it.
func wCollect(t testing.TB, field arrow.Field, opts CollectorOptions, batches ...arrow.Array) *EncodedSeed {
	t.Helper()
	c, err := NewCollector(field, opts)
	if err != nil {
		t.Fatalf("NewCollector(%s): %v", field.Type, err)
	}
	for _, b := range batches {
		if err := c.Observe(b); err != nil {
			t.Fatalf("Observe: %v", err)
		}
	}
	s, err := c.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return s
}

// wField returns a nullable field named "c".
func wField(dt arrow.DataType) arrow.Field { return arrow.Field{Name: "c", Type: dt, Nullable: true} }

// wReadIPC opens seed bytes with arrow-go's IPC file reader, checks the
// container (R9, R10, R13) and returns the schema and the single batch
// decoded into Zone (Start derived per R19).
func wReadIPC(t testing.TB, b []byte, rpz uint64) (*arrow.Schema, []Zone) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("ARROW1")) || !bytes.HasSuffix(b, []byte("ARROW1")) {
		t.Fatalf("R9: not framed by ARROW1 magic")
	}
	r, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(wMem))
	if err != nil {
		t.Fatalf("R9: ipc.NewFileReader: %v", err)
	}
	defer r.Close()
	if r.NumRecords() != 1 {
		t.Fatalf("R10: %d record batches, want 1", r.NumRecords())
	}
	schema := r.Schema()
	if schema.Endianness() != endian.LittleEndian {
		t.Fatalf("R13: endianness %v", schema.Endianness())
	}
	rec, err := r.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	n := int(rec.NumRows())
	zones := make([]Zone, n)
	nc := rec.Column(2).(*array.Uint32)
	nanc := rec.Column(3).(*array.Uint32)
	negc := rec.Column(4).(*array.Uint32)
	lens := rec.Column(5).(*array.Uint64)
	for _, c := range rec.Columns()[2:] {
		if c.NullN() != 0 {
			t.Fatalf("R16: count column with %d nulls", c.NullN())
		}
	}
	for i := 0; i < n; i++ {
		z := Zone{Index: i, Start: uint64(i) * rpz, Stats: Stats{
			Rows:             lens.Value(i),
			NullCount:        uint64(nc.Value(i)),
			NaNCount:         uint64(nanc.Value(i)),
			NegativeNaNCount: uint64(negc.Value(i)),
		}}
		if SupportsBounds(schema.Field(0).Type) {
			if z.Min, err = ValueAt(rec.Column(0), i); err != nil {
				t.Fatal(err)
			}
			if z.Max, err = ValueAt(rec.Column(1), i); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, c := range rec.Columns()[:2] {
				if c.IsValid(i) && c.DataType().ID() != arrow.NULL && c.DataType().ID() != arrow.RUN_END_ENCODED {
					t.Fatalf("R35: non-null bound in zone %d for %s", i, c.DataType())
				}
			}
		}
		zones[i] = z
	}
	return schema, zones
}

// wSameValue reports whether two bound values are identical (floats by bit
// pattern, byte slices by content).
func wSameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	c, err := CompareValues(a, b)
	return err == nil && c == 0
}

// wSameZones compares zone lists field by field.
func wSameZones(t testing.TB, what string, got, want []Zone) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d zones, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Start != w.Start || g.Rows != w.Rows || g.NullCount != w.NullCount ||
			g.NaNCount != w.NaNCount || g.NegativeNaNCount != w.NegativeNaNCount ||
			!wSameValue(g.Min, w.Min) || !wSameValue(g.Max, w.Max) {
			t.Fatalf("%s: zone %d = %+v, want %+v", what, i, g, w)
		}
	}
}
