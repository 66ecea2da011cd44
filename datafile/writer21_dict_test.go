package datafile

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// TestSpec21_4_5_FixedWidthDictionaryPages: an Arrow dictionary column of
// integers, floats or booleans (any key width) is written in 2.1/2.2 as
// dictionary pages, as Lance 12 writes it: values = indices of the key
// type's width, the dictionary flat (2.1) or general(lz4) over flat (2.2),
// also with NoCompression — Lance 12 refuses plain pages for a dictionary
// column and indices wider than the key type (tests/compat
// TestUsToLance21_R_W1_W14_EveryTypeReadByLance12). The file reads back
// to the same values.
func TestSpec21_4_5_FixedWidthDictionaryPages(t *testing.T) {
	mk := func(key, val arrow.DataType, vals arrow.Array) arrow.Array {
		kb := array.NewBuilder(memory.NewGoAllocator(), key)
		for r := range 3000 {
			if r%11 == 0 {
				kb.AppendNull()
				continue
			}
			if err := kb.AppendValueFromString(fmt.Sprint((r * 7) % vals.Len())); err != nil {
				t.Fatal(err)
			}
		}
		keys := kb.NewArray()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: key, ValueType: val}, keys, vals)
	}
	i64 := array.NewInt64Builder(memory.NewGoAllocator())
	i64.AppendValues([]int64{-1 << 62, 0, 5, 1 << 40, 77}, nil)
	f32 := array.NewFloat32Builder(memory.NewGoAllocator())
	f32.AppendValues([]float32{1.5, -0, 3}, []bool{true, true, false})
	bl := array.NewBooleanBuilder(memory.NewGoAllocator())
	bl.AppendValues([]bool{true, false}, nil)
	u8 := array.NewUint8Builder(memory.NewGoAllocator())
	for i := range 200 {
		u8.Append(uint8(i))
	}
	cols := []arrow.Array{
		mk(arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, i64.NewArray()),
		mk(arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float32, f32.NewArray()),
		mk(arrow.PrimitiveTypes.Int8, arrow.FixedWidthTypes.Boolean, bl.NewArray()),
		mk(arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint8, u8.NewArray()),
	}
	var fields []arrow.Field
	for i, c := range cols {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("d%d", i), Type: c.DataType(), Nullable: true})
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 3000)
	for _, v := range []FileVersion{V2_1, V2_2} {
		for _, plain := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nocompression=%v", v, plain), func(t *testing.T) {
				f, _ := write21(t, rec, WriterOptions{Version: v, NoCompression: plain, PageSize: 2048, SeedAllColumns: true})
				requireSoundSeeds(t, f, len(cols))
				for ci := range cols {
					keyBits := cols[ci].DataType().(*arrow.DictionaryType).IndexType.(arrow.FixedWidthDataType).BitWidth()
					for pi, p := range f.Column(ci).Pages {
						var pl pb21.PageLayout
						if err := proto.Unmarshal(p.Encoding.Value, &pl); err != nil {
							t.Fatal(err)
						}
						mb := pl.GetMiniBlockLayout()
						if mb == nil || mb.GetDictionary() == nil || mb.GetNumDictionaryItems() == 0 {
							t.Fatalf("column %d page %d is not a dictionary page: %v", ci, pi, &pl)
						}
						vc := mb.GetValueCompression()
						bits := vc.GetFlat().GetBitsPerValue()
						if ib := vc.GetInlineBitpacking(); ib != nil {
							bits = ib.GetUncompressedBitsPerValue()
						}
						if int(bits) != keyBits {
							t.Fatalf("column %d page %d: indices of %d bits, key type %d (%v)", ci, pi, bits, keyBits, vc)
						}
						_, lz4 := mb.GetDictionary().GetCompression().(*pb21.CompressiveEncoding_General)
						if lz4 != (v == V2_2) {
							t.Fatalf("column %d page %d: dictionary %v in %s", ci, pi, mb.GetDictionary(), v)
						}
					}
				}
				got, err := f.ReadColumns(context.Background(), ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				want := undictRecord(t, rec)
				defer want.Release()
				g := undictRecord(t, got)
				defer g.Release()
				assertRecordsEqual(t, want, g)
			})
		}
	}
}
