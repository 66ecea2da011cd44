package datafile

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// writeBatches21 writes recs as one file and reopens it; it returns the
// file's bytes too.
func writeBatches21(t *testing.T, recs []arrow.RecordBatch, opts WriterOptions) (*File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, recs[0].Schema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenReaderAt(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f, buf.Bytes()
}

// pageLayouts returns the page layouts of column ci.
func pageLayouts(t *testing.T, f *File, ci int) []*pb21.PageLayout {
	t.Helper()
	var out []*pb21.PageLayout
	for _, p := range f.Column(ci).Pages {
		var pl pb21.PageLayout
		if err := proto.Unmarshal(p.Encoding.Value, &pl); err != nil {
			t.Fatal(err)
		}
		out = append(out, &pl)
	}
	return out
}

// requireReadsBack: the whole file and two row ranges read back equal.
func requireReadsBack(t *testing.T, f *File, rec arrow.RecordBatch) {
	t.Helper()
	got, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	assertRecordsEqual(t, rec, got)
	n := rec.NumRows()
	part, err := f.ReadRows(context.Background(), ReadRequest{Ranges: []RowRange{{Start: 1, End: uint64(n / 3)}, {Start: uint64(n/2 + 1), End: uint64(n - 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer part.Release()
	want := concatRecords(t, rec.Schema(), []arrow.RecordBatch{rec.NewSlice(1, n/3), rec.NewSlice(n/2+1, n-1)})
	defer want.Release()
	assertRecordsEqual(t, want, part)
}

func textOf(i, n int) string {
	words := []string{"lorem ", "ipsum ", "dolor ", "sit ", "amet ", "tempor ", "magna "}
	var sb strings.Builder
	for k := 0; sb.Len() < n; k++ {
		sb.WriteString(words[(i+k*k+k*i)%len(words)])
	}
	return sb.String()[:n]
}

// TestSpec21_7_10_FullZipValuesCompressedPerValue: full-zip string and
// binary pages are compressed per value as Lance 12 does (spec 2.1 §7.10,
// §7.7): values over 32 KiB make every item a zstd frame
// (general[zstd](variable)), a page of ≥ 32 KiB of shorter values FSST
// codes (fsst{variable}); pages below stay raw; all read back equal.
func TestSpec21_7_10_FullZipValuesCompressedPerValue(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "huge", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "hugebin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "long", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "few", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	const n = 40
	for i := range n {
		if i == 3 {
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
			b.Field(3).AppendNull()
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(textOf(i, 40<<10+i))
		if i == 5 {
			b.Field(1).(*array.BinaryBuilder).Append([]byte{}) // an empty valid value is a frame too
		} else {
			b.Field(1).(*array.BinaryBuilder).Append([]byte(textOf(i+1, 33<<10)))
		}
		b.Field(2).(*array.StringBuilder).Append(textOf(i, 1000+i*7))
		b.Field(3).(*array.StringBuilder).Append(textOf(i, 300))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, v := range []FileVersion{V2_1, V2_2} {
		t.Run(v.String(), func(t *testing.T) {
			f, _ := write21(t, rec, WriterOptions{Version: v})
			for ci, want := range []string{"zstd", "zstd", "fsst", "raw"} {
				for pi, pl := range pageLayouts(t, f, ci) {
					fz := pl.GetFullZipLayout()
					if fz == nil {
						t.Fatalf("column %d page %d is not full-zip: %v", ci, pi, pl)
					}
					vc := fz.GetValueCompression()
					got := "raw"
					switch {
					case vc.GetGeneral().GetCompression().GetScheme() == pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD && vc.GetGeneral().GetValues().GetVariable() != nil:
						got = "zstd"
					case vc.GetFsst() != nil && vc.GetFsst().GetValues().GetVariable() != nil:
						got = "fsst"
					case vc.GetVariable() == nil:
						got = vc.String()
					}
					if got != want {
						t.Errorf("column %d page %d: %s, want %s", ci, pi, got, want)
					}
				}
			}
			if sz := f.Column(0).Pages[0].Buffers[0].Len; sz > n*(40<<10)/4 {
				t.Errorf("zstd page of %d bytes for %d compressible 40 KiB values", sz, n)
			}
			requireReadsBack(t, f, rec)
		})
	}
}

// TestSpec21_3_2_PageLayersFromData: a page's layers come from its data
// (Lance 12): a nullable column's page without nulls is ALL_VALID with no
// def levels, the next page with nulls NULLABLE; list layers are emptyable
// only with an empty list. Our reader widens a column's layers across such
// pages and reads everything back equal.
func TestSpec21_3_2_PageLayersFromData(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	mk := func(first int, nulls bool) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
		defer b.Release()
		for r := first; r < first+3000; r++ {
			if nulls && r%7 == 0 {
				b.Field(0).AppendNull()
				b.Field(1).AppendNull()
				continue
			}
			b.Field(0).(*array.Int64Builder).Append(int64(r * 1000003))
			lb := b.Field(1).(*array.ListBuilder)
			lb.Append(true)
			for k := range 1 + r%3 {
				lb.ValueBuilder().(*array.Int32Builder).Append(int32(r + k))
			}
		}
		return b.NewRecordBatch()
	}
	r1, r2 := mk(0, false), mk(3000, true)
	defer r1.Release()
	defer r2.Release()
	for _, v := range []FileVersion{V2_1, V2_2} {
		t.Run(v.String(), func(t *testing.T) {
			f, _ := writeBatches21(t, []arrow.RecordBatch{r1, r2}, WriterOptions{Version: v, PageSize: 8 << 10})
			for ci := range 2 {
				pls := pageLayouts(t, f, ci)
				first, last := pls[0].GetMiniBlockLayout(), pls[len(pls)-1].GetMiniBlockLayout()
				if first == nil || last == nil {
					t.Fatalf("column %d: first/last pages are not mini-block", ci)
				}
				if first.GetDefCompression() != nil || first.Layers[0] != pb21.RepDefLayer_REPDEF_ALL_VALID_ITEM {
					t.Errorf("column %d page 0 (no nulls): layers %v, def %v", ci, first.Layers, first.GetDefCompression())
				}
				if last.GetDefCompression() == nil || fmt.Sprint(last.Layers) == fmt.Sprint(first.Layers) {
					t.Errorf("column %d last page (nulls): layers %v, def %v", ci, last.Layers, last.GetDefCompression())
				}
			}
			all := concatRecords(t, sch, []arrow.RecordBatch{r1, r2})
			defer all.Release()
			requireReadsBack(t, f, all)
		})
	}
}

// TestSpec21_4_6_ListRowsSpanChunks: list pages have their values
// compressed and chunked by the codec (1024-value bit-packed chunks here),
// so rows span chunks; the repetition index records [ends, partial] per
// chunk (spec 2.1 §4.6) and the pages read back equal, also by row range.
func TestSpec21_4_6_ListRowsSpanChunks(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "ls", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for r := range 2000 {
		for c := range 2 {
			lb := b.Field(c).(*array.ListBuilder)
			switch r % 17 {
			case 3:
				lb.AppendNull()
				continue
			case 5:
				lb.AppendEmptyValue()
				continue
			}
			lb.Append(true)
			for k := range r%9 + 1 {
				switch {
				case k == 4 && r%4 == 0:
					lb.ValueBuilder().AppendNull()
				case c == 0:
					lb.ValueBuilder().(*array.Int32Builder).Append(int32((r*31 + k) % 1000))
				default:
					lb.ValueBuilder().(*array.StringBuilder).Append(textOf(r+k, 3+(r+k)%20))
				}
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, v := range []FileVersion{V2_1, V2_2} {
		t.Run(v.String(), func(t *testing.T) {
			f, file := writeBatches21(t, []arrow.RecordBatch{rec}, WriterOptions{Version: v})
			partial := 0
			for ci := range 2 {
				for pi, pl := range pageLayouts(t, f, ci) {
					mb := pl.GetMiniBlockLayout()
					if mb == nil || mb.RepetitionIndexDepth != 1 {
						t.Fatalf("column %d page %d: %v", ci, pi, pl)
					}
					p := f.Column(ci).Pages[pi]
					idx := p.Buffers[len(p.Buffers)-1]
					raw := file[idx.Pos : idx.Pos+idx.Len]
					for k := 8; k+8 <= len(raw); k += 16 {
						if raw[k] != 0 || raw[k+1] != 0 {
							partial++
						}
					}
				}
			}
			if partial == 0 {
				t.Error("no chunk ends inside a row: the chunking did not split rows")
			}
			requireReadsBack(t, f, rec)
		})
	}
}

// TestSpec21_W6_ListPageCutWhenAChunkExceeds32KiB: 2.1 list pages are as
// large as Lance 12 writes them (up to 65,535 levels, not a page per 6,000
// levels), and a page whose chunk would exceed the 32 KiB of a 2.1 chunk
// with its levels (here 64,000 levels of 4-bit def levels around 129
// items: one chunk) is cut in two at its middle row until every chunk fits; the file
// reads back equal.
func TestSpec21_W6_ListPageCutWhenAChunkExceeds32KiB(t *testing.T) {
	inner := arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	for range 5 {
		inner = arrow.Field{Name: "s", Type: arrow.StructOf(inner), Nullable: true}
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "deep", Type: arrow.ListOfField(inner), Nullable: true},
		{Name: "words", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	const n = 64000
	rng := uint64(12345)
	next := func() uint64 { rng = rng*6364136223846793005 + 1442695040888963407; return rng >> 33 }
	for r := range n {
		lb := b.Field(0).(*array.ListBuilder)
		switch k := next() % 2; {
		case r == 7: // the only value
			lb.Append(true)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			for range 5 {
				sb.Append(true)
				if c, ok := sb.FieldBuilder(0).(*array.StructBuilder); ok {
					sb = c
				}
			}
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r))
		case r%500 == 3:
			// A list of one item null at struct depth d (d = 5: a null
			// leaf), so that every def level occurs: 4-bit levels.
			lb.Append(true)
			var bd array.Builder = lb.ValueBuilder()
			for range r / 500 % 6 {
				sb := bd.(*array.StructBuilder)
				sb.Append(true)
				bd = sb.FieldBuilder(0)
			}
			bd.AppendNull()
		case k == 0:
			lb.AppendNull()
		default:
			lb.AppendEmptyValue()
		}
		wb := b.Field(1).(*array.ListBuilder)
		wb.Append(true)
		for k := range r % 4 {
			wb.ValueBuilder().(*array.StringBuilder).Append(textOf(r%50+k, 6+k))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, _ := writeBatches21(t, []arrow.RecordBatch{rec}, WriterOptions{Version: V2_1})
	if np := len(f.Column(0).Pages); np < 2 {
		t.Errorf("deep column: %d page(s); a page of ~64,000 5-bit def levels cannot fit one 32 KiB chunk: %v %v", np, pageLayouts(t, f, 0), f.Column(0).Pages[0].Buffers)
	}
	// 112,000 levels: two pages of ≤ 65,535 levels, as Lance 12 cuts
	// list pages (it wrote 2 for the survey's big_list_utf8_64k).
	if np := len(f.Column(1).Pages); np != 2 {
		t.Errorf("list<utf8> column: %d pages, want 2", np)
	}
	requireReadsBack(t, f, rec)
}
