package datafile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/internal/arrowconcat"
)

// This file decodes v2.0 pages into Arrow arrays. It covers the encodings of
// spec §4.5 and §4.7 (flat, nullable, binary, fixed_size_list, struct, list)
// plus dictionary and fixed_size_binary, which Lance's 2.0 writer also emits.
// Compressed and bit-packed buffers are reported as ErrUnsupported. 2.1+
// pages (PageLayout) are not decoded.

// maxPageRows bounds the row count of one page we are willing to decode
// (Lance row offsets are 32-bit).
const maxPageRows = 1 << 32

// ArrowSchema converts the file schema to an Arrow schema. Field metadata and
// schema metadata are carried over.
func (s *Schema) ArrowSchema() (*arrow.Schema, error) {
	top := s.TopLevel()
	fields := make([]arrow.Field, len(top))
	for i, fi := range top {
		af, err := s.arrowField(fi, 0)
		if err != nil {
			return nil, err
		}
		fields[i] = af
	}
	var md *arrow.Metadata
	if len(s.Metadata) > 0 {
		m := arrow.MetadataFrom(s.Metadata)
		md = &m
	}
	return arrow.NewSchema(fields, md), nil
}

func (s *Schema) arrowField(fi int, depth int) (arrow.Field, error) {
	f := &s.Fields[fi]
	if depth > maxEncodingDepth {
		return arrow.Field{}, formatErr(ErrUnsupported, "schema", -1, "field %q nested deeper than %d levels", f.Name, maxEncodingDepth)
	}
	lt, err := parseLogicalType(f.LogicalType)
	if err != nil {
		return arrow.Field{}, formatErr(ErrUnsupported, "schema", -1, "field %q: %v", f.Name, err)
	}
	af := arrow.Field{Name: f.Name, Nullable: f.Nullable}
	if len(f.Metadata) > 0 {
		af.Metadata = arrow.MetadataFrom(f.Metadata)
	}
	children := func() ([]arrow.Field, error) {
		out := make([]arrow.Field, len(f.Children))
		for i, c := range f.Children {
			cf, err := s.arrowField(c, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = cf
		}
		return out, nil
	}
	switch lt.kind {
	case lkStruct:
		cs, err := children()
		if err != nil {
			return af, err
		}
		af.Type = arrow.StructOf(cs...)
	case lkList, lkMap:
		cs, err := children()
		if err != nil {
			return af, err
		}
		if len(cs) != 1 {
			return af, formatErr(ErrMalformed, "schema", -1, "%s field %q has %d children, want 1", f.LogicalType, f.Name, len(cs))
		}
		switch {
		case lt.kind == lkMap:
			st, ok := cs[0].Type.(*arrow.StructType)
			if !ok || st.NumFields() != 2 {
				return af, formatErr(ErrMalformed, "schema", -1, "map field %q needs a struct child with 2 fields", f.Name)
			}
			mt := arrow.MapOfFields(st.Field(0), st.Field(1))
			af.Type = mt
		case lt.large:
			af.Type = arrow.LargeListOfField(cs[0])
		default:
			af.Type = arrow.ListOfField(cs[0])
		}
	default:
		af.Type = lt.dt
	}
	return af, nil
}

// DefaultMaxDecodeBytes bounds the memory ReadColumns and ReadColumn may
// allocate, unless ReadOptions says otherwise. All-null pages carry no
// bytes, so without a bound a hostile page length could demand any amount.
const DefaultMaxDecodeBytes = 1 << 30

// ReadOptions tunes ReadColumns.
type ReadOptions struct {
	// MaxDecodeBytes caps the bytes decoding may allocate (0 means
	// DefaultMaxDecodeBytes). Exceeding it fails with ErrTooLarge.
	MaxDecodeBytes int64

	// flatMinBytes overrides the page size from which 2.1+ flat columns
	// take the windowed mini-block path (tests).
	flatMinBytes uint64
}

// budget tracks the bytes a decode may still allocate.
type budget struct{ left int64 }

func (b *budget) take(n uint64, what string) error {
	if n > uint64(b.left) {
		return formatErr(ErrTooLarge, what, -1, "decoding needs more than the allowed memory (%d more bytes requested, %d left)", n, b.left)
	}
	b.left -= int64(n)
	return nil
}

// mulSat multiplies without overflow, saturating at MaxUint64.
func mulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// nullCost estimates the bytes of an all-null array of n values of dt.
func nullCost(dt arrow.DataType, n uint64) uint64 {
	v := n/8 + 1
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return addSat(v, nullCost(t.Elem(), mulSat(n, uint64(max(t.Len(), 0)))))
	case *arrow.FixedSizeBinaryType:
		return addSat(v, mulSat(n, uint64(t.ByteWidth)))
	}
	if w, ok := flatWidth(dt); ok {
		return addSat(v, mulSat(n, uint64(w+7)/8))
	}
	return addSat(v, mulSat(n, 16))
}

// ReadColumns decodes every column of the file into one Arrow record (one
// array per top-level field), allocating at most opts.MaxDecodeBytes
// (DefaultMaxDecodeBytes for the zero ReadOptions). It is ReadRows of every
// row and field; see the package doc for what each version decodes.
func (f *File) ReadColumns(ctx context.Context, opts ReadOptions) (arrow.RecordBatch, error) {
	if f.version != V2_0 {
		return f.ReadRows(ctx, ReadRequest{ReadOptions: opts})
	}
	sch, err := f.schema.ArrowSchema()
	if err != nil {
		return nil, withPath(err, f.path)
	}
	top := f.schema.TopLevel()
	d, err := f.newDecoder(ctx, opts)
	if err != nil {
		return nil, err
	}
	// Step 10: every top-level column holds the file's rows.
	for _, fi := range top {
		if n := f.columns[d.columns[fi]].NumRows(); n != f.numRows {
			return nil, withPath(formatErr(ErrMalformed, "field "+f.schema.Fields[fi].Name, -1,
				"pages of column %d hold %d rows but the file has %d", d.columns[fi], n, f.numRows), f.path)
		}
	}
	cols := make([]arrow.Array, len(top))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, fi := range top {
		a, err := d.field(fi, sch.Field(i).Type)
		if err != nil {
			return nil, withPath(err, f.path)
		}
		if l := a.Len(); uint64(l) != f.numRows {
			a.Release()
			return nil, withPath(formatErr(ErrMalformed, "field "+f.schema.Fields[fi].Name, -1,
				"column holds %d rows but the file has %d", l, f.numRows), f.path)
		}
		cols[i] = a
	}
	return array.NewRecordBatch(sch, cols, int64(f.numRows)), nil
}

// ReadColumn decodes the top-level field with the given name.
func (f *File) ReadColumn(ctx context.Context, name string) (arrow.Array, error) {
	fi := f.schema.FieldByName(name)
	if fi < 0 {
		return nil, fmt.Errorf("datafile: %s: no top-level field %q", f.path, name)
	}
	if f.version != V2_0 {
		rec, err := f.ReadRows(ctx, ReadRequest{Fields: []int{fi}})
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		c := rec.Column(0)
		c.Retain()
		return c, nil
	}
	af, err := f.schema.arrowField(fi, 0)
	if err != nil {
		return nil, withPath(err, f.path)
	}
	d, err := f.newDecoder(ctx, ReadOptions{})
	if err != nil {
		return nil, err
	}
	a, err := d.field(fi, af.Type)
	return a, withPath(err, f.path)
}

// decoder walks the fields of a 2.0 file and decodes their columns.
type decoder struct {
	ctx     context.Context
	f       *File
	columns []int // field index -> first column index
	mem     memory.Allocator
	budget  *budget
}

func (f *File) newDecoder(ctx context.Context, opts ReadOptions) (*decoder, error) {
	if f.version != V2_0 {
		return nil, withPath(formatErr(ErrUnsupported, "file", -1, "decoding %s pages is not supported; only 2.0", f.version), f.path)
	}
	if err := f.LoadColumns(ctx, nil); err != nil {
		return nil, err
	}
	cols, err := f.columnsOfFields()
	if err != nil {
		return nil, withPath(err, f.path)
	}
	max := opts.MaxDecodeBytes
	if max <= 0 {
		max = DefaultMaxDecodeBytes
	}
	return &decoder{ctx: ctx, f: f, columns: cols, mem: memory.DefaultAllocator, budget: &budget{left: max}}, nil
}

// columnsOfFields assigns 2.0 columns to fields in pre-order: one per field,
// except that a string/binary field whose first page is list-encoded (an
// older writer form, spec §6 trap 22) takes two (offsets, bytes).
func (f *File) columnsOfFields() ([]int, error) {
	out := make([]int, len(f.schema.Fields))
	next := 0
	for i := range f.schema.Fields {
		out[i] = next
		if next >= len(f.columns) {
			return nil, formatErr(ErrMalformed, "schema", -1, "field %q has no column: the file has %d columns for %d fields",
				f.schema.Fields[i].Name, len(f.columns), len(f.schema.Fields))
		}
		n := 1
		if lt, _ := parseLogicalType(f.schema.Fields[i].LogicalType); lt.kind == lkBinary && f.firstPageKind(next) == aeList {
			n = 2
		}
		next += n
	}
	if next != len(f.columns) {
		return nil, formatErr(ErrMalformed, "schema", -1, "the %d fields need %d columns but the file has %d",
			len(f.schema.Fields), next, len(f.columns))
	}
	return out, nil
}

func (f *File) firstPageKind(col int) aeKind {
	c := &f.columns[col]
	if len(c.Pages) == 0 {
		return 0
	}
	ae, err := decodeArrayEncoding(c.Pages[0].Encoding.Value, -1, "")
	if err != nil {
		return 0
	}
	return ae.kind
}

func (d *decoder) field(fi int, dt arrow.DataType) (arrow.Array, error) {
	fld := &d.f.schema.Fields[fi]
	col := d.columns[fi]
	lt, err := parseLogicalType(fld.LogicalType)
	if err != nil {
		return nil, err
	}
	switch lt.kind {
	case lkStruct:
		st, ok := dt.(*arrow.StructType)
		if !ok || st.NumFields() != len(fld.Children) {
			return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "struct field does not match its Arrow type %s", dt)
		}
		n := d.f.columns[col].NumRows()
		kids := make([]arrow.ArrayData, len(fld.Children))
		defer func() {
			for _, k := range kids {
				if k != nil {
					k.Release()
				}
			}
		}()
		for i, c := range fld.Children {
			a, err := d.field(c, st.Field(i).Type)
			if err != nil {
				return nil, err
			}
			kids[i] = a.Data()
			kids[i].Retain()
			l := a.Len()
			a.Release()
			if uint64(l) != n {
				return nil, formatErr(ErrMalformed, "field "+d.f.schema.Fields[c].Name, -1, "child of struct %q holds %d rows, the struct %d", fld.Name, l, n)
			}
		}
		if err := d.checkStructPages(col); err != nil {
			return nil, err
		}
		data := array.NewData(dt, int(n), []*memory.Buffer{nil}, kids, 0, 0)
		defer data.Release()
		return array.MakeFromData(data), nil
	case lkList:
		return d.list(fi, col, dt)
	case lkMap:
		return nil, formatErr(ErrUnsupported, "field "+fld.Name, -1, "map columns are not supported in 2.0 files")
	}
	if lt.kind == lkBinary && d.f.firstPageKind(col) == aeList {
		return d.legacyBinary(fld, col, dt)
	}
	return d.column(col, dt)
}

// checkStructPages requires every page of a struct column to be struct{}.
func (d *decoder) checkStructPages(col int) error {
	for pi, p := range d.f.columns[col].Pages {
		sec := fmt.Sprintf("column %d page %d", col, pi)
		ae, err := decodeArrayEncoding(p.Encoding.Value, -1, sec)
		if err != nil {
			return err
		}
		if ae.kind != aeStruct {
			return formatErr(ErrUnsupported, sec, -1, "struct column page is encoded as %s", ae)
		}
	}
	return nil
}

// column decodes every page of one leaf column and concatenates them.
func (d *decoder) column(col int, dt arrow.DataType) (arrow.Array, error) {
	cm := &d.f.columns[col]
	parts := make([]arrow.Array, 0, len(cm.Pages))
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for pi := range cm.Pages {
		a, err := d.page(col, pi, dt)
		if err != nil {
			return nil, err
		}
		parts = append(parts, a)
	}
	return d.concat(parts, dt)
}

func (d *decoder) concat(parts []arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	switch len(parts) {
	case 0:
		return array.MakeArrayOfNull(d.mem, dt, 0), nil
	case 1:
		parts[0].Retain()
		return parts[0], nil
	}
	var size uint64
	for _, p := range parts {
		size = addSat(size, dataSize(p.Data()))
	}
	if err := d.budget.take(size, "concatenating pages"); err != nil {
		return nil, err
	}
	a, err := arrowconcat.Exact(parts, d.mem)
	if err != nil {
		return nil, fmt.Errorf("datafile: concatenating pages: %w", err)
	}
	return a, nil
}

// dataSize sums the buffer sizes of d and its children.
func dataSize(d arrow.ArrayData) uint64 {
	var n uint64
	for _, b := range d.Buffers() {
		if b != nil {
			n += uint64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataSize(c)
	}
	return n
}

// pageDecoder decodes one page.
type pageDecoder struct {
	sec    string
	off    int64
	bufs   [][]byte
	mem    memory.Allocator
	budget *budget
}

func (d *decoder) loadPage(col, pi int) (*arrayEncoding, *pageDecoder, error) {
	p := &d.f.columns[col].Pages[pi]
	sec := fmt.Sprintf("column %d page %d", col, pi)
	ae, err := decodeArrayEncoding(p.Encoding.Value, -1, sec+" encoding")
	if err != nil {
		return nil, nil, err
	}
	if p.Length > maxPageRows {
		return nil, nil, formatErr(ErrMalformed, sec, -1, "page length %d exceeds %d rows", p.Length, uint64(maxPageRows))
	}
	pd := &pageDecoder{sec: sec, off: -1, bufs: make([][]byte, len(p.Buffers)), mem: d.mem, budget: d.budget}
	if len(p.Buffers) > 0 {
		pd.off = int64(p.Buffers[0].Pos)
	}
	for i, r := range p.Buffers {
		if err := d.budget.take(r.Len, sec); err != nil {
			return nil, nil, err
		}
		b, err := d.f.readRange(d.ctx, int64(r.Pos), int64(r.Len))
		if err != nil {
			return nil, nil, err
		}
		// Copy so every buffer is 8-byte aligned and owned by the array.
		c := make([]byte, len(b), len(b)+8)
		copy(c, b)
		pd.bufs[i] = c
	}
	return ae, pd, nil
}

func (d *decoder) page(col, pi int, dt arrow.DataType) (arrow.Array, error) {
	ae, pd, err := d.loadPage(col, pi)
	if err != nil {
		return nil, err
	}
	n := d.f.columns[col].Pages[pi].Length
	data, err := pd.decode(ae, n, dt, 0)
	if err != nil {
		return nil, err
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

func (pd *pageDecoder) errf(sentinel error, format string, args ...any) error {
	return formatErr(sentinel, pd.sec, pd.off, format, args...)
}

func (pd *pageDecoder) buffer(ae *arrayEncoding) ([]byte, error) {
	if !ae.hasBuf {
		return nil, pd.errf(ErrMalformed, "%s has no buffer", ae.kind)
	}
	if ae.buf.typ != bufferTypePage {
		return nil, pd.errf(ErrUnsupported, "%s refers to a buffer of type %d; only page buffers are supported", ae.kind, ae.buf.typ)
	}
	if int(ae.buf.index) >= len(pd.bufs) || ae.buf.index > math.MaxInt32 {
		return nil, pd.errf(ErrMalformed, "%s refers to buffer %d but the page has %d", ae.kind, ae.buf.index, len(pd.bufs))
	}
	return pd.bufs[ae.buf.index], nil
}

// flatBytes returns the bytes of a flat encoding holding n values of the
// given bit width (checked against the encoding).
func (pd *pageDecoder) flatBytes(ae *arrayEncoding, n uint64, width int) ([]byte, error) {
	if ae.kind != aeFlat {
		return nil, pd.errf(ErrUnsupported, "%s encoding where flat{%d} was expected", ae, width)
	}
	if ae.bits != uint64(width) {
		return nil, pd.errf(ErrMalformed, "flat has %d bits per value, the type needs %d", ae.bits, width)
	}
	if ae.compression != "" {
		return nil, pd.errf(ErrUnsupported, "flat buffer compressed with %q", ae.compression)
	}
	b, err := pd.buffer(ae)
	if err != nil {
		return nil, err
	}
	hi, lo := bits.Mul64(n, uint64(width))
	need := lo/8 + boolToU64(lo%8 != 0)
	if hi != 0 || uint64(len(b)) < need {
		return nil, pd.errf(ErrTruncated, "flat buffer %d holds %d bytes, %d values of %d bits need %d", ae.buf.index, len(b), n, width, need)
	}
	return b[:need], nil
}

func boolToU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// bitmap decodes a validity/boolean encoding into an n-bit bitmap.
func (pd *pageDecoder) bitmap(ae *arrayEncoding, n uint64) ([]byte, error) {
	if ae.kind == aeNullable && ae.nullKind == nullNone && ae.values != nil {
		ae = ae.values
	}
	return pd.flatBytes(ae, n, 1)
}

// decode turns an encoding tree into Arrow data of type dt and length n.
func (pd *pageDecoder) decode(ae *arrayEncoding, n uint64, dt arrow.DataType, depth int) (arrow.ArrayData, error) {
	if depth > maxEncodingDepth {
		return nil, pd.errf(ErrMalformed, "encoding nested too deeply")
	}
	if n > 1<<40 {
		return nil, pd.errf(ErrMalformed, "%d values in one page", n)
	}
	switch ae.kind {
	case aeNullable:
		switch ae.nullKind {
		case nullAll:
			if err := pd.budget.take(nullCost(dt, n), pd.sec); err != nil {
				return nil, err
			}
			a := array.MakeArrayOfNull(pd.mem, dt, int(n))
			defer a.Release()
			d := a.Data()
			d.Retain()
			return d, nil
		case nullNone:
			if ae.values == nil {
				return nil, pd.errf(ErrMalformed, "nullable no_nulls has no values")
			}
			return pd.decode(ae.values, n, dt, depth+1)
		case nullSome:
			if ae.values == nil || ae.validity == nil {
				return nil, pd.errf(ErrMalformed, "nullable some_nulls lacks validity or values")
			}
			valid, err := pd.bitmap(ae.validity, n)
			if err != nil {
				return nil, err
			}
			inner, err := pd.decode(ae.values, n, dt, depth+1)
			if err != nil {
				return nil, err
			}
			defer inner.Release()
			return withValidity(inner, valid), nil
		}
		return nil, pd.errf(ErrMalformed, "nullable encoding has no variant")
	case aeBinary:
		return pd.binary(ae, n, dt)
	case aeFixedSizeList:
		ft, ok := dt.(*arrow.FixedSizeListType)
		if !ok || ae.items == nil {
			return nil, pd.errf(ErrMalformed, "fixed_size_list encoding for type %s", dt)
		}
		if ae.dim != uint32(ft.Len()) {
			return nil, pd.errf(ErrMalformed, "fixed_size_list dimension %d, the type has %d", ae.dim, ft.Len())
		}
		items, err := pd.decode(ae.items, n*uint64(ae.dim), ft.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		defer items.Release()
		return array.NewData(dt, int(n), []*memory.Buffer{nil}, []arrow.ArrayData{items}, 0, 0), nil
	case aeDictionary:
		return pd.dictionary(ae, n, dt, depth)
	case aeFixedSizeBinary:
		ft, ok := dt.(*arrow.FixedSizeBinaryType)
		if !ok || ae.bytes == nil || int(ae.byteWidth) != ft.ByteWidth {
			return nil, pd.errf(ErrMalformed, "fixed_size_binary encoding for type %s", dt)
		}
		b, err := pd.flatBytes(ae.bytes, n*uint64(ae.byteWidth), 8)
		if err != nil {
			return nil, err
		}
		return array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0), nil
	case aeFlat:
		w, ok := flatWidthForRead(dt)
		if !ok {
			return nil, pd.errf(ErrMalformed, "flat encoding for non fixed-width type %s", dt)
		}
		b, err := pd.flatBytes(ae, n, w)
		if err != nil {
			return nil, err
		}
		if dt.ID() == arrow.NULL {
			return array.NewData(dt, int(n), []*memory.Buffer{nil}, nil, int(n), 0), nil
		}
		return array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0), nil
	}
	return nil, pd.errf(ErrUnsupported, "%s encoding is not supported", ae.kind)
}

func flatWidthForRead(dt arrow.DataType) (int, bool) {
	if ft, ok := dt.(*arrow.FixedSizeBinaryType); ok {
		return 8 * ft.ByteWidth, true
	}
	return flatWidth(dt)
}

// withValidity returns a copy of d whose validity bitmap is valid (n bits).
// For a nested type the child data is kept.
func withValidity(d arrow.ArrayData, valid []byte) arrow.ArrayData {
	n := d.Len()
	nulls := n - bitutil.CountSetBits(valid, 0, n)
	bufs := append([]*memory.Buffer(nil), d.Buffers()...)
	if len(bufs) == 0 {
		bufs = []*memory.Buffer{nil}
	}
	if old := bufs[0]; old != nil && d.NullN() > 0 {
		// combine with an inner validity (AND)
		comb := make([]byte, len(valid))
		copy(comb, valid)
		ob := old.Bytes()
		for i := 0; i < n; i++ {
			if !bitutil.BitIsSet(ob, d.Offset()+i) {
				bitutil.ClearBit(comb, i)
			}
		}
		valid = comb
		nulls = n - bitutil.CountSetBits(valid, 0, n)
	}
	bufs[0] = memory.NewBufferBytes(valid)
	var out *array.Data
	if d.DataType().ID() == arrow.DICTIONARY {
		out = array.NewDataWithDictionary(d.DataType(), n, bufs, nulls, d.Offset(), d.Dictionary().(*array.Data))
	} else {
		out = array.NewData(d.DataType(), n, bufs, d.Children(), nulls, d.Offset())
	}
	return out
}

// binary decodes binary{indices, bytes, null_adjustment} (spec §4.5).
func (pd *pageDecoder) binary(ae *arrayEncoding, n uint64, dt arrow.DataType) (arrow.ArrayData, error) {
	large := false
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		large = true
	default:
		return nil, pd.errf(ErrMalformed, "binary encoding for type %s", dt)
	}
	if ae.indices == nil || ae.bytes == nil {
		return nil, pd.errf(ErrMalformed, "binary encoding lacks indices or bytes")
	}
	if ae.nullAdj == 0 {
		return nil, pd.errf(ErrMalformed, "binary null_adjustment is 0")
	}
	ie := ae.indices
	if ie.kind == aeNullable && ie.nullKind == nullNone && ie.values != nil {
		ie = ie.values
	}
	ib, err := pd.flatBytes(ie, n, 64)
	if err != nil {
		return nil, err
	}
	if err := pd.budget.take(16*(n+1)+n/8+1, pd.sec); err != nil { // offsets, ends, validity
		return nil, err
	}
	// The byte count is implied by the indices: the last end offset.
	var total uint64
	var valid []byte
	nulls := 0
	for i := uint64(0); i < n; i++ {
		v := binary.LittleEndian.Uint64(ib[8*i:])
		if v >= ae.nullAdj {
			v -= ae.nullAdj
			if valid == nil {
				valid = make([]byte, bitutil.BytesForBits(int64(n)))
				bitutil.SetBitsTo(valid, 0, int64(i), true)
			}
			nulls++
		} else if valid != nil {
			bitutil.SetBit(valid, int(i))
		}
		if v < total {
			return nil, pd.errf(ErrMalformed, "binary index %d (row %d) goes backwards from %d", v, i, total)
		}
		total = v
	}
	var raw []byte
	if total > 0 {
		bb, err := pd.flatBytes(ae.bytes, total, 8)
		if err != nil {
			return nil, err
		}
		raw = bb
	} else if ae.bytes.kind != aeFlat {
		return nil, pd.errf(ErrUnsupported, "binary bytes encoded as %s", ae.bytes)
	}
	if !large && total > math.MaxInt32 {
		return nil, pd.errf(ErrUnsupported, "page holds %d bytes of string data, more than 32-bit offsets allow", total)
	}
	var offs []byte
	if large {
		offs = make([]byte, 8*(n+1))
	} else {
		offs = make([]byte, 4*(n+1))
	}
	for i := uint64(0); i < n; i++ {
		v := binary.LittleEndian.Uint64(ib[8*i:])
		if v >= ae.nullAdj {
			v -= ae.nullAdj
		}
		if large {
			binary.LittleEndian.PutUint64(offs[8*(i+1):], v)
		} else {
			binary.LittleEndian.PutUint32(offs[4*(i+1):], uint32(v))
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	if err := checkUTF8(dt, ends(ib, n, ae.nullAdj), raw); err != nil {
		return nil, pd.errf(ErrMalformed, "%v", err)
	}
	return array.NewData(dt, int(n), []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(raw)}, nil, nulls, 0), nil
}

// ends returns the end offsets encoded in binary indices (null adjustment removed).
func ends(ib []byte, n, adj uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		v := binary.LittleEndian.Uint64(ib[8*i:])
		if v >= adj {
			v -= adj
		}
		out[i] = v
	}
	return out
}

// checkUTF8 requires every string value to be valid UTF-8, as Arrow string
// arrays must be; binary types are not checked.
func checkUTF8(dt arrow.DataType, ends []uint64, raw []byte) error {
	if dt.ID() != arrow.STRING && dt.ID() != arrow.LARGE_STRING {
		return nil
	}
	var start uint64
	for i, e := range ends {
		if !utf8.Valid(raw[start:e]) {
			return fmt.Errorf("string value %d is not valid UTF-8", i)
		}
		start = e
	}
	return nil
}

// dictionary decodes dictionary{indices, items, num_dictionary_items}.
func (pd *pageDecoder) dictionary(ae *arrayEncoding, n uint64, dt arrow.DataType, depth int) (arrow.ArrayData, error) {
	if ae.indices == nil || ae.items == nil {
		return nil, pd.errf(ErrMalformed, "dictionary encoding lacks indices or items")
	}
	t, ok := dt.(*arrow.DictionaryType)
	if !ok {
		return pd.dictionaryValues(ae, n, dt, depth)
	}
	items, err := pd.decode(ae.items, uint64(ae.numDictItems), t.ValueType, depth+1)
	if err != nil {
		return nil, err
	}
	defer items.Release()
	// Indices are stored as unsigned integers of some width; convert to the key type.
	ib, iw, err := pd.dictIndices(ae, n)
	if err != nil {
		return nil, err
	}
	kw := t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
	if err := pd.budget.take(n*uint64(kw), pd.sec); err != nil {
		return nil, err
	}
	keys := make([]byte, int(n)*kw)
	for i := 0; i < int(n); i++ {
		v := dictIndex(ib, iw, i)
		if v >= uint64(ae.numDictItems) {
			return nil, pd.errf(ErrMalformed, "dictionary index %d (row %d) >= %d items", v, i, ae.numDictItems)
		}
		for j := 0; j < kw; j++ {
			keys[i*kw+j] = byte(v >> (8 * j))
		}
	}
	return array.NewDataWithDictionary(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(keys)}, 0, 0, items.(*array.Data)), nil
}

// dictIndices returns the bytes of a dictionary's indices (unsigned
// little-endian integers of iw bytes each, flat, optionally wrapped in
// nullable{no_nulls}).
func (pd *pageDecoder) dictIndices(ae *arrayEncoding, n uint64) (ib []byte, iw int, err error) {
	ie := ae.indices
	if ie.kind == aeNullable && ie.nullKind == nullNone && ie.values != nil {
		ie = ie.values
	}
	if ie.kind != aeFlat || ie.bits%8 != 0 || ie.bits == 0 || ie.bits > 64 {
		return nil, 0, pd.errf(ErrUnsupported, "dictionary indices encoded as %s", ie)
	}
	ib, err = pd.flatBytes(ie, n, int(ie.bits))
	return ib, int(ie.bits / 8), err
}

// dictIndex reads index i of iw-byte little-endian indices.
func dictIndex(ib []byte, iw, i int) uint64 {
	var v uint64
	for j := iw - 1; j >= 0; j-- {
		v = v<<8 | uint64(ib[i*iw+j])
	}
	return v
}

// dictionaryValues decodes the dictionary encoding Lance's 2.0 writer
// chooses for low-cardinality string columns whose Arrow type is not a
// dictionary (spec §4.4): items holds the distinct values (no nulls), and
// index 0 stands for a null row while index k >= 1 selects item k-1
// (observed in Lance 12 storage-2.0 files, with and without nulls). The
// result is a plain array of dt.
func (pd *pageDecoder) dictionaryValues(ae *arrayEncoding, n uint64, dt arrow.DataType, depth int) (arrow.ArrayData, error) {
	large := false
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		large = true
	default:
		return nil, pd.errf(ErrMalformed, "dictionary encoding for type %s", dt)
	}
	itemsData, err := pd.decode(ae.items, uint64(ae.numDictItems), dt, depth+1)
	if err != nil {
		return nil, err
	}
	defer itemsData.Release()
	if itemsData.NullN() > 0 {
		return nil, pd.errf(ErrMalformed, "dictionary items of a %s column hold %d nulls (index 0 is the null)", dt, itemsData.NullN())
	}
	items := array.MakeFromData(itemsData)
	defer items.Release()
	item := func(k int) []byte {
		switch a := items.(type) {
		case *array.String:
			return []byte(a.Value(k))
		case *array.LargeString:
			return []byte(a.Value(k))
		case *array.Binary:
			return a.Value(k)
		case *array.LargeBinary:
			return a.Value(k)
		}
		return nil
	}
	ib, iw, err := pd.dictIndices(ae, n)
	if err != nil {
		return nil, err
	}
	ow := 4
	if large {
		ow = 8
	}
	if err := pd.budget.take(uint64(ow)*(n+1)+n/8+1, pd.sec); err != nil { // offsets, validity
		return nil, err
	}
	var total uint64
	nulls := 0
	for i := 0; i < int(n); i++ {
		v := dictIndex(ib, iw, i)
		switch {
		case v == 0:
			nulls++
		case v > uint64(ae.numDictItems):
			return nil, pd.errf(ErrMalformed, "dictionary index %d (row %d) > %d items (index 0 is the null)", v, i, ae.numDictItems)
		default:
			total += uint64(len(item(int(v - 1))))
		}
	}
	if !large && total > math.MaxInt32 {
		return nil, pd.errf(ErrUnsupported, "page holds %d bytes of string data, more than 32-bit offsets allow", total)
	}
	if err := pd.budget.take(total, pd.sec); err != nil {
		return nil, err
	}
	offs := make([]byte, uint64(ow)*(n+1))
	raw := make([]byte, 0, total)
	var valid []byte
	if nulls > 0 {
		valid = make([]byte, bitutil.BytesForBits(int64(n)))
	}
	for i := 0; i < int(n); i++ {
		if v := dictIndex(ib, iw, i); v != 0 {
			raw = append(raw, item(int(v-1))...)
			if valid != nil {
				bitutil.SetBit(valid, i)
			}
		}
		if large {
			binary.LittleEndian.PutUint64(offs[8*(i+1):], uint64(len(raw)))
		} else {
			binary.LittleEndian.PutUint32(offs[4*(i+1):], uint32(len(raw)))
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	return array.NewData(dt, int(n), []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(raw)}, nil, nulls, 0), nil
}

// list decodes a 2.0 list field: an offsets column then the items field.
func (d *decoder) list(fi, col int, dt arrow.DataType) (arrow.Array, error) {
	fld := &d.f.schema.Fields[fi]
	var elem arrow.DataType
	large := false
	switch t := dt.(type) {
	case *arrow.ListType:
		elem = t.Elem()
	case *arrow.LargeListType:
		elem, large = t.Elem(), true
	default:
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list field has Arrow type %s", dt)
	}
	if len(fld.Children) != 1 {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list has %d children, want 1", len(fld.Children))
	}
	ends, valid, nulls, err := d.listOffsets(col)
	if err != nil {
		return nil, err
	}
	items, err := d.field(fld.Children[0], elem)
	if err != nil {
		return nil, err
	}
	defer items.Release()
	n := len(ends)
	if n > 0 && ends[n-1] != uint64(items.Len()) {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list offsets reach %d items but the items column has %d", ends[n-1], items.Len())
	}
	var offs []byte
	if large {
		offs = make([]byte, 8*(n+1))
		for i, e := range ends {
			binary.LittleEndian.PutUint64(offs[8*(i+1):], e)
		}
	} else {
		if n > 0 && ends[n-1] > math.MaxInt32 {
			return nil, formatErr(ErrUnsupported, "field "+fld.Name, -1, "list has %d items, more than 32-bit offsets allow", ends[n-1])
		}
		offs = make([]byte, 4*(n+1))
		for i, e := range ends {
			binary.LittleEndian.PutUint32(offs[4*(i+1):], uint32(e))
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	data := array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(offs)}, []arrow.ArrayData{items.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// listOffsets decodes the pages of a list offsets column into absolute end
// offsets (each page's offsets are relative to the items of that page).
func (d *decoder) listOffsets(col int) (ends []uint64, valid []byte, nulls int, err error) {
	cm := &d.f.columns[col]
	var base uint64
	total := cm.NumRows()
	if total > maxPageRows {
		return nil, nil, 0, formatErr(ErrMalformed, fmt.Sprintf("column %d", col), -1, "%d rows", total)
	}
	// ends, validity and the Arrow offsets built from them
	if err := d.budget.take(16*total+total/8+16, fmt.Sprintf("column %d", col)); err != nil {
		return nil, nil, 0, err
	}
	for pi := range cm.Pages {
		ae, pd, err := d.loadPage(col, pi)
		if err != nil {
			return nil, nil, 0, err
		}
		if ae.kind != aeList || ae.offsets == nil {
			return nil, nil, 0, pd.errf(ErrUnsupported, "list column page encoded as %s", ae)
		}
		if ae.nullAdj == 0 {
			return nil, nil, 0, pd.errf(ErrMalformed, "list null_offset_adjustment is 0")
		}
		oe := ae.offsets
		if oe.kind == aeNullable && oe.nullKind == nullNone && oe.values != nil {
			oe = oe.values
		}
		n := cm.Pages[pi].Length
		ob, err := pd.flatBytes(oe, n, 64)
		if err != nil {
			return nil, nil, 0, err
		}
		prev := uint64(0)
		for i := uint64(0); i < n; i++ {
			v := binary.LittleEndian.Uint64(ob[8*i:])
			row := len(ends)
			if v >= ae.nullAdj {
				v -= ae.nullAdj
				if valid == nil {
					valid = make([]byte, bitutil.BytesForBits(int64(total)))
					bitutil.SetBitsTo(valid, 0, int64(row), true)
				}
				nulls++
			} else if valid != nil {
				bitutil.SetBit(valid, row)
			}
			if v < prev || v > ae.numItems {
				return nil, nil, 0, pd.errf(ErrMalformed, "list offset %d (row %d) out of order or past %d items", v, i, ae.numItems)
			}
			prev = v
			ends = append(ends, base+v)
		}
		base += ae.numItems
	}
	return ends, valid, nulls, nil
}

// legacyBinary decodes a string/binary field stored by old 2.0 writers as a
// list column of offsets plus a u8 items column (spec §6 trap 22).
func (d *decoder) legacyBinary(fld *Field, col int, dt arrow.DataType) (arrow.Array, error) {
	ends, valid, nulls, err := d.listOffsets(col)
	if err != nil {
		return nil, err
	}
	bytesArr, err := d.column(col+1, arrow.PrimitiveTypes.Uint8)
	if err != nil {
		return nil, err
	}
	defer bytesArr.Release()
	raw := bytesArr.(*array.Uint8).Uint8Values()
	n := len(ends)
	if n > 0 && ends[n-1] != uint64(len(raw)) {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "offsets reach %d bytes but the bytes column has %d", ends[n-1], len(raw))
	}
	large := dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY
	var offs []byte
	if large {
		offs = make([]byte, 8*(n+1))
		for i, e := range ends {
			binary.LittleEndian.PutUint64(offs[8*(i+1):], e)
		}
	} else {
		if n > 0 && ends[n-1] > math.MaxInt32 {
			return nil, formatErr(ErrUnsupported, "field "+fld.Name, -1, "%d bytes exceed 32-bit offsets", ends[n-1])
		}
		offs = make([]byte, 4*(n+1))
		for i, e := range ends {
			binary.LittleEndian.PutUint32(offs[4*(i+1):], uint32(e))
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	if err := checkUTF8(dt, ends, raw); err != nil {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
	}
	data := array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(offs), memory.NewBufferBytes(append([]byte(nil), raw...))}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
