package peerlance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestPeerReportsPinnedVersions(t *testing.T) {
	p := ForTest(t)
	lancedb, arrowJS, node, err := p.Versions(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if lancedb != "0.39.0" || arrowJS != "18.1.0" {
		t.Errorf("peer runs @lancedb/lancedb %s with apache-arrow %s, want 0.39.0 with 18.1.0", lancedb, arrowJS)
	}
	t.Logf("peer: @lancedb/lancedb %s (Lance 12), apache-arrow %s, node %s, modules %s", lancedb, arrowJS, node, p.Modules)
}

// allTypesRecord builds three rows over many Arrow types, with float specials,
// integer extremes, multi-byte strings and nulls.
func allTypesRecord(t *testing.T) arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: name != "id"}
	}
	schema := arrow.NewSchema([]arrow.Field{
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
		f("li", arrow.ListOf(arrow.PrimitiveTypes.Int32)),
		f("lls", arrow.LargeListOf(arrow.BinaryTypes.String)),
		f("fsl", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)),
		f("st", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})),
		f("m", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)),
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for r := 0; r < 3; r++ {
		for i, fld := range schema.Fields() {
			fb := b.Field(i)
			if r == 2 && fld.Name != "id" {
				fb.AppendNull()
				continue
			}
			neg := r == 1
			switch x := fb.(type) {
			case *array.Int64Builder:
				x.Append(int64(r))
			case *array.Int8Builder:
				x.Append([]int8{math.MinInt8, math.MaxInt8}[r])
			case *array.Int16Builder:
				x.Append([]int16{math.MinInt16, math.MaxInt16}[r])
			case *array.Int32Builder:
				x.Append([]int32{math.MinInt32, math.MaxInt32}[r])
			case *array.Uint8Builder:
				x.Append([]uint8{0, math.MaxUint8}[r])
			case *array.Uint16Builder:
				x.Append([]uint16{0, math.MaxUint16}[r])
			case *array.Uint32Builder:
				x.Append([]uint32{0, math.MaxUint32}[r])
			case *array.Uint64Builder:
				x.Append([]uint64{0, math.MaxUint64}[r])
			case *array.Float16Builder:
				x.Append(float16.FromBits([]uint16{0xfe01, 0x8000}[r]))
			case *array.Float32Builder:
				x.Append(math.Float32frombits([]uint32{0xffc0beef, 0x00000001}[r]))
			case *array.Float64Builder:
				x.Append(math.Float64frombits([]uint64{0x7ff8dead0000beef, 0x8000000000000000}[r]))
			case *array.BooleanBuilder:
				x.Append(neg)
			case *array.StringBuilder:
				x.Append([]string{"héllo wörld 😀", ""}[r])
			case *array.LargeStringBuilder:
				x.Append([]string{"日本語", "'quoted'"}[r])
			case *array.BinaryBuilder:
				x.Append([][]byte{{0, 1, 0xff}, {}}[r])
			case *array.FixedSizeBinaryBuilder:
				x.Append([][]byte{{0xde, 0xad, 0xbe, 0xef}, {0, 0, 0, 0}}[r])
			case *array.Date32Builder:
				x.Append([]arrow.Date32{-719162, 2932896}[r])
			case *array.Date64Builder:
				x.Append([]arrow.Date64{-86400000, 86400000}[r])
			case *array.TimestampBuilder:
				x.Append([]arrow.Timestamp{math.MinInt64 + 1, math.MaxInt64}[r])
			case *array.Time64Builder:
				x.Append([]arrow.Time64{0, 86399999999}[r])
			case *array.DurationBuilder:
				x.Append([]arrow.Duration{-1, math.MaxInt64}[r])
			case *array.Decimal128Builder:
				x.Append([]decimal128.Num{decimal128.FromI64(-15), decimal128.FromI64(123456789012345678)}[r])
			case *array.Decimal256Builder:
				x.Append([]decimal256.Num{decimal256.FromI64(-1), decimal256.FromI64(math.MaxInt64)}[r])
			case *array.BinaryDictionaryBuilder:
				if err := x.AppendString([]string{"red", "grün"}[r]); err != nil {
					t.Fatal(err)
				}
			case *array.ListBuilder:
				x.Append(true)
				vb := x.ValueBuilder().(*array.Int32Builder)
				vb.Append(int32(r))
				vb.AppendNull()
			case *array.LargeListBuilder:
				x.Append(true)
				x.ValueBuilder().(*array.StringBuilder).Append([]string{"a", "ü"}[r])
			case *array.FixedSizeListBuilder:
				x.Append(true)
				vb := x.ValueBuilder().(*array.Float32Builder)
				vb.Append(math.Float32frombits(0x80000000))
				vb.Append(float32(r))
			case *array.StructBuilder:
				x.Append(true)
				x.FieldBuilder(0).(*array.Float64Builder).Append(math.Inf(-1))
				x.FieldBuilder(1).(*array.StringBuilder).Append("ß")
			case *array.MapBuilder:
				x.Append(true)
				x.KeyBuilder().(*array.StringBuilder).Append("k")
				x.ItemBuilder().(*array.Int32Builder).Append(int32(r))
			default:
				t.Fatalf("no test value for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// TestPeerAgreesWithGoValueEncoding writes many Arrow types with Go, has
// Lance 12 store and read them, and checks that every value the driver
// prints equals Value() of the Go array, bit for bit (NaN payloads, -0,
// extremes), and that the schema's type strings equal TypeString().
func TestPeerAgreesWithGoValueEncoding(t *testing.T) {
	p := ForTest(t)
	ctx := testContext(t)
	rec := allTypesRecord(t)
	defer rec.Release()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "all.arrow")
	if err := WriteIPCFile(file, rec.Schema(), rec); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "all.lance")
	if _, err := p.Create(ctx, dir, file, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rows, err := p.Rows(ctx, dir, OrderByRowAddr())
	if err != nil {
		t.Fatal(err)
	}
	if rows.NumRows != int(rec.NumRows()) || len(rows.Columns) != int(rec.NumCols()) {
		t.Fatalf("Lance returned %d rows x %d columns, wrote %d x %d", rows.NumRows, len(rows.Columns), rec.NumRows(), rec.NumCols())
	}
	for c, fld := range rec.Schema().Fields() {
		if rows.Columns[c] != fld.Name {
			t.Fatalf("column %d is %s, want %s", c, rows.Columns[c], fld.Name)
		}
		wantType, err := TypeString(fld.Type)
		if err != nil {
			t.Fatal(err)
		}
		if got := rows.Schema.Fields[c].Type; got != wantType {
			t.Errorf("column %s: Lance type %s, Go type %s", fld.Name, got, wantType)
		}
	}
	for r := 0; r < rows.NumRows; r++ {
		got, err := rows.CanonicalRow(r)
		if err != nil {
			t.Fatal(err)
		}
		for c := range rows.Columns {
			want, err := Value(rec.Column(c), r)
			if err != nil {
				t.Fatal(err)
			}
			if got[c] != want {
				t.Errorf("row %d column %s: Lance %s, Go %s", r, rows.Columns[c], got[c], want)
			}
		}
	}
}

// TestPeerScenarioCreateAppendDeleteTagIndexRestore runs a fixed sequence of
// Lance writes through a serving peer and checks what info and rows report
// after it, and that refusals arrive as *LanceError.
func TestPeerScenarioCreateAppendDeleteTagIndexRestore(t *testing.T) {
	p := ServeForTest(t)
	ctx := testContext(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "scenario.lance")
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	batch := func(file string, from, n int) string {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := from; i < from+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("név-%d", i))
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		path := filepath.Join(tmp, file)
		if err := WriteIPCFile(path, schema, rec); err != nil {
			t.Fatal(err)
		}
		return path
	}
	step := func(wantVersion uint64, res *WriteResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != wantVersion {
			t.Fatalf("version after step = %d, want %d", res.Version, wantVersion)
		}
	}
	res, err := p.Create(ctx, dir, batch("a.arrow", 0, 10), CreateOptions{StorageVersion: "2.0"})
	step(1, res, err)
	res, err = p.Append(ctx, dir, batch("b.arrow", 10, 5))
	step(2, res, err)
	res, err = p.Delete(ctx, dir, "id < 3")
	step(3, res, err)
	if err := p.TagCreate(ctx, dir, "after-delete", 3); err != nil {
		t.Fatal(err)
	}
	res, err = p.CreateIndex(ctx, dir, "id", IndexBTree, "")
	step(4, res, err)
	res, err = p.Update(ctx, dir, "id = 4", Assignment{Column: "name", SQL: "'ünïcode'"})
	step(5, res, err)
	if res.RowsUpdated == nil || *res.RowsUpdated != 1 {
		t.Errorf("update reported %v rows, want 1", res.RowsUpdated)
	}
	res, err = p.Restore(ctx, dir, 2)
	step(6, res, err)
	if err := p.TagCreate(ctx, dir, "restored", 6); err != nil {
		t.Fatal(err)
	}

	// Lance's refusal comes back as *LanceError with its message.
	err = p.TagCreate(ctx, dir, "restored", 1)
	var le *LanceError
	if !errors.As(err, &le) {
		t.Fatalf("duplicate tag: got %v, want *LanceError", err)
	}
	if !strings.Contains(le.Message, "restored") {
		t.Errorf("duplicate-tag message %q does not name the tag", le.Message)
	}
	_, err = p.Info(ctx, filepath.Join(tmp, "missing.lance"))
	if !errors.As(err, &le) || !strings.Contains(le.Normalized(), "<dataset>") || strings.Contains(le.Normalized(), tmp[1:]) {
		t.Errorf("opening a missing dataset: got %v; want a *LanceError whose Normalized() hides the path", err)
	}

	in, err := p.Info(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.LatestVersion != 6 || !in.UsesV2ManifestPaths || len(in.Versions) != 6 {
		t.Fatalf("info: latest %d, v2 paths %v, %d versions; want 6, true, 6", in.LatestVersion, in.UsesV2ManifestPaths, len(in.Versions))
	}
	wantCounts := []int64{10, 15, 12, 12, 12, 15}
	wantIndices := [][]string{nil, nil, nil, {"id_idx"}, {"id_idx"}, nil}
	for i, v := range in.Versions {
		if v.RowCount == nil || *v.RowCount != wantCounts[i] {
			t.Errorf("version %d: row count %v (%s), want %d", v.Version, v.RowCount, v.RowCountError, wantCounts[i])
		}
		var names []string
		for _, ix := range v.Indices {
			names = append(names, ix.Name)
		}
		if !slices.Equal(names, wantIndices[i]) {
			t.Errorf("version %d: indices %v, want %v", v.Version, names, wantIndices[i])
		}
		if v.Schema == nil || len(v.Schema.Fields) != 2 || v.Schema.Fields[0].Type != "int64" || v.Schema.Fields[1].Type != "utf8" {
			t.Errorf("version %d: schema %+v, want id int64, name utf8", v.Version, v.Schema)
		}
	}
	if got := in.Tags; len(got) != 2 || got["after-delete"].Version != 3 || got["restored"].Version != 6 {
		t.Errorf("tags = %+v, want after-delete->3, restored->6", got)
	}
	if v, _ := in.Version(3); !slices.Equal(v.Tags, []string{"after-delete"}) {
		t.Errorf("version 3 tags = %v, want [after-delete]", v.Tags)
	}

	at, err := p.Rows(ctx, dir, AtTag("after-delete"))
	if err != nil {
		t.Fatal(err)
	}
	if at.Version != 3 || at.NumRows != 12 || string(at.Rows[0][0]) != `"3"` {
		t.Errorf("rows at tag after-delete: version %d, %d rows, first id %s; want 3, 12, \"3\"", at.Version, at.NumRows, at.Rows[0][0])
	}
	v5, err := p.Rows(ctx, dir, AtVersion(5), Where("id = 4"))
	if err != nil {
		t.Fatal(err)
	}
	if v5.NumRows != 1 || string(v5.Rows[0][1]) != `"ünïcode"` {
		t.Errorf("version 5 row id=4: %v, want name ünïcode", v5.Rows)
	}
	latest, err := p.Rows(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if latest.NumRows != 15 {
		t.Errorf("latest has %d rows, want 15 (restore of version 2)", latest.NumRows)
	}
}

// TestMakeRandomDataset builds seeded random datasets with Lance 12 and checks
// that Lance reports, for every version, exactly what the generator's model
// says: row counts, columns and their types, index names, rows (bit-exact
// values, compared by id) and tags.
func TestMakeRandomDataset(t *testing.T) {
	p := ServeForTest(t)
	cases := []struct {
		seed uint64
		opts RandomOptions
	}{
		{1, RandomOptions{}},
		{2, RandomOptions{StorageVersion: "2.1", StableRowIDs: true}},
		{3, RandomOptions{Ops: 14, StorageVersion: "2.2"}},
		{4, RandomOptions{Ops: 12, V1Paths: true}},
		{5, RandomOptions{Ops: 12, StableRowIDs: true, MaxBatchRows: 60}},
		{6, RandomOptions{Ops: 16}},
		{12, RandomOptions{Ops: 16}},
		{11, RandomOptions{Ops: 16}},
		{10, RandomOptions{Ops: 16}},
		{9, RandomOptions{Ops: 16}},
		{8, RandomOptions{Ops: 16}},
		{7, RandomOptions{Ops: 16}},
	}
	used := map[string]bool{}
	ran := 0
	for _, tc := range cases {
		t.Run(fmt.Sprintf("seed%d", tc.seed), func(t *testing.T) {
			ran++
			ctx := testContext(t)
			dir := filepath.Join(t.TempDir(), "rand.lance")
			ds, err := MakeRandomDataset(ctx, p, dir, tc.seed, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ds.Steps {
				used[s.Args[0]] = true
			}
			for _, s := range ds.Steps {
				t.Logf("step %s", s)
			}
			CheckRandomDataset(ctx, t, p, ds)
		})
	}
	// The seeds above are chosen so that every kind of operation runs.
	if ran < len(cases) {
		return // some seeds were filtered out by -run
	}
	for _, op := range []string{"create", "append", "delete", "update", "tag-create", "tag-update", "tag-delete", "create-index", "drop-index", "restore", "optimize", "add-columns"} {
		if !used[op] {
			t.Errorf("no seed exercised %s; used %v", op, used)
		}
	}
}

// CheckRandomDataset compares what Lance reports for ds with ds's model.
func CheckRandomDataset(ctx context.Context, t *testing.T, p *Peer, ds *RandomDataset) {
	t.Helper()
	in, err := p.Info(ctx, ds.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.LatestVersion != ds.Latest || len(in.Versions) != int(ds.Latest) {
		t.Fatalf("Lance: latest %d with %d versions; model: latest %d", in.LatestVersion, len(in.Versions), ds.Latest)
	}
	if in.UsesV2ManifestPaths == ds.Options.V1Paths {
		t.Errorf("Lance says uses_v2_manifest_paths=%v, generator asked for V1 paths=%v", in.UsesV2ManifestPaths, ds.Options.V1Paths)
	}
	if len(in.Tags) != len(ds.Tags) {
		t.Errorf("Lance tags %v, model %v", in.Tags, ds.Tags)
	}
	for name, v := range ds.Tags {
		if in.Tags[name].Version != v {
			t.Errorf("tag %s: Lance %d, model %d", name, in.Tags[name].Version, v)
		}
	}
	for _, v := range in.Versions {
		st := ds.States[v.Version]
		if st == nil {
			t.Fatalf("model has no state for version %d", v.Version)
		}
		if v.RowCount == nil || *v.RowCount != int64(len(st.Rows)) {
			t.Errorf("version %d: Lance counts %v rows (%s), model %d", v.Version, v.RowCount, v.RowCountError, len(st.Rows))
		}
		if v.Schema == nil {
			t.Fatalf("version %d: no schema: %s", v.Version, v.SchemaError)
		}
		if len(v.Schema.Fields) != len(st.Columns) {
			t.Errorf("version %d: Lance has %d columns, model %d", v.Version, len(v.Schema.Fields), len(st.Columns))
		} else {
			for i, c := range st.Columns {
				want, _ := TypeString(c.Type)
				if f := v.Schema.Fields[i]; f.Name != c.Name || f.Type != want || f.Nullable != c.Nullable {
					t.Errorf("version %d column %d: Lance %s %s nullable=%v, model %s %s nullable=%v", v.Version, i, f.Name, f.Type, f.Nullable, c.Name, want, c.Nullable)
				}
			}
		}
		var names []string
		for _, ix := range v.Indices {
			names = append(names, ix.Name)
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(st.Indices))
		if !slices.Equal(names, want) {
			t.Errorf("version %d: Lance indices %v, model %v", v.Version, names, want)
		}
		rows, err := p.Rows(ctx, ds.Dir, AtVersion(v.Version))
		if err != nil {
			t.Fatal(err)
		}
		got := make([][]string, rows.NumRows)
		for i := range got {
			if got[i], err = rows.CanonicalRow(i); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(got, func(a, b []string) int { return compareIDs(a[0], b[0]) })
		model := st.SortedRows()
		if len(got) != len(model) {
			t.Errorf("version %d: Lance returned %d rows, model %d", v.Version, len(got), len(model))
			continue
		}
		for i := range got {
			if !slices.Equal(got[i], model[i].Values) {
				t.Errorf("version %d row id=%d:\n  Lance %v\n  model %v", v.Version, model[i].ID, got[i], model[i].Values)
			}
		}
	}
	if t.Failed() {
		dumpSteps(t, ds)
	}
	compared := 0
	for _, st := range ds.States {
		compared += len(st.Rows)
	}
	t.Logf("seed %d: %d steps, %d versions, %d rows compared bit for bit, %d tags", ds.Seed, len(ds.Steps), len(in.Versions), compared, len(in.Tags))
}

func compareIDs(a, b string) int {
	// Canonical int64 values are quoted decimal strings.
	var x, y int64
	fmt.Sscanf(strings.Trim(a, `"`), "%d", &x)
	fmt.Sscanf(strings.Trim(b, `"`), "%d", &y)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func dumpSteps(t *testing.T, ds *RandomDataset) {
	t.Helper()
	var b strings.Builder
	for _, s := range ds.Steps {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	t.Logf("seed %d, options %+v, steps:\n%s", ds.Seed, ds.Options, b.String())
	if _, err := os.Stat(ds.Dir); err == nil {
		t.Logf("dataset left at %s for this test's lifetime", ds.Dir)
	}
}

// TestServeMatchesOneShot checks that a serving peer answers like one node
// process per command, for a result and for a Lance refusal.
func TestServeMatchesOneShot(t *testing.T) {
	p := ForTest(t)
	s := ServeForTest(t)
	ctx := testContext(t)
	corpus, err := CorpusDir()
	if err != nil {
		t.Skipf("LOUD SKIP: %v", err)
	}
	// scalar_indices has 1100 rows: its rows output (~85 KB) is larger than a
	// pipe's buffer, which once truncated the driver's output at 64 KiB.
	dir := filepath.Join(t.TempDir(), "scalar_indices.lance")
	if err := CopyDir(filepath.Join(corpus, "lance12", "scalar_indices.lance"), dir); err != nil {
		t.Fatal(err)
	}
	a, err := p.Run(ctx, "rows", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Run(ctx, "rows", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 70000 || string(a) != string(b) {
		t.Errorf("rows output: one-shot %d bytes, serve %d bytes; want the same, over 70000", len(a), len(b))
	}
	for _, peer := range []*Peer{p, s} {
		r, err := peer.Rows(ctx, dir, AtTag("no-tags-here"))
		var le *LanceError
		if !errors.As(err, &le) {
			t.Errorf("rows at a missing tag: %v, %v; want *LanceError", r, err)
		}
	}
	r, err := s.Rows(ctx, dir, AtVersion(6))
	if err != nil || r.NumRows != 1100 {
		t.Errorf("rows at version 6: %v rows, %v; want 1100", r, err)
	}
	_, e1 := p.Run(ctx, "checkout-nothing", dir)
	_, e2 := s.Run(ctx, "checkout-nothing", dir)
	var d1, d2 *DriverError
	if !errors.As(e1, &d1) || !errors.As(e2, &d2) || d1.ExitCode != exitUsage || d2.ExitCode != exitUsage {
		t.Errorf("unknown command: one-shot %v, serve %v; want usage errors (exit 2)", e1, e2)
	}
	_, e1 = p.Run(ctx, "rows", dir, "--tag", "no-such-tag")
	_, e2 = s.Run(ctx, "rows", dir, "--tag", "no-such-tag")
	var l1, l2 *LanceError
	if !errors.As(e1, &l1) || !errors.As(e2, &l2) {
		t.Fatalf("missing tag: one-shot %v, serve %v; want *LanceError", e1, e2)
	}
	if l1.Normalized() != l2.Normalized() {
		t.Errorf("missing tag: one-shot says %q, serve says %q", l1.Normalized(), l2.Normalized())
	}
}

// TestFindReportsMissingInstall: with node present but no installed
// packages, Find must say to run install.sh (and ForTest would fail, not skip).
func TestFindReportsMissingInstall(t *testing.T) {
	ForTest(t) // skips loudly without node
	t.Setenv(EnvModules, "")
	t.Setenv(EnvCache, t.TempDir())
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tests", "peer", "node_modules")); err == nil {
		t.Skip("tests/peer/node_modules exists, so the packages are installed there")
	}
	_, err = Find()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "tests/peer/install.sh") {
		t.Errorf("Find with an empty cache: %v; want ErrNotInstalled naming tests/peer/install.sh", err)
	}
}

// TestMakeRandomDatasetIsDeterministic: the same seed and options give the
// same operations (the IPC file names aside, which live in a temp dir).
func TestMakeRandomDatasetIsDeterministic(t *testing.T) {
	p := ServeForTest(t)
	ctx := testContext(t)
	steps := func() []string {
		ds, err := MakeRandomDataset(ctx, p, filepath.Join(t.TempDir(), "d.lance"), 7, RandomOptions{Ops: 6, V1Paths: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ds.Steps {
			args := slices.Clone(s.Args)
			for i, a := range args {
				if strings.HasSuffix(a, ".arrow") {
					args[i] = filepath.Base(a)
				}
			}
			out = append(out, fmt.Sprintf("%d %d %q", s.VersionBefore, s.VersionAfter, args))
		}
		return out
	}
	a, b := steps(), steps()
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 gave different runs:\n%s\n--\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestRowsOrderByRowAddrWithNoRows is the regression test for `rows --order
// rowaddr` on a scan that returns no rows: Lance then sends no batch at all,
// so there is no _rowaddr column, and the driver used to fail with "Lance
// returned no _rowaddr column" instead of reporting zero rows.
func TestRowsOrderByRowAddrWithNoRows(t *testing.T) {
	p := ServeForTest(t)
	ctx := testContext(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "emptied.lance")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i := 0; i < 4; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	ipc := filepath.Join(tmp, "rows.arrow")
	if err := WriteIPCFile(ipc, schema, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, dir, ipc, CreateOptions{StorageVersion: "2.0"}); err != nil {
		t.Fatal(err)
	}
	res, err := p.Delete(ctx, dir, "id >= 0")
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 {
		t.Fatalf("delete committed version %d, want 2", res.Version)
	}

	for _, tc := range []struct {
		name     string
		opts     []ReadOption
		wantVer  uint64
		wantRows int
	}{
		{"every row deleted", []ReadOption{OrderByRowAddr()}, 2, 0},
		{"every row deleted, scan order", []ReadOption{AtVersion(2)}, 2, 0},
		{"predicate matches nothing", []ReadOption{AtVersion(1), Where("id > 100"), OrderByRowAddr()}, 1, 0},
		{"rows present", []ReadOption{AtVersion(1), OrderByRowAddr()}, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := p.Rows(ctx, dir, tc.opts...)
			if err != nil {
				t.Fatalf("Rows: %v", err)
			}
			if r.Version != tc.wantVer || r.NumRows != tc.wantRows || len(r.Rows) != tc.wantRows || len(r.RowAddrs) != tc.wantRows {
				t.Fatalf("Rows = version %d, num_rows %d, %d rows, %d row addresses; want version %d with %d rows",
					r.Version, r.NumRows, len(r.Rows), len(r.RowAddrs), tc.wantVer, tc.wantRows)
			}
			if !slices.Equal(r.Columns, []string{"id", "name"}) {
				t.Errorf("columns = %v, want [id name]", r.Columns)
			}
			for i := 1; i < len(r.RowAddrs); i++ {
				a, _ := r.RowAddr(i - 1)
				c, err := r.RowAddr(i)
				if err != nil {
					t.Fatal(err)
				}
				if a >= c {
					t.Errorf("row addresses not ascending at %d: %d then %d", i, a, c)
				}
			}
		})
	}
}
