package datafile

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
	"github.com/lancekeeper/lancekeeper/seedio"
)

const (
	// DefaultPageSize is the target size of a page's buffers (spec §4.9:
	// Lance's 2.0 writer buffers about 8 MiB per column).
	DefaultPageSize = 8 << 20
	// MaxPageSize is the largest PageSize a Writer accepts (spec §6 trap 14).
	MaxPageSize = 32 << 20
	// bufferAlign is the alignment of every page buffer, extra global buffer
	// and of the FileDescriptor (spec §1.7 W1, W3).
	bufferAlign = 64
	// padding is what Lance pads with; the value is irrelevant to readers.
	padding = "HHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHHH"
)

// ErrEmptyFile is returned by Close when no rows were written: Lance files
// should hold at least one row and one page per column (spec §1.7 W9), so
// the writer refuses to produce one. Nothing has been written to the
// underlying writer in that case.
var ErrEmptyFile = errors.New("datafile: no rows written")

// WriterOptions configures a Writer.
type WriterOptions struct {
	// FieldIDs are the table field ids of the schema's fields in depth-first
	// pre-order (parents before children), as the table manifest lists them.
	// When nil, ids are assigned sequentially from FirstFieldID.
	FieldIDs     []int32
	FirstFieldID int32

	// PageSize is the target number of bytes per page (0 = DefaultPageSize,
	// at most MaxPageSize). Each column is paged independently.
	PageSize int

	// SeedColumns names the top-level columns that get a zone write seed;
	// SeedAllColumns seeds every top-level column.
	SeedColumns    []string
	SeedAllColumns bool
	// Seed configures the seed collectors (rows per zone, bound truncation).
	Seed seedio.CollectorOptions
	// SeedRowsPerZone overrides Seed.RowsPerZone for the named columns
	// (e.g. the zone size a ZoneMap index declares for its column).
	SeedRowsPerZone map[string]uint64
	// SeedVersion0 writes the seeds in Lance 12's version-0 layout
	// (seedio.EncodeV0) instead of version 1: for tables without
	// FLAG_ZONE_WRITE_SEEDS, which must not reference v1 seeds (R54, R61).
	SeedVersion0 bool

	// Version is the storage version of the file: V2_0 (the default when
	// zero), V2_1, V2_2 or V2_3 (spec lance-file-format-2.1.md §8). A 2.3
	// file holds the encodings of a 2.2 file (same bytes but the footer's
	// minor version 3, spec §2.5): u8 RLE run lengths, which Lance 12 reads
	// in 2.3 files, and never a SparseLayout (W12). 2.1+ files
	// store every field Arrow can express in them (lists, maps, structs
	// with nulls, dictionaries, decimals, fixed_size_binary, null).
	Version FileVersion
	// NoCompression keeps 2.1+ values in the plain forms of spec 2.1 §8.1
	// (flat, variable) instead of bit-packing integers and FSST-compressing
	// text where that is smaller.
	NoCompression bool
}

// SeedResult reports the seed of one requested column.
type SeedResult struct {
	Column      string
	BufferIndex uint32 // global buffer index; 0 when no seed was written
	RowsPerZone uint64
	Locator     string // the locator value written, "" when none
	Size        int    // bytes of the seed's IPC file
	Version     int    // seed version written (0 or 1); meaningful when BufferIndex != 0
	// Err says why no seed was written (collector failure, R64). The file
	// itself is still valid.
	Err error
}

// WriteResult is what a manifest DataFile needs to reference the file
// (spec §5.1), plus the seeds written.
type WriteResult struct {
	Fields           []int32 // field ids, pre-order (every field in 2.0)
	ColumnIndices    []int32 // column of each field in Fields
	FileMajorVersion uint32  // 2
	FileMinorVersion uint32  // 0
	FileSizeBytes    uint64  // exact size of the file written
	NumRows          uint64  // rows in the file (= DataFragment.physical_rows)
	Seeds            []SeedResult
}

// colKind is the physical layout of a column.
type colKind uint8

const (
	ckFixed  colKind = iota // fixed-width primitive, width bits multiple of 8
	ckBool                  // bit-packed booleans
	ckBinary                // string / binary / large variants
	ckFSL                   // fixed_size_list of a fixed-width primitive or bool
	ckStruct                // struct: no data, one page at Close
	ckList                  // list / large_list offsets (writer20_nested.go)
	ckDict                  // dictionary (writer20_nested.go)
	ckNull                  // null type: all_nulls pages
)

// column is the state of one physical column.
type column struct {
	index    int
	name     string
	kind     colKind
	width    int // bits per value; for FSL the item width
	dim      int // FSL dimension
	nullable bool
	children []int  // struct, list: the columns of the child fields
	large    bool   // large_list
	items    uint64 // list: items referenced by the pending page
	dict     *dictPage

	pages []Page
	encs  [][]byte
	rows  uint64 // rows already flushed into pages

	// the pending page
	n        int
	nulls    int
	validity []byte
	values   []byte // bool bitmap (bool columns, FSL of bool)
	itemVal  []byte // FSL item validity
	// nested fixed_size_list: the dimension of each level, outer first
	// (dim is their product), and the validity of each level's lists
	// below the top (lvlVal[i]: fslDims[0]·…·fslDims[i] bits per row),
	// each ANDed with its parents' as the items' are
	fslDims []int
	lvlVal  [][]byte
	ends    []uint64
	// segs are the pieces of the page's value (or string bytes) buffer, in
	// order: slices of the caller's arrays when they can be written as they
	// are (held retains those arrays until the page is written), or slices
	// of own, where chunks with non-zero null slots (and string chunks
	// with nulls) are copied and zeroed.
	segs [][]byte
	own  []byte
	held []arrow.ArrayData
	size int // estimated bytes of the pending page
}

// addRef appends b, a slice of d's buffers, to the page without copying.
func (c *column) addRef(d arrow.ArrayData, b []byte) {
	if len(b) == 0 {
		return
	}
	d.Retain()
	c.held = append(c.held, d)
	c.segs = append(c.segs, b)
}

// reserve makes room for n more elements in s, doubling the capacity (Go's
// append grows large slices by only 1.25x, which costs many copies here).
func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]T, len(s), max(2*cap(s), len(s)+n, 64))
	copy(ns, s)
	return ns
}

// addCopy copies b to the page and returns the copy (for zeroing).
func (c *column) addCopy(b []byte) []byte {
	from := len(c.own)
	c.own = reserve(c.own, len(b))
	c.own = append(c.own, b...)
	cp := c.own[from:len(c.own):len(c.own)]
	c.segs = append(c.segs, cp)
	return cp
}

// release drops the references to the caller's arrays.
func (c *column) release() {
	for _, d := range c.held {
		d.Release()
	}
	clear(c.held)
	c.held = c.held[:0]
}

// Writer writes one Lance v2.0 data file from Arrow record batches. It is not
// safe for concurrent use.
type Writer struct {
	// levelsFlat16 is flat(16) for 2.1+ rep/def levels (flat16).
	levelsFlat16 *pb21.CompressiveEncoding
	out          *outBuffer
	pos          uint64
	schema       *arrow.Schema
	lance        Schema
	columns      []*column
	// tops[i] is the column index of top-level arrow field i.
	tops     []int
	pageSize int
	rows     uint64

	seeds    []*seedState
	closed   bool
	stickErr error

	// version is the file's storage version; leaves are the columns of a
	// 2.1+ file (nil for 2.0).
	version       FileVersion
	leaves        []*leaf21
	noCompression bool

	// userBuffers are the extra global buffers added with AddGlobalBuffer;
	// they take indexes 1..len(userBuffers), before the seed buffers.
	userBuffers [][]byte

	// pipe runs the leaf and seed lanes (pipeline.go).
	pipe pipeline
}

type seedState struct {
	top       int // index of the top-level arrow field
	name      string
	collector *seedio.Collector
	err       error
	v0        bool // encode as a version-0 seed
	cast      bool // the column's arrays are relabelled with the stored type
}

// writeBufferSize is the Writer's output buffer: pages larger than it go
// straight through; 1 MiB made every small file (a 10-row append) allocate
// and clear a megabyte (tests/bench commit profile).
const writeBufferSize = 64 << 10

// outBuffer buffers the Writer's output like a bufio.Writer of
// writeBufferSize bytes, but grows its buffer as bytes come: a small file
// (a 10-row append: about 2 KiB) allocates what it writes, and a Writer
// that never writes (a schema probe) allocates nothing.
type outBuffer struct {
	w   io.Writer
	buf []byte
}

func (o *outBuffer) Write(p []byte) (int, error) {
	if direct, err := o.room(len(p)); direct || err != nil {
		if err != nil {
			return 0, err
		}
		return o.w.Write(p)
	}
	o.buf = append(o.buf, p...)
	return len(p), nil
}

func (o *outBuffer) WriteString(s string) (int, error) {
	if direct, err := o.room(len(s)); direct || err != nil {
		if err != nil {
			return 0, err
		}
		return io.WriteString(o.w, s)
	}
	o.buf = append(o.buf, s...)
	return len(s), nil
}

// room makes room for n more bytes: it flushes when they would not fit,
// and reports direct when n bytes are a buffer's worth or more and go
// straight to the underlying writer.
func (o *outBuffer) room(n int) (direct bool, err error) {
	if len(o.buf)+n > writeBufferSize {
		if err := o.Flush(); err != nil {
			return false, err
		}
		if n >= writeBufferSize {
			return true, nil
		}
	}
	if o.buf == nil {
		o.buf = make([]byte, 0, min(writeBufferSize, max(4<<10, n)))
	}
	return false, nil
}

// Flush writes the buffered bytes.
func (o *outBuffer) Flush() error {
	if len(o.buf) == 0 {
		return nil
	}
	n, err := o.w.Write(o.buf)
	if err == nil && n < len(o.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return err
	}
	o.buf = o.buf[:0]
	return nil
}

// NewWriter returns a Writer of a v2.0 file with the given Arrow schema.
// Schema and field metadata are kept in the file; schema-metadata keys
// starting with "lance.seed." are dropped, because locators are pointers into
// this file's global buffers and only the writer can set them.
func NewWriter(w io.Writer, schema *arrow.Schema, opts WriterOptions) (*Writer, error) {
	if schema == nil {
		return nil, fmt.Errorf("%w: nil schema", ErrInvalidSchema)
	}
	ps := opts.PageSize
	if ps == 0 {
		ps = DefaultPageSize
	}
	if ps < 1 || ps > MaxPageSize {
		return nil, fmt.Errorf("%w: page size %d is outside 1..%d", ErrInvalidSchema, ps, MaxPageSize)
	}
	wr := &Writer{out: &outBuffer{w: w}, schema: schema, pageSize: ps, version: opts.Version, noCompression: opts.NoCompression,
		pipe: newPipeline()}
	switch opts.Version {
	case 0, V2_0:
		wr.version = V2_0
		if err := wr.buildSchema(opts); err != nil {
			return nil, err
		}
	case V2_1, V2_2, V2_3:
		wr.levelsFlat16 = flat21(16)
		if err := wr.buildSchema21(opts); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: this writer writes storage versions 2.0, 2.1, 2.2 and 2.3, not %s", ErrInvalidSchema, opts.Version)
	}
	if err := wr.buildSeeds(opts); err != nil {
		return nil, err
	}
	return wr, nil
}

func (w *Writer) buildSchema(opts WriterOptions) error {
	md := map[string]string{}
	keys, vals := w.schema.Metadata().Keys(), w.schema.Metadata().Values()
	for i, k := range keys {
		if !strings.HasPrefix(k, seedio.LocatorKeyPrefix) {
			md[k] = vals[i]
		}
	}
	w.lance.Metadata = md
	var walk func(f arrow.Field, parent int32) error
	walk = func(f arrow.Field, parent int32) error {
		lt, err := logicalType20(f.Type)
		if err != nil {
			return fmt.Errorf("%w: field %q: %v", ErrInvalidSchema, f.Name, err)
		}
		idx := len(w.lance.Fields)
		id := opts.FirstFieldID + int32(idx)
		if opts.FieldIDs != nil {
			if idx >= len(opts.FieldIDs) {
				return fmt.Errorf("%w: %d field ids given, but the schema has more fields", ErrInvalidSchema, len(opts.FieldIDs))
			}
			id = opts.FieldIDs[idx]
		}
		fld := Field{Name: f.Name, ID: id, ParentID: parent, LogicalType: lt, Nullable: f.Nullable}
		if f.HasMetadata() {
			fld.Metadata = map[string]string{}
			for i, k := range f.Metadata.Keys() {
				fld.Metadata[k] = f.Metadata.Values()[i]
			}
		}
		col := &column{index: idx, name: f.Name, nullable: f.Nullable}
		switch t := f.Type.(type) {
		case *arrow.ListType, *arrow.LargeListType, *arrow.NullType, *arrow.DictionaryType, *arrow.FixedSizeBinaryType:
			setupColumn20(col, &fld, t)
		case *arrow.StructType:
			col.kind = ckStruct
		case *arrow.BooleanType:
			col.kind, col.width, fld.Encoding = ckBool, 1, 1
		case *arrow.FixedSizeListType:
			dims, item := fslLevels(t)
			wd, _ := fixedWidth21(item) // bool, primitives, decimals, fixed_size_binary
			col.kind, col.width, col.dim, fld.Encoding = ckFSL, wd, fslItems(dims), 1
			if len(dims) > 1 { // fixed_size_list of fixed_size_list …
				col.fslDims, col.lvlVal = dims, make([][]byte, len(dims)-1)
			}
			if t.Len() < 1 {
				return fmt.Errorf("%w: field %q: fixed_size_list dimension %d", ErrInvalidSchema, f.Name, t.Len())
			}
		default:
			if arrow.IsBaseBinary(f.Type.ID()) {
				col.kind, fld.Encoding = ckBinary, 2
			} else {
				wd, ok := flatWidth(f.Type)
				if !ok || wd%8 != 0 {
					return fmt.Errorf("%w: field %q: type %s", ErrInvalidSchema, f.Name, f.Type)
				}
				col.kind, col.width, fld.Encoding = ckFixed, wd, 1
			}
		}
		w.lance.Fields = append(w.lance.Fields, fld)
		w.columns = append(w.columns, col)
		if st, ok := f.Type.(*arrow.StructType); ok {
			for _, c := range st.Fields() {
				col.children = append(col.children, len(w.columns))
				if err := walk(c, id); err != nil {
					return err
				}
			}
		}
		if c, ok := childField20(f.Type); ok {
			col.children = append(col.children, len(w.columns))
			if err := walk(c, id); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range w.schema.Fields() {
		w.tops = append(w.tops, len(w.columns))
		if err := walk(f, -1); err != nil {
			return err
		}
	}
	if opts.FieldIDs != nil && len(opts.FieldIDs) != len(w.lance.Fields) {
		return fmt.Errorf("%w: %d field ids given for %d fields", ErrInvalidSchema, len(opts.FieldIDs), len(w.lance.Fields))
	}
	seen := map[int32]string{}
	for _, f := range w.lance.Fields {
		if f.ID < 0 {
			return fmt.Errorf("%w: field %q has negative id %d", ErrInvalidSchema, f.Name, f.ID)
		}
		if prev, dup := seen[f.ID]; dup {
			return fmt.Errorf("%w: fields %q and %q share id %d", ErrInvalidSchema, prev, f.Name, f.ID)
		}
		seen[f.ID] = f.Name
	}
	return nil
}

func (w *Writer) buildSeeds(opts WriterOptions) error {
	want := map[string]bool{}
	for _, c := range opts.SeedColumns {
		want[c] = true
	}
	for i, f := range w.schema.Fields() {
		if !opts.SeedAllColumns && !want[f.Name] {
			continue
		}
		delete(want, f.Name)
		st := &seedState{top: i, name: f.Name, v0: opts.SeedVersion0}
		// The seed's value type is the type the file stores (R15): a
		// fixed_size_list's child becomes a nullable "item".
		if stored := storedType21(f.Type); !sameArrowType(stored, f.Type) {
			f.Type, st.cast = stored, true
		}
		co := opts.Seed
		if rpz, ok := opts.SeedRowsPerZone[f.Name]; ok {
			co.RowsPerZone = rpz
		}
		st.collector, st.err = seedio.NewCollector(f, co)
		if errors.Is(st.err, seedio.ErrCollectorOptions) {
			return fmt.Errorf("datafile: seed options: %w", st.err)
		}
		w.seeds = append(w.seeds, st)
	}
	if len(want) > 0 {
		missing := slices.Sorted(maps.Keys(want))
		return fmt.Errorf("%w: seed columns %q are not top-level fields of the schema", ErrInvalidSchema, missing)
	}
	return nil
}

// Write appends the rows of rec. Its columns must have the writer schema's
// types. Fixed-width values whose null slots already hold zeros (all
// values of null-free columns) are not copied: the writer retains rec's
// buffers until the page holding them is written (at the latest by Close),
// so the caller may release rec as soon as Write returns. In 2.1+ files
// Write only validates rec and queues it: its columns are shredded and
// encoded, and its seeds collected, concurrently (pipeline.go) while the
// caller prepares the next record; an error found then is returned by the
// next Write or by Close. A write error makes the writer unusable.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if w.closed {
		return ErrWriterClosed
	}
	if w.stickErr != nil {
		return w.stickErr
	}
	if int(rec.NumCols()) != w.schema.NumFields() {
		return fmt.Errorf("%w: record has %d columns, the schema %d", ErrInvalidData, rec.NumCols(), w.schema.NumFields())
	}
	for i := range w.schema.NumFields() {
		f := w.schema.Field(i)
		col := rec.Column(i)
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			return fmt.Errorf("%w: column %q has type %s, the schema %s", ErrInvalidData, f.Name, col.DataType(), f.Type)
		}
		if col.Len() != int(rec.NumRows()) {
			return fmt.Errorf("%w: column %q has %d rows, the record %d", ErrInvalidData, f.Name, col.Len(), rec.NumRows())
		}
		if w.version != V2_0 {
			if !f.Nullable && col.NullN() > 0 {
				return fmt.Errorf("%w: non-nullable field %q holds %d nulls", ErrInvalidData, f.Name, col.NullN())
			}
			continue
		}
		if err := w.checkArray(f, col); err != nil {
			return err
		}
	}
	n := uint64(rec.NumRows())
	if n == 0 {
		return nil
	}
	if w.rows+n > maxPageRows-1 {
		return fmt.Errorf("%w: a file holds at most 2^32-1 rows (spec §6 trap 13)", ErrInvalidData)
	}
	if err := w.pipe.failed(); err != nil {
		w.stickErr = err
		return err
	}
	// The record goes to the pipeline (pipeline.go): leaf and seed lanes
	// read its arrays concurrently. Arrow computes unknown null counts and
	// dictionary arrays lazily and caches them in the shared arrays, so
	// settle them first: afterwards every access is a read.
	for _, c := range rec.Columns() {
		settleArrays(c, 0)
	}
	if w.version == V2_0 {
		// 2.0 columns are paged here; the seed lanes run meanwhile.
		for i := range w.schema.NumFields() {
			if err := w.writeArray(w.tops[i], rec.Column(i)); err != nil {
				w.stickErr = err
				return err
			}
		}
	}
	if len(w.leaves) > 0 || len(w.seeds) > 0 {
		w.submit(rec)
	}
	w.rows += n
	return nil
}

// settleNullCounts computes and stores every unknown null count of d and
// its children and dictionary.
func settleNullCounts(d arrow.ArrayData, depth int) {
	if d == nil || depth > maxEncodingDepth {
		return
	}
	if ad, ok := d.(*array.Data); ok && ad.NullN() < 0 {
		nulls := 0
		if b := ad.Buffers(); len(b) > 0 && b[0] != nil {
			nulls = ad.Len() - bitutil.CountSetBits(b[0].Bytes(), ad.Offset(), ad.Len())
		}
		ad.SetNullN(nulls)
	}
	for _, c := range d.Children() {
		settleNullCounts(c, depth+1)
	}
	if dict := d.Dictionary(); dict != nil {
		if dd, ok := dict.(*array.Data); ok && dd != nil {
			settleNullCounts(dd, depth+1)
		}
	}
}

// checkArray rejects data 2.0 cannot store: nulls in a non-nullable field and
// struct nulls (spec §6 trap 12), recursively.
func (w *Writer) checkArray(f arrow.Field, a arrow.Array) error {
	if !f.Nullable && a.NullN() > 0 {
		return fmt.Errorf("%w: non-nullable field %q holds %d nulls", ErrInvalidData, f.Name, a.NullN())
	}
	if st, ok := f.Type.(*arrow.StructType); ok {
		if a.NullN() > 0 {
			return fmt.Errorf("%w: struct field %q holds %d nulls; Lance 2.0 cannot store struct validity", ErrInvalidData, f.Name, a.NullN())
		}
		sa := a.(*array.Struct)
		for i, c := range st.Fields() {
			if err := w.checkArray(c, sa.Field(i)); err != nil {
				return err
			}
		}
	}
	return w.checkNested20(f, a)
}

// writeArray feeds a to column ci (and, for a struct, its children).
func (w *Writer) writeArray(ci int, a arrow.Array) error {
	c := w.columns[ci]
	switch c.kind {
	case ckStruct:
		sa := a.(*array.Struct)
		for i, child := range c.children {
			if err := w.writeArray(child, sa.Field(i)); err != nil {
				return err
			}
		}
		c.n += a.Len()
		return nil
	case ckList:
		return w.writeList20(c, a)
	case ckDict:
		return w.writeDict20(c, a)
	case ckNull:
		c.writeNull20(a)
		return nil
	}
	for start := 0; start < a.Len(); {
		k := c.rowsThatFit(a, start, w.pageSize-c.size)
		c.appendRange(a, start, k)
		start += k
		if c.size >= w.pageSize {
			if err := w.flushPage(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowBits is the estimated page size per row in bits (values + validity).
func (c *column) rowBits() int {
	switch c.kind {
	case ckFixed, ckBool:
		return c.width + 1
	case ckFSL:
		b := c.dim*(c.width+1) + 1
		per := 1
		for lv := range c.lvlVal {
			per *= c.fslDims[lv]
			b += per
		}
		return b
	}
	return 64
}

// rowsThatFit returns how many rows of a from start fit in budget bytes;
// at least one.
func (c *column) rowsThatFit(a arrow.Array, start, budget int) int {
	left := a.Len() - start
	if budget <= 0 {
		return 1
	}
	if c.kind != ckBinary {
		k := int(int64(budget) * 8 / int64(c.rowBits()))
		return max(1, min(k, left))
	}
	// Largest k with 8k + bytes(start, start+k) <= budget, by binary search
	// over the offsets.
	d := a.Data()
	off := d.Offset() + start
	span := binarySpan(d)
	lo, hi := 1, left
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if 8*mid+span(off, off+mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// binarySpan returns a function giving the data bytes of absolute slots [i, j).
func binarySpan(d arrow.ArrayData) func(i, j int) int {
	ob := d.Buffers()[1].Bytes()
	if d.DataType().ID() == arrow.LARGE_STRING || d.DataType().ID() == arrow.LARGE_BINARY {
		o := arrow.Int64Traits.CastFromBytes(ob)
		return func(i, j int) int { return int(o[j] - o[i]) }
	}
	o := arrow.Int32Traits.CastFromBytes(ob)
	return func(i, j int) int { return int(o[j] - o[i]) }
}

// growBits extends bitmap b to hold n bits (new bits zero).
func growBits(b []byte, n int) []byte {
	need := int(bitutil.BytesForBits(int64(n)))
	if len(b) >= need {
		return b
	}
	if cap(b) >= need {
		old := len(b)
		b = b[:need]
		clear(b[old:])
		return b
	}
	nb := make([]byte, need, max(need, 2*cap(b)))
	copy(nb, b)
	return nb
}

// appendValidity copies the validity of rows [start, start+k) of d (absolute
// offset d.Offset()+start) to bitmap dst at bit position at, returning the
// bitmap and the number of nulls.
func appendValidity(dst []byte, at int, d arrow.ArrayData, start, k int) ([]byte, int) {
	dst = growBits(dst, at+k)
	nb := d.Buffers()[0]
	if d.NullN() == 0 || nb == nil {
		bitutil.SetBitsTo(dst, int64(at), int64(k), true)
		return dst, 0
	}
	bitutil.CopyBitmap(nb.Bytes(), d.Offset()+start, k, dst, at)
	return dst, k - bitutil.CountSetBits(dst, at, k)
}

// appendRange appends rows [start, start+k) of a to the pending page.
func (c *column) appendRange(a arrow.Array, start, k int) {
	d := a.Data()
	at := c.n
	var nulls int
	c.validity, nulls = appendValidity(c.validity, at, d, start, k)
	c.nulls += nulls
	switch c.kind {
	case ckFixed:
		wb := c.width / 8
		off := d.Offset() + start
		src := d.Buffers()[1].Bytes()[off*wb : (off+k)*wb]
		if nulls == 0 || nullSlotsZero(src, wb, c.validity, at, k) {
			c.addRef(d, src)
		} else {
			zeroInvalid(c.addCopy(src), wb, c.validity, at, k)
		}
		c.size += k * wb
	case ckBool:
		c.values = growBits(c.values, at+k)
		bitutil.CopyBitmap(d.Buffers()[1].Bytes(), d.Offset()+start, k, c.values, at)
		c.size += int(bitutil.BytesForBits(int64(k)))
	case ckBinary:
		var last uint64
		if len(c.ends) > 0 {
			last = c.ends[len(c.ends)-1]
		}
		off := d.Offset() + start
		var db []byte
		if len(d.Buffers()) > 2 && d.Buffers()[2] != nil {
			db = d.Buffers()[2].Bytes()
		}
		large := d.DataType().ID() == arrow.LARGE_STRING || d.DataType().ID() == arrow.LARGE_BINARY
		var o32 []int32
		var o64 []int64
		if large {
			o64 = arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())
		} else {
			o32 = arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())
		}
		bounds := func(i int) (int, int) {
			if large {
				return int(o64[i]), int(o64[i+1])
			}
			return int(o32[i]), int(o32[i+1])
		}
		first := last
		c.ends = reserve(c.ends, k)
		if nulls == 0 {
			s, _ := bounds(off)
			_, e := bounds(off + k - 1)
			c.addRef(d, db[s:e])
			for i := 0; i < k; i++ {
				b, e := bounds(off + i)
				last += uint64(e - b)
				c.ends = append(c.ends, last)
			}
		} else {
			// Copy the bytes of each run of valid rows at once; null
			// slots contribute no bytes even if Arrow gave them some.
			from := len(c.own)
			runStart := -1
			flush := func(i int) {
				if runStart >= 0 {
					b, _ := bounds(off + runStart)
					_, e := bounds(off + i - 1)
					c.own = reserve(c.own, e-b)
					c.own = append(c.own, db[b:e]...)
					runStart = -1
				}
			}
			for i := 0; i < k; i++ {
				if bitutil.BitIsSet(c.validity, at+i) {
					if runStart < 0 {
						runStart = i
					}
					b, e := bounds(off + i)
					last += uint64(e - b)
				} else {
					flush(i)
				}
				c.ends = append(c.ends, last)
			}
			flush(k)
			if len(c.own) > from {
				c.segs = append(c.segs, c.own[from:len(c.own):len(c.own)])
			}
		}
		c.size += 8*k + int(last-first)
	case ckFSL:
		child := d.Children()[0]
		items := k * c.dim
		itemAt := at * c.dim
		istart := (d.Offset() + start) * c.dim // logical index into the child
		if c.fslDims != nil {
			child, istart = c.appendFSLLevels(d, start, k)
		}
		// item validity = item's own validity AND its list's validity
		c.itemVal, _ = appendValidity(c.itemVal, itemAt, child, istart, items)
		if c.fslDims != nil {
			last := c.lvlVal[len(c.lvlVal)-1]
			inner := c.fslDims[len(c.fslDims)-1]
			for j := range k * c.dim / inner {
				if !bitutil.BitIsSet(last, itemAt/inner+j) {
					bitutil.SetBitsTo(c.itemVal, int64(itemAt+j*inner), int64(inner), false)
				}
			}
		} else if nulls > 0 {
			for i := 0; i < k; i++ {
				if !bitutil.BitIsSet(c.validity, at+i) {
					bitutil.SetBitsTo(c.itemVal, int64(itemAt+i*c.dim), int64(c.dim), false)
				}
			}
		}
		coff := child.Offset() + istart
		if c.width == 1 {
			c.values = growBits(c.values, itemAt+items)
			bitutil.CopyBitmap(child.Buffers()[1].Bytes(), coff, items, c.values, itemAt)
			c.size += int(bitutil.BytesForBits(int64(items)))
		} else {
			wb := c.width / 8
			src := child.Buffers()[1].Bytes()[coff*wb : (coff+items)*wb]
			if bitutil.CountSetBits(c.itemVal, itemAt, items) == items || nullSlotsZero(src, wb, c.itemVal, itemAt, items) {
				c.addRef(child, src)
			} else {
				zeroInvalid(c.addCopy(src), wb, c.itemVal, itemAt, items)
			}
			c.size += items * wb
		}
		c.size += int(bitutil.BytesForBits(int64(items)))
	}
	c.size += int(bitutil.BytesForBits(int64(k)))
	c.n += k
}

// appendFSLLevels appends the validity of the lists of every level below
// the top of the nested fixed_size_list rows [start, start+k) of d to
// c.lvlVal (each ANDed with its parent's, as Lance 12 writes them) and
// returns the innermost items' data and the logical index of the first
// row's first item in it.
func (c *column) appendFSLLevels(d arrow.ArrayData, start, k int) (arrow.ArrayData, int) {
	cur, lo, n := d, start, k
	at, per := c.n, 1
	parent := c.validity
	for lv, dim := range c.fslDims {
		child := cur.Children()[0]
		lo, n = (cur.Offset()+lo)*dim, n*dim // logical index into child
		if lv == len(c.fslDims)-1 {
			return child, lo
		}
		per *= dim
		c.lvlVal[lv], _ = appendValidity(c.lvlVal[lv], at*per, child, lo, n)
		for j := range n / dim {
			if !bitutil.BitIsSet(parent, at*per/dim+j) {
				bitutil.SetBitsTo(c.lvlVal[lv], int64(at*per+j*dim), int64(dim), false)
			}
		}
		parent = c.lvlVal[lv]
		cur = child
	}
	return cur, lo
}

// nullSlotsZero reports whether every wb-byte slot of vals whose bit in
// validity (from bit at, count k) is clear already holds zeros. Arrow's
// builders leave null slots zeroed, so the caller's buffer can then be
// written as it is instead of being copied and zeroed (spec §4.5).
func nullSlotsZero(vals []byte, wb int, validity []byte, at, k int) bool {
	for i := 0; i < k; {
		// skip whole bytes of valid rows
		if (at+i)%8 == 0 && i+8 <= k && validity[(at+i)/8] == 0xff {
			i += 8
			continue
		}
		if !bitutil.BitIsSet(validity, at+i) {
			for _, b := range vals[i*wb : (i+1)*wb] {
				if b != 0 {
					return false
				}
			}
		}
		i++
	}
	return true
}

// zeroInvalid zeroes the wb-byte slots of vals whose bit in validity (from
// bit at, count k) is clear, so null slots hold zeros (spec §4.5).
func zeroInvalid(vals []byte, wb int, validity []byte, at, k int) {
	for i := 0; i < k; i++ {
		if !bitutil.BitIsSet(validity, at+i) {
			clear(vals[i*wb : (i+1)*wb])
		}
	}
}

// write writes b at the current position.
func (w *Writer) write(b []byte) error {
	if _, err := w.out.Write(b); err != nil {
		return fmt.Errorf("datafile: write: %w", err)
	}
	w.pos += uint64(len(b))
	return nil
}

// writeBuffer writes an aligned buffer (spec §1.7 W1) and pads after it.
// A zero-length buffer is recorded at the current position (W8).
func (w *Writer) writeBuffer(b []byte) (BufferRange, error) {
	r := BufferRange{Pos: w.pos, Len: uint64(len(b))}
	if len(b) == 0 {
		return r, nil
	}
	if err := w.write(b); err != nil {
		return r, err
	}
	return r, w.pad()
}

// writeSegments writes one buffer given as consecutive segments, aligned
// and padded like writeBuffer.
func (w *Writer) writeSegments(segs [][]byte) (BufferRange, error) {
	r := BufferRange{Pos: w.pos}
	for _, b := range segs {
		if err := w.write(b); err != nil {
			return r, err
		}
		r.Len += uint64(len(b))
	}
	if r.Len == 0 {
		return r, nil
	}
	return r, w.pad()
}

func (w *Writer) pad() error {
	if rem := w.pos % bufferAlign; rem != 0 {
		if _, err := w.out.WriteString(padding[:bufferAlign-rem]); err != nil {
			return fmt.Errorf("datafile: write: %w", err)
		}
		w.pos += bufferAlign - rem
	}
	return nil
}

// flushPage encodes and writes the pending page of c (spec §4.5 recipes).
func (w *Writer) flushPage(c *column) error {
	if c.n == 0 {
		return nil
	}
	defer c.release()
	n := c.n
	var bufs [][][]byte // each buffer as a list of segments
	var enc []byte
	validityBytes := c.validity[:bitutil.BytesForBits(int64(n))]
	validity := [][]byte{validityBytes}
	switch c.kind {
	case ckNull:
		enc = encAllNulls()
	case ckList:
		bufs, enc = c.encodeList20()
	case ckDict:
		var err error
		if bufs, enc, err = c.encodeDict20(); err != nil {
			return err
		}
		defer c.resetDict20()
	case ckFixed, ckBool:
		valBytes := c.segs
		if c.kind == ckBool {
			vb := c.values[:bitutil.BytesForBits(int64(n))]
			if c.nulls > 0 {
				for i := range vb {
					vb[i] &= validityBytes[i]
				}
			}
			valBytes = [][]byte{vb}
		}
		switch {
		case c.nulls == 0:
			bufs = [][][]byte{valBytes}
			enc = encNoNulls(encFlat(uint64(c.width), 0))
		case c.nulls == n:
			enc = encAllNulls()
		default:
			bufs = [][][]byte{validity, valBytes}
			enc = encSomeNulls(encFlat(1, 0), encFlat(uint64(c.width), 1))
		}
	case ckBinary:
		adj := uint64(1)
		if len(c.ends) > 0 {
			adj = c.ends[len(c.ends)-1] + 1
		}
		idx := make([]byte, 8*n)
		for i, e := range c.ends {
			if c.nulls > 0 && !bitutil.BitIsSet(validityBytes, i) {
				e += adj
			}
			putU64(idx[8*i:], e)
		}
		bufs = [][][]byte{{idx}, c.segs}
		enc = encBinary(encNoNulls(encFlat(64, 0)), encFlat(8, 1), adj)
	case ckFSL:
		items := n * c.dim
		itemNulls := items - bitutil.CountSetBits(c.itemVal, 0, items)
		valBytes := c.segs
		if c.width == 1 {
			vb := c.values[:bitutil.BytesForBits(int64(items))]
			iv := c.itemVal[:len(vb)]
			for i := range vb {
				vb[i] &= iv[i]
			}
			valBytes = [][]byte{vb}
		}
		if c.nulls == n {
			enc = encAllNulls()
			break
		}
		first := uint32(0)
		if c.nulls > 0 {
			bufs = append(bufs, validity)
			first = 1
		}
		// nested (dims d0, d1, …): fixed_size_list{d0, nullable{…
		// fixed_size_list{d1, … nullable{items}}}}, one nullable around
		// each level's lists, its bitmap buffer numbered outer first, as
		// Lance 12 writes them
		lvlBuf := make([]int, len(c.lvlVal)) // -1: no nulls
		per := 1
		for lv := range c.lvlVal {
			per *= c.fslDims[lv]
			cnt := n * per
			lvlBuf[lv] = -1
			if bitutil.CountSetBits(c.lvlVal[lv], 0, cnt) != cnt {
				lvlBuf[lv] = int(first)
				first++
				bufs = append(bufs, [][]byte{c.lvlVal[lv][:bitutil.BytesForBits(int64(cnt))]})
			}
		}
		var itemEnc []byte
		if itemNulls == 0 {
			bufs = append(bufs, valBytes)
			itemEnc = encNoNulls(encFlat(uint64(c.width), first))
		} else {
			bufs = append(bufs, [][]byte{c.itemVal[:bitutil.BytesForBits(int64(items))]}, valBytes)
			itemEnc = encSomeNulls(encFlat(1, first), encFlat(uint64(c.width), first+1))
		}
		for lv := len(c.lvlVal) - 1; lv >= 0; lv-- {
			inner := encFixedSizeList(uint32(c.fslDims[lv+1]), itemEnc)
			if lvlBuf[lv] < 0 {
				itemEnc = encNoNulls(inner)
			} else {
				itemEnc = encSomeNulls(encFlat(1, uint32(lvlBuf[lv])), inner)
			}
		}
		outerDim := c.dim
		if c.fslDims != nil {
			outerDim = c.fslDims[0]
		}
		fsl := encFixedSizeList(uint32(outerDim), itemEnc)
		if c.nulls > 0 {
			enc = encSomeNulls(encFlat(1, 0), fsl)
		} else {
			enc = encNoNulls(fsl)
		}
	}
	p := Page{Length: uint64(n), Priority: c.rows}
	for _, b := range bufs {
		r, err := w.writeSegments(b)
		if err != nil {
			return err
		}
		p.Buffers = append(p.Buffers, r)
	}
	c.pages = append(c.pages, p)
	c.encs = append(c.encs, enc)
	c.rows += uint64(n)
	c.n, c.nulls, c.size, c.items = 0, 0, 0, 0
	c.validity = c.validity[:0]
	c.values = c.values[:0]
	c.itemVal = c.itemVal[:0]
	for i := range c.lvlVal {
		c.lvlVal[i] = c.lvlVal[i][:0]
	}
	c.ends = c.ends[:0]
	clear(c.segs)
	c.segs = c.segs[:0]
	c.own = c.own[:0]
	return nil
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	b[4], b[5], b[6], b[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
}

// Close flushes the pending pages, embeds the seeds, writes the schema,
// column metadata, offset tables and footer, and returns what the manifest
// needs. It does not close the underlying writer. With no rows written it
// returns ErrEmptyFile and writes nothing.
func (w *Writer) Close() (*WriteResult, error) {
	if w.closed {
		return nil, ErrWriterClosed
	}
	w.closed = true
	defer func() {
		for _, c := range w.columns {
			c.release()
		}
		for _, l := range w.leaves {
			l.releaseHeld()
		}
	}()
	if w.stickErr != nil {
		_ = w.drain()
		return nil, w.stickErr
	}
	if err := w.drain(); err != nil {
		return nil, err
	}
	if w.rows == 0 {
		for _, s := range w.seeds {
			if s.collector != nil {
				s.collector.Reset()
			}
		}
		return nil, ErrEmptyFile
	}
	// The last pages of every leaf and the seeds are encoded concurrently.
	// A v1 seed is appended straight to its own buffer (AppendFinish: no
	// decoded Seed is built); a v0 seed is re-encoded from the decoded Seed.
	seedRes := make([]SeedResult, len(w.seeds))
	seedIPC := make([][]byte, len(w.seeds))
	err := w.finishLanes(func(j int) {
		s := w.seeds[j]
		sr := SeedResult{Column: s.name, Err: s.err, Version: 1}
		var ipc []byte
		switch {
		case s.err != nil:
			if s.collector != nil {
				s.collector.Reset()
			}
		case s.v0:
			sr.Version = 0
			var enc *seedio.EncodedSeed
			if enc, sr.Err = s.collector.Finish(); sr.Err == nil && enc != nil {
				ipc, sr.Err = seedio.EncodeV0(&enc.Seed)
			}
		default:
			ipc, sr.Err = s.collector.AppendFinish(nil)
		}
		if sr.Err != nil {
			ipc = nil
		}
		seedRes[j], seedIPC[j] = sr, ipc
	})
	if err != nil {
		return nil, err
	}
	for _, c := range w.columns {
		if c.kind == ckStruct {
			c.pages = []Page{{Length: uint64(c.n)}}
			c.encs = [][]byte{encStruct()}
			continue
		}
		if err := w.flushPage(c); err != nil {
			return nil, err
		}
	}
	res := &WriteResult{FileMajorVersion: w.version.Major(), FileMinorVersion: w.version.Minor(), NumRows: w.rows}

	// Extra global buffers: AddGlobalBuffer's first, then the seeds, whose
	// locators go into the schema metadata (spec §2.2).
	var extra []BufferRange
	for _, b := range w.userBuffers {
		r, err := w.writeBuffer(b)
		if err != nil {
			return nil, err
		}
		extra = append(extra, r)
	}
	for j, s := range w.seeds {
		sr, ipc := seedRes[j], seedIPC[j]
		if sr.Err == nil && len(ipc) > 0 {
			r, err := w.writeBuffer(ipc)
			if err != nil {
				return nil, err
			}
			extra = append(extra, r)
			rpz := s.collector.RowsPerZone()
			sr.BufferIndex = uint32(len(extra))
			sr.RowsPerZone = rpz
			sr.Size = len(ipc)
			sr.Locator = seedio.FormatLocator(sr.BufferIndex, rpz)
			w.lance.Metadata[seedio.LocatorKey(s.name)] = sr.Locator
		}
		res.Seeds = append(res.Seeds, sr)
	}

	// Global buffer 0: the FileDescriptor, aligned (W3).
	if err := w.pad(); err != nil {
		return nil, err
	}
	fd, err := w.writeBuffer0(encodeFileDescriptor(&w.lance, w.rows))
	if err != nil {
		return nil, err
	}
	// Column metadata right after it (W3, W4).
	colStart := w.pos
	var cms [][]byte
	for _, c := range w.columns {
		cms = append(cms, encodeColumnMetadata(c.pages, c.encs))
	}
	for _, l := range w.leaves {
		cms = append(cms, encodeColumnMetadata21(l.pages, l.encs))
	}
	cmo := make([]BufferRange, len(cms))
	for i, b := range cms {
		cmo[i] = BufferRange{Pos: w.pos, Len: uint64(len(b))}
		if err := w.write(b); err != nil {
			return nil, err
		}
	}
	// CMO, GBO, footer (W5–W7).
	ft := Footer{ColumnMetaStart: colStart, CMOStart: w.pos, NumColumns: uint32(len(cms)),
		NumGlobalBuffers: uint32(1 + len(extra))}
	ft.Major, ft.Minor = w.version.FooterVersion()
	var tbl []byte
	for _, r := range cmo {
		tbl = appendRange(tbl, r)
	}
	ft.GBOStart = w.pos + uint64(len(tbl))
	tbl = appendRange(tbl, fd)
	for _, r := range extra {
		tbl = appendRange(tbl, r)
	}
	tbl = ft.appendTo(tbl)
	if err := w.write(tbl); err != nil {
		return nil, err
	}
	if err := w.out.Flush(); err != nil {
		return nil, fmt.Errorf("datafile: write: %w", err)
	}
	res.FileSizeBytes = w.pos
	if w.version != V2_0 {
		// Leaves only, pre-order (spec 2.1 §8.3).
		for _, l := range w.leaves {
			res.Fields = append(res.Fields, w.lance.Fields[l.field].ID)
			res.ColumnIndices = append(res.ColumnIndices, int32(l.index))
		}
		return res, nil
	}
	for i, f := range w.lance.Fields {
		res.Fields = append(res.Fields, f.ID)
		res.ColumnIndices = append(res.ColumnIndices, int32(i))
	}
	return res, nil
}

// AddGlobalBuffer stores b as an extra global buffer of the file and
// returns its index: 1 for the first buffer added, 2 for the next, and so
// on (seed buffers follow them). The bytes are written by Close, 64-byte
// aligned (spec §1.7 W1); b must not change until then.
func (w *Writer) AddGlobalBuffer(b []byte) (uint32, error) {
	if w.closed {
		return 0, ErrWriterClosed
	}
	w.userBuffers = append(w.userBuffers, b)
	return uint32(len(w.userBuffers)), nil
}

// SetSchemaMetadata sets one key of the file's schema metadata before
// Close. Keys starting with "lance.seed." are refused: seed locators point
// into this file's buffers and only the writer sets them.
func (w *Writer) SetSchemaMetadata(key, value string) error {
	if w.closed {
		return ErrWriterClosed
	}
	if strings.HasPrefix(key, seedio.LocatorKeyPrefix) {
		return fmt.Errorf("%w: schema metadata key %q is reserved for seed locators", ErrInvalidSchema, key)
	}
	w.lance.Metadata[key] = value
	return nil
}

// writeBuffer0 writes the FileDescriptor without padding after it: the
// column metadata follows immediately (W3).
func (w *Writer) writeBuffer0(b []byte) (BufferRange, error) {
	r := BufferRange{Pos: w.pos, Len: uint64(len(b))}
	return r, w.write(b)
}

func appendRange(b []byte, r BufferRange) []byte {
	var t [16]byte
	putU64(t[:8], r.Pos)
	putU64(t[8:], r.Len)
	return append(b, t[:]...)
}

// Schema returns the Lance schema the writer stores (field ids included).
// Seed locators are added to its metadata by Close.
func (w *Writer) Schema() *Schema { return &w.lance }
