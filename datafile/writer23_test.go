package datafile

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// record23 has the shapes whose 2.2 encodings differ from 2.1 and the
// ones Lance 12 writes with RLE: runs of equal values (rle values), sparse
// nulls (rle def levels), a constant column (ConstantLayout), a map,
// a dictionary, NaN floats, strings, lists and structs with null parents.
func record23(t *testing.T, n int) arrow.RecordBatch {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "runs", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "sparse", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "const", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	words := []string{"alpha", "beta", "gamma"}
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int32Builder).Append(int32(i / 50 % 7))
		if i%997 == 3 {
			b.Field(2).(*array.Int64Builder).Append(int64(i) << 20)
		} else {
			b.Field(2).AppendNull()
		}
		b.Field(3).(*array.Int16Builder).Append(7)
		switch i % 11 {
		case 0:
			b.Field(4).AppendNull()
		case 1:
			b.Field(4).(*array.Float64Builder).Append(math.NaN())
		default:
			b.Field(4).(*array.Float64Builder).Append(float64(i) / 3)
		}
		if i%6 == 0 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.StringBuilder).Append(words[i%3])
		}
		lb := b.Field(6).(*array.ListBuilder)
		switch i % 4 {
		case 0:
			lb.AppendNull()
		case 1:
			lb.Append(true)
		default:
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
			lb.ValueBuilder().AppendNull()
		}
		sb := b.Field(7).(*array.StructBuilder)
		if i%5 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		}
		mb := b.Field(8).(*array.MapBuilder)
		if i%7 == 0 {
			mb.AppendNull()
		} else {
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).Append(words[i%3])
			mb.ItemBuilder().(*array.Int32Builder).Append(int32(i))
		}
		if i%9 == 0 {
			b.Field(9).AppendNull()
		} else if err := b.Field(9).(*array.BinaryDictionaryBuilder).AppendString(words[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewRecordBatch()
}

// writeBytes writes rec with opts and returns the file.
func writeBytes(t *testing.T, rec arrow.RecordBatch, opts WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rleRunWidths collects the run-length widths of every Rle message under m.
func rleRunWidths(m protoreflect.Message, out *[]uint64) {
	if r, ok := m.Interface().(*pb21.Rle); ok {
		*out = append(*out, r.GetRunLengths().GetFlat().GetBitsPerValue())
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				rleRunWidths(v.List().Get(i).Message(), out)
			}
		case fd.Message() != nil && !fd.IsMap():
			rleRunWidths(v.Message(), out)
		}
		return true
	})
}

// TestSpec21_2_5_W3_W11_W12_V23FileIsTheV22FileWithFooterMinor3: a 2.3
// file is byte for byte the 2.2 file of the same input except the
// footer's minor version (spec 2.1 §2.5: "Lance 12 2.3 output equals 2.2
// except RLE run lengths may be 16-bit"; table §1.1: footer (2,3)); it
// therefore keeps has_large_chunk (W3), u8 RLE run lengths (W11 — Lance
// 12 reads them in 2.3 files: tests/compat
// TestLanceToUs23_LanceCreatesWeAppendLanceReadsAppendsOptimizes) and no
// SparseLayout (W12, T6); our reader opens it as 2.3 with the same values.
func TestSpec21_2_5_W3_W11_W12_V23FileIsTheV22FileWithFooterMinor3(t *testing.T) {
	rec := record23(t, 5000)
	defer rec.Release()
	for _, c := range []struct {
		name string
		opts WriterOptions
	}{
		{"default", WriterOptions{}},
		{"small_pages", WriterOptions{PageSize: 4096}},
		{"no_compression", WriterOptions{NoCompression: true}},
		{"seeds", WriterOptions{SeedAllColumns: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o22, o23 := c.opts, c.opts
			o22.Version, o23.Version = V2_2, V2_3
			b22, b23 := writeBytes(t, rec, o22), writeBytes(t, rec, o23)
			if len(b22) != len(b23) {
				t.Fatalf("2.3 file has %d bytes, the 2.2 file %d", len(b23), len(b22))
			}
			n := len(b23)
			major, minor := binary.LittleEndian.Uint16(b23[n-8:]), binary.LittleEndian.Uint16(b23[n-6:])
			if major != 2 || minor != 3 {
				t.Fatalf("footer version (%d,%d), want (2,3)", major, minor)
			}
			if !bytes.Equal(b22[:n-6], b23[:n-6]) || !bytes.Equal(b22[n-4:], b23[n-4:]) {
				i := 0
				for i < n && b22[i] == b23[i] {
					i++
				}
				t.Fatalf("2.3 file differs from the 2.2 file at byte %d of %d (not the footer minor)", i, n)
			}
			f, err := OpenReaderAt(bytes.NewReader(b23), int64(n))
			if err != nil {
				t.Fatalf("our reader refuses our 2.3 file: %v", err)
			}
			if f.Version() != V2_3 || f.Version().String() != "2.3" {
				t.Fatalf("file version %s", f.Version())
			}
			var widths []uint64
			for ci := range f.NumColumns() {
				for pi, pl := range pageLayouts(t, f, ci) {
					if pl.GetLayout() == nil || len(pl.ProtoReflect().GetUnknown()) != 0 {
						t.Fatalf("column %d page %d: unknown page layout (SparseLayout is #5, W12)", ci, pi)
					}
					if mb := pl.GetMiniBlockLayout(); mb != nil && !mb.GetHasLargeChunk() {
						t.Fatalf("column %d page %d: 2.3 mini-block without has_large_chunk (W3)", ci, pi)
					}
					rleRunWidths(pl.ProtoReflect(), &widths)
				}
			}
			if !c.opts.NoCompression && len(widths) == 0 {
				t.Fatal("no RLE encoding in the file: the fixture no longer covers W11")
			}
			for _, w := range widths {
				if w != 8 {
					t.Fatalf("RLE run lengths of %d bits, want 8 (W11)", w)
				}
			}
			requireReadsBack(t, f, rec)
		})
	}
}
