package datafile

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// requireSoundSeeds: seeds verify proves every seed of f sound (at least
// want of them).
func requireSoundSeeds(t *testing.T, f *File, want int) {
	t.Helper()
	vs, err := f.VerifySeeds(context.Background(), VerifyOptions{TableFlagged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < want {
		t.Fatalf("%d seeds verified, want %d", len(vs), want)
	}
	for _, v := range vs {
		if v.Status != SeedSound {
			t.Errorf("seed of %s: %+v", v.Column, v)
		}
	}
}

// wideRecord has columns of wide values: utf8 of 250 B – 40 KiB (nulls),
// large_binary, list<binary> of wide items (null and empty lists, null
// items), fixed_size_list<float32>[128] (null rows, null items) and
// fixed_size_binary[300], plus narrow columns that stay mini-block.
func wideRecord(t testing.TB, n int) arrow.RecordBatch {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lb", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "lst", Type: arrow.ListOf(arrow.BinaryTypes.Binary), Nullable: true},
		{Name: "fsl", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 300}, Nullable: true},
		{Name: "small", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for r := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		b.Field(6).(*array.StringBuilder).Append("x")
		if r%5 == 1 {
			for i := 1; i <= 5; i++ {
				b.Field(i).AppendNull()
			}
			continue
		}
		size := 250 + r*37
		if r == 7 {
			size = 40 << 10 // over a 2.1 mini-block chunk
		}
		b.Field(1).(*array.StringBuilder).Append(strings.Repeat(string(rune('a'+r%26)), size))
		b.Field(2).(*array.BinaryBuilder).Append([]byte(strings.Repeat("z", r%4*100)))
		lb := b.Field(3).(*array.ListBuilder)
		if r%5 == 2 {
			lb.AppendEmptyValue()
		} else {
			lb.Append(true)
			for k := range r%3 + 1 {
				if k == 1 {
					lb.ValueBuilder().AppendNull()
				} else {
					// Mostly distinct items (few distinct ones would make a
					// dictionary page, as Lance 12 writes them).
					lb.ValueBuilder().(*array.BinaryBuilder).Append([]byte(strings.Repeat("y", 280+(k+1)*r)))
				}
			}
		}
		fb := b.Field(4).(*array.FixedSizeListBuilder)
		fb.Append(true)
		for k := range 128 {
			if k == r%128 {
				fb.ValueBuilder().AppendNull()
			} else {
				fb.ValueBuilder().(*array.Float32Builder).Append(float32(k*r) / 3)
			}
		}
		v := []byte(strings.Repeat("q", 300))
		v[r%300] = byte(r)
		b.Field(5).(*array.FixedSizeBinaryBuilder).Append(v)
	}
	return b.NewRecordBatch()
}

// TestSpec21_5_FullZipPagesForWideValues: values of ≥ 256 bytes are
// written as full-zip pages (spec 2.1 §5) in 2.1 and 2.2 — strings and
// binaries with a u32/u64 length per valid item and the repetition index,
// lists of them with rep/def control words, fixed_size_list with item
// validity bytes, fixed_size_binary — (a 40 KiB value, which no 2.1
// mini-block chunk holds, included), narrow columns stay mini-block, and
// the file reads back equal, whole and by row ranges.
func TestSpec21_5_FullZipPagesForWideValues(t *testing.T) {
	rec := wideRecord(t, 300)
	defer rec.Release()
	for _, v := range []FileVersion{V2_1, V2_2} {
		t.Run(v.String(), func(t *testing.T) {
			f, _ := write21(t, rec, WriterOptions{Version: v, PageSize: 64 << 10, SeedAllColumns: true,
				Seed: seedio.CollectorOptions{RowsPerZone: 64}})
			requireSoundSeeds(t, f, 7)
			for ci := range f.NumColumns() {
				for pi, p := range f.Column(ci).Pages {
					var pl pb21.PageLayout
					if err := proto.Unmarshal(p.Encoding.Value, &pl); err != nil {
						t.Fatal(err)
					}
					fz := pl.GetFullZipLayout() != nil
					if want := ci >= 1 && ci <= 5; fz != want && !(ci == 2 && pl.GetMiniBlockLayout() != nil) {
						t.Errorf("column %d page %d: full-zip %v, want %v (%v)", ci, pi, fz, want, &pl)
					}
				}
			}
			got, err := f.ReadColumns(context.Background(), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			assertRecordsEqual(t, rec, got)
			part, err := f.ReadRows(context.Background(), ReadRequest{Ranges: []RowRange{{Start: 5, End: 9}, {Start: 250, End: 261}}})
			if err != nil {
				t.Fatal(err)
			}
			defer part.Release()
			want := concatRecords(t, rec.Schema(), []arrow.RecordBatch{rec.NewSlice(5, 9), rec.NewSlice(250, 261)})
			defer want.Release()
			assertRecordsEqual(t, want, part)
		})
	}
}
