package datafile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSpec45_NullSlotsAreWrittenAsZeros: null slots of fixed-width values
// are zeros in the file (spec §4.5) whatever the caller's buffer holds
// there. The writer references a buffer whose null slots are already zero
// and copies (and zeroes) one that has garbage in them; both must give the
// same bytes, for plain columns, sliced arrays and fixed-size lists.
func TestSpec45_NullSlotsAreWrittenAsZeros(t *testing.T) {
	const n = 70 // crosses validity bytes, not a multiple of 8
	valid := func(i int) bool { return i%7 != 3 && i%11 != 0 }
	bitmap := func(n int, ok func(int) bool) []byte {
		b := make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			if ok(i) {
				b[i/8] |= 1 << (i % 8)
			}
		}
		return b
	}
	// fixed builds a primitive array of n wb-byte values whose null slots
	// hold fill.
	fixed := func(dt arrow.DataType, wb int, fill byte) arrow.Array {
		vals := make([]byte, n*wb)
		for i := 0; i < n; i++ {
			for j := 0; j < wb; j++ {
				if valid(i) {
					vals[i*wb+j] = byte(i*wb + j + 1)
				} else {
					vals[i*wb+j] = fill
				}
			}
		}
		d := array.NewData(dt, n, []*memory.Buffer{memory.NewBufferBytes(bitmap(n, valid)), memory.NewBufferBytes(vals)}, nil, array.UnknownNullCount, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	// fsl builds a fixed_size_list<float32>[2] of n lists: null lists where
	// valid is false, and a null item in every fifth list; null items and
	// the items of null lists hold fill.
	fsl := func(fill byte) arrow.Array {
		itemOK := func(i int) bool { return valid(i/2) && !(i/2%5 == 0 && i%2 == 1) }
		vals := make([]byte, 2*n*4)
		for i := 0; i < 2*n; i++ {
			for j := 0; j < 4; j++ {
				if itemOK(i) {
					vals[i*4+j] = byte(i + j + 1)
				} else {
					vals[i*4+j] = fill
				}
			}
		}
		child := array.NewData(arrow.PrimitiveTypes.Float32, 2*n, []*memory.Buffer{memory.NewBufferBytes(bitmap(2*n, itemOK)), memory.NewBufferBytes(vals)}, nil, array.UnknownNullCount, 0)
		defer child.Release()
		d := array.NewData(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), n, []*memory.Buffer{memory.NewBufferBytes(bitmap(n, valid))}, []arrow.ArrayData{child}, array.UnknownNullCount, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	for _, tc := range []struct {
		name  string
		make  func(fill byte) arrow.Array
		slice bool
	}{
		{"int64", func(f byte) arrow.Array { return fixed(arrow.PrimitiveTypes.Int64, 8, f) }, false},
		{"int16 sliced", func(f byte) arrow.Array { return fixed(arrow.PrimitiveTypes.Int16, 2, f) }, true},
		{"float64 sliced", func(f byte) arrow.Array { return fixed(arrow.PrimitiveTypes.Float64, 8, f) }, true},
		{"fixed_size_list<float32>[2]", fsl, false},
		{"fixed_size_list<float32>[2] sliced", fsl, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[byte][]byte{}
			for _, fill := range []byte{0, 0xa5} {
				arr := tc.make(fill)
				if tc.slice {
					s := array.NewSlice(arr, 5, int64(n-3))
					arr.Release()
					arr = s
				}
				schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arr.DataType(), Nullable: true}}, nil)
				rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
				arr.Release()
				// two batches, so pages hold referenced and copied pieces
				half := rec.NewSlice(0, rec.NumRows()/2)
				rest := rec.NewSlice(rec.NumRows()/2, rec.NumRows())
				file, _ := writeFile(t, schema, WriterOptions{}, half, rest)
				half.Release()
				rest.Release()
				rec.Release()
				files[fill] = file
			}
			if !bytes.Equal(files[0], files[0xa5]) {
				t.Fatalf("garbage in null slots changed the file:\n zeroed slots: %x\n garbage:      %x", files[0], files[0xa5])
			}
			if bytes.Contains(files[0xa5], []byte{0xa5, 0xa5}) {
				t.Errorf("the file keeps the garbage of null slots: %s", fmt.Sprintf("%x", files[0xa5]))
			}
		})
	}
}
