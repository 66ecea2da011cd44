package datafile

// The 2.0 writer's lists, dictionaries and null columns (spec §4.4, §4.7),
// laid out as Lance 12 lays them out in its own 2.0 files (observed on
// shared/lance-corpus/lance12/storage_2_0.lance and on tables the peer
// creates at 2.0; confirmed by Lance 12 reading ours, tests/compat
// TestUsToLance20_*).
//
//   - list / large_list: an offsets column whose pages are
//     list{offsets: nullable{no_nulls{flat{64, B0}}}, null_offset_adjustment:
//     items+1, num_items: items}; buffer 0 holds one u64 per row, the end of
//     the row's items counted from the page's first item, plus the
//     adjustment for a null list (the scheme of strings, §4.5). The items
//     of valid lists follow in the child field's own column(s), paged
//     independently; items of null lists are not written.
//   - dictionary<K, V>: one column, field encoding DICTIONARY (3); each page
//     is dictionary{indices: nullable{no_nulls{flat{bits(K), B0}}}, items:
//     V's own page encoding over B1.., num_dictionary_items}. The items are
//     the Arrow dictionary's values followed, when the page has null rows,
//     by one null item, which the null rows index (Lance 12 does the same).
//   - null: no field encoding, one page nullable{all_nulls} without buffers.
//
// Maps and structs holding null rows have no 2.0 encoding: Lance 12 refuses
// to write both ("Lance v2.0 has no field encoding for 'map'", "Lance file
// version 2.0 does not encode struct validity"), and so does this writer.

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field.Encoding values of the deprecated v1 enum that Lance still writes
// (spec §3.2).
const (
	fieldEncodingPlain      = 1
	fieldEncodingVarBinary  = 2
	fieldEncodingDictionary = 3
)

// dictPage is the pending page of a dictionary column.
type dictPage struct {
	keyBits  int           // bits of the Arrow index type
	maxIndex uint64        // the largest index the key type holds
	values   []arrow.Array // the distinct dictionaries of the page, retained
	bases    []uint64      // index of each dictionary's first value in the page
	total    uint64        // values in the page's dictionaries
	idx      []uint64      // per row: page-wide item index (null rows: unused)
	valBytes int           // estimated bytes of the dictionaries (not counted in the page size)
}

// logicalType20 is the logical type of a field the 2.0 writer stores, or an
// error saying why Lance's 2.0 format cannot store it.
func logicalType20(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.MapType:
		return "", fmt.Errorf("Lance 2.0 has no encoding for map columns (Lance 12 refuses to write them too); use storage version 2.2")
	case *arrow.DictionaryType:
		if !dictValue20(t.ValueType) {
			return "", fmt.Errorf("dictionary of %s has no 2.0 encoding (values must be integers, floats, booleans, strings or binaries; Lance 12's 2.0 writer fails on dates, times, timestamps, durations, decimals and fixed_size_binary); use storage version 2.1 or later", t.ValueType)
		}
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth < 1 {
			return "", fmt.Errorf("fixed_size_binary width %d", t.ByteWidth)
		}
	case *arrow.ListType, *arrow.LargeListType, *arrow.NullType, *arrow.Decimal128Type, *arrow.Decimal256Type:
	case *arrow.FixedSizeListType:
		// items of any fixed width, decimals and fixed_size_binary
		// included, as Lance 12's 2.0 writer stores them
	case *arrow.StructType:
		return logicalTypeOf(dt)
	default:
		return logicalTypeOf(dt)
	}
	return logicalType21(dt)
}

// dictValue20 reports whether a dictionary of values of type v has a 2.0
// encoding this writer produces: flat values or binary values.
func dictValue20(v arrow.DataType) bool {
	switch v.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL,
		arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// setupColumn20 sets the kind of a 2.0 column of a type handled here and the
// field's v1 encoding; ok is false for the types of writer.go.
func setupColumn20(col *column, fld *Field, dt arrow.DataType) (ok bool) {
	switch t := dt.(type) {
	case *arrow.ListType:
		col.kind, fld.Encoding = ckList, fieldEncodingPlain
	case *arrow.LargeListType:
		col.kind, col.large, fld.Encoding = ckList, true, fieldEncodingPlain
	case *arrow.NullType:
		col.kind = ckNull
	case *arrow.DictionaryType:
		kb := t.IndexType.(arrow.FixedWidthDataType).BitWidth()
		mx := uint64(1)<<(kb-1) - 1 // signed keys
		if !arrow.IsSignedInteger(t.IndexType.ID()) {
			mx = 1<<kb - 1
			if kb == 64 {
				mx = math.MaxUint64
			}
		}
		col.kind, fld.Encoding = ckDict, fieldEncodingDictionary
		col.dict = &dictPage{keyBits: kb, maxIndex: mx}
		col.width = kb
	case *arrow.FixedSizeBinaryType:
		col.kind, col.width, fld.Encoding = ckFixed, 8*t.ByteWidth, fieldEncodingPlain
	default:
		return false
	}
	return true
}

// childField20 is the one child field of a list.
func childField20(dt arrow.DataType) (arrow.Field, bool) {
	switch t := dt.(type) {
	case *arrow.ListType:
		return t.ElemField(), true
	case *arrow.LargeListType:
		return t.ElemField(), true
	}
	return arrow.Field{}, false
}

// checkNested20 applies checkArray to the values of a list (Lance 12 checks
// the struct validity of list items too).
func (w *Writer) checkNested20(f arrow.Field, a arrow.Array) error {
	child, ok := childField20(f.Type)
	if !ok {
		return nil
	}
	var vals arrow.Array
	switch l := a.(type) {
	case *array.List:
		vals = l.ListValues()
	case *array.LargeList:
		vals = l.ListValues()
	default:
		return nil
	}
	return w.checkArray(child, vals)
}

// writeNull20 counts the rows of a null column.
func (c *column) writeNull20(a arrow.Array) {
	c.validity = growBits(c.validity, c.n+a.Len())
	c.n += a.Len()
	c.nulls += a.Len()
}

// listBounds returns the item range of row i of a list array (absolute
// slot i, offsets of the array's data).
func listBounds(d arrow.ArrayData, large bool) func(i int) (int, int) {
	ob := d.Buffers()[1].Bytes()
	if large {
		o := arrow.Int64Traits.CastFromBytes(ob)
		return func(i int) (int, int) { return int(o[i]), int(o[i+1]) }
	}
	o := arrow.Int32Traits.CastFromBytes(ob)
	return func(i int) (int, int) { return int(o[i]), int(o[i+1]) }
}

// writeList20 feeds rows of a list array to the offsets column c and the
// items of its valid rows to the child column, flushing the offsets page at
// the page size (8 bytes per row).
func (w *Writer) writeList20(c *column, a arrow.Array) error {
	d := a.Data()
	child := a.(array.ListLike).ListValues()
	bounds := listBounds(d, c.large)
	for start := 0; start < a.Len(); {
		k := max(1, min(a.Len()-start, (w.pageSize-c.size)/9))
		at := c.n
		var nulls int
		c.validity, nulls = appendValidity(c.validity, at, d, start, k)
		c.nulls += nulls
		c.ends = reserve(c.ends, k)
		// Runs of consecutive valid rows are one slice of the child.
		runFrom, runTo := -1, -1
		flush := func() error {
			if runFrom < 0 || runTo == runFrom {
				runFrom = -1
				return nil
			}
			s := array.NewSlice(child, int64(runFrom), int64(runTo))
			defer s.Release()
			runFrom = -1
			return w.writeArray(c.children[0], s)
		}
		for i := 0; i < k; i++ {
			b, e := bounds(d.Offset() + start + i)
			if nulls > 0 && !bitutil.BitIsSet(c.validity, at+i) {
				c.ends = append(c.ends, c.items)
				continue
			}
			if e < b {
				return fmt.Errorf("%w: column %q: list offsets decrease at row %d", ErrInvalidData, c.name, start+i)
			}
			if runFrom >= 0 && b != runTo {
				if err := flush(); err != nil {
					return err
				}
			}
			if runFrom < 0 {
				runFrom = b
			}
			runTo = e
			c.items += uint64(e - b)
			c.ends = append(c.ends, c.items)
		}
		if err := flush(); err != nil {
			return err
		}
		c.n += k
		c.size += 8*k + int(bitutil.BytesForBits(int64(k)))
		start += k
		if c.size >= w.pageSize {
			if err := w.flushPage(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeList20 is the offsets page of a list column: u64 ends relative to
// the page's first item, null lists + (items + 1).
func (c *column) encodeList20() (bufs [][][]byte, enc []byte) {
	n := c.n
	adj := c.items + 1
	idx := make([]byte, 8*n)
	for i, e := range c.ends[:n] {
		if c.nulls > 0 && !bitutil.BitIsSet(c.validity, i) {
			e += adj
		}
		putU64(idx[8*i:], e)
	}
	return [][][]byte{{idx}}, encList(encNoNulls(encFlat(64, 0)), adj, c.items)
}

// encList is ArrayEncoding{list{offsets, null_offset_adjustment, num_items}}.
func encList(offsets []byte, nullAdj, numItems uint64) []byte {
	var b []byte
	b = pbAppendBytesField(b, 1, offsets)
	b = pbAppendVarintFieldNZ(b, 2, nullAdj)
	b = pbAppendVarintFieldNZ(b, 3, numItems)
	return pbAppendBytesField(nil, protowire.Number(aeList), b)
}

// encDictionary is ArrayEncoding{dictionary{indices, items, num_dictionary_items}}.
func encDictionary(indices, items []byte, numItems uint64) []byte {
	var b []byte
	b = pbAppendBytesField(b, 1, indices)
	b = pbAppendBytesField(b, 2, items)
	b = pbAppendVarintFieldNZ(b, 3, numItems)
	return pbAppendBytesField(nil, protowire.Number(aeDictionary), b)
}

// writeDict20 feeds rows of a dictionary array to column c. A page keeps
// every distinct dictionary it receives (consecutive batches usually share
// one), with the keys of later ones shifted past the earlier values; a
// dictionary that would overflow the key type starts a new page.
func (w *Writer) writeDict20(c *column, a arrow.Array) error {
	da := a.(*array.Dictionary)
	dict := da.Dictionary()
	dp := c.dict
	base, found := uint64(0), false
	if n := len(dp.values); n > 0 && (dp.values[n-1] == dict || (dp.values[n-1].Len() == dict.Len() && array.Equal(dp.values[n-1], dict))) {
		base, found = dp.bases[n-1], true
	}
	if !found {
		// The page's last index (the null item) must fit the key type.
		if uint64(dict.Len()) > dp.maxIndex {
			return fmt.Errorf("%w: column %q: a dictionary of %d values leaves no %d-bit index for the null item Lance's 2.0 layout adds", ErrInvalidData, c.name, dict.Len(), dp.keyBits)
		}
		if dp.total+uint64(dict.Len()) > dp.maxIndex && c.n > 0 {
			if err := w.flushPage(c); err != nil {
				return err
			}
		}
		dict.Retain()
		base = dp.total
		dp.values = append(dp.values, dict)
		dp.bases = append(dp.bases, base)
		dp.total += uint64(dict.Len())
		dp.valBytes += dictBytes(dict)
	}
	d := a.Data()
	kw := dp.keyBits / 8
	for start := 0; start < a.Len(); {
		k := max(1, min(a.Len()-start, (w.pageSize-c.size)/(kw+1)))
		at := c.n
		var nulls int
		c.validity, nulls = appendValidity(c.validity, at, d, start, k)
		c.nulls += nulls
		dp.idx = reserve(dp.idx, k)
		for i := 0; i < k; i++ {
			if nulls > 0 && !bitutil.BitIsSet(c.validity, at+i) {
				dp.idx = append(dp.idx, 0)
				continue
			}
			key := da.GetValueIndex(start + i)
			if key < 0 || key >= dict.Len() {
				return fmt.Errorf("%w: column %q: dictionary key %d at row %d is outside the %d values", ErrInvalidData, c.name, key, start+i, dict.Len())
			}
			dp.idx = append(dp.idx, base+uint64(key))
		}
		c.n += k
		c.size += k*kw + int(bitutil.BytesForBits(int64(k)))
		start += k
		if c.size >= w.pageSize && start < a.Len() {
			if err := w.flushPage(c); err != nil {
				return err
			}
			// The next page starts with this dictionary again.
			dict.Retain()
			dp.values = append(dp.values, dict)
			dp.bases = append(dp.bases, 0)
			dp.total = uint64(dict.Len())
			dp.valBytes = dictBytes(dict)
			base = 0
		}
	}
	if c.size >= w.pageSize {
		return w.flushPage(c)
	}
	return nil
}

// dictBytes estimates the stored bytes of dictionary values.
func dictBytes(a arrow.Array) int {
	if arrow.IsBaseBinary(a.DataType().ID()) {
		d := a.Data()
		return 8*a.Len() + binarySpan(d)(d.Offset(), d.Offset()+a.Len())
	}
	wd, _ := flatWidthForRead(a.DataType())
	return a.Len() * wd / 8
}

// encodeDict20 is the page of a dictionary column: the indices, then the
// page's dictionary values (plus a null item when rows are null) in their
// own 2.0 encoding.
func (c *column) encodeDict20() (bufs [][][]byte, enc []byte, err error) {
	dp := c.dict
	n := c.n
	nullItem := dp.total
	kw := dp.keyBits / 8
	ib := make([]byte, n*kw)
	for i, v := range dp.idx[:n] {
		if c.nulls > 0 && !bitutil.BitIsSet(c.validity, i) {
			v = nullItem
		}
		for j := 0; j < kw; j++ {
			ib[i*kw+j] = byte(v >> (8 * j))
		}
	}
	bufs = append(bufs, [][]byte{ib})
	numItems := dp.total
	if c.nulls > 0 {
		numItems++
	}
	// The items as one temporary column of the value type.
	vt := dp.values[0].DataType()
	items := &column{name: c.name, nullable: true}
	switch {
	case arrow.IsBaseBinary(vt.ID()):
		items.kind = ckBinary
	case vt.ID() == arrow.BOOL:
		items.kind, items.width = ckBool, 1
	default:
		wd, _ := flatWidthForRead(vt)
		items.kind, items.width = ckFixed, wd
	}
	defer items.release()
	for _, v := range dp.values {
		items.appendRange(v, 0, v.Len())
	}
	if c.nulls > 0 {
		items.appendNullItem()
	}
	ibufs, ienc := items.encodeItems20(1)
	bufs = append(bufs, ibufs...)
	return bufs, encDictionary(encNoNulls(encFlat(uint64(dp.keyBits), 0)), ienc, numItems), nil
}

// appendNullItem appends one null value to a fixed-width or binary column.
func (c *column) appendNullItem() {
	at := c.n
	c.validity = growBits(c.validity, at+1)
	bitutil.ClearBit(c.validity, at)
	c.nulls++
	switch c.kind {
	case ckFixed:
		c.addCopy(make([]byte, c.width/8))
	case ckBool:
		c.values = growBits(c.values, at+1)
		bitutil.ClearBit(c.values, at)
	case ckBinary:
		var last uint64
		if len(c.ends) > 0 {
			last = c.ends[len(c.ends)-1]
		}
		c.ends = append(c.ends, last)
	}
	c.n++
}

// encodeItems20 encodes the pending values of a fixed-width or binary column
// with page buffer numbers from first (the items of a dictionary page).
func (c *column) encodeItems20(first uint32) (bufs [][][]byte, enc []byte) {
	n := c.n
	validity := c.validity[:bitutil.BytesForBits(int64(n))]
	if c.kind == ckBinary {
		adj := uint64(1)
		if len(c.ends) > 0 {
			adj = c.ends[len(c.ends)-1] + 1
		}
		idx := make([]byte, 8*n)
		for i, e := range c.ends[:n] {
			if c.nulls > 0 && !bitutil.BitIsSet(validity, i) {
				e += adj
			}
			putU64(idx[8*i:], e)
		}
		return [][][]byte{{idx}, c.segs}, encBinary(encNoNulls(encFlat(64, first)), encFlat(8, first+1), adj)
	}
	vals := c.segs
	if c.kind == ckBool {
		vb := c.values[:len(validity)]
		for i := range vb {
			vb[i] &= validity[i]
		}
		vals = [][]byte{vb}
	}
	if c.nulls == 0 {
		return [][][]byte{vals}, encNoNulls(encFlat(uint64(c.width), first))
	}
	return [][][]byte{{validity}, vals}, encSomeNulls(encFlat(1, first), encFlat(uint64(c.width), first+1))
}

// resetDict20 drops the page state of a dictionary column after a flush.
func (c *column) resetDict20() {
	dp := c.dict
	for _, v := range dp.values {
		v.Release()
	}
	clear(dp.values)
	dp.values = dp.values[:0]
	dp.bases = dp.bases[:0]
	dp.idx = dp.idx[:0]
	dp.total, dp.valBytes = 0, 0
}
