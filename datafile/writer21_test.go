package datafile

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// write21 writes rec with opts and reopens the file with our reader.
func write21(t *testing.T, rec arrow.RecordBatch, opts WriterOptions) (*File, *WriteResult) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	res, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenReaderAt(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("our reader refuses our %s file: %v", opts.Version, err)
	}
	return f, res
}

func nestedRecord(t *testing.T, n int) arrow.RecordBatch {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOfField(2, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}), Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		lb := b.Field(1).(*array.ListBuilder)
		switch i % 4 {
		case 0:
			lb.AppendNull()
		case 1:
			lb.Append(true) // empty
		default:
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
			lb.ValueBuilder().AppendNull()
		}
		sb := b.Field(2).(*array.StructBuilder)
		if i%5 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		}
		fb := b.Field(3).(*array.FixedSizeListBuilder)
		fb.Append(true)
		fb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), -float32(i)}, nil)
		if i%3 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append("v")
		}
	}
	return b.NewRecordBatch()
}

// TestSpec21_W3_W7_W8_PageLayouts: 2.1, 2.2 and 2.3 files carry PageLayout
// pages (W2), has_large_chunk exactly in 2.2 and 2.3 (W3), Σ page lengths = rows
// (W7), layers innermost first (W8), and the manifest lists only the
// leaves (spec 2.1 §8.3).
func TestSpec21_W3_W7_W8_PageLayouts(t *testing.T) {
	rec := nestedRecord(t, 3000)
	defer rec.Release()
	for _, v := range []FileVersion{V2_1, V2_2, V2_3} {
		f, res := write21(t, rec, WriterOptions{Version: v, PageSize: 4096})
		if f.Version() != v || res.FileMinorVersion != v.Minor() {
			t.Fatalf("%s: file version %s, result %d.%d", v, f.Version(), res.FileMajorVersion, res.FileMinorVersion)
		}
		// Leaves: id, l.item, st.a, v, s.
		if got := len(res.Fields); got != 5 || f.NumColumns() != 5 {
			t.Fatalf("%s: %d leaf fields, %d columns; want 5", v, got, f.NumColumns())
		}
		if len(f.Schema().Fields) != 7 {
			t.Fatalf("%s: file schema has %d fields, want 7 (parents included)", v, len(f.Schema().Fields))
		}
		for c := range f.NumColumns() {
			var rows uint64
			for pi, p := range f.Column(c).Pages {
				rows += p.Length
				if p.Encoding.TypeName() != typePageLayout21 {
					t.Fatalf("%s col %d: page encoding %s", v, c, p.Encoding.TypeName())
				}
				var pl pb21.PageLayout
				if err := proto.Unmarshal(p.Encoding.Value, &pl); err != nil {
					t.Fatal(err)
				}
				if mb := pl.GetMiniBlockLayout(); mb != nil && mb.GetHasLargeChunk() != (v >= V2_2) {
					t.Fatalf("%s col %d page %d: has_large_chunk %v", v, c, pi, mb.GetHasLargeChunk())
				}
				if c == 1 { // l.item: [item, list]
					layers := pl.GetMiniBlockLayout().GetLayers()
					if len(layers) != 2 || layers[1] != pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST || pl.GetMiniBlockLayout().GetRepetitionIndexDepth() != 1 {
						t.Fatalf("%s list page layers %v", v, layers)
					}
				}
			}
			if rows != 3000 {
				t.Fatalf("%s col %d: pages hold %d rows", v, c, rows)
			}
		}
	}
}

// TestR15_FixedSizeListSeedHasTheStoredType: the seed of a
// fixed_size_list column whose input child is named "x" and not nullable
// carries the type the file stores (child "item", nullable), so that our
// own reader accepts it (no E07), in 2.0 and 2.2.
func TestR15_FixedSizeListSeedHasTheStoredType(t *testing.T) {
	rec := nestedRecord(t, 100)
	defer rec.Release()
	for _, v := range []FileVersion{V2_0, V2_2} {
		r := rec
		if v == V2_0 { // 2.0 cannot store lists or struct nulls: id and v only
			sch := arrow.NewSchema([]arrow.Field{rec.Schema().Field(0), rec.Schema().Field(3)}, nil)
			r = array.NewRecordBatch(sch, []arrow.Array{rec.Column(0), rec.Column(3)}, rec.NumRows())
			defer r.Release()
		}
		f, res := write21(t, r, WriterOptions{Version: v, SeedColumns: []string{"v"}})
		if res.Seeds[0].Err != nil || res.Seeds[0].BufferIndex == 0 {
			t.Fatalf("%s: seed not written: %v", v, res.Seeds[0].Err)
		}
		infos, err := f.Seeds(context.Background(), seedio.DecodeOptions{TableFlagged: true})
		if err != nil || len(infos) != 1 || infos[0].Err != nil {
			t.Fatalf("%s: our reader refuses our fixed_size_list seed: %v %+v", v, err, infos)
		}
	}
}

// TestSpec21_MapRefusedIn21: Lance 12 refuses maps in 2.1 files; so does
// the writer, with ErrInvalidSchema; 2.2 and 2.3 take them.
func TestSpec21_MapRefusedIn21(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true}}, nil)
	if _, err := NewWriter(&bytes.Buffer{}, sch, WriterOptions{Version: V2_1}); err == nil {
		t.Fatal("map accepted in 2.1")
	}
	if _, err := NewWriter(&bytes.Buffer{}, sch, WriterOptions{Version: V2_2}); err != nil {
		t.Fatalf("map refused in 2.2: %v", err)
	}
	if _, err := NewWriter(&bytes.Buffer{}, sch, WriterOptions{Version: V2_3}); err != nil {
		t.Fatalf("map refused in 2.3: %v", err)
	}
}

// TestSpec21_6_1_NullTypeColumnIsNullableItem: a null-typed column (no
// validity bitmap in Arrow, every slot null) is an all-null page whose one
// layer is NULLABLE_ITEM, as Lance 12 writes it; an ALL_VALID layer made
// Lance 12's reader panic (ComplexAllNullScheduler) on our files.
func TestSpec21_6_1_NullTypeColumnIsNullableItem(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.Null, Nullable: true},
	}, nil)
	for _, v := range []FileVersion{V2_1, V2_2} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i := range 300 {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).AppendNull()
		}
		rec := b.NewRecordBatch()
		b.Release()
		f, _ := write21(t, rec, WriterOptions{Version: v})
		for _, pl := range pageLayouts(t, f, 1) {
			cl := pl.GetConstantLayout()
			if cl == nil || len(cl.GetLayers()) != 1 || cl.GetLayers()[0] != pb21.RepDefLayer_REPDEF_NULLABLE_ITEM {
				t.Errorf("%s: null column page layout %v, want an all-null page with [NULLABLE_ITEM]", v, pl)
			}
		}
		got, err := f.ReadColumns(context.Background(), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := got.Column(1); c.Len() != 300 || c.NullN() != 300 || c.DataType().ID() != arrow.NULL {
			t.Errorf("%s: read back %s with %d of %d nulls", v, c.DataType(), c.NullN(), c.Len())
		}
		got.Release()
		rec.Release()
	}
}
