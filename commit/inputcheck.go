package commit

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// checkInputBatch validates every buffer of an input record batch against
// its length, offset and null count before anything reads it (issue 15
// item 9: a short buffer made the writer panic with "index out of range").
// A values buffer that is too short under rows that are all null — as
// apache-arrow JS writes an all-null bool column, with an empty values
// buffer — is replaced by zeros, since no value of it is ever used; every
// other short or inconsistent buffer is an error wrapping
// ErrInvalidTransaction naming the column. It returns rec itself when
// nothing was replaced, else a new batch the caller must release.
func checkInputBatch(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	var cols []arrow.Array
	for i, col := range rec.Columns() {
		name := rec.Schema().Field(i).Name
		if int64(col.Len()) < rec.NumRows() {
			return nil, fmt.Errorf("%w: input column %q has %d rows, the batch %d", ErrInvalidTransaction, name, col.Len(), rec.NumRows())
		}
		d, changed, err := checkArrayData(col.Data(), name)
		if err != nil {
			return nil, err
		}
		if changed {
			if cols == nil {
				cols = append([]arrow.Array(nil), rec.Columns()...)
			}
			cols[i] = array.MakeFromData(d)
			defer cols[i].Release()
		}
	}
	if cols == nil {
		return rec, nil
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows()), nil
}

// checkArrayData checks d (recursively) and returns a repaired copy when
// an all-null run's values buffer had to be replaced.
func checkArrayData(d arrow.ArrayData, path string) (arrow.ArrayData, bool, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: input column %q (%s): %s", ErrInvalidTransaction, path, d.DataType(), fmt.Sprintf(format, args...))
	}
	n, off := d.Len(), d.Offset()
	if n < 0 || off < 0 {
		return nil, false, bad("negative length or offset")
	}
	end := off + n
	bufs := d.Buffers()
	blen := func(i int) int {
		if i >= len(bufs) || bufs[i] == nil {
			return 0
		}
		return bufs[i].Len()
	}
	nulls := d.NullN()
	var repl []*memory.Buffer // replaced buffers (nil: none)
	if nulls < 0 {
		// Unknown (arrow-go's UnknownNullCount, or a negative null_count
		// in a hostile IPC field node): count it from the validity bitmap,
		// which must then cover the rows, and carry the count in a copy so
		// nothing downstream counts over a short bitmap.
		nulls = 0
		if len(bufs) > 0 && bufs[0] != nil {
			if blen(0) < (end+7)/8 {
				return nil, false, bad("validity buffer of %d bytes for %d rows", blen(0), end)
			}
			nulls = n - bitutil.CountSetBits(bufs[0].Bytes(), off, n)
		}
		repl = bufs
	}
	if nulls > n {
		return nil, false, bad("null count %d exceeds the length %d", nulls, n)
	}
	allNull := n > 0 && nulls == n
	if nulls > 0 && len(bufs) > 0 && bufs[0] != nil && blen(0) < (end+7)/8 {
		return nil, false, bad("validity buffer of %d bytes for %d rows", blen(0), end)
	}
	replace := func(i, size int) {
		repl = append([]*memory.Buffer(nil), bufs...)
		repl[i] = memory.NewBufferBytes(make([]byte, size))
	}
	checkOffsets := func(width int) (last int64, err error) {
		if n == 0 && blen(1) == 0 {
			return 0, nil
		}
		if blen(1) < (end+1)*width {
			return 0, bad("offsets buffer of %d bytes for %d rows", blen(1), end)
		}
		b := bufs[1].Bytes()
		at := func(i int) int64 {
			if width == 4 {
				return int64(int32(binary.LittleEndian.Uint32(b[i*4:])))
			}
			return int64(binary.LittleEndian.Uint64(b[i*8:]))
		}
		prev := at(off)
		if prev < 0 {
			return 0, bad("negative offset %d", prev)
		}
		for i := off + 1; i <= end; i++ {
			v := at(i)
			if v < prev {
				return 0, bad("offsets decrease at row %d", i-1)
			}
			prev = v
		}
		return prev, nil
	}
	children := d.Children()
	var newKids []arrow.ArrayData
	checkChild := func(i int, c arrow.ArrayData, minLen int64, name string) error {
		if int64(c.Len()+c.Offset()) < minLen && int64(c.Len()) < minLen {
			return bad("child %q has %d rows, %d needed", name, c.Len(), minLen)
		}
		nc, changed, err := checkArrayData(c, path+"."+name)
		if err != nil {
			return err
		}
		if changed {
			if newKids == nil {
				newKids = append([]arrow.ArrayData(nil), children...)
			}
			newKids[i] = nc
		}
		return nil
	}
	switch dt := d.DataType().(type) {
	case *arrow.BooleanType:
		if need := (end + 7) / 8; blen(1) < need {
			if !allNull {
				return nil, false, bad("values buffer of %d bytes for %d rows (%d of them not null)", blen(1), end, n-nulls)
			}
			replace(1, need)
		}
	case *arrow.BinaryType, *arrow.StringType:
		last, err := checkOffsets(4)
		if err != nil {
			return nil, false, err
		}
		if int64(blen(2)) < last {
			return nil, false, bad("data buffer of %d bytes, offsets reach %d", blen(2), last)
		}
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		last, err := checkOffsets(8)
		if err != nil {
			return nil, false, err
		}
		if int64(blen(2)) < last {
			return nil, false, bad("data buffer of %d bytes, offsets reach %d", blen(2), last)
		}
	case *arrow.ListType, *arrow.MapType:
		last, err := checkOffsets(4)
		if err != nil {
			return nil, false, err
		}
		if len(children) != 1 {
			return nil, false, bad("%d children", len(children))
		}
		if err := checkChild(0, children[0], last, "item"); err != nil {
			return nil, false, err
		}
	case *arrow.LargeListType:
		last, err := checkOffsets(8)
		if err != nil {
			return nil, false, err
		}
		if len(children) != 1 {
			return nil, false, bad("%d children", len(children))
		}
		if err := checkChild(0, children[0], last, "item"); err != nil {
			return nil, false, err
		}
	case *arrow.FixedSizeListType:
		if len(children) != 1 {
			return nil, false, bad("%d children", len(children))
		}
		if err := checkChild(0, children[0], int64(end)*int64(dt.Len()), "item"); err != nil {
			return nil, false, err
		}
	case *arrow.StructType:
		if len(children) != dt.NumFields() {
			return nil, false, bad("%d children for %d fields", len(children), dt.NumFields())
		}
		for i, c := range children {
			if err := checkChild(i, c, int64(end), dt.Field(i).Name); err != nil {
				return nil, false, err
			}
		}
	case *arrow.DictionaryType:
		if fw, ok := dt.IndexType.(arrow.FixedWidthDataType); ok {
			if need := end * fw.BitWidth() / 8; blen(1) < need {
				if !allNull {
					return nil, false, bad("indices buffer of %d bytes for %d rows", blen(1), end)
				}
				replace(1, need)
			}
		}
		if dict := d.Dictionary(); dict != nil {
			if _, _, err := checkArrayData(dict, path+".dictionary"); err != nil {
				return nil, false, err
			}
		}
	case arrow.FixedWidthDataType:
		if w := dt.BitWidth(); w >= 8 {
			if need := end * (w / 8); blen(1) < need {
				if !allNull {
					return nil, false, bad("values buffer of %d bytes for %d rows (%d of them not null)", blen(1), end, n-nulls)
				}
				replace(1, need)
			}
		}
	}
	if repl == nil && newKids == nil {
		return d, false, nil
	}
	if repl == nil {
		repl = bufs
	}
	if newKids == nil {
		newKids = children
	}
	nd := array.NewData(d.DataType(), n, repl, newKids, nulls, off)
	if dict := d.Dictionary(); dict != nil {
		nd.SetDictionary(dict)
	}
	return nd, true, nil
}
