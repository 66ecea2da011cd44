package datafile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"gocloud.dev/blob"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

const (
	// DefaultTailSize is how many bytes Open reads from the end of the file in
	// its first request (Lance uses 64 KiB on cloud stores). Footer, offset
	// tables, schema and column metadata of most files fit in it.
	DefaultTailSize = 64 << 10
	// maxMetadataSize bounds the metadata region (schema + column metadata +
	// tables) that Open is willing to load.
	maxMetadataSize = 1 << 30
	// farSchemaGap: when the FileDescriptor lies further than this before the
	// column metadata (old writers put it near offset 0), it is read on its own
	// instead of loading everything in between.
	farSchemaGap = 1 << 20
)

// source reads byte ranges of one file.
type source interface {
	readRange(ctx context.Context, off, n int64) ([]byte, error)
}

type bucketSource struct {
	bucket *blob.Bucket
	path   string
}

func (s bucketSource) readRange(ctx context.Context, off, n int64) ([]byte, error) {
	r, err := s.bucket.NewRangeReader(ctx, s.path, off, n, nil)
	if err != nil {
		return nil, fmt.Errorf("datafile: read %s [%d, +%d): %w", s.path, off, n, err)
	}
	defer r.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("datafile: read %s [%d, +%d): %w", s.path, off, n, err)
	}
	return buf, nil
}

type readerAtSource struct{ r io.ReaderAt }

func (s readerAtSource) readRange(ctx context.Context, off, n int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	m, err := s.r.ReadAt(buf, off)
	if m == len(buf) {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("datafile: read [%d, +%d): %w", off, n, err)
}

// File is an opened Lance v2 data file: its footer, offset tables, schema,
// row count and column metadata, all decoded and checked by Open. Data pages
// and global buffers other than the schema are read on demand. A File is safe
// for concurrent use by multiple goroutines.
type File struct {
	path    string
	src     source
	size    int64
	footer  Footer
	version FileVersion

	globalBuffers []BufferRange
	columnBlocks  []BufferRange
	schema        Schema
	numRows       uint64
	columns       []ColumnMetadata

	// tail holds the file bytes [tailStart, size) read while opening; later
	// reads inside this range are served from memory.
	tail      []byte
	tailStart int64

	stats *IOStats

	legacy *legacyInfo // legacy v1 files only

	// lazy column metadata (OpenOptions.LazyColumns): loaded[i] tells
	// whether columns[i] is decoded; nil when every column is.
	lazyMu sync.Mutex
	loaded []bool

	// scratch keeps the mini-block chunk buffers (*[]byte) of finished
	// 2.1+ reads for the next ReadRows of this file: a scan reads a file
	// in many row chunks, and a fresh buffer costs its zeroing each time.
	scratch sync.Pool
}

// OpenOptions tunes Open. The zero value is valid.
type OpenOptions struct {
	// Size is the file size when the caller knows it (for example from
	// DataFile.file_size_bytes); 0 means "ask the bucket".
	Size int64
	// TailSize is the size of the first read from the end of the file;
	// 0 means DefaultTailSize.
	TailSize int
	// Stats, when set, counts every read request the File makes of its
	// storage and the bytes they return (opening included). One IOStats may
	// be shared by many files (a scan passes one for all of them).
	Stats *IOStats
	// LegacyFields and LegacyFieldIDs let Open read a legacy v1 data file
	// (footer 0.0–0.2, table data_format "0.1"), which holds no schema of
	// its own: pass the table schema (Manifest.fields) and the field ids
	// the fragment's DataFile lists (DataFile.fields; nil = every field).
	// Without LegacyFields, Open refuses a legacy file with a
	// *LegacyFileError. The file's Version is then V0_1.
	LegacyFields   []*pb.Field
	LegacyFieldIDs []int32
	// LegacyManifest is the manifest file LegacyFields come from: legacy
	// dictionary columns keep their values there (Field.dictionary offset
	// and length). Needed only to read such columns.
	LegacyManifest io.ReaderAt
	// LazyColumns makes Open read only the footer, the offset tables and
	// the schema (each by its exact range unless the first tail read
	// already holds it); the column metadata of a column is read and
	// decoded when a read first needs it (ReadRows, ReadColumns,
	// ReadColumn, VerifySeeds: only the columns of the requested fields in
	// 2.1+ files, every column in 2.0), or by LoadColumns. A scan that
	// prunes a file from its seeds alone then never reads its column
	// metadata. Combine it with a small TailSize. Ignored for legacy files.
	LazyColumns bool
	// ReaderAt, when set, serves every read of the file instead of the
	// bucket (which may then be nil): for example the *os.File of a
	// local data file, read with one pread per range.
	ReaderAt io.ReaderAt
}

// IOStats counts storage reads. It is safe for concurrent use.
type IOStats struct {
	Requests atomic.Int64 // range reads issued
	Bytes    atomic.Int64 // bytes those reads returned
}

// countingSource adds every read of src to stats.
type countingSource struct {
	src   source
	stats *IOStats
}

func (s countingSource) readRange(ctx context.Context, off, n int64) ([]byte, error) {
	b, err := s.src.readRange(ctx, off, n)
	s.stats.Requests.Add(1)
	s.stats.Bytes.Add(int64(len(b)))
	return b, err
}

// Open opens the Lance v2 data file at path in bucket. Unless opts.Size
// gives the file size it asks the bucket for it, and then usually needs one
// range read for footer, tables, schema and column metadata together. The
// zero OpenOptions are the defaults.
func Open(ctx context.Context, bucket *blob.Bucket, path string, opts OpenOptions) (*File, error) {
	size := opts.Size
	if size <= 0 && opts.ReaderAt != nil {
		return nil, fmt.Errorf("datafile: %s: OpenOptions.ReaderAt needs OpenOptions.Size", path)
	}
	if size <= 0 {
		attrs, err := bucket.Attributes(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("datafile: stat %s: %w", path, err)
		}
		size = attrs.Size
	}
	var src source = bucketSource{bucket: bucket, path: path}
	if opts.ReaderAt != nil {
		src = readerAtSource{r: opts.ReaderAt}
	}
	if opts.Stats != nil {
		src = countingSource{src: src, stats: opts.Stats}
	}
	f, err := openV2(ctx, src, size, opts.TailSize, opts.LazyColumns)
	var le *LegacyFileError
	if errors.As(err, &le) && opts.LegacyFields != nil {
		f, err = openLegacy(ctx, src, size, opts, le)
	}
	if err != nil {
		return nil, withPath(err, path)
	}
	f.path = path
	f.stats = opts.Stats
	return f, nil
}

// OpenReaderAt opens a Lance v2 file held by r, which has the given size.
func OpenReaderAt(r io.ReaderAt, size int64) (*File, error) {
	return open(context.Background(), readerAtSource{r: r}, size, 0)
}

func open(ctx context.Context, src source, size int64, tailSize int) (*File, error) {
	return openV2(ctx, src, size, tailSize, false)
}

// openV2 is open; lazy leaves the column metadata for LoadColumns.
func openV2(ctx context.Context, src source, size int64, tailSize int, lazy bool) (*File, error) {
	if tailSize <= 0 {
		tailSize = DefaultTailSize
	}
	if size < 8 {
		return nil, formatErr(ErrNotLance, "file", 0, "%d bytes is too short for a Lance file", size)
	}
	f := &File{src: src, size: size}
	n := min(size, int64(max(tailSize, FooterSize)))
	tail, err := src.readRange(ctx, size-n, n)
	if err != nil {
		return nil, err
	}
	f.tail, f.tailStart = tail, size-n

	// Step 2: magic and version (spec §1.5).
	if string(tail[len(tail)-4:]) != magic {
		return nil, formatErr(ErrNotLance, "footer", size-4, "magic is %q, want %q", tail[len(tail)-4:], magic)
	}
	major := binary.LittleEndian.Uint16(tail[len(tail)-8:])
	minor := binary.LittleEndian.Uint16(tail[len(tail)-6:])
	if f.version, err = versionFromFooter(major, minor); err != nil {
		return nil, err
	}
	if size < FooterSize {
		return nil, formatErr(ErrTruncated, "file", 0, "%d bytes is too short for a Lance v2 file (footer is %d bytes)", size, FooterSize)
	}
	if f.footer, err = parseFooter(tail[len(tail)-FooterSize:], size); err != nil {
		return nil, err
	}
	if err := f.footer.checkLayout(size); err != nil {
		return nil, err
	}
	ft := f.footer

	// Step 3: the offset tables.
	if err := f.ensure(ctx, int64(ft.CMOStart)); err != nil {
		return nil, err
	}
	f.globalBuffers = make([]BufferRange, ft.NumGlobalBuffers)
	gbo := f.cached(int64(ft.GBOStart), 16*int64(ft.NumGlobalBuffers))
	for i := range f.globalBuffers {
		r := BufferRange{Pos: binary.LittleEndian.Uint64(gbo[16*i:]), Len: binary.LittleEndian.Uint64(gbo[16*i+8:])}
		at := int64(ft.GBOStart) + 16*int64(i)
		if end, ok := r.End(); !ok || end > uint64(size) {
			return nil, formatErr(ErrTruncated, "GBO table", at, "global buffer %d [%d, +%d) extends past the end of the file (%d bytes)", i, r.Pos, r.Len, size)
		}
		if f.version != V2_0 && r.Pos%64 != 0 {
			return nil, formatErr(ErrMalformed, "GBO table", at, "global buffer %d at position %d is not 64-byte aligned (required in %s files)", i, r.Pos, f.version)
		}
		f.globalBuffers[i] = r
	}
	f.columnBlocks = make([]BufferRange, ft.NumColumns)
	cmo := f.cached(int64(ft.CMOStart), 16*int64(ft.NumColumns))
	for i := range f.columnBlocks {
		r := BufferRange{Pos: binary.LittleEndian.Uint64(cmo[16*i:]), Len: binary.LittleEndian.Uint64(cmo[16*i+8:])}
		at := int64(ft.CMOStart) + 16*int64(i)
		if end, ok := r.End(); !ok || r.Pos < ft.ColumnMetaStart || end > ft.CMOStart {
			return nil, formatErr(ErrMalformed, "CMO table", at, "column %d metadata [%d, +%d) is outside the column metadata region [%d, %d)",
				i, r.Pos, r.Len, ft.ColumnMetaStart, ft.CMOStart)
		}
		f.columnBlocks[i] = r
	}

	// Step 4: the metadata region.
	fd := f.globalBuffers[0]
	if fd.Pos > ft.ColumnMetaStart {
		return nil, formatErr(ErrMalformed, "GBO table", int64(ft.GBOStart), "global buffer 0 (schema) at %d starts after column_meta_start %d", fd.Pos, ft.ColumnMetaStart)
	}
	if int64(ft.ColumnMetaStart) < size-maxMetadataSize || int64(fd.Len) > maxMetadataSize {
		return nil, formatErr(ErrTooLarge, "footer", size-FooterSize, "metadata region exceeds %d bytes", maxMetadataSize)
	}
	fdEnd, _ := fd.End()
	var fdBytes []byte
	if lazy {
		// only the schema's own bytes (from the tail when it holds them)
		if fdBytes, err = f.readRange(ctx, int64(fd.Pos), int64(fd.Len)); err != nil {
			return nil, err
		}
	} else if fdEnd+farSchemaGap < ft.ColumnMetaStart {
		if err := f.ensure(ctx, int64(ft.ColumnMetaStart)); err != nil {
			return nil, err
		}
		if fdBytes, err = src.readRange(ctx, int64(fd.Pos), int64(fd.Len)); err != nil {
			return nil, err
		}
	} else {
		if err := f.ensure(ctx, int64(fd.Pos)); err != nil {
			return nil, err
		}
		fdBytes = f.cached(int64(fd.Pos), int64(fd.Len))
	}

	// Step 5: the FileDescriptor.
	desc, err := decodeFileDescriptor(fdBytes, int64(fd.Pos))
	if err != nil {
		return nil, err
	}
	f.schema, f.numRows = desc.schema, desc.length

	// Steps 6–9: column metadata.
	f.columns = make([]ColumnMetadata, ft.NumColumns)
	if lazy {
		f.loaded = make([]bool, ft.NumColumns)
		return f, nil
	}
	for i, r := range f.columnBlocks {
		cm, err := decodeColumnMetadata(f.cached(int64(r.Pos), int64(r.Len)), int64(r.Pos), i, f.version, uint64(size))
		if err != nil {
			return nil, err
		}
		f.columns[i] = cm
	}
	return f, nil
}

// ensure extends the cached tail so that it starts at or before start.
func (f *File) ensure(ctx context.Context, start int64) error {
	if start >= f.tailStart {
		return nil
	}
	if f.size-start > maxMetadataSize {
		return formatErr(ErrTooLarge, "footer", f.size-FooterSize, "metadata starting at %d is %d bytes, more than the %d allowed", start, f.size-start, maxMetadataSize)
	}
	head, err := f.src.readRange(ctx, start, f.tailStart-start)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(head)+len(f.tail))
	buf = append(append(buf, head...), f.tail...)
	f.tail, f.tailStart = buf, start
	return nil
}

// cached returns file bytes [off, off+n) that the caller knows are in the tail.
func (f *File) cached(off, n int64) []byte {
	i := off - f.tailStart
	return f.tail[i : i+n : i+n]
}

// readRange returns file bytes [off, off+n), from the tail when possible.
func (f *File) readRange(ctx context.Context, off, n int64) ([]byte, error) {
	if off >= f.tailStart && off+n <= f.size {
		return f.cached(off, n), nil
	}
	return f.src.readRange(ctx, off, n)
}

// Path is the path given to Open ("" for OpenReaderAt).
func (f *File) Path() string { return f.path }

// Size is the file size in bytes.
func (f *File) Size() int64 { return f.size }

// Version is the storage version (2.0 for a footer of 0.3).
func (f *File) Version() FileVersion { return f.version }

// Footer returns the decoded footer.
func (f *File) Footer() Footer { return f.footer }

// NumRows is FileDescriptor.length, the number of rows in the file.
func (f *File) NumRows() uint64 { return f.numRows }

// Schema returns the file schema (fields with ids, parent ids, logical types
// and metadata). The caller must not modify it.
func (f *File) Schema() *Schema { return &f.schema }

// Metadata returns the file's schema metadata (FileDescriptor.schema.metadata).
func (f *File) Metadata() map[string]string { return f.schema.Metadata }

// NumColumns is the number of physical columns.
func (f *File) NumColumns() int { return len(f.columns) }

// Column returns the metadata of physical column i.
// With OpenOptions.LazyColumns, an unloaded column is loaded first (see
// LoadColumns; on a read or decoding error the metadata stays empty and
// the next read returns the error).
func (f *File) Column(i int) *ColumnMetadata {
	if f.loaded != nil && i >= 0 && i < len(f.columns) {
		_ = f.LoadColumns(context.Background(), []int{i})
	}
	return &f.columns[i]
}

// GlobalBuffers returns the GBO table; entry 0 is the schema.
func (f *File) GlobalBuffers() []BufferRange { return f.globalBuffers }

// GlobalBuffer reads global buffer i.
func (f *File) GlobalBuffer(ctx context.Context, i int) ([]byte, error) {
	if i < 0 || i >= len(f.globalBuffers) {
		return nil, fmt.Errorf("datafile: global buffer %d does not exist (file has %d): %w", i, len(f.globalBuffers), ErrMalformed)
	}
	r := f.globalBuffers[i]
	if r.Len > maxMetadataSize {
		return nil, withPath(formatErr(ErrTooLarge, "global buffer", int64(r.Pos), "global buffer %d is %d bytes, more than the %d allowed", i, r.Len, maxMetadataSize), f.path)
	}
	return f.readRange(ctx, int64(r.Pos), int64(r.Len))
}

// FieldColumn maps a schema field to its physical column, as a manifest
// DataFile records it (fields / column_indices).
type FieldColumn struct {
	FieldID int32
	Column  int32 // -1 when the field has no column of its own
}

// FieldColumns returns, for every field in pre-order, the physical column
// holding it, following the column layout of the file's version (spec §3.3,
// §5.2): in 2.0 every field has a column; in 2.1+ only leaves do.
func (f *File) FieldColumns() ([]FieldColumn, error) {
	out := make([]FieldColumn, len(f.schema.Fields))
	if f.version == V2_0 {
		if err := f.LoadColumns(context.Background(), nil); err != nil {
			return nil, err
		}
		cols, err := f.columnsOfFields()
		if err != nil {
			return nil, withPath(err, f.path)
		}
		for i := range f.schema.Fields {
			out[i] = FieldColumn{FieldID: f.schema.Fields[i].ID, Column: int32(cols[i])}
		}
		return out, nil
	}
	next := int32(0)
	for i := range f.schema.Fields {
		fld := &f.schema.Fields[i]
		out[i] = FieldColumn{FieldID: fld.ID, Column: -1}
		if len(fld.Children) == 0 {
			out[i].Column = next
			next++
		}
	}
	if int(next) != len(f.columns) {
		return nil, withPath(formatErr(ErrUnsupported, "schema", -1,
			"the %d fields map to %d leaf columns, but the file has %d columns", len(out), next, len(f.columns)), f.path)
	}
	return out, nil
}
