package datafile

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// stringsWithNullBytes builds a string array of vals (nil = null) whose
// null slots span junk bytes when junk is set (Arrow allows it), else are
// empty as Arrow's builders make them.
func stringsWithNullBytes(dt arrow.DataType, vals []*string, junk bool) arrow.Array {
	large := dt.ID() == arrow.LARGE_STRING
	valid := make([]byte, bitutil.BytesForBits(int64(len(vals))))
	var data, offs []byte
	put := func(o int) {
		if large {
			offs = binary.LittleEndian.AppendUint64(offs, uint64(o))
		} else {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(o))
		}
	}
	put(0)
	nulls := 0
	for i, v := range vals {
		switch {
		case v != nil:
			bitutil.SetBit(valid, i)
			data = append(data, *v...)
		case junk:
			data = append(data, "JUNK"[:i%5]...)
			nulls++
		default:
			nulls++
		}
		put(len(data))
	}
	d := array.NewData(dt, len(vals), []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// TestSpec21_NullSlotBytesAreNotStored: a null string slot is stored
// empty (spec 2.1 §7.2) whether or not the Arrow array gives it bytes: the
// shredder copies whole byte ranges when null slots are empty and run by
// run of valid values when they are not, and both give the same file.
func TestSpec21_NullSlotBytesAreNotStored(t *testing.T) {
	r := newRand(5)
	var vals []*string
	for i := range 5000 {
		if r.IntN(7) == 0 || (i >= 1000 && i < 1100) {
			vals = append(vals, nil)
			continue
		}
		s := "abcdefghijklmnopqrstuvwxyz"[:r.IntN(20)]
		vals = append(vals, &s)
	}
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString} {
		for _, v := range []FileVersion{V2_1, V2_2} {
			sch := arrow.NewSchema([]arrow.Field{{Name: "s", Type: dt, Nullable: true}}, nil)
			var files [][]byte
			for _, junk := range []bool{false, true} {
				a := stringsWithNullBytes(dt, vals, junk)
				rec := array.NewRecordBatch(sch, []arrow.Array{a}, int64(a.Len()))
				a.Release()
				files = append(files, writeBatched(t, []arrow.RecordBatch{rec}, []int{333, 1, 1000}, WriterOptions{Version: v}))
				f, err := OpenReaderAt(bytes.NewReader(files[len(files)-1]), int64(len(files[len(files)-1])))
				if err != nil {
					t.Fatal(err)
				}
				back, err := f.ReadRows(t.Context(), ReadRequest{})
				if err != nil {
					t.Fatal(err)
				}
				col := back.Column(0)
				for i, want := range vals {
					if (want == nil) != col.IsNull(i) || (want != nil && col.ValueStr(i) != *want) {
						t.Fatalf("%s %s junk=%v row %d: got %q (null %v)", dt, v, junk, i, col.ValueStr(i), col.IsNull(i))
					}
				}
				back.Release()
				rec.Release()
			}
			if !bytes.Equal(files[0], files[1]) {
				t.Errorf("%s %s: the bytes of null slots changed the file", dt, v)
			}
		}
	}
}
