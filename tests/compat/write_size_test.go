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
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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
		shapeColumn("struct_all_null_child", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), n, func(b array.Builder, i int) {
			sb := b.(*array.StructBuilder)
			if i%7 == 3 {
				sb.AppendNull()
				return
			}
			sb.Append(true)
			sb.FieldBuilder(0).AppendNull()
			sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(r.IntN(1 << 40)))
		}),
		shapeColumn("struct_all_null_child_null_runs", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), n, func(b array.Builder, i int) {
			sb := b.(*array.StructBuilder)
			if (i/700)%2 == 1 {
				sb.AppendNull()
				return
			}
			sb.Append(true)
			sb.FieldBuilder(0).AppendNull()
			sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(i))
		}),
		shapeColumn("list_of_null_items", arrow.ListOf(arrow.PrimitiveTypes.Int32), n/2, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			if i%11 == 4 {
				lb.AppendNull()
				return
			}
			lb.Append(true)
			for range r.IntN(4) {
				lb.ValueBuilder().AppendNull()
			}
		}),
		shapeColumn("list_utf8_few_values_some_wide", arrow.ListOf(arrow.BinaryTypes.String), n/2, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			for range r.IntN(4) {
				if k := r.IntN(40); k == 0 {
					lb.ValueBuilder().(*array.StringBuilder).Append(strings.Repeat("wide value ", 30)) // 330 bytes: full-zip alone
				} else {
					lb.ValueBuilder().(*array.StringBuilder).Append(words[k%len(words)])
				}
			}
		}),
		shapeColumn("list_struct", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})), n/2, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			if r.IntN(15) == 0 {
				lb.AppendNull()
				return
			}
			lb.Append(true)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			for range r.IntN(5) {
				if r.IntN(20) == 0 {
					sb.AppendNull()
					continue
				}
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r.IntN(100000)))
				sb.FieldBuilder(1).(*array.StringBuilder).Append(words[r.IntN(len(words))])
			}
		}),
		shapeColumn("decimal128_low_cardinality", &arrow.Decimal128Type{Precision: 38, Scale: 4}, n, func(b array.Builder, i int) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(40)) * 1_000_000_007))
		}),
		shapeColumn("fixed_size_binary16_low_cardinality", &arrow.FixedSizeBinaryType{ByteWidth: 16}, n, func(b array.Builder, i int) {
			k := byte(r.IntN(30))
			b.(*array.FixedSizeBinaryBuilder).Append([]byte{k, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, k})
		}),
		// Lance's fixed-width dictionary rule near its bound (w·c + 4n <
		// 0.8·w·n: c < 1,200 of 4,000 float64): a dictionary in 2.2.
		shapeColumn("float64_1150_distinct_of_4000", arrow.PrimitiveTypes.Float64, n/2, func(b array.Builder, i int) {
			b.(*array.Float64Builder).Append(float64((i*7919)%1150) + 0.5)
		}),
		shapeColumn("null_type", arrow.Null, n, func(b array.Builder, i int) { b.AppendNull() }),
		shapeColumn("mostly_null_int64", arrow.PrimitiveTypes.Int64, n, func(b array.Builder, i int) {
			if r.IntN(100) != 0 {
				b.AppendNull()
			} else {
				b.(*array.Int64Builder).Append(r.Int64())
			}
		}),
		shapeColumn("bool_with_nulls", arrow.FixedWidthTypes.Boolean, n, func(b array.Builder, i int) {
			if r.IntN(10) == 0 {
				b.AppendNull()
			} else {
				b.(*array.BooleanBuilder).Append(r.IntN(2) == 0)
			}
		}),
		shapeColumn("sorted_int32", arrow.PrimitiveTypes.Int32, n, func(b array.Builder, i int) { b.(*array.Int32Builder).Append(int32(1_000_000 + 7*i)) }),
		shapeColumn("random_float32", arrow.PrimitiveTypes.Float32, n, func(b array.Builder, i int) { b.(*array.Float32Builder).Append(r.Float32()) }),
		shapeColumn("unique_id_strings", arrow.BinaryTypes.String, n, func(b array.Builder, i int) { b.(*array.StringBuilder).Append(fmt.Sprintf("user-%08d", r.IntN(1e8))) }),
		shapeColumn("low_cardinality_large_strings", arrow.BinaryTypes.LargeString, n, func(b array.Builder, i int) { b.(*array.LargeStringBuilder).Append(words[r.IntN(5)]) }),
		shapeColumn("nested_list_int32", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int32)), n/4, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			ib := lb.ValueBuilder().(*array.ListBuilder)
			for range r.IntN(4) {
				ib.Append(true)
				for range r.IntN(5) {
					ib.ValueBuilder().(*array.Int32Builder).Append(int32(r.IntN(1000)))
				}
			}
		}),
		shapeColumn("fixed_size_list_float32x8", arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), n/2, func(b array.Builder, i int) {
			lb := b.(*array.FixedSizeListBuilder)
			lb.Append(true)
			for range 8 {
				lb.ValueBuilder().(*array.Float32Builder).Append(r.Float32())
			}
		}),
		shapeColumn("timestamp_us_sorted", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, n, func(b array.Builder, i int) {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_000 + int64(r.IntN(1000))))
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
// Lance's; their ratio is logged, not asserted, and their rows are still
// checked. None since session 24 (2.1 list pages are no longer cut at
// 6,000 levels: list_utf8@2.1 is 1.000×).
var sizeGaps = map[string]bool{}

// lanceMaintains are the shapes whose encodings session 24 changed (all-
// null pages with compressed levels, 128-bit dictionaries in 2.1, the null
// type, list pages of up to 65,535 levels, dictionaries for list<string>):
// Lance 12 also appends to our table and compacts it.
var lanceMaintains = map[string]bool{
	"struct_all_null_child": true, "struct_all_null_child_null_runs": true, "list_of_null_items": true,
	"decimal128_low_cardinality": true, "fixed_size_binary16_low_cardinality": true, "null_type": true,
	"list_utf8": true, "list_utf8_few_values_some_wide": true,
}

// lanceAppendOptimize has Lance 12 append the shape's rows again (ids
// moved by 1,000,000) to our table and optimize it; Lance then returns
// every row, ours and its own, by id.
func lanceAppendOptimize(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, s sizeShape, model modelRows) {
	t.Helper()
	want := idModel{}
	for _, r := range model {
		want[canonicalInt(r[0])] = r
	}
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	for i := range s.rec.NumRows() {
		ids.Append(1_000_000 + i)
	}
	idArr := ids.NewArray()
	defer idArr.Release()
	more := array.NewRecordBatch(s.rec.Schema(), []arrow.Array{idArr, s.rec.Column(1)}, s.rec.NumRows())
	defer more.Release()
	file := filepath.Join(t.TempDir(), "more.arrow")
	if err := peerlance.WriteIPCFile(file, more.Schema(), more); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(ctx, dir, file); err != nil {
		t.Fatalf("%s: Lance append to our table: %v", s.name, err)
	}
	if _, err := p.Optimize(ctx, dir); err != nil {
		t.Fatalf("%s: Lance optimize of our table: %v", s.name, err)
	}
	for _, r := range canonicalRows(t, more) {
		want[canonicalInt(r[0])] = r
	}
	requireLanceByID(ctx, t, p, dir, columnNames(s.rec.Schema()), want, s.name+" after Lance's append and optimize")
}

// requireOurRows checks that our own reader returns exactly model from the
// latest version of the table at dir.
func requireOurRows(ctx context.Context, t *testing.T, dir, what string, model modelRows, columns []string) {
	t.Helper()
	got, _, err := readOurRows(ctx, dir, 0)
	if err != nil {
		t.Fatalf("%s: our reader: %v", what, err)
	}
	if d := diffRows("ours", got, "written", model.rows(columns)); d != "" {
		t.Fatalf("%s: our reader returns other rows than we wrote:\n%s", what, d)
	}
}

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
// for each fixed shape, at 2.1, 2.2 and 2.3, Lance 12 (through the peer) and
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
	for _, version := range []string{"2.1", "2.2", "2.3"} { // 2.3: spec 2.1 §2.5
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
				requireOurRows(ctx, t, odir, s.name, model, columnNames(s.rec.Schema()))
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
				if lanceMaintains[s.name] {
					lanceAppendOptimize(ctx, t, p, odir, s, model)
				}
			}
		})
	}
}
