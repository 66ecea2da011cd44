package compat_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// sizeShape is one data shape of the size-parity test: an int64 "id" and
// one column "v".
type sizeShape struct {
	name string
	rec  arrow.RecordBatch
}

func shapeColumn(name string, dt arrow.DataType, n int, app func(b array.Builder, i int)) sizeShape {
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: dt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		app(b.Field(1), i)
	}
	return sizeShape{name, b.NewRecordBatch()}
}

// sizeShapes are the fixed shapes of TestUsToLance21_WriteSizePerColumn.
func sizeShapes() []sizeShape {
	r := rand.New(rand.NewPCG(23, 12))
	words := strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")
	text := func(n int) string {
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		return sb.String()[:n]
	}
	const n = 8000
	return []sizeShape{
		shapeColumn("low_cardinality_strings", arrow.BinaryTypes.String, n, func(b array.Builder, i int) { b.(*array.StringBuilder).Append(words[r.IntN(8)]) }),
		shapeColumn("sorted_int64", arrow.PrimitiveTypes.Int64, n, func(b array.Builder, i int) { b.(*array.Int64Builder).Append(int64(3 * i)) }),
		shapeColumn("constant_int32", arrow.PrimitiveTypes.Int32, n, func(b array.Builder, i int) { b.(*array.Int32Builder).Append(42) }),
		shapeColumn("constant_string_with_nulls", arrow.BinaryTypes.String, n, func(b array.Builder, i int) {
			if i%97 == 5 {
				b.AppendNull()
			} else {
				b.(*array.StringBuilder).Append("constant")
			}
		}),
		shapeColumn("all_null_int64", arrow.PrimitiveTypes.Int64, n, func(b array.Builder, i int) { b.AppendNull() }),
		shapeColumn("long_strings_1_3KiB", arrow.BinaryTypes.String, 800, func(b array.Builder, i int) { b.(*array.StringBuilder).Append(text(1000 + r.IntN(2000))) }),
		shapeColumn("huge_strings_100KiB", arrow.BinaryTypes.String, 24, func(b array.Builder, i int) {
			if i == 3 {
				b.AppendNull()
			} else {
				b.(*array.StringBuilder).Append(text(100 << 10))
			}
		}),
		shapeColumn("huge_binary_100KiB", arrow.BinaryTypes.Binary, 24, func(b array.Builder, i int) { b.(*array.BinaryBuilder).Append([]byte(text(100 << 10))) }),
		shapeColumn("float64_few_distinct", arrow.PrimitiveTypes.Float64, n, func(b array.Builder, i int) { b.(*array.Float64Builder).Append(float64(r.IntN(10)) / 4) }),
		shapeColumn("small_int64", arrow.PrimitiveTypes.Int64, n, func(b array.Builder, i int) { b.(*array.Int64Builder).Append(int64(r.IntN(1000))) }),
		shapeColumn("runs_int32", arrow.PrimitiveTypes.Int32, n, func(b array.Builder, i int) { b.(*array.Int32Builder).Append(int32(i / 100)) }),
		shapeColumn("nullable_int32", arrow.PrimitiveTypes.Int32, n, func(b array.Builder, i int) {
			if r.IntN(10) == 0 {
				b.AppendNull()
			} else {
				b.(*array.Int32Builder).Append(int32(r.IntN(100000)))
			}
		}),
		shapeColumn("bool", arrow.FixedWidthTypes.Boolean, n, func(b array.Builder, i int) { b.(*array.BooleanBuilder).Append(r.IntN(3) == 0) }),
		shapeColumn("list_int32_with_null_and_empty_lists", arrow.ListOf(arrow.PrimitiveTypes.Int32), n/2, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			switch r.IntN(20) {
			case 0:
				lb.AppendNull()
				return
			case 1:
				lb.AppendEmptyValue()
				return
			}
			lb.Append(true)
			for range 1 + r.IntN(12) {
				if r.IntN(30) == 0 {
					lb.ValueBuilder().AppendNull()
				} else {
					lb.ValueBuilder().(*array.Int32Builder).Append(int32(r.IntN(1000)))
				}
			}
		}),
		shapeColumn("list_utf8", arrow.ListOf(arrow.BinaryTypes.String), n/2, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			for range r.IntN(6) {
				lb.ValueBuilder().(*array.StringBuilder).Append(words[r.IntN(len(words))] + " " + words[r.IntN(len(words))])
			}
		}),
		shapeColumn("struct_int32_utf8", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), n, func(b array.Builder, i int) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r.IntN(500)))
			sb.FieldBuilder(1).(*array.StringBuilder).Append(words[r.IntN(len(words))])
		}),
		shapeColumn("dictionary_uint8_full_with_nulls", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.String}, 300, func(b array.Builder, i int) {
			if i == 7 {
				b.AppendNull()
			} else if err := b.(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("value-%d", i%256)); err != nil {
				panic(err)
			}
		}),
		shapeColumn("dictionary_int8_full_with_nulls", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}, 200, func(b array.Builder, i int) {
			if i == 7 {
				b.AppendNull()
			} else if err := b.(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("value-%d", i%128)); err != nil {
				panic(err)
			}
		}),
	}
}

// sizeGaps are the shape@version pairs whose size is known to exceed 1.1×
// Lance's (docs/benchmarks.md "Write size (session 23)"); their ratio is
// logged, not asserted, and their rows are still checked. 2.1
// lists of strings: 2.1 list pages are cut at 6000 levels (a chunk must
// stay within 32 KiB whatever its levels), each with its own dictionary,
// where Lance 12 writes one page.
var sizeGaps = map[string]bool{"list_utf8@2.1": true}

// columnBytes sums the page buffer bytes of each column over the data
// files of the table at dir.
func columnBytes(ctx context.Context, t *testing.T, dir string) []int64 {
	t.Helper()
	bk, err := fileblob.OpenBucket(filepath.Join(dir, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	ents, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, e := range ents {
		f, err := datafile.Open(ctx, bk, e.Name(), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for ci := range f.NumColumns() {
			if ci >= len(sizes) {
				sizes = append(sizes, 0)
			}
			for _, pg := range f.Column(ci).Pages {
				for _, b := range pg.Buffers {
					sizes[ci] += int64(b.Len)
				}
			}
		}
	}
	return sizes
}

// TestUsToLance21_WriteSizePerColumn (issue 12 "Compression on write"):
// for each fixed shape, at 2.1 and 2.2, Lance 12 (through the peer) and
// lancekeeper write the same Arrow rows; every column of our file holds at
// most 1.1× Lance's page bytes (+ 64 bytes for tiny columns), and Lance
// reads our table with identical rows. The shapes exercise the encodings
// chosen by data: constant pages (2.2), per-page layers without def
// levels, FSST and zstd per-value full-zip items, dictionary pages for
// strings and (2.2) 64-bit values, bit-packing, RLE, and Arrow dictionaries
// whose key type is full with nulls beside (Lance keeps 8-bit indices).
func TestUsToLance21_WriteSizePerColumn(t *testing.T) {
	p := peerlance.ServeForTest(t)
	shapes := sizeShapes()
	for _, version := range []string{"2.1", "2.2"} {
		t.Run(version, func(t *testing.T) {
			record(t, catUsToLance)
			ctx := peerContext(t)
			for _, s := range shapes {
				tmp := t.TempDir()
				ipcFile := filepath.Join(tmp, "rows.arrow")
				if err := peerlance.WriteIPCFile(ipcFile, s.rec.Schema(), s.rec); err != nil {
					t.Fatal(err)
				}
				ldir := filepath.Join(tmp, "lance.lance")
				if _, err := p.Create(ctx, ldir, ipcFile, peerlance.CreateOptions{StorageVersion: version}); err != nil {
					t.Fatalf("%s: Lance create: %v", s.name, err)
				}
				odir := filepath.Join(tmp, "ours.lance")
				if err := os.MkdirAll(odir, 0o755); err != nil {
					t.Fatal(err)
				}
				model := modelRows{}
				writeOurs(ctx, t, localStore(ctx, t, odir), s.rec, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: version}, model)
				requireLanceRows(ctx, t, p, odir, s.name, model, columnNames(s.rec.Schema()))
				ours, lance := columnBytes(ctx, t, odir), columnBytes(ctx, t, ldir)
				if len(ours) != len(lance) {
					t.Fatalf("%s: %d columns in our file, %d in Lance's", s.name, len(ours), len(lance))
				}
				for ci := range ours {
					ratio := float64(ours[ci]) / float64(max(lance[ci], 1))
					t.Logf("%-34s %s column %d: ours %9d B, Lance %9d B, %.3f×", s.name, version, ci, ours[ci], lance[ci], ratio)
					if ours[ci] > lance[ci]+lance[ci]/10+64 && !sizeGaps[s.name+"@"+version] {
						t.Errorf("%s %s column %d: our pages hold %d bytes, Lance's %d (%.2f×, limit 1.1×)", s.name, version, ci, ours[ci], lance[ci], ratio)
					}
				}
			}
		})
	}
}
