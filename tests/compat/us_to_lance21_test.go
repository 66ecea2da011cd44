package compat_test

// Us → Lance for 2.1/2.2/2.3 data files (issue 12 "How it is checked", second
// item): tables created and appended by lancekeeper at storage 2.1, 2.2 and 2.3,
// every Arrow type the writer stores (nested nulls, lists of structs,
// maps, dictionaries, decimals, fixed_size_binary), with and without v1
// seeds in the files (without FLAG_ZONE_WRITE_SEEDS, so Lance 12 opens
// them), read by Lance 12 with identical rows; Lance 12 then appends,
// compacts (optimize) and builds a scalar index, and still returns the
// same rows.

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// schema21 has one column per kind of value the 2.1+ writer stores,
// including the nested shapes 2.0 cannot express.
func schema21(version string) *arrow.Schema {
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: name != "id"}
	}
	fields := []arrow.Field{
		f("id", arrow.PrimitiveTypes.Int64),
		f("i8", arrow.PrimitiveTypes.Int8), f("i16", arrow.PrimitiveTypes.Int16), f("i32", arrow.PrimitiveTypes.Int32),
		f("u8", arrow.PrimitiveTypes.Uint8), f("u16", arrow.PrimitiveTypes.Uint16), f("u32", arrow.PrimitiveTypes.Uint32),
		f("u64", arrow.PrimitiveTypes.Uint64),
		f("f16", arrow.FixedWidthTypes.Float16), f("f32", arrow.PrimitiveTypes.Float32), f("f64", arrow.PrimitiveTypes.Float64),
		f("b", arrow.FixedWidthTypes.Boolean),
		f("s", arrow.BinaryTypes.String), f("ls", arrow.BinaryTypes.LargeString),
		f("bin", arrow.BinaryTypes.Binary), f("lbin", arrow.BinaryTypes.LargeBinary),
		f("fsb", &arrow.FixedSizeBinaryType{ByteWidth: 4}),
		f("d32", arrow.FixedWidthTypes.Date32), f("d64", arrow.FixedWidthTypes.Date64),
		f("ts", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Asia/Kolkata"}),
		f("t64", arrow.FixedWidthTypes.Time64us), f("dur", arrow.FixedWidthTypes.Duration_ms),
		f("dec", &arrow.Decimal128Type{Precision: 38, Scale: 10}),
		f("dec256", &arrow.Decimal256Type{Precision: 76, Scale: 20}),
		f("dict", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}),
		// fixed-width dictionaries (issue 12, session 22 item 2)
		f("di64", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}),
		f("df64", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64}),
		f("lds", arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String})),
		f("ldi", arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Int64})),
		f("li", arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		f("lls", arrow.LargeListOf(arrow.BinaryTypes.String)),
		f("fsl", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)),
		// fixed_size_list of fixed_size_list: null rows, null inner lists, null items
		f("fslfsl", arrow.FixedSizeListOf(3, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32))),
		f("st", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})),
		f("lst", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "t", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}))),
	}
	if version != "2.1" { // Lance 12 refuses maps in 2.1 files
		fields = append(fields, f("m", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)))
	}
	return arrow.NewSchema(fields, nil)
}

// randomValue appends one random value (or null, for nullable builders) to b.
func randomValue(rng *mrand.Rand, b array.Builder, nullable bool, id int64) {
	if nullable && rng.IntN(7) == 0 {
		b.AppendNull()
		return
	}
	str := func() string { return trickyStrings()[rng.IntN(len(trickyStrings()))] }
	switch x := b.(type) {
	case *array.Int64Builder:
		x.Append(id)
	case *array.Int8Builder:
		x.Append(int8(rng.IntN(256) - 128))
	case *array.Int16Builder:
		x.Append([]int16{math.MinInt16, math.MaxInt16, int16(rng.IntN(100))}[rng.IntN(3)])
	case *array.Int32Builder:
		x.Append([]int32{math.MinInt32, math.MaxInt32, rng.Int32N(1000) - 500}[rng.IntN(3)])
	case *array.Uint8Builder:
		x.Append(uint8(rng.IntN(256)))
	case *array.Uint16Builder:
		x.Append(uint16(rng.IntN(65536)))
	case *array.Uint32Builder:
		x.Append(rng.Uint32())
	case *array.Uint64Builder:
		x.Append([]uint64{0, math.MaxUint64, rng.Uint64()}[rng.IntN(3)])
	case *array.Float16Builder:
		x.Append(float16.FromBits(trickyF16()[rng.IntN(len(trickyF16()))]))
	case *array.Float32Builder:
		x.Append(math.Float32frombits(trickyF32()[rng.IntN(len(trickyF32()))]))
	case *array.Float64Builder:
		if rng.IntN(2) == 0 {
			x.Append(math.Float64frombits(trickyF64()[rng.IntN(len(trickyF64()))]))
		} else {
			x.Append(rng.NormFloat64())
		}
	case *array.BooleanBuilder:
		x.Append(rng.IntN(2) == 0)
	case *array.StringBuilder:
		x.Append(str())
	case *array.LargeStringBuilder:
		x.Append(str() + str())
	case *array.BinaryBuilder:
		v := make([]byte, rng.IntN(20))
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
	case *array.Date32Builder:
		x.Append(arrow.Date32(rng.Int32N(400000) - 200000))
	case *array.Date64Builder:
		x.Append(arrow.Date64(rng.Int64N(1e13)-5e12) / 86400000 * 86400000)
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(rng.Int64()))
	case *array.Time64Builder:
		x.Append(arrow.Time64(rng.Int64N(86400e6)))
	case *array.DurationBuilder:
		x.Append(arrow.Duration(rng.Int64() >> 1))
	case *array.Decimal128Builder:
		x.Append(decimal128.FromI64(rng.Int64N(1e15) - 5e14))
	case *array.Decimal256Builder:
		x.Append(decimal256.FromI64(rng.Int64()))
	case *array.ListBuilder:
		x.Append(true)
		n := rng.IntN(4)
		for range n {
			randomValue(rng, x.ValueBuilder(), true, id)
		}
	case *array.LargeListBuilder:
		x.Append(true)
		n := rng.IntN(4)
		for range n {
			randomValue(rng, x.ValueBuilder(), true, id)
		}
	case *array.FixedSizeListBuilder:
		x.Append(true)
		ft := x.Type().(*arrow.FixedSizeListType)
		for range ft.Len() {
			if fb, ok := x.ValueBuilder().(*array.Float32Builder); ok { // Lance refuses NaN in vectors
				if rng.IntN(6) == 0 {
					fb.AppendNull()
				} else {
					fb.Append(float32(rng.NormFloat64()))
				}
				continue
			}
			randomValue(rng, x.ValueBuilder(), ft.ElemField().Nullable, id)
		}
	case *array.StructBuilder:
		x.Append(true)
		for i := range x.NumField() {
			randomValue(rng, x.FieldBuilder(i), true, id)
		}
	case *array.MapBuilder:
		x.Append(true)
		n := rng.IntN(3)
		for k := range n {
			x.KeyBuilder().(*array.StringBuilder).Append(string(rune('a' + k)))
			randomValue(rng, x.ItemBuilder(), true, id)
		}
	case *array.Time32Builder:
		x.Append(arrow.Time32(rng.Int32N(86400)))
	case *array.BinaryDictionaryBuilder:
		v := []string{"red", "grün", "blue"}[rng.IntN(3)]
		if rng.IntN(2) == 0 { // high cardinality too: no smaller dictionary page
			v = "v" + strconv.FormatInt(id, 10)
		}
		if err := x.AppendString(v); err != nil {
			panic(err)
		}
	case *array.NullBuilder:
		x.AppendNull()
	case *array.Int64DictionaryBuilder: // low and high cardinality
		v := []int64{math.MinInt64, 7, math.MaxInt64}[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			v = id * 1_000_003
		}
		if err := x.Append(v); err != nil {
			panic(err)
		}
	case *array.Float64DictionaryBuilder:
		v := math.Float64frombits(trickyF64()[rng.IntN(len(trickyF64()))])
		if rng.IntN(2) == 0 {
			v = float64(id) / 3
		}
		if err := x.Append(v); err != nil {
			panic(err)
		}
	case *array.Date32DictionaryBuilder:
		if err := x.Append(arrow.Date32(rng.Int32N(5) * 1000)); err != nil {
			panic(err)
		}
	default:
		panic("randomValue: no values for " + b.Type().String())
	}
}

func batch21(rng *mrand.Rand, version string, first int64, n int) arrow.RecordBatch {
	schema := schema21(version)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for r := range n {
		for i, fl := range schema.Fields() {
			randomValue(rng, b.Field(i), fl.Nullable, first+int64(r))
		}
	}
	return b.NewRecordBatch()
}

// appendWithSeedsNoFlag writes rec as one 2.1+ data file with v0 seeds
// (the layout Lance 12 itself writes and that needs no feature flag, R62)
// on every column and commits it as an Append, so that Lance 12 still
// opens the table. It checks that seeds verify proves the seeds sound.
func appendWithSeedsNoFlag(ctx context.Context, t *testing.T, st *store.Store, rec arrow.RecordBatch, version datafile.FileVersion, model modelRows) {
	t.Helper()
	root := strings.TrimSuffix(st.KeyPrefix(), "/")
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), root)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	for _, f := range head.Manifest.GetFields() {
		ids = append(ids, f.GetId())
	}
	path := manifest.DataDir + "/" + commit.NewDataFileName()
	sw, err := st.NewWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := datafile.NewWriter(sw, rec.Schema(), datafile.WriterOptions{Version: version, FieldIDs: ids, SeedAllColumns: true,
		SeedVersion0: true, PageSize: 4096, Seed: seedio.CollectorOptions{RowsPerZone: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	r, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	seeded := 0
	for _, s := range r.Seeds {
		if s.BufferIndex != 0 && s.Err == nil {
			seeded++
		}
	}
	if seeded < 20 {
		t.Fatalf("only %d seeds written: %+v", seeded, r.Seeds)
	}
	// seeds verify (R30): every v0 seed we wrote is sound against the values.
	vf, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(path), datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	verdicts, err := vf.VerifySeeds(ctx, datafile.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != seeded {
		t.Errorf("seeds verify audited %d seeds, %d written", len(verdicts), seeded)
	}
	for _, v := range verdicts {
		if v.Status != datafile.SeedSound {
			t.Errorf("seeds verify: %s %+v", v.Column, v)
		}
	}
	frag := &pb.DataFragment{PhysicalRows: r.NumRows, Files: []*pb.DataFile{{Path: strings.TrimPrefix(path, manifest.DataDir+"/"),
		Fields: r.Fields, ColumnIndices: r.ColumnIndices, FileMajorVersion: r.FileMajorVersion, FileMinorVersion: r.FileMinorVersion,
		FileSizeBytes: r.FileSizeBytes}}}
	res, err := commit.Commit(ctx, st, commit.NewAppend(head.Manifest.GetVersion(), []*pb.DataFragment{frag}), commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := canonicalRows(t, rec)
	for off := range rows {
		model[res.FragmentIDs[0]<<32|uint64(off)] = rows[off]
	}
}

// TestUsToLance21_R_W1_W14_EveryTypeReadByLance12 (spec 2.1 §8.1–§8.3).
func TestUsToLance21_R_W1_W14_EveryTypeReadByLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	// 2.3 (Lance 12's "next"): spec 2.1 §2.5, footer (2,3), data_format "2.3"
	for vi, version := range []string{"2.1", "2.2", "2.3"} {
		t.Run(version, func(t *testing.T) {
			record(t, catUsToLance)
			ctx := peerContext(t)
			rng := mrand.New(mrand.NewPCG(uint64(vi)+210, 21))
			dir := filepath.Join(t.TempDir(), "ours.lance")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			st := localStore(ctx, t, dir)
			cols := columnNames(schema21(version))
			model := modelRows{}

			rec1 := batch21(rng, version, 0, 1500)
			defer rec1.Release()
			w1 := writeOurs(ctx, t, st, rec1, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: version, PageSize: 4096, MaxRowsPerFile: 1000}, model)
			if got := w1.Manifest.GetDataFormat().GetVersion(); got != version {
				t.Fatalf("data_format %q, want %q", got, version)
			}
			df := w1.Manifest.GetFragments()[0].GetFiles()[0]
			if want := map[string]uint32{"2.1": 1, "2.2": 2, "2.3": 3}[version]; df.GetFileMajorVersion() != 2 || df.GetFileMinorVersion() != want {
				t.Fatalf("file version %d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion())
			}
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(w1.Files[0].Path), datafile.OpenOptions{})
			if err != nil {
				t.Fatalf("our reader refuses our %s file: %v", version, err)
			}
			if got := f.Version().String(); got != version { // the footer's (2,n)
				t.Fatalf("footer says %s, want %s", got, version)
			}
			if f.NumColumns() != len(df.GetFields()) {
				t.Errorf("file has %d columns, manifest %d leaf fields (spec 2.1 §8.3)", f.NumColumns(), len(df.GetFields()))
			}
			requireLanceRows(ctx, t, p, dir, "our create", model, cols)

			rec2 := batch21(rng, version, 10000, 700)
			defer rec2.Release()
			writeOurs(ctx, t, st, rec2, commit.WriteOptions{Mode: commit.ModeAppend}, model)
			requireLanceRows(ctx, t, p, dir, "our append", model, cols)

			rec3 := batch21(rng, version, 20000, 300)
			defer rec3.Release()
			appendWithSeedsNoFlag(ctx, t, st, rec3, map[string]datafile.FileVersion{"2.1": datafile.V2_1, "2.2": datafile.V2_2, "2.3": datafile.V2_3}[version], model)
			requireLanceRows(ctx, t, p, dir, "our append with seeds in the files", model, cols)
			requireOurRowsAsLance(ctx, t, p, dir, "our "+version+" files")

			rec4 := batch21(rng, version, 30000, 200)
			defer rec4.Release()
			lanceAppend(ctx, t, p, dir, rec4, model)
			if _, err := p.Optimize(ctx, dir); err != nil {
				t.Fatalf("Lance optimize: %v", err)
			}
			if _, err := p.CreateIndex(ctx, dir, "i32", peerlance.IndexBTree, "i32_idx"); err != nil {
				t.Fatalf("Lance create index: %v", err)
			}
			requireOurRowsAsLance(ctx, t, p, dir, "after optimize")
			lr, _, err := lanceRowsCanonical(ctx, p, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(lr.Rows) != len(model) {
				t.Fatalf("after optimize and index Lance has %d rows, want %d", len(lr.Rows), len(model))
			}
			want := map[int64][]string{}
			for _, r := range model {
				want[canonicalInt(r[0])] = r
			}
			for _, r := range lr.Rows {
				w := want[canonicalInt(r[0])]
				for j := range r {
					if w == nil || r[j] != w[j] {
						t.Fatalf("after optimize: row id %s column %s: Lance %s, written %v", r[0], cols[j], r[j], w)
					}
				}
			}
		})
	}
}

// TestUsToLance21_AppendToCorpusTables: `write --mode append` works on
// copies of the corpus's Lance 12 tables of every storage version this
// build writes (2.1, 2.2, 2.3; 2.0 where the 2.0 writer expresses the schema),
// with and without seeds; the files have the table's version; without
// seeds Lance 12 reads the table with the appended rows. A legacy (0.1)
// table is refused with ErrStorageVersion before anything is written
// (issue 12 item 2).
func TestUsToLance21_AppendToCorpusTables(t *testing.T) {
	p := peerlance.ServeForTest(t)
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	for ti, name := range []string{"storage_2_1", "storage_2_0", "all_types", "seeds_v0_zonemap", "scalar_indices", "storage_2_3", "storage_legacy"} {
		t.Run(name, func(t *testing.T) {
			record(t, catUsToLance)
			ctx := peerContext(t)
			dir := filepath.Join(t.TempDir(), name+".lance")
			if err := peerlance.CopyDir(filepath.Join(corpus, "lance12", name+".lance"), dir); err != nil {
				t.Fatal(err)
			}
			st := localStore(ctx, t, dir)
			head, _, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
			if err != nil {
				t.Fatal(err)
			}
			tableVersion := commit.DataFormatVersion(head.Manifest)
			_, before, err := p.Count(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			// The input: the table's schema.
			var sch *arrow.Schema
			if tableVersion != "0.1" {
				ls := &datafile.Schema{}
				at := map[int32]int{}
				for i, f := range head.Manifest.GetFields() {
					at[f.GetId()] = i
					ls.Fields = append(ls.Fields, datafile.Field{Name: f.GetName(), ID: f.GetId(), ParentID: f.GetParentId(), LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
					if p, ok := at[f.GetParentId()]; ok {
						ls.Fields[p].Children = append(ls.Fields[p].Children, i)
					}
				}
				if sch, err = ls.ArrowSchema(); err != nil {
					t.Fatal(err)
				}
			} else {
				sch = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
			}
			rng := mrand.New(mrand.NewPCG(uint64(ti), 77))
			bld := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
			for r := range 300 {
				for i, fl := range sch.Fields() {
					if tableVersion == "2.0" { // no null structs: 2.0 cannot store them
						randomValue20(rng, bld.Field(i), fl.Nullable, int64(1_000_000+r))
						continue
					}
					randomValue(rng, bld.Field(i), fl.Nullable, int64(1_000_000+r))
				}
			}
			rec := bld.NewRecordBatch()
			bld.Release()
			defer rec.Release()
			rdr, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
			res, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend})
			if tableVersion == "0.1" {
				if !errors.Is(err, commit.ErrStorageVersion) {
					t.Fatalf("legacy table: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("append to a %s table: %v", tableVersion, err)
			}
			for _, f := range res.Manifest.GetFragments()[len(head.Manifest.GetFragments()):] {
				d := f.GetFiles()[0]
				if got := fmt.Sprintf("2.%d", d.GetFileMinorVersion()); got != tableVersion {
					t.Fatalf("appended file version %s, table %s", got, tableVersion)
				}
			}
			if _, after, err := p.Count(ctx, dir); err != nil || after != before+300 {
				t.Fatalf("Lance counts %d rows after our append of 300 to %d (%v)", after, before, err)
			}
			lr, err := p.Rows(ctx, dir)
			if err != nil {
				t.Fatalf("Lance cannot read the table after our append: %v", err)
			}
			if len(lr.Rows) != int(before)+300 {
				t.Fatalf("Lance returns %d rows", len(lr.Rows))
			}
			// With v1 seeds (the explicit opt-in sets the flag).
			rdr2, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
			res2, err := commit.WriteArrow(ctx, st, rdr2, commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true,
				Commit: commit.Options{EnableZoneWriteSeeds: true}})
			if err != nil {
				t.Fatalf("seeded append: %v", err)
			}
			seeded := 0
			for _, f := range res2.Files {
				for _, s := range f.Seeds {
					if s.BufferIndex != 0 && s.Err == nil && s.Version == 1 {
						seeded++
					}
				}
			}
			if seeded == 0 || !commit.HasZoneWriteSeeds(res2.Manifest) {
				t.Fatalf("seeded append wrote %d v1 seeds, flag %v", seeded, commit.HasZoneWriteSeeds(res2.Manifest))
			}
		})
	}
}
