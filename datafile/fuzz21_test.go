package datafile

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// checkDecoded validates what a fuzzed read returned: the row count asked
// for and structurally valid Arrow arrays.
func checkDecoded(t *testing.T, rec arrow.RecordBatch, rows uint64) {
	t.Helper()
	if uint64(rec.NumRows()) != rows {
		t.Fatalf("decoded %d rows, asked for %d", rec.NumRows(), rows)
	}
	for _, c := range rec.Columns() {
		if v, ok := c.(interface{ ValidateFull() error }); ok {
			if err := v.ValidateFull(); err != nil {
				t.Fatalf("decoded invalid array %s: %v", c.DataType(), err)
			}
		}
	}
}

func typedReadErr(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) && !errors.Is(err, ErrTooLarge) {
		t.Fatalf("untyped read error %T: %v", err, err)
	}
}

// FuzzReadRows21 (lance-file-format-2.1.md §4–§6) feeds hostile 2.1/2.2
// files — real Lance 12 files mutated anywhere, page layouts, chunk
// metadata, chunk headers, levels, full-zip items, repetition indexes —
// to ReadRows, whole and in row ranges: no panic, typed errors, bounded
// memory, valid arrays.
func FuzzReadRows21(f *testing.F) {
	for _, name := range []string{"lance12_v2.2_all_types.lance", "lance12_v2.2_large_lists.lance", "lance12_v2.1_all_types.lance", "lance12_v2.2_small.lance", "lance12_v2.2_encoding_hints.lance"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(0), uint16(0))
		f.Add(b, uint16(1), uint16(0)) // whole, flat path forced
		f.Add(b, uint16(3), uint16(7))
	}
	for _, b := range corpusFuzzSeeds21() {
		f.Add(b, uint16(0), uint16(0))
		f.Add(b, uint16(1), uint16(0))
	}
	for _, b := range append(append(writerFuzzSeeds21(f), sizeFuzzSeeds21(f)...), nanDictFuzzSeeds(f)...) {
		f.Add(b, uint16(0), uint16(0))
		f.Add(b, uint16(100), uint16(900))
	}
	f.Fuzz(func(t *testing.T, b []byte, start, n uint16) {
		file, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil || file.Version() == V2_0 {
			return
		}
		// An odd start sends every whole mini-block page of a flat column
		// down the flat path (page21flat.go), whatever its size.
		req := ReadRequest{ReadOptions: ReadOptions{MaxDecodeBytes: 1 << 24, flatMinBytes: uint64(start % 2)}}
		rows := file.NumRows()
		if n > 0 && uint64(start) < rows {
			end := min(rows, uint64(start)+uint64(n))
			req.Ranges = []RowRange{{uint64(start), end}}
			rows = end - uint64(start)
		}
		rec, err := file.ReadRows(context.Background(), req)
		if err != nil {
			typedReadErr(t, err)
			return
		}
		defer rec.Release()
		checkDecoded(t, rec, rows)
	})
}

// corpusFuzzSeeds21 returns the distinct 2.1+ data files of the shared
// Lance corpus up to 32 KB (about thirty: the page layouts, encodings and
// value shapes Lance 12 writes for the corpus tables, beyond the four
// testdata files). Without the corpus (CI always has it) the testdata
// seeds alone remain.
func corpusFuzzSeeds21() [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	_ = filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lance") || filepath.Base(filepath.Dir(p)) != "data" {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 32<<10 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || seen[string(b)] {
			return nil
		}
		if file, err := OpenReaderAt(bytes.NewReader(b), int64(len(b))); err != nil || file.Version() == V2_0 {
			return nil
		}
		seen[string(b)] = true
		out = append(out, b)
		return nil
	})
	return out
}

// legacyFuzzFields are the table fields of the legacy seed files: the
// Lance 12 all-types table (from its manifest in testdata) and Lance
// 0.15's {x int64}.
func legacyFuzzFields(t testing.TB) (allTypes, x []*pb.Field, mf []byte) {
	mf, err := os.ReadFile(filepath.Join("testdata", "lance12_legacy_all_types.manifest"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode("legacy.manifest", mf)
	if err != nil {
		t.Fatal(err)
	}
	return m.Manifest.GetFields(), []*pb.Field{{Name: "x", Id: 0, ParentId: -1, LogicalType: "int64", Nullable: true}}, mf
}

// TestLegacy_ReadsWithTableFields: a legacy v1 file opens with the
// manifest's fields (OpenOptions.LegacyFields) and decodes; without them
// Open refuses it with *LegacyFileError. (Values against Lance 12:
// tests/compat TestCorpus_OurLibraryMatchesExpect, storage_legacy and the
// historical v1 datasets.)
func TestLegacy_ReadsWithTableFields(t *testing.T) {
	all, x, mf := legacyFuzzFields(t)
	for _, c := range []struct {
		file   string
		fields []*pb.Field
		rows   int64
		want   string
	}{
		{"lance12_legacy_all_types.lance", all, 10, "utf8"},
		{"lance0.15_legacy_v1.lance", x, -1, "x"},
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		b := memBucket(t, map[string][]byte{"f.lance": raw})
		if _, err := Open(context.Background(), b, "f.lance", OpenOptions{}); !errors.Is(err, ErrLegacyFormat) {
			t.Fatalf("%s without fields: %v, want ErrLegacyFormat", c.file, err)
		}
		f, err := Open(context.Background(), b, "f.lance", OpenOptions{LegacyFields: c.fields, LegacyManifest: bytes.NewReader(mf)})
		if err != nil {
			t.Fatal(err)
		}
		if f.Version() != V0_1 || f.Version().String() != "0.1" {
			t.Errorf("version %s", f.Version())
		}
		rec, err := f.ReadColumns(context.Background(), ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if c.rows >= 0 && rec.NumRows() != c.rows {
			t.Errorf("%s: %d rows, want %d", c.file, rec.NumRows(), c.rows)
		}
		if !strings.Contains(rec.Schema().String(), c.want) {
			t.Errorf("%s: schema %s lacks %s", c.file, rec.Schema(), c.want)
		}
		checkDecoded(t, rec, uint64(rec.NumRows()))
		rec.Release()
	}
}

// FuzzReadRowsLegacy feeds hostile legacy v1 files (metadata, page table,
// positions, dictionary positions) to Open with table fields and to
// ReadRows: no panic, typed errors, bounded memory.
func FuzzReadRowsLegacy(f *testing.F) {
	all, x, mf := legacyFuzzFields(f)
	for i, name := range []string{"lance12_legacy_all_types.lance", "lance0.15_legacy_v1.lance"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i), uint16(0), uint16(0))
		f.Add(b, uint8(i), uint16(2), uint16(5))
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8, start, n uint16) {
		fields := all
		if which%2 == 1 {
			fields = x
		}
		file, err := openLegacyBytes(b, fields, mf)
		if err != nil {
			var fe *FormatError
			var le *LegacyFileError
			var ve *VersionError
			if !errors.As(err, &fe) && !errors.As(err, &le) && !errors.As(err, &ve) {
				t.Fatalf("untyped open error %T: %v", err, err)
			}
			return
		}
		// An odd start sends every whole mini-block page of a flat column
		// down the flat path (page21flat.go), whatever its size.
		req := ReadRequest{ReadOptions: ReadOptions{MaxDecodeBytes: 1 << 24, flatMinBytes: uint64(start % 2)}}
		rows := file.NumRows()
		if n > 0 && uint64(start) < rows {
			end := min(rows, uint64(start)+uint64(n))
			req.Ranges = []RowRange{{uint64(start), end}}
			rows = end - uint64(start)
		}
		rec, err := file.ReadRows(context.Background(), req)
		if err != nil {
			typedReadErr(t, err)
			return
		}
		defer rec.Release()
		checkDecoded(t, rec, rows)
	})
}

func openLegacyBytes(b []byte, fields []*pb.Field, mf []byte) (*File, error) {
	src := readerAtSource{r: bytes.NewReader(b)}
	f, err := open(context.Background(), src, int64(len(b)), 0)
	var le *LegacyFileError
	if errors.As(err, &le) {
		return openLegacy(context.Background(), src, int64(len(b)), OpenOptions{LegacyFields: fields, LegacyManifest: bytes.NewReader(mf)}, le)
	}
	return f, err
}

// memBucket is an in-memory bucket holding the given objects.
func memBucket(t *testing.T, objs map[string][]byte) *blob.Bucket {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	for k, v := range objs {
		if err := b.WriteAll(context.Background(), k, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// writerFuzzSeeds21 are small files of our 2.1/2.2 writer with the forms
// session 23 added: pages of one column with different layers (a page
// without nulls has no def levels), list rows spanning bit-packed chunks
// ([ends, partial] repetition index), out-of-line bit-packed levels,
// constant pages, FSST full-zip items.
func writerFuzzSeeds21(f *testing.F) [][]byte {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var out [][]byte
	for _, v := range []FileVersion{V2_1, V2_2} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, sch, WriterOptions{Version: v, PageSize: 4 << 10})
		if err != nil {
			f.Fatal(err)
		}
		for part := range 2 {
			b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
			for r := range 1200 {
				if part == 1 && r%9 == 0 {
					b.Field(0).AppendNull()
					b.Field(1).AppendNull()
					b.Field(2).AppendNull()
					continue
				}
				b.Field(0).(*array.Int64Builder).Append(int64(r % 50))
				lb := b.Field(1).(*array.ListBuilder)
				lb.Append(true)
				for k := range r % 4 {
					lb.ValueBuilder().(*array.Int32Builder).Append(int32(r + k))
				}
				b.Field(2).(*array.StringBuilder).Append("same")
			}
			rec := b.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				f.Fatal(err)
			}
			rec.Release()
			b.Release()
		}
		if _, err := w.Close(); err != nil {
			f.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

// sizeFuzzSeeds21 are files of our writer with the forms it chooses for
// size parity with Lance 12 (session 24): 2.2 all-null pages whose rep/def
// levels are an RLE block frame, inline or out-of-line bit-packed; 2.1
// dictionaries of 128-bit values; a null-type column; RLE mini-block
// values chosen by Lance's size model — in one page and in small pages.
func sizeFuzzSeeds21(f *testing.F) [][]byte {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
		{Name: "ln", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "n", Type: arrow.Null, Nullable: true},
		{Name: "t", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
	}, nil)
	var out [][]byte
	for _, v := range []FileVersion{V2_1, V2_2} {
		for _, ps := range []int{0, 2 << 10} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, sch, WriterOptions{Version: v, PageSize: ps})
			if err != nil {
				f.Fatal(err)
			}
			b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
			for r := range 1500 {
				sb := b.Field(0).(*array.StructBuilder)
				if r%7 == 3 || (r/300)%2 == 1 {
					sb.AppendNull()
				} else {
					sb.Append(true)
					sb.FieldBuilder(0).AppendNull()
					sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(r) << 20)
				}
				lb := b.Field(1).(*array.ListBuilder)
				if r%11 == 4 {
					lb.AppendNull()
				} else {
					lb.Append(true)
					for range r % 3 {
						lb.ValueBuilder().AppendNull()
					}
				}
				b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r%13) * 1_000_003))
				b.Field(3).AppendNull()
				if r%50 == 9 {
					b.Field(4).AppendNull()
				} else {
					b.Field(4).(*array.Date64Builder).Append(arrow.Date64(int64(r/20) * 86_400_000))
				}
			}
			rec := b.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				f.Fatal(err)
			}
			rec.Release()
			b.Release()
			if _, err := w.Close(); err != nil {
				f.Fatal(err)
			}
			out = append(out, buf.Bytes())
		}
	}
	return out
}

// TestSizeFuzzSeeds21_ReadBack: the size-parity seeds of FuzzReadRows21
// read back equal to what was written and hold the forms they are meant
// to cover (2.2 compressed all-null levels, a 2.1 128-bit dictionary).
func TestSizeFuzzSeeds21_ReadBack(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range sizeFuzzSeeds21(&testing.F{}) {
		file, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := file.ReadRows(context.Background(), ReadRequest{})
		if err != nil {
			t.Fatal(err)
		}
		checkDecoded(t, rec, 1500)
		rec.Release()
		for ci := range file.NumColumns() {
			for _, pg := range file.Column(ci).Pages {
				pl, err := (&pg).Kinds()
				if err != nil {
					t.Fatal(err)
				}
				seen[file.Version().String()+" "+strings.Join(pl, ",")] = true
			}
		}
	}
	for _, want := range []string{"2.2 constant,flat,out_of_line_bitpacking", "2.2 constant,flat,rle", "2.2 constant,inline_bitpacking", "2.1 mini-block,flat,inline_bitpacking,mini-block-dictionary"} {
		found := false
		for k := range seen {
			found = found || strings.HasPrefix(k, want)
		}
		if !found {
			t.Errorf("no page of kinds %q among %v", want, seen)
		}
	}
}
