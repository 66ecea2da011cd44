package main

// Issue 12, "Us → Lance", through the CLI as a user runs it: for every
// Arrow type of issue 12 items 1–2, at storage 2.0 (the types Lance 12
// writes there), 2.1, 2.2 and 2.3, `write --mode create --data-storage-version V`
// and `write --mode append` from an Arrow IPC file, then Lance 12 (node
// peer) reads identical rows, appends, optimizes, builds a scalar index and
// still returns identical rows. A copy gets an append with v1 seeds on
// every column (`--seeds all --enable-zone-write-seeds`): `seeds verify`
// exits 0, every seed validates with the value type the file stores (a
// fixed_size_list's child name and nullability included: R15/E07), and
// Lance 12 reads the seeded files on a test-only copy without the flag.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// issue12Type is one column type of issue 12's list and the storage
// versions at which Lance 12 itself writes it.
type issue12Type struct {
	name     string
	dt       arrow.DataType
	versions string // "" = 2.0 2.1 2.2 2.3
}

func issue12Types() []issue12Type {
	ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
	f := func(name string, dt arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: nullable}
	}
	nested := arrow.StructOf(f("a", arrow.PrimitiveTypes.Int32, true), f("t", arrow.ListOf(arrow.BinaryTypes.String), true))
	return []issue12Type{
		{"i8", arrow.PrimitiveTypes.Int8, ""}, {"i16", arrow.PrimitiveTypes.Int16, ""},
		{"i32", arrow.PrimitiveTypes.Int32, ""}, {"i64", arrow.PrimitiveTypes.Int64, ""},
		{"u8", arrow.PrimitiveTypes.Uint8, ""}, {"u16", arrow.PrimitiveTypes.Uint16, ""},
		{"u32", arrow.PrimitiveTypes.Uint32, ""}, {"u64", arrow.PrimitiveTypes.Uint64, ""},
		{"f16", arrow.FixedWidthTypes.Float16, ""}, {"f32", arrow.PrimitiveTypes.Float32, ""}, {"f64", arrow.PrimitiveTypes.Float64, ""},
		{"b", arrow.FixedWidthTypes.Boolean, ""},
		{"s", arrow.BinaryTypes.String, ""}, {"ls", arrow.BinaryTypes.LargeString, ""},
		{"bin", arrow.BinaryTypes.Binary, ""}, {"lbin", arrow.BinaryTypes.LargeBinary, ""},
		{"fsb", &arrow.FixedSizeBinaryType{ByteWidth: 5}, ""},
		{"dec128", &arrow.Decimal128Type{Precision: 38, Scale: 10}, ""}, {"dec256", &arrow.Decimal256Type{Precision: 76, Scale: 20}, ""},
		{"d32", arrow.FixedWidthTypes.Date32, ""}, {"d64", arrow.FixedWidthTypes.Date64, ""},
		{"t32s", arrow.FixedWidthTypes.Time32s, ""}, {"t32ms", arrow.FixedWidthTypes.Time32ms, ""},
		{"t64us", arrow.FixedWidthTypes.Time64us, ""}, {"t64ns", arrow.FixedWidthTypes.Time64ns, ""},
		{"ts_s", ts(arrow.Second, ""), ""}, {"ts_ms", ts(arrow.Millisecond, ""), ""},
		{"ts_us", ts(arrow.Microsecond, ""), ""}, {"ts_ns", ts(arrow.Nanosecond, ""), ""},
		{"tstz_s", ts(arrow.Second, "UTC"), ""}, {"tstz_ms", ts(arrow.Millisecond, "Asia/Kolkata"), ""},
		{"tstz_us", ts(arrow.Microsecond, "America/New_York"), ""}, {"tstz_ns", ts(arrow.Nanosecond, "Europe/Paris"), ""},
		{"dur_s", arrow.FixedWidthTypes.Duration_s, ""}, {"dur_ms", arrow.FixedWidthTypes.Duration_ms, ""},
		{"dur_us", arrow.FixedWidthTypes.Duration_us, ""}, {"dur_ns", arrow.FixedWidthTypes.Duration_ns, ""},
		{"nul", arrow.Null, ""},
		{"dict_s", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, ""},
		{"dict_i64", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Int64}, ""},
		{"list_i32", arrow.ListOf(arrow.PrimitiveTypes.Int32), ""},
		{"llist_s", arrow.LargeListOf(arrow.BinaryTypes.String), ""},
		{"list_list", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), ""},
		{"list_dict", arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}), ""},
		// the E07 case: the input's child is not called "item" and is not nullable
		{"fsl_vec", arrow.FixedSizeListOfField(3, f("v", arrow.PrimitiveTypes.Float32, false)), ""},
		{"fsl_i32", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), ""},
		{"fsl_bool", arrow.FixedSizeListOf(3, arrow.FixedWidthTypes.Boolean), ""},
		{"fsl_dec", arrow.FixedSizeListOf(2, &arrow.Decimal128Type{Precision: 20, Scale: 3}), ""},
		{"fsl_fsb", arrow.FixedSizeListOf(2, &arrow.FixedSizeBinaryType{ByteWidth: 3}), ""},
		{"list_fsl", arrow.ListOf(arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32)), ""},
		// fixed_size_list of fixed_size_list (nulls at every level: rows,
		// inner lists, items; and with non-nullable inner levels)
		{"fsl_fsl", arrow.FixedSizeListOf(3, arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)), ""},
		{"fsl_fsl_nn", arrow.FixedSizeListOfField(2, f("v", arrow.FixedSizeListOfField(3, f("x", arrow.PrimitiveTypes.Int32, false)), false)), ""},
		{"fsl_fsl_fsl_bool", arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(3, arrow.FixedWidthTypes.Boolean))), ""},
		{"fsl_fsl_wide", arrow.FixedSizeListOf(4, arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float64)), ""}, // 256 bytes: full-zip in 2.1+
		{"list_fsl_fsl", arrow.ListOf(arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64))), ""},
		{"st", arrow.StructOf(f("x", arrow.PrimitiveTypes.Float64, true), f("y", arrow.BinaryTypes.String, true)), ""},
		{"list_st", arrow.ListOf(nested), ""},
		{"st_list", arrow.StructOf(f("l", arrow.ListOf(arrow.PrimitiveTypes.Int16), true), f("d", arrow.FixedWidthTypes.Date32, true)), ""},
		// struct with null parents (2.0 cannot store struct validity)
		{"st_nullrows", arrow.StructOf(f("x", arrow.PrimitiveTypes.Int32, true), f("s", arrow.BinaryTypes.String, true)), "2.1 2.2 2.3"},
		{"st_fsl", arrow.StructOf(f("v", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), true), f("n", nested, true)), "2.1 2.2 2.3"},
		// maps: Lance 12 refuses them in 2.0 and 2.1
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), "2.2 2.3"},
		{"map_list", arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Int64)), "2.2 2.3"},
		{"list_map", arrow.ListOf(arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String)), "2.2 2.3"},
	}
}

func issue12Schema(version string) *arrow.Schema {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
	for _, c := range issue12Types() {
		if c.versions == "" || strings.Contains(c.versions, version) {
			fields = append(fields, arrow.Field{Name: c.name, Type: c.dt, Nullable: true})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// issue12Value appends a random value (a null one time in six where
// allowed) to b. structNulls: struct rows may be null (not in 2.0).
func issue12Value(rng *mrand.Rand, b array.Builder, nullable, structNulls bool, id int64) {
	if _, isStruct := b.(*array.StructBuilder); nullable && (!isStruct || structNulls) && rng.IntN(6) == 0 {
		b.AppendNull()
		return
	}
	strs := []string{"", "a", "grün", "日本語テキスト", "value " + strconv.FormatInt(id, 10), "x\x00y"}
	f32s := []uint32{0x80000000, 0, 0x7fc00001, 0xffc00000, 0x7f800000, 0xff800000, 1}
	f64s := []uint64{0x8000000000000000, 0, 0x7ff8000000000001, 0xfff8000000000000, 0x7ff0000000000000, 1}
	item := func(x array.Builder, n int) {
		for range n {
			issue12Value(rng, x, true, structNulls, id)
		}
	}
	switch x := b.(type) {
	case *array.Int8Builder:
		x.Append(int8(rng.IntN(256) - 128))
	case *array.Int16Builder:
		x.Append([]int16{math.MinInt16, math.MaxInt16, int16(rng.IntN(100))}[rng.IntN(3)])
	case *array.Int32Builder:
		x.Append([]int32{math.MinInt32, math.MaxInt32, rng.Int32N(1000) - 500}[rng.IntN(3)])
	case *array.Int64Builder:
		x.Append([]int64{math.MinInt64, math.MaxInt64, rng.Int64N(1e6), id}[rng.IntN(4)])
	case *array.Uint8Builder:
		x.Append(uint8(rng.IntN(256)))
	case *array.Uint16Builder:
		x.Append(uint16(rng.IntN(65536)))
	case *array.Uint32Builder:
		x.Append(rng.Uint32())
	case *array.Uint64Builder:
		x.Append([]uint64{0, math.MaxUint64, rng.Uint64()}[rng.IntN(3)])
	case *array.Float16Builder:
		x.Append(float16.FromBits([]uint16{0x8000, 0, 0x7e01, 0xfe00, 0x7c00, 0x3c00, 1}[rng.IntN(7)]))
	case *array.Float32Builder:
		if x.Type() == arrow.PrimitiveTypes.Float32 && rng.IntN(2) == 0 {
			x.Append(math.Float32frombits(f32s[rng.IntN(len(f32s))]))
		} else {
			x.Append(float32(rng.NormFloat64()))
		}
	case *array.Float64Builder:
		if rng.IntN(2) == 0 {
			x.Append(math.Float64frombits(f64s[rng.IntN(len(f64s))]))
		} else {
			x.Append(rng.NormFloat64())
		}
	case *array.BooleanBuilder:
		x.Append(rng.IntN(2) == 0)
	case *array.StringBuilder:
		x.Append(strs[rng.IntN(len(strs))])
	case *array.LargeStringBuilder:
		x.Append(strs[rng.IntN(len(strs))])
	case *array.BinaryBuilder: // binary and large_binary
		v := make([]byte, rng.IntN(12))
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		x.Append(v)
	case *array.FixedSizeBinaryBuilder:
		v := make([]byte, x.Type().(*arrow.FixedSizeBinaryType).ByteWidth)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		x.Append(v)
	case *array.Decimal128Builder:
		x.Append(decimal128.FromI64(rng.Int64N(1e15) - 5e14))
	case *array.Decimal256Builder:
		x.Append(decimal256.FromI64(rng.Int64()))
	case *array.Date32Builder:
		x.Append(arrow.Date32(rng.Int32N(400000) - 200000))
	case *array.Date64Builder:
		x.Append(arrow.Date64((rng.Int64N(1e13) - 5e12) / 86400000 * 86400000))
	case *array.Time32Builder:
		if x.Type().(*arrow.Time32Type).Unit == arrow.Second {
			x.Append(arrow.Time32(rng.Int32N(86400)))
		} else {
			x.Append(arrow.Time32(rng.Int32N(86400e3)))
		}
	case *array.Time64Builder:
		if x.Type().(*arrow.Time64Type).Unit == arrow.Microsecond {
			x.Append(arrow.Time64(rng.Int64N(86400e6)))
		} else {
			x.Append(arrow.Time64(rng.Int64N(86400e9)))
		}
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(rng.Int64N(1<<50) - 1<<49))
	case *array.DurationBuilder:
		x.Append(arrow.Duration(rng.Int64() >> 1))
	case *array.NullBuilder:
		x.AppendNull()
	case *array.BinaryDictionaryBuilder:
		v := []string{"red", "grün", "blue"}[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			v = "v" + strconv.FormatInt(id, 10)
		}
		if err := x.AppendString(v); err != nil {
			panic(err)
		}
	case *array.Date32DictionaryBuilder:
		_ = x.Append(arrow.Date32(rng.Int32N(5)))
	case *array.Int64DictionaryBuilder:
		v := []int64{math.MinInt64, 7, math.MaxInt64}[rng.IntN(3)]
		if rng.IntN(3) == 0 {
			v = id * 1_000_003
		}
		if err := x.Append(v); err != nil {
			panic(err)
		}
	case *array.ListBuilder:
		x.Append(true)
		item(x.ValueBuilder(), rng.IntN(4))
	case *array.LargeListBuilder:
		x.Append(true)
		item(x.ValueBuilder(), rng.IntN(4))
	case *array.FixedSizeListBuilder:
		x.Append(true)
		ft := x.Type().(*arrow.FixedSizeListType)
		for range ft.Len() {
			if fb, ok := x.ValueBuilder().(*array.Float32Builder); ok { // Lance refuses NaN in vectors
				if ft.ElemField().Nullable && rng.IntN(6) == 0 {
					fb.AppendNull()
				} else {
					fb.Append(float32(rng.NormFloat64()))
				}
				continue
			}
			issue12Value(rng, x.ValueBuilder(), ft.ElemField().Nullable, structNulls, id)
		}
	case *array.StructBuilder:
		x.Append(true)
		for i := range x.NumField() {
			issue12Value(rng, x.FieldBuilder(i), true, structNulls, id)
		}
	case *array.MapBuilder:
		x.Append(true)
		for k := range rng.IntN(3) {
			switch kb := x.KeyBuilder().(type) {
			case *array.StringBuilder:
				kb.Append(string(rune('a' + k)))
			case *array.Int32Builder:
				kb.Append(int32(k) - 1)
			}
			issue12Value(rng, x.ItemBuilder(), true, structNulls, id)
		}
	default:
		panic("issue12Value: no values for " + b.Type().String())
	}
}

func issue12Batch(rng *mrand.Rand, sch *arrow.Schema, version string, first int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for r := range n {
		b.Field(0).(*array.Int64Builder).Append(first + int64(r))
		for i := 1; i < sch.NumFields(); i++ {
			issue12Value(rng, b.Field(i), true, version != "2.0", first+int64(r))
		}
	}
	return b.NewRecordBatch()
}

// issue12Rows renders rows in the peer's canonical encoding, keyed by id.
func issue12Rows(t *testing.T, rec arrow.RecordBatch, into map[string][]string) {
	t.Helper()
	for i := range int(rec.NumRows()) {
		row := make([]string, rec.NumCols())
		for j := range row {
			v, err := peerlance.Value(rec.Column(j), i)
			if err != nil {
				t.Fatal(err)
			}
			row[j] = v
		}
		into[row[0]] = row
	}
}

// requireLance12Rows: Lance 12 returns exactly the rows of want (any order).
func requireLance12Rows(ctx context.Context, t *testing.T, p *peerlance.Peer, dir, what string, sch *arrow.Schema, want map[string][]string) {
	t.Helper()
	r, err := p.Rows(ctx, dir)
	if err != nil {
		t.Fatalf("%s: Lance 12 cannot read the table: %v", what, err)
	}
	var cols []string
	for _, fl := range sch.Fields() {
		cols = append(cols, fl.Name)
	}
	if strings.Join(r.Columns, ",") != strings.Join(cols, ",") {
		t.Fatalf("%s: Lance columns %v, want %v", what, r.Columns, cols)
	}
	if len(r.Rows) != len(want) {
		t.Fatalf("%s: Lance returns %d rows, want %d", what, len(r.Rows), len(want))
	}
	bad := 0
	for i := range r.Rows {
		got, err := r.CanonicalRow(i)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[got[0]]
		if !ok {
			t.Fatalf("%s: Lance returns id %s, which was not written", what, got[0])
		}
		for j := range got {
			if got[j] != w[j] && bad < 10 {
				bad++
				t.Errorf("%s: id %s column %s: Lance %s, written %s", what, got[0], cols[j], got[j], w[j])
			}
		}
	}
	if bad > 0 {
		t.FailNow()
	}
}

// clearZoneWriteSeedsFlag rewrites every manifest of a test-only copy
// without FLAG_ZONE_WRITE_SEEDS so that Lance 12 opens it (never do this to
// a real table: R54/R57 forbid it).
func clearZoneWriteSeedsFlag(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ents, err := os.ReadDir(filepath.Join(dir, "_versions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".manifest") {
			continue
		}
		key := "_versions/" + e.Name()
		f, err := manifest.ReadFile(ctx, st.Bucket(), st.BucketKey(key))
		if err != nil {
			t.Fatal(err)
		}
		f.Manifest.ReaderFeatureFlags &^= flags.ZoneWriteSeeds
		f.Manifest.WriterFeatureFlags &^= flags.ZoneWriteSeeds
		b, err := manifest.EncodePrelude(f.Prelude, f.Manifest, f.IndexSection, f.Transaction)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
}

// requireSeedsMatchFileTypes: every seed of every data file of the head
// version added after fromFragment decodes (no E07 or other error), has
// the file's stored Arrow type, and covers every top-level column.
func requireSeedsMatchFileTypes(ctx context.Context, t *testing.T, dir string, fromFragment int, sch *arrow.Schema) {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
	if err != nil {
		t.Fatal(err)
	}
	frags := head.Manifest.GetFragments()[fromFragment:]
	if len(frags) == 0 {
		t.Fatal("no seeded fragments")
	}
	for _, fr := range frags {
		for _, df := range fr.GetFiles() {
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(manifest.DataDir+"/"+df.GetPath()), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			stored, err := f.Schema().ArrowSchema()
			if err != nil {
				t.Fatal(err)
			}
			seeds, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, s := range seeds {
				got[s.Column] = true
				if s.Err != nil {
					t.Errorf("%s: seed of %s: %v", df.GetPath(), s.Column, s.Err)
					continue
				}
				idx := stored.FieldIndices(s.Column)
				if len(idx) != 1 {
					t.Errorf("%s: seed of %s: no such stored field", df.GetPath(), s.Column)
					continue
				}
				want := stored.Field(idx[0]).Type
				if ext, ok := want.(arrow.ExtensionType); ok {
					want = ext.StorageType()
				}
				if !arrow.TypeEqual(s.Seed.ValueType, want) || s.Seed.ValueType.String() != want.String() {
					t.Errorf("%s: seed of %s has value type %s, the file stores %s (R15)", df.GetPath(), s.Column, s.Seed.ValueType, want)
				}
			}
			for _, fl := range sch.Fields() {
				if !got[fl.Name] {
					t.Errorf("%s: column %s (%s) got no seed with --seeds all", df.GetPath(), fl.Name, fl.Type)
				}
			}
		}
	}
}

// TestWriteCLI_Issue12_R15_EveryTypeEveryVersionRoundTripsThroughLance12
// (issue 12 items 1–2, "Us → Lance"; zone-seeds R15 for the seed types).
func TestWriteCLI_Issue12_R15_EveryTypeEveryVersionRoundTripsThroughLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	// 2.3 (Lance 12's "next"): spec 2.1 §2.5, W2/W3/W12.
	for vi, version := range []string{"2.0", "2.1", "2.2", "2.3"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rng := mrand.New(mrand.NewPCG(uint64(vi)+1212, 12))
			sch := issue12Schema(version)
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "t.lance")
			want := map[string][]string{}
			input := func(name string, first int64, n int) (string, arrow.RecordBatch) {
				rec := issue12Batch(rng, sch, version, first, n)
				path := filepath.Join(tmp, name+".arrow")
				if err := peerlance.WriteIPCFile(path, sch, rec); err != nil {
					t.Fatal(err)
				}
				return path, rec
			}
			cli := func(args ...string) string {
				t.Helper()
				code, out, errs := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("lancekeeper %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
				return out
			}

			// create, two files
			f1, rec1 := input("create", 0, 300)
			defer rec1.Release()
			cli("write", dir, "--from", f1, "--mode", "create", "--data-storage-version", version, "--max-rows-per-file", "200")
			head := latest(t, dir)
			if got := head.Manifest.GetDataFormat().GetVersion(); got != version {
				t.Fatalf("data_format %q, want %q", got, version)
			}
			issue12Rows(t, rec1, want)
			requireLance12Rows(ctx, t, p, dir, "our create", sch, want)

			// append without seeds
			f2, rec2 := input("append", 1000, 200)
			defer rec2.Release()
			cli("write", dir, "--from", f2, "--mode", "append")
			issue12Rows(t, rec2, want)
			requireLance12Rows(ctx, t, p, dir, "our append", sch, want)
			for _, fr := range latest(t, dir).Manifest.GetFragments() {
				for _, df := range fr.GetFiles() {
					if got := fmt.Sprintf("%d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion()); got != version {
						t.Fatalf("data file %s has version %s in a %s table", df.GetPath(), got, version)
					}
				}
			}

			// append with v1 seeds on every column, on a copy (the flag
			// makes Lance 12 refuse the table)
			seeded := filepath.Join(tmp, "seeded.lance")
			if err := peerlance.CopyDir(dir, seeded); err != nil {
				t.Fatal(err)
			}
			before := len(latest(t, seeded).Manifest.GetFragments())
			f3, rec3 := input("seeded", 2000, 250)
			defer rec3.Release()
			var wj writeJSON
			if err := json.Unmarshal([]byte(cli("write", seeded, "--from", f3, "--mode", "append", "--seeds", "all", "--enable-zone-write-seeds",
				"--rows-per-zone", "64", "--json")), &wj); err != nil {
				t.Fatal(err)
			}
			for _, fj := range wj.Files {
				if len(fj.Seeds) != sch.NumFields() {
					sort.Strings(fj.Seeds)
					t.Errorf("%s: seeds on %d of %d columns: %v", fj.Path, len(fj.Seeds), sch.NumFields(), fj.Seeds)
				}
			}
			cli("seeds", "verify", seeded)
			cli("seeds", seeded)
			requireSeedsMatchFileTypes(ctx, t, seeded, before, sch)
			seededWant := map[string][]string{}
			for k, v := range want {
				seededWant[k] = v
			}
			issue12Rows(t, rec3, seededWant)
			clearZoneWriteSeedsFlag(ctx, t, seeded)
			requireLance12Rows(ctx, t, p, seeded, "our append with v1 seeds in the files (test copy without the flag)", sch, seededWant)

			// Lance 12 appends, optimizes and indexes our table
			f4, rec4 := input("lance", 3000, 150)
			defer rec4.Release()
			if _, err := p.Append(ctx, dir, f4); err != nil {
				t.Fatalf("Lance 12 append to our table: %v", err)
			}
			issue12Rows(t, rec4, want)
			requireLance12Rows(ctx, t, p, dir, "Lance append", sch, want)
			if _, err := p.Optimize(ctx, dir); err != nil {
				t.Fatalf("Lance 12 optimize: %v", err)
			}
			if _, err := p.CreateIndex(ctx, dir, "id", peerlance.IndexBTree, "id_idx"); err != nil {
				t.Fatalf("Lance 12 create index: %v", err)
			}
			requireLance12Rows(ctx, t, p, dir, "after Lance optimize and index", sch, want)
			cli("seeds", "verify", dir)
		})
	}
}

// TestWriteCLI_Issue12_RefusesWhatLance12CannotWrite: the types Lance 12
// refuses at a storage version are refused by `write --mode create` with
// exit 2, an error naming the field and the reason, nothing committed;
// the library error is the writer's typed one (datafile.ErrInvalidSchema /
// ErrInvalidData), not a "schema mismatch" (a create has no table schema).
func TestWriteCLI_Issue12_RefusesWhatLance12CannotWrite(t *testing.T) {
	cases := []struct {
		version string
		dt      arrow.DataType
		want    string
	}{
		{"2.0", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), "Lance 2.0 has no encoding for map"},
		{"2.1", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), "map columns need storage version 2.2"},
		{"2.0", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), "Lance 2.0 cannot store struct validity"},
		{"2.2", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.FixedWidthTypes.Date32}, "a dictionary of date32 cannot be written"},
		// Lance 12 panics creating these (its logical type splits on ':')
		{"2.0", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+05:30"}, "contains ':'"},
		{"2.2", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+05:30"}, "contains ':'"},
	}
	for _, c := range cases {
		t.Run(c.version+"_"+c.dt.String(), func(t *testing.T) {
			sch := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.dt, Nullable: true}}, nil)
			b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
			defer b.Release()
			rng := mrand.New(mrand.NewPCG(1, 2))
			for range 60 {
				issue12Value(rng, b.Field(0), true, true, 1)
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in.arrow")
			if err := peerlance.WriteIPCFile(in, sch, rec); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, "d.lance")
			code, _, errs := runCLI(t, "write", dir, "--from", in, "--mode", "create", "--data-storage-version", c.version)
			if code != exitBadInput || !strings.Contains(errs, c.want) || !strings.Contains(errs, `"c"`) {
				t.Fatalf("exit %d %q, want exit 2 naming field \"c\" and %q", code, errs, c.want)
			}
			if strings.Contains(errs, "mismatch") || (c.version != "2.0" && strings.Contains(errs, "Lance 2.0")) {
				t.Errorf("misleading refusal: %q", errs)
			}
			if _, err := os.Stat(filepath.Join(dir, "_versions")); err == nil {
				t.Error("a version was committed")
			}
		})
	}
}

// TestWriteCLI_Issue12_DataStorageVersionFlag: `write --mode create`
// without --data-storage-version makes a 2.2 table as Lance 12 does;
// 2.0/2.1/2.2/2.3, "stable" (2.2 in Lance 12) and "next" (2.3 in Lance 12)
// are taken; legacy and anything else Lance 12 rejects are exit 2 with
// nothing written; an append asking for another version than the table's
// is exit 2.
func TestWriteCLI_Issue12_DataStorageVersionFlag(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.arrow")
	writeArrowFile(t, in, false, 0, 10)
	for _, c := range []struct {
		flag, want string
		code       int
	}{{"", "2.2", 0}, {"2.0", "2.0", 0}, {"2.1", "2.1", 0}, {"2.2", "2.2", 0}, {"2.3", "2.3", 0}, {"legacy", "", exitBadInput}, {"stable", "2.2", 0}, {"next", "2.3", 0}, {"stable_2.0", "", exitBadInput}, {"x", "", exitBadInput}} {
		dir := filepath.Join(t.TempDir(), "d.lance")
		args := []string{"write", dir, "--from", in, "--mode", "create"}
		if c.flag != "" {
			args = append(args, "--data-storage-version", c.flag)
		}
		code, _, errs := runCLI(t, args...)
		if code != c.code {
			t.Fatalf("--data-storage-version %q: exit %d, want %d: %s", c.flag, code, c.code, errs)
		}
		if code != 0 {
			if _, err := os.Stat(filepath.Join(dir, "_versions")); err == nil {
				t.Errorf("--data-storage-version %q: a version was committed", c.flag)
			}
			continue
		}
		if got := latest(t, dir).Manifest.GetDataFormat().GetVersion(); got != c.want {
			t.Errorf("--data-storage-version %q: data_format %q, want %q", c.flag, got, c.want)
		}
		other := map[string]string{"2.0": "2.2", "2.1": "2.0", "2.2": "2.1", "2.3": "2.2"}[c.want]
		if code, _, errs := runCLI(t, "write", dir, "--from", in, "--mode", "append", "--data-storage-version", other); code != exitBadInput || !strings.Contains(errs, "data storage version") {
			t.Errorf("append at %s to a %s table: exit %d %s", other, c.want, code, errs)
		}
	}
}
