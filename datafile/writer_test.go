package datafile

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// spec18Record is the table of spec §1.8: {id int64 not null, x float64,
// s string} with rows (1, 1.5, "a"), (2, null, null), (3, -0.0, "ccc").
func spec18Record(t testing.TB) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{1.5, 7, math.Copysign(0, -1)}, []bool{true, false, true})
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"a", "zzz", "ccc"}, []bool{true, false, true})
	return b.NewRecordBatch()
}

func writeFile(t testing.TB, schema *arrow.Schema, opts WriterOptions, recs ...arrow.RecordBatch) ([]byte, *WriteResult) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, opts)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	res, err := w.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.FileSizeBytes != uint64(buf.Len()) {
		t.Fatalf("FileSizeBytes %d, wrote %d", res.FileSizeBytes, buf.Len())
	}
	return buf.Bytes(), res
}

// TestGolden_Spec18WorkedExample reproduces, byte for byte, the 862-byte
// lance-12 file of spec §1.8 (layout §1.7, FileDescriptor §3.5, column
// metadata §4.6, encodings §4.5). The golden file was assembled by hand
// from the byte tables of the spec, not by this writer.
func TestGolden_Spec18WorkedExample(t *testing.T) {
	golden, err := os.ReadFile("testdata/spec_1_8_example.lance")
	if err != nil {
		t.Fatal(err)
	}
	rec := spec18Record(t)
	defer rec.Release()
	got, res := writeFile(t, rec.Schema(), WriterOptions{}, rec)
	if !bytes.Equal(got, golden) {
		for i := range min(len(got), len(golden)) {
			if got[i] != golden[i] {
				t.Fatalf("differs from the spec example at byte %d (got %d bytes, want %d): got % x, want % x",
					i, len(got), len(golden), got[i:min(i+16, len(got))], golden[i:min(i+16, len(golden))])
			}
		}
		t.Fatalf("got %d bytes, want %d", len(got), len(golden))
	}
	// §5.3: the DataFile Lance recorded for this file.
	if res.FileSizeBytes != 862 || res.FileMajorVersion != 2 || res.FileMinorVersion != 0 ||
		!equalInt32s(res.Fields, []int32{0, 1, 2}) || !equalInt32s(res.ColumnIndices, []int32{0, 1, 2}) || res.NumRows != 3 {
		t.Errorf("result %+v", res)
	}
	// And the reader reads the golden file back to the same rows.
	f, err := OpenReaderAt(bytes.NewReader(golden), int64(len(golden)))
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Release()
	assertRecordsEqual(t, rec, back)
}

func equalInt32s(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// assertRecordsEqual compares two records column by column, float bits
// included (NaN payloads and signed zeros must survive).
func assertRecordsEqual(t testing.TB, want, got arrow.RecordBatch) {
	t.Helper()
	if want.NumCols() != got.NumCols() || want.NumRows() != got.NumRows() {
		t.Fatalf("shape: got %dx%d, want %dx%d", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
	}
	for i := 0; i < int(want.NumCols()); i++ {
		name := want.ColumnName(i)
		if !arrow.TypeEqual(want.Column(i).DataType(), got.Column(i).DataType()) {
			t.Fatalf("column %q: type %s, want %s", name, got.Column(i).DataType(), want.Column(i).DataType())
		}
		assertArraysEqual(t, name, want.Column(i), got.Column(i))
	}
}

func assertArraysEqual(t testing.TB, name string, want, got arrow.Array) {
	t.Helper()
	if want.Len() != got.Len() || want.NullN() != got.NullN() {
		t.Fatalf("column %q: len/nulls %d/%d, want %d/%d", name, got.Len(), got.NullN(), want.Len(), want.NullN())
	}
	switch w := want.(type) {
	case *array.Float64:
		g := got.(*array.Float64)
		for i := 0; i < w.Len(); i++ {
			if w.IsValid(i) != g.IsValid(i) || (w.IsValid(i) && math.Float64bits(w.Value(i)) != math.Float64bits(g.Value(i))) {
				t.Fatalf("column %q row %d: got %v (%x), want %v (%x)", name, i, g.Value(i), math.Float64bits(g.Value(i)), w.Value(i), math.Float64bits(w.Value(i)))
			}
		}
		return
	case *array.Float32:
		g := got.(*array.Float32)
		for i := 0; i < w.Len(); i++ {
			if w.IsValid(i) != g.IsValid(i) || (w.IsValid(i) && math.Float32bits(w.Value(i)) != math.Float32bits(g.Value(i))) {
				t.Fatalf("column %q row %d: got %v, want %v", name, i, g.Value(i), w.Value(i))
			}
		}
		return
	case *array.Float16:
		g := got.(*array.Float16)
		for i := 0; i < w.Len(); i++ {
			if w.IsValid(i) != g.IsValid(i) || (w.IsValid(i) && w.Value(i).Uint16() != g.Value(i).Uint16()) {
				t.Fatalf("column %q row %d: got %v, want %v", name, i, g.Value(i), w.Value(i))
			}
		}
		return
	case *array.Struct:
		g := got.(*array.Struct)
		for j := 0; j < w.NumField(); j++ {
			assertArraysEqual(t, name+"."+w.DataType().(*arrow.StructType).Field(j).Name, w.Field(j), g.Field(j))
		}
		return
	case *array.FixedSizeList:
		g := got.(*array.FixedSizeList)
		for i := 0; i < w.Len(); i++ {
			if w.IsValid(i) != g.IsValid(i) {
				t.Fatalf("column %q row %d: validity %v, want %v", name, i, g.IsValid(i), w.IsValid(i))
			}
			if w.IsValid(i) {
				ws, we := w.ValueOffsets(i)
				gs, ge := g.ValueOffsets(i)
				wi := array.NewSlice(w.ListValues(), ws, we)
				gi := array.NewSlice(g.ListValues(), gs, ge)
				assertArraysEqual(t, name+"[item]", wi, gi)
				wi.Release()
				gi.Release()
			}
		}
		return
	}
	if !array.Equal(want, got) {
		t.Fatalf("column %q:\n got %v\nwant %v", name, got, want)
	}
}

// TestW1toW7_LayoutOfWrittenFile checks the writer rules of spec §1.7 on a
// multi-page file with a seed: alignment of every page buffer, extra global
// buffer and the FileDescriptor (W1, W3), buffers before the descriptor
// (W2), contiguous column metadata, CMO, GBO and footer (W4–W7), and
// priority = first row of each page (§4.1).
func TestW1toW7_LayoutOfWrittenFile(t *testing.T) {
	rec := randomRecord(newRand(7), allTypesSchema(), 3000)
	defer rec.Release()
	raw, _ := writeFile(t, rec.Schema(), WriterOptions{PageSize: 4096, SeedColumns: []string{"i64", "utf8"}}, rec)
	f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	ft := f.Footer()
	fd := f.GlobalBuffers()[0]
	if ft.Major != 0 || ft.Minor != 3 {
		t.Errorf("W7: footer version %d.%d, want 0.3", ft.Major, ft.Minor)
	}
	if fd.Pos%64 != 0 || fd.Pos+fd.Len != ft.ColumnMetaStart {
		t.Errorf("W3: FileDescriptor at %+v, column metadata at %d", fd, ft.ColumnMetaStart)
	}
	for i, g := range f.GlobalBuffers()[1:] {
		if g.Pos%64 != 0 || g.Pos+g.Len > fd.Pos {
			t.Errorf("W1/W2: global buffer %d at %+v, descriptor at %d", i+1, g, fd.Pos)
		}
	}
	next := ft.ColumnMetaStart
	multi := 0
	for c := 0; c < f.NumColumns(); c++ {
		blk := f.columnBlocks[c]
		if blk.Pos != next {
			t.Errorf("W4: column %d metadata at %d, want %d", c, blk.Pos, next)
		}
		next = blk.Pos + blk.Len
		var row uint64
		for pi, p := range f.Column(c).Pages {
			if p.Priority != row {
				t.Errorf("column %d page %d: priority %d, want first row %d", c, pi, p.Priority, row)
			}
			row += p.Length
			for _, b := range p.Buffers {
				if b.Pos%64 != 0 || (b.Len > 0 && b.Pos+b.Len > fd.Pos) {
					t.Errorf("W1/W2: column %d page %d buffer %+v", c, pi, b)
				}
			}
		}
		if len(f.Column(c).Pages) > 1 {
			multi++
		}
	}
	if next != ft.CMOStart || ft.GBOStart != ft.CMOStart+16*uint64(ft.NumColumns) ||
		ft.GBOStart+16*uint64(ft.NumGlobalBuffers) != uint64(len(raw))-FooterSize {
		t.Errorf("W5–W7: footer %+v, file %d bytes", ft, len(raw))
	}
	if multi < 5 {
		t.Errorf("only %d columns have several pages; the test needs multi-page columns", multi)
	}
}

// TestWriter_FieldIDsAndMetadata: ids come from the table (pre-order),
// schema and field metadata are kept, stale lance.seed.* keys are dropped
// (they point into another file's buffers, R1/R6).
func TestWriter_FieldIDsAndMetadata(t *testing.T) {
	md := arrow.NewMetadata([]string{"k1", "lance.seed.a", ""}, []string{"v1", "1:8192", "empty-key"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32, Metadata: arrow.NewMetadata([]string{"fk"}, []string{"fv"})},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.BinaryTypes.Binary, Nullable: true}), Nullable: true},
	}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2}, nil)
	sb := b.Field(1).(*array.StructBuilder)
	sb.AppendValues([]bool{true, true})
	sb.FieldBuilder(0).(*array.Int8Builder).AppendValues([]int8{1, 0}, []bool{true, false})
	sb.FieldBuilder(1).(*array.BinaryBuilder).AppendValues([][]byte{{1}, nil}, []bool{true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()

	raw, res := writeFile(t, schema, WriterOptions{FieldIDs: []int32{7, 3, 9, 4}}, rec)
	if !equalInt32s(res.Fields, []int32{7, 3, 9, 4}) || !equalInt32s(res.ColumnIndices, []int32{0, 1, 2, 3}) {
		t.Errorf("fields %v columns %v", res.Fields, res.ColumnIndices)
	}
	f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Schema()
	if s.Fields[2].ParentID != 3 || s.Fields[3].ParentID != 3 || s.Fields[1].ParentID != -1 || s.Fields[0].Metadata["fk"] != "fv" {
		t.Errorf("fields %+v", s.Fields)
	}
	if len(f.Metadata()) != 2 || f.Metadata()["k1"] != "v1" || f.Metadata()[""] != "empty-key" {
		t.Errorf("schema metadata %v", f.Metadata())
	}
	fc, err := f.FieldColumns()
	if err != nil || len(fc) != 4 || fc[3] != (FieldColumn{FieldID: 4, Column: 3}) {
		t.Errorf("field columns %v %v", fc, err)
	}
	back, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Release()
	assertRecordsEqual(t, rec, back)
	if back.Schema().Field(0).Metadata.FindKey("fk") < 0 {
		t.Errorf("field metadata lost in ArrowSchema")
	}
}

// TestWriter_Refusals: what a 2.0 file cannot hold is refused up front.
func TestWriter_Refusals(t *testing.T) {
	mk := func(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }
	cases := []struct {
		name   string
		schema *arrow.Schema
		opts   WriterOptions
		want   error
	}{
		{"dictionary of date32 (Lance 12's 2.0 writer fails too)", mk(arrow.Field{Name: "l", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.FixedWidthTypes.Date32}}), WriterOptions{}, ErrInvalidSchema},
		{"map type", mk(arrow.Field{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)}), WriterOptions{}, ErrInvalidSchema},
		{"timestamp tz with colon (trap 10)", mk(arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+05:00"}}), WriterOptions{}, ErrInvalidSchema},
		{"fsl of strings", mk(arrow.Field{Name: "f", Type: arrow.FixedSizeListOf(2, arrow.BinaryTypes.String)}), WriterOptions{}, ErrInvalidSchema},
		{"too few ids", mk(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32}), WriterOptions{FieldIDs: []int32{1}}, ErrInvalidSchema},
		{"duplicate ids", mk(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int32}), WriterOptions{FieldIDs: []int32{1, 1}}, ErrInvalidSchema},
		{"page too big (trap 14)", mk(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), WriterOptions{PageSize: MaxPageSize + 1}, ErrInvalidSchema},
		{"unknown seed column", mk(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), WriterOptions{SeedColumns: []string{"b"}}, ErrInvalidSchema},
		{"R4 rows_per_zone too large", mk(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), WriterOptions{SeedAllColumns: true, Seed: seedio.CollectorOptions{RowsPerZone: 1 << 33}}, seedio.ErrCollectorOptions},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewWriter(&bytes.Buffer{}, c.schema, c.opts)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
}

// TestTrap12_StructNullsRefused: 2.0 has no struct validity; a struct array
// with nulls (and nulls in a non-nullable field) is refused, and nothing is
// written for that batch.
func TestTrap12_StructNullsRefused(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int8}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	sb := b.Field(0).(*array.StructBuilder)
	sb.AppendValues([]bool{true, false})
	sb.FieldBuilder(0).(*array.Int8Builder).AppendValues([]int8{1, 0}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	w, err := NewWriter(&bytes.Buffer{}, schema, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); !errors.Is(err, ErrInvalidData) || !strings.Contains(err.Error(), "struct validity") {
		t.Fatalf("got %v", err)
	}

	schema2 := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int8}}, nil)
	b2 := array.NewRecordBuilder(memory.DefaultAllocator, schema2)
	defer b2.Release()
	b2.Field(0).(*array.Int8Builder).AppendValues([]int8{1, 0}, []bool{true, false})
	rec2 := b2.NewRecordBatch()
	defer rec2.Release()
	w2, _ := NewWriter(&bytes.Buffer{}, schema2, WriterOptions{})
	if err := w2.Write(rec2); !errors.Is(err, ErrInvalidData) {
		t.Fatalf("nulls in a non-nullable field: got %v", err)
	}
}

// TestW9_EmptyFileRefused: Close without rows writes nothing and says so.
func TestW9_EmptyFileRefused(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int8}}, nil), WriterOptions{SeedAllColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); !errors.Is(err, ErrEmptyFile) || buf.Len() != 0 {
		t.Fatalf("got %v and %d bytes", err, buf.Len())
	}
	if _, err := w.Close(); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("second Close: %v", err)
	}
}

// TestWriter_Float16AndFSLBool covers widths the other tests exercise less.
func TestWriter_Float16AndFSLBool(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "fb", Type: arrow.FixedSizeListOf(3, arrow.FixedWidthTypes.Boolean), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float16Builder).AppendValues([]float16.Num{float16.New(1.5), float16.FromBits(0x7e01), float16.FromBits(0xfe00)}, []bool{true, true, false})
	lb := b.Field(1).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.BooleanBuilder)
	lb.AppendValues([]bool{true, false, true})
	vb.AppendValues([]bool{true, false, true, true, true, true, false, true, false}, []bool{true, true, false, true, true, true, true, true, true})
	rec := b.NewRecordBatch()
	defer rec.Release()
	raw, _ := writeFile(t, schema, WriterOptions{}, rec)
	f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Release()
	assertRecordsEqual(t, rec, back)
}

// TestWriter_ReleasesCallerArrays: the writer references the caller's
// buffers without copying until a page is written, and releases every
// reference by Close (checked allocator).
func TestWriter_ReleasesCallerArrays(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < 5000; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(strings.Repeat("x", i%7))
		lb := b.Field(2).(*array.FixedSizeListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), -float32(i)}, nil)
	}
	rec := b.NewRecordBatch()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, WriterOptions{PageSize: 4000, SeedAllColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release() // the writer still holds what it has not written yet
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenReaderAt(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 5000 || got.Column(0).(*array.Int64).Value(4999) != 4999 || got.Column(1).(*array.String).Value(13) != "xxxxxx" {
		t.Errorf("read back %v", got)
	}
}
