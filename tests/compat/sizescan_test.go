package compat_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"gocloud.dev/blob/fileblob"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// columnPages describes every page of every column of the table at dir:
// its rows, buffer sizes and PageLayout (prototext, values elided), so that
// a size gap can be traced to a layout or compression choice.
func columnPages(ctx context.Context, t *testing.T, dir string) [][]string {
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
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("lance.encodings21.PageLayout"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, e := range ents {
		f, err := datafile.Open(ctx, bk, e.Name(), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for ci := range f.NumColumns() {
			if ci >= len(out) {
				out = append(out, nil)
			}
			for pi, pg := range f.Column(ci).Pages {
				var lens []string
				for _, b := range pg.Buffers {
					lens = append(lens, strconv.FormatUint(b.Len, 10))
				}
				m := mt.New().Interface()
				txt := "?"
				if proto.Unmarshal(pg.Encoding.Value, m) == nil {
					txt = prototext.MarshalOptions{}.Format(m)
					if len(txt) > 1500 {
						txt = txt[:1500] + "…"
					}
				}
				out[ci] = append(out[ci], fmt.Sprintf("page %d rows %d buffers [%s] %s", pi, pg.Length, strings.Join(lens, " "), txt))
			}
		}
	}
	return out
}

// TestSizeScan (opt-in, LANCEKEEPER_SIZE_SCAN=1; LANCEKEEPER_SIZE_SCAN_SEEDS
// = how many random tables per version, default 12): writes random tables
// (peerlance.RandomTable, every type) with Lance 12 and with lancekeeper
// and logs every column whose pages exceed 1.1× Lance's, with both sides'
// page layouts. A survey tool for the size gaps of docs/benchmarks.md
// "sizegaps (session 24)"; it asserts only that Lance reads our rows.
func TestSizeScan(t *testing.T) {
	if os.Getenv("LANCEKEEPER_SIZE_SCAN") == "" {
		t.Skip("survey: set LANCEKEEPER_SIZE_SCAN=1")
	}
	seeds := 12
	if s, err := strconv.Atoi(os.Getenv("LANCEKEEPER_SIZE_SCAN_SEEDS")); err == nil {
		seeds = s
	}
	p := peerlance.ServeForTest(t)
	for _, version := range []string{"2.1", "2.2"} {
		first := 1
		if s, err := strconv.Atoi(os.Getenv("LANCEKEEPER_SIZE_SCAN_FIRST")); err == nil {
			first = s
		}
		for seed := first; seed <= seeds; seed++ {
			rec := peerlance.RandomTable(uint64(seed), peerlance.RandomTableOptions{StorageVersion: version, MaxRows: 5000})
			scanOne(peerContext(t), t, p, fmt.Sprintf("seed%d", seed), version, rec)
			rec.Release()
		}
	}
}

func scanOne(ctx context.Context, t *testing.T, p *peerlance.Peer, name, version string, rec arrow.RecordBatch) {
	tmp := t.TempDir()
	ipcFile := filepath.Join(tmp, "rows.arrow")
	if err := peerlance.WriteIPCFile(ipcFile, rec.Schema(), rec); err != nil {
		t.Fatal(err)
	}
	ldir := filepath.Join(tmp, "lance.lance")
	if _, err := p.Create(ctx, ldir, ipcFile, peerlance.CreateOptions{StorageVersion: version}); err != nil {
		t.Logf("%s %s: Lance create: %v", name, version, err)
		return
	}
	odir := filepath.Join(tmp, "ours.lance")
	if err := os.MkdirAll(odir, 0o755); err != nil {
		t.Fatal(err)
	}
	model := modelRows{}
	writeOurs(ctx, t, localStore(ctx, t, odir), rec, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: version}, model)
	t.Logf("table %s %s: %d rows, %s", name, version, rec.NumRows(), rec.Schema())
	ours, lance := columnBytes(ctx, t, odir), columnBytes(ctx, t, ldir)
	op, lp := columnPages(ctx, t, odir), columnPages(ctx, t, ldir)
	for ci := range min(len(ours), len(lance)) {
		ratio := float64(ours[ci]) / float64(max(lance[ci], 1))
		if ours[ci] > lance[ci]+lance[ci]/10+64 || os.Getenv("LANCEKEEPER_SIZE_SCAN_ALL") != "" {
			t.Logf("GAP %s %s rows %d column %d: ours %d B, Lance %d B, %.3f× (schema %s)", name, version, rec.NumRows(), ci, ours[ci], lance[ci], ratio, rec.Schema())
			for _, s := range op[ci] {
				t.Logf("  ours  %s", s)
			}
			for _, s := range lp[ci] {
				t.Logf("  lance %s", s)
			}
		}
	}
	requireLanceRows(ctx, t, p, odir, name, model, columnNames(rec.Schema()))
	requireOurRows(ctx, t, odir, name, model, columnNames(rec.Schema()))
}

// TestSizeScanSplit (opt-in, LANCEKEEPER_SIZE_SCAN_SPLIT=seed): the random
// table of that seed, one column beside id at a time, at
// LANCEKEEPER_SIZE_SCAN_VERSION (default 2.1).
func TestSizeScanSplit(t *testing.T) {
	seed, err := strconv.Atoi(os.Getenv("LANCEKEEPER_SIZE_SCAN_SPLIT"))
	if err != nil {
		t.Skip("survey: set LANCEKEEPER_SIZE_SCAN_SPLIT=seed")
	}
	version := os.Getenv("LANCEKEEPER_SIZE_SCAN_VERSION")
	if version == "" {
		version = "2.1"
	}
	p := peerlance.ServeForTest(t)
	ctx := peerContext(t)
	rec := peerlance.RandomTable(uint64(seed), peerlance.RandomTableOptions{StorageVersion: version, MaxRows: 5000})
	defer rec.Release()
	for c := 1; c < int(rec.NumCols()); c++ {
		t.Run(rec.Schema().Field(c).Name, func(t *testing.T) {
			sch := arrow.NewSchema([]arrow.Field{rec.Schema().Field(0), rec.Schema().Field(c)}, nil)
			one := array.NewRecordBatch(sch, []arrow.Array{rec.Column(0), rec.Column(c)}, rec.NumRows())
			defer one.Release()
			scanOne(ctx, t, p, fmt.Sprintf("seed%d.%s", seed, sch.Field(1).Name), version, one)
		})
	}
}

// TestSizeScanShapes (opt-in, LANCEKEEPER_SIZE_SCAN_SHAPES=regexp): the
// fixed shapes of the size test plus the survey's extra ones, each
// compared with Lance and logged.
func TestSizeScanShapes(t *testing.T) {
	pat := os.Getenv("LANCEKEEPER_SIZE_SCAN_SHAPES")
	if pat == "" {
		t.Skip("survey: set LANCEKEEPER_SIZE_SCAN_SHAPES=regexp")
	}
	re := regexp.MustCompile(pat)
	p := peerlance.ServeForTest(t)
	ctx := peerContext(t)
	shapes := append(sizeShapes(), surveyShapes()...)
	for _, version := range []string{"2.1", "2.2"} {
		for _, s := range shapes {
			if re.MatchString(s.name) {
				scanOne(ctx, t, p, s.name, version, s.rec)
			}
		}
	}
}

// surveyShapes are larger shapes the survey compares but the size test
// does not (they take Lance longer to write).
func surveyShapes() []sizeShape {
	words := strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")
	inner := arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	for range 5 {
		inner = arrow.Field{Name: "s", Type: arrow.StructOf(inner), Nullable: true}
	}
	return []sizeShape{
		{"wide_batch_fullzip", wideBatch(0, 120)},
		shapeColumn("probe_f64_900_of_4000", arrow.PrimitiveTypes.Float64, 4000, func(b array.Builder, r int) {
			b.(*array.Float64Builder).Append(float64((r*7919)%900) + 0.5)
		}),
		shapeColumn("probe_f64_1150_of_4000", arrow.PrimitiveTypes.Float64, 4000, func(b array.Builder, r int) {
			b.(*array.Float64Builder).Append(float64((r*7919)%1150) + 0.5)
		}),
		shapeColumn("probe_f64_1250_of_4000", arrow.PrimitiveTypes.Float64, 4000, func(b array.Builder, r int) {
			b.(*array.Float64Builder).Append(float64((r*7919)%1250) + 0.5)
		}),
		shapeColumn("probe_dec128_1800_of_4000", &arrow.Decimal128Type{Precision: 30, Scale: 2}, 4000, func(b array.Builder, r int) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(int64((r*7919)%1800) * 1_000_000_007))
		}),
		shapeColumn("probe_dec128_2100_of_4000", &arrow.Decimal128Type{Precision: 30, Scale: 2}, 4000, func(b array.Builder, r int) {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(int64((r*7919)%2100) * 1_000_000_007))
		}),
		shapeColumn("probe_wide_binary_nonlist", arrow.BinaryTypes.Binary, 144, func(b array.Builder, r int) {
			if r%3 == 1 {
				b.AppendNull()
				return
			}
			b.(*array.BinaryBuilder).Append([]byte(strings.Repeat("A", 280+r%50) + strconv.Itoa(r*2/3)))
		}),
		shapeColumn("probe_wide_list_10distinct", arrow.ListOf(arrow.BinaryTypes.Binary), 120, func(b array.Builder, r int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.BinaryBuilder).Append([]byte(strings.Repeat("A", 300) + strconv.Itoa(r%10)))
		}),
		shapeColumn("probe_wide_list_60distinct", arrow.ListOf(arrow.BinaryTypes.Binary), 120, func(b array.Builder, r int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.BinaryBuilder).Append([]byte(strings.Repeat("A", 300) + strconv.Itoa(r%60)))
		}),
		// datafile's TestSpec21_W6_ListPageCutWhenAChunkExceeds32KiB rows:
		// our 2.1 page is cut in two so that its one chunk fits 32 KiB.
		shapeColumn("big_deep_sparse_list_64k", arrow.ListOfField(inner), 64000, func(b array.Builder, r int) {
			lb := b.(*array.ListBuilder)
			switch {
			case r == 7:
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
				lb.Append(true)
				var bd array.Builder = lb.ValueBuilder()
				for range r / 500 % 6 {
					sb := bd.(*array.StructBuilder)
					sb.Append(true)
					bd = sb.FieldBuilder(0)
				}
				bd.AppendNull()
			case (r*2654435761)%7 < 3:
				lb.AppendNull()
			default:
				lb.AppendEmptyValue()
			}
		}),
		shapeColumn("big_list_utf8_64k", arrow.ListOf(arrow.BinaryTypes.String), 64000, func(b array.Builder, i int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			for k := range i % 4 {
				lb.ValueBuilder().(*array.StringBuilder).Append(words[(i*7+k)%len(words)] + " " + words[(i+k)%len(words)])
			}
		}),
	}
}
