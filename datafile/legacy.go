package datafile

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/internal/arrowconcat"
)

// Legacy v1 data files (footer 0.0/0.1/0.2; manifest data_format "0.1").
//
// Such a file has no schema of its own: its 16-byte tail is
// [u64 metadata position][u16 major][u16 minor]["LANC"]; the metadata
// (lance.file.Metadata) gives the row offsets of the file's batches and the
// position of a page table of (position i64, length i64) per field id (from
// the smallest to the largest id the file stores) and batch. Pages per
// field type: fixed-width values back to back (bool: a bitmap; no nulls are
// stored); strings/binary: length+1 i64 absolute file positions, value i is
// [pos[i], pos[i+1]) and, in a nullable field, an empty value is null;
// list/large_list: length+1 i32/i64 positions into the child field's values
// of the same batch; dictionary: plain indices with the values stored in
// the data file at the field's Dictionary (offset, length), string-encoded;
// struct fields have no page (their children carry the rows); null fields
// only a length.

// V0_1 is the version of legacy v1 files (footer 0.0, 0.1 or 0.2) opened
// with OpenOptions.LegacyFields.
const V0_1 FileVersion = 0x10

// legacyInfo is what a legacy file adds to File.
type legacyInfo struct {
	batchOffsets []uint64 // len = batches + 1
	minID        int32
	numIDs       int
	pageTable    []byte // numIDs × batches × 16 bytes
	dicts        map[int32]BufferRange
	manifest     io.ReaderAt
}

// openLegacy opens a legacy v1 data file with the table fields the caller
// passes (spec: the manifest's schema; the file has none).
func openLegacy(ctx context.Context, src source, size int64, opts OpenOptions, le *LegacyFileError) (*File, error) {
	const sec = "legacy metadata"
	if size < 16 {
		return nil, formatErr(ErrTruncated, "file", 0, "%d bytes is too short for a legacy Lance file", size)
	}
	tail, err := src.readRange(ctx, size-16, 16)
	if err != nil {
		return nil, err
	}
	mpos := binary.LittleEndian.Uint64(tail)
	if mpos >= uint64(size-16) || uint64(size-16)-mpos > maxMetadataSize {
		return nil, formatErr(ErrMalformed, "footer", size-16, "metadata position %d outside the file of %d bytes", mpos, size)
	}
	meta, err := src.readRange(ctx, int64(mpos), size-16-int64(mpos))
	if err != nil {
		return nil, err
	}
	// The metadata is a u32-length-prefixed protobuf message.
	if len(meta) < 4 || uint64(binary.LittleEndian.Uint32(meta)) > uint64(len(meta)-4) {
		return nil, formatErr(ErrMalformed, sec, int64(mpos), "metadata length prefix exceeds the %d bytes before the footer", len(meta))
	}
	meta = meta[4 : 4+binary.LittleEndian.Uint32(meta)]
	mpos += 4
	li := &legacyInfo{dicts: map[int32]BufferRange{}, manifest: opts.LegacyManifest}
	var ptPos uint64
	err = pbWalk(meta, int64(mpos), sec, func(f pbField) error {
		switch f.num {
		case 2:
			if f.typ == protowire.BytesType {
				b := f.buf
				for len(b) > 0 {
					v, n := protowire.ConsumeVarint(b)
					if n < 0 {
						return formatErr(ErrMalformed, sec, int64(mpos), "bad packed batch_offsets")
					}
					li.batchOffsets = append(li.batchOffsets, uint64(int32(v)))
					b = b[n:]
				}
			} else {
				li.batchOffsets = append(li.batchOffsets, uint64(int32(f.val)))
			}
		case 3:
			ptPos = f.val
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(li.batchOffsets) == 0 || li.batchOffsets[0] != 0 {
		li.batchOffsets = append([]uint64{0}, li.batchOffsets...)
	}
	for i := 1; i < len(li.batchOffsets); i++ {
		if li.batchOffsets[i] < li.batchOffsets[i-1] || li.batchOffsets[i] > math.MaxInt32 {
			return nil, formatErr(ErrMalformed, sec, int64(mpos), "batch offsets %v are not increasing", li.batchOffsets)
		}
	}
	// The schema: the table fields this file stores, in the table's order.
	ids := map[int32]bool{}
	for _, id := range opts.LegacyFieldIDs {
		ids[id] = true
	}
	f := &File{src: src, size: size, version: V0_1, legacy: li, tailStart: size}
	var minID, maxID int32 = math.MaxInt32, math.MinInt32
	for _, pf := range opts.LegacyFields {
		if len(ids) > 0 && !ids[pf.GetId()] {
			continue
		}
		fld := Field{Name: pf.GetName(), ID: pf.GetId(), ParentID: pf.GetParentId(), LogicalType: pf.GetLogicalType(),
			Nullable: pf.GetNullable(), Encoding: int32(pf.GetEncoding())}
		if len(pf.GetMetadata()) > 0 {
			fld.Metadata = map[string]string{}
			for k, v := range pf.GetMetadata() {
				fld.Metadata[k] = string(v)
			}
		}
		if d := pf.GetDictionary(); d != nil && d.GetLength() > 0 {
			li.dicts[pf.GetId()] = BufferRange{Pos: uint64(d.GetOffset()), Len: uint64(d.GetLength())}
		}
		f.schema.Fields = append(f.schema.Fields, fld)
		minID, maxID = min(minID, pf.GetId()), max(maxID, pf.GetId())
	}
	if len(f.schema.Fields) == 0 {
		// None of the table's fields is stored here (all dropped): a file
		// of rows without columns.
		minID, maxID = 0, -1
	}
	// A field whose parent is not stored here becomes top-level.
	have := map[int32]bool{}
	for _, fl := range f.schema.Fields {
		have[fl.ID] = true
	}
	for i := range f.schema.Fields {
		if !have[f.schema.Fields[i].ParentID] {
			f.schema.Fields[i].ParentID = -1
		}
	}
	if err := linkFields(&f.schema, -1); err != nil {
		return nil, err
	}
	li.minID = minID
	li.numIDs = int(maxID-minID) + 1
	nb := len(li.batchOffsets) - 1
	ptLen := uint64(li.numIDs) * uint64(nb) * 16
	if ptPos > uint64(size) || ptLen > uint64(size)-ptPos || ptLen > maxMetadataSize {
		return nil, formatErr(ErrMalformed, "page table", int64(ptPos), "page table of %d fields × %d batches does not fit in the file", li.numIDs, nb)
	}
	if li.pageTable, err = src.readRange(ctx, int64(ptPos), int64(ptLen)); err != nil {
		return nil, err
	}
	f.numRows = li.batchOffsets[nb]
	f.footer = Footer{Major: le.Major, Minor: le.Minor}
	return f, nil
}

// page returns the (position, length) of field id's page in batch b.
func (li *legacyInfo) page(id int32, b int) (uint64, uint64, bool) {
	i := int(id - li.minID)
	if i < 0 || i >= li.numIDs {
		return 0, 0, false
	}
	nb := len(li.batchOffsets) - 1
	e := (i*nb + b) * 16
	pos := int64(binary.LittleEndian.Uint64(li.pageTable[e:]))
	n := int64(binary.LittleEndian.Uint64(li.pageTable[e+8:]))
	if pos < 0 || n < 0 {
		return 0, 0, false
	}
	return uint64(pos), uint64(n), true
}

type legacyReader struct {
	ctx    context.Context
	f      *File
	budget *budget
	mem    memory.Allocator
}

func (r *legacyReader) read(off, n uint64, what string) ([]byte, error) {
	if end, ok := (BufferRange{Pos: off, Len: n}).End(); !ok || end > uint64(r.f.size) {
		return nil, formatErr(ErrMalformed, what, int64(off), "[%d, +%d) is past the end of the file (%d bytes)", off, n, r.f.size)
	}
	if err := r.budget.take(n, what); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b, err := r.f.readRange(r.ctx, int64(off), int64(n))
	if err != nil {
		return nil, err
	}
	c := make([]byte, len(b))
	copy(c, b)
	return c, nil
}

// readRowsLegacy is ReadRows for legacy files.
func (f *File) readRowsLegacy(ctx context.Context, fields []int, afs []arrow.Field, ranges []RowRange, opts ReadOptions) ([]arrow.Array, error) {
	max := opts.MaxDecodeBytes
	if max <= 0 {
		max = DefaultMaxDecodeBytes
	}
	r := &legacyReader{ctx: ctx, f: f, budget: &budget{left: max}, mem: memory.DefaultAllocator}
	li := f.legacy
	var cols []arrow.Array
	fail := func(err error) ([]arrow.Array, error) {
		for _, c := range cols {
			c.Release()
		}
		return nil, withPath(err, f.path)
	}
	for i, fi := range fields {
		var parts []arrow.Array
		for _, rg := range ranges {
			for b := 0; b+1 < len(li.batchOffsets); b++ {
				s, e := li.batchOffsets[b], li.batchOffsets[b+1]
				lo, hi := max64(rg.Start, s), min(rg.End, e)
				if lo >= hi {
					continue
				}
				a, err := r.field(fi, afs[i].Type, b, lo-s, hi-s)
				if err != nil {
					for _, p := range parts {
						p.Release()
					}
					return fail(err)
				}
				parts = append(parts, a)
			}
		}
		var col arrow.Array
		switch len(parts) {
		case 0:
			col = array.MakeArrayOfNull(r.mem, afs[i].Type, 0)
		case 1:
			col = parts[0]
		default:
			c, err := arrowconcat.Exact(parts, r.mem)
			for _, p := range parts {
				p.Release()
			}
			if err != nil {
				return fail(err)
			}
			col = c
		}
		cols = append(cols, col)
	}
	return cols, nil
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// field reads rows [lo, hi) of batch b of field fi.
func (r *legacyReader) field(fi int, dt arrow.DataType, b int, lo, hi uint64) (arrow.Array, error) {
	fld := &r.f.schema.Fields[fi]
	sec := fmt.Sprintf("field %q (id %d) batch %d", fld.Name, fld.ID, b)
	n := hi - lo
	switch t := dt.(type) {
	case *arrow.NullType:
		return array.NewNull(int(n)), nil
	case *arrow.StructType:
		kids := make([]arrow.ArrayData, len(fld.Children))
		defer func() {
			for _, k := range kids {
				if k != nil {
					k.Release()
				}
			}
		}()
		for i, c := range fld.Children {
			a, err := r.field(c, t.Field(i).Type, b, lo, hi)
			if err != nil {
				return nil, err
			}
			kids[i] = a.Data()
			kids[i].Retain()
			a.Release()
		}
		d := array.NewData(dt, int(n), []*memory.Buffer{nil}, kids, 0, 0)
		defer d.Release()
		return array.MakeFromData(d), nil
	}
	pos, plen, ok := r.f.legacy.page(fld.ID, b)
	if !ok {
		return nil, formatErr(ErrMalformed, sec, -1, "no page in the page table")
	}
	if hi > plen {
		return nil, formatErr(ErrMalformed, sec, int64(pos), "rows [%d, %d) past the page's %d", lo, hi, plen)
	}
	switch t := dt.(type) {
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		return r.binary(dt, pos, lo, hi, fld.Nullable, sec)
	case *arrow.DictionaryType:
		dr, ok := r.f.legacy.dicts[fld.ID]
		if !ok {
			return nil, formatErr(ErrMalformed, sec, -1, "dictionary field without dictionary values")
		}
		if r.f.legacy.manifest == nil {
			return nil, formatErr(ErrUnsupported, sec, -1, "legacy dictionary values are in the manifest file: pass OpenOptions.LegacyManifest")
		}
		mr := &legacyReader{ctx: r.ctx, f: &File{src: readerAtSource{r: r.f.legacy.manifest}, size: math.MaxInt64, tailStart: math.MaxInt64}, budget: r.budget, mem: r.mem}
		vals, err := mr.binary(t.ValueType, dr.Pos, 0, dr.Len, false, sec+" dictionary")
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		w, _ := fixedBits(t.IndexType)
		ib, err := r.read(pos+lo*w/8, n*w/8, sec)
		if err != nil {
			return nil, err
		}
		id := array.NewData(t.IndexType, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(ib)}, nil, 0, 0)
		defer id.Release()
		idx := array.MakeFromData(id)
		defer idx.Release()
		for i := 0; i < int(n); i++ {
			k, ok := dictIndexAt(idx, i)
			if !ok || k >= vals.Len() {
				return nil, formatErr(ErrMalformed, sec, int64(pos), "dictionary index %d of %d values", k, vals.Len())
			}
		}
		return array.NewDictionaryArray(t, idx, vals), nil
	case *arrow.ListType, *arrow.LargeListType:
		w := uint64(4)
		var elem arrow.DataType
		if lt, ok := t.(*arrow.ListType); ok {
			elem = lt.Elem()
		} else {
			w, elem = 8, t.(*arrow.LargeListType).Elem()
		}
		pb, err := r.read(pos+lo*w, (n+1)*w, sec)
		if err != nil {
			return nil, err
		}
		at := func(i uint64) uint64 {
			if w == 4 {
				return uint64(binary.LittleEndian.Uint32(pb[4*i:]))
			}
			return binary.LittleEndian.Uint64(pb[8*i:])
		}
		p0 := at(0)
		offs := make([]byte, (n+1)*w)
		for i := uint64(0); i <= n; i++ {
			p := at(i)
			if p < p0 || (i > 0 && p < at(i-1)) || p-p0 > math.MaxInt32 {
				return nil, formatErr(ErrMalformed, sec, int64(pos), "list positions decrease")
			}
			if w == 4 {
				binary.LittleEndian.PutUint32(offs[4*i:], uint32(p-p0))
			} else {
				binary.LittleEndian.PutUint64(offs[8*i:], p-p0)
			}
		}
		if len(fld.Children) != 1 {
			return nil, formatErr(ErrMalformed, sec, -1, "list field with %d children", len(fld.Children))
		}
		child, err := r.field(fld.Children[0], elem, b, p0, at(n))
		if err != nil {
			return nil, err
		}
		defer child.Release()
		d := array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(offs)}, []arrow.ArrayData{child.Data()}, 0, 0)
		defer d.Release()
		return array.MakeFromData(d), nil
	case *arrow.FixedSizeListType:
		ew, ok := fixedBits(t.Elem())
		if !ok || ew == 1 {
			return nil, formatErr(ErrUnsupported, sec, -1, "legacy fixed-size list of %s", t.Elem())
		}
		d := uint64(t.Len())
		vb, err := r.read(pos+lo*d*ew/8, n*d*ew/8, sec)
		if err != nil {
			return nil, err
		}
		cd := array.NewData(t.Elem(), int(n*d), []*memory.Buffer{nil, memory.NewBufferBytes(vb)}, nil, 0, 0)
		defer cd.Release()
		ld := array.NewData(dt, int(n), []*memory.Buffer{nil}, []arrow.ArrayData{cd}, 0, 0)
		defer ld.Release()
		return array.MakeFromData(ld), nil
	}
	w, ok := fixedBits(dt)
	if !ok {
		return nil, formatErr(ErrUnsupported, sec, -1, "legacy pages of type %s", dt)
	}
	var data []byte
	var err error
	if w == 1 {
		raw, err := r.read(pos+lo/8, (hi+7)/8-lo/8, sec)
		if err != nil {
			return nil, err
		}
		data = appendBits(nil, 0, raw, lo%8, n)
	} else if data, err = r.read(pos+lo*w/8, n*w/8, sec); err != nil {
		return nil, err
	}
	d := array.NewData(dt, int(n), []*memory.Buffer{nil, memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

func dictIndexAt(idx arrow.Array, i int) (int, bool) {
	switch a := idx.(type) {
	case *array.Int8:
		return int(a.Value(i)), a.Value(i) >= 0
	case *array.Uint8:
		return int(a.Value(i)), true
	case *array.Int16:
		return int(a.Value(i)), a.Value(i) >= 0
	case *array.Uint16:
		return int(a.Value(i)), true
	case *array.Int32:
		return int(a.Value(i)), a.Value(i) >= 0
	case *array.Uint32:
		return int(a.Value(i)), true
	case *array.Int64:
		return int(a.Value(i)), a.Value(i) >= 0
	case *array.Uint64:
		return int(a.Value(i)), a.Value(i) <= math.MaxInt32
	}
	return 0, false
}

// binary reads values [lo, hi) of a string/binary page whose positions
// array starts at pos.
func (r *legacyReader) binary(dt arrow.DataType, pos, lo, hi uint64, nullable bool, sec string) (arrow.Array, error) {
	n := hi - lo
	pb, err := r.read(pos+lo*8, (n+1)*8, sec)
	if err != nil {
		return nil, err
	}
	p := make([]uint64, n+1)
	for i := range p {
		v := int64(binary.LittleEndian.Uint64(pb[8*i:]))
		if v < 0 || (i > 0 && uint64(v) < p[i-1]) {
			return nil, formatErr(ErrMalformed, sec, int64(pos), "value positions decrease")
		}
		p[i] = uint64(v)
	}
	data, err := r.read(p[0], p[n]-p[0], sec)
	if err != nil {
		return nil, err
	}
	large := dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY
	if !large && p[n]-p[0] > math.MaxInt32 {
		return nil, formatErr(ErrUnsupported, sec, int64(pos), "%d bytes exceed 32-bit offsets", p[n]-p[0])
	}
	var ob []byte
	var valid []byte
	nulls := 0
	if nullable {
		valid = make([]byte, (n+7)/8)
	}
	for i := uint64(0); i <= n; i++ {
		o := p[i] - p[0]
		if large {
			ob = binary.LittleEndian.AppendUint64(ob, o)
		} else {
			ob = binary.LittleEndian.AppendUint32(ob, uint32(o))
		}
		if nullable && i < n {
			if p[i+1] == p[i] {
				nulls++
			} else {
				bitutil.SetBit(valid, int(i))
			}
		}
	}
	if dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING {
		// Arrow string arrays hold valid UTF-8 only (as checkUTF8 requires
		// of 2.x pages).
		for i := uint64(0); i < n; i++ {
			if !utf8.Valid(data[p[i]-p[0] : p[i+1]-p[0]]) {
				return nil, formatErr(ErrMalformed, sec, int64(pos), "string value %d is not valid UTF-8", lo+i)
			}
		}
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(valid)
	}
	d := array.NewData(dt, int(n), []*memory.Buffer{vb, memory.NewBufferBytes(ob), memory.NewBufferBytes(data)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}
