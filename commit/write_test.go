package commit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
)

var testArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// testRecords returns nb batches of n rows: x = start.., s = "s<x>", every
// 10th x null.
func testRecords(schema *arrow.Schema, nb, n int, start int64) array.RecordReader {
	var recs []arrow.RecordBatch
	v := start
	for b := 0; b < nb; b++ {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := 0; i < n; i++ {
			for fi := range schema.Fields() {
				switch b := bld.Field(fi).(type) {
				case *array.Int64Builder:
					if v%10 == 9 {
						b.AppendNull()
					} else {
						b.Append(v)
					}
				case *array.StringBuilder:
					b.Append(fmt.Sprintf("s%d", v))
				case *array.Float64Builder:
					b.Append(float64(v) / 2)
				}
			}
			v++
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

func TestWriteArrow_CreateAppendWithSeeds(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	// Create without seeds: no flag.
	r1, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 3, 100, 0), WriteOptions{Mode: ModeCreate, MaxRowsPerFile: 250})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Version != 1 || r1.Rows != 300 || len(r1.Files) != 2 || r1.Files[0].Rows != 250 || r1.Files[1].Rows != 50 {
		t.Fatalf("create: version %d rows %d files %+v", r1.Version, r1.Rows, r1.Files)
	}
	m := r1.Manifest
	if !hasNeither(m) || len(m.GetFields()) != 2 || m.GetFields()[0].GetLogicalType() != "int64" || m.GetFields()[1].GetLogicalType() != "string" {
		t.Fatalf("manifest %v", m)
	}
	// Append with seeds, without opt-in: refused before writing anything.
	_, err = WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 300), WriteOptions{Mode: ModeAppend, SeedColumns: []string{"x"}})
	if !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatalf("got %v", err)
	}
	// With the opt-in: the manifest of that commit carries both bits (R54).
	r2, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 2, 100, 300), WriteOptions{Mode: ModeAppend, SeedColumns: []string{"x", "s"}, RowsPerZone: 16, Commit: Options{EnableZoneWriteSeeds: true}})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Version != 2 || !hasBoth(r2.Manifest) || len(r2.Manifest.GetFragments()) != 3 {
		t.Fatalf("append: version %d bits %v frags %d", r2.Version, hasBoth(r2.Manifest), len(r2.Manifest.GetFragments()))
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+r2.Files[0].Path, datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
	if err != nil || len(seeds) != 2 {
		t.Fatalf("seeds %v %v", seeds, err)
	}
	for _, s := range seeds {
		if s.Err != nil || s.Seed.Version != 1 || s.Seed.RowsPerZone != 16 || len(s.Seed.Zones) != 13 {
			t.Fatalf("seed %s: %+v %v", s.Column, s.Seed, s.Err)
		}
	}
	if ok, err := DataFileCarriesV1Seed(ctx, st, r2.Files[0].Path); !ok || err != nil {
		t.Fatalf("DataFileCarriesV1Seed = %v, %v", ok, err)
	}
	// The fragment records what the data file says.
	fr := r2.Manifest.GetFragments()[2]
	if fr.GetPhysicalRows() != 200 || fr.GetFiles()[0].GetFileSizeBytes() != uint64(f.Size()) || fr.GetFiles()[0].GetFileMajorVersion() != 2 {
		t.Fatalf("fragment %v size %d", fr, f.Size())
	}
	// The next seeded append needs no opt-in: the dataset has the bits.
	r3, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 500), WriteOptions{Mode: ModeAppend, SeedAllColumns: true})
	if err != nil || !hasBoth(r3.Manifest) {
		t.Fatalf("%v", err)
	}
	// Overwrite without seeds keeps the bits (R57).
	r4, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeOverwrite})
	if err != nil || !hasBoth(r4.Manifest) || len(r4.Manifest.GetFragments()) != 1 {
		t.Fatalf("%v", err)
	}
}

func TestWriteArrow_AppendReordersColumns(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	// 2.0: the test reads the rows back with the 2.0 decoder.
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.0"}); err != nil {
		t.Fatal(err)
	}
	swapped := arrow.NewSchema([]arrow.Field{testArrowSchema.Field(1), testArrowSchema.Field(0)}, nil)
	r, err := WriteArrow(ctx, st, testRecords(swapped, 1, 10, 10), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	df := r.Manifest.GetFragments()[1].GetFiles()[0]
	if fmt.Sprint(df.GetFields()) != "[0 1]" {
		t.Fatalf("fields %v", df.GetFields())
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+r.Files[0].Path, datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	col, err := f.ReadColumn(ctx, "x")
	if err != nil || col.(*array.Int64).Value(0) != 10 {
		t.Fatalf("x[0] %v %v", col, err)
	}
}

// TestWriteArrow_BadInputCommitsNothing: a schema that does not match the
// dataset, a seed column that does not exist, an input that fails midway —
// each a clear error, no new version, no manifest, no leftover data file.
func TestWriteArrow_BadInputCommitsNothing(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	before := snapshotObjects(t, st)
	cases := []struct {
		name string
		rdr  array.RecordReader
		opts WriteOptions
		want error
		msg  string
	}{
		{"extra column", testRecords(arrow.NewSchema(append(testArrowSchema.Fields(), arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float64}), nil), 1, 5, 0),
			WriteOptions{Mode: ModeAppend}, ErrSchemaMismatch, `the input has column "f"`},
		{"missing column", testRecords(arrow.NewSchema(testArrowSchema.Fields()[:1], nil), 1, 5, 0),
			WriteOptions{Mode: ModeAppend}, ErrSchemaMismatch, `the dataset has column "s"`},
		{"type change", testRecords(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}, testArrowSchema.Field(1)}, nil), 1, 5, 0),
			WriteOptions{Mode: ModeAppend}, ErrSchemaMismatch, `column "x" is int64 in the dataset but string`},
		{"seed column does not exist", testRecords(testArrowSchema, 1, 5, 0),
			WriteOptions{Mode: ModeAppend, SeedColumns: []string{"nope"}, Commit: Options{EnableZoneWriteSeeds: true}}, datafile.ErrInvalidSchema, `"nope"`},
		{"create over existing", testRecords(testArrowSchema, 1, 5, 0), WriteOptions{Mode: ModeCreate}, ErrDatasetExists, "has version 1"},
		{"input fails midway", &failingReader{RecordReader: testRecords(testArrowSchema, 3, 50, 0), after: 2},
			WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 60}, errReadFailed, "reading input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WriteArrow(ctx, st, tc.rdr, tc.opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tc.want, tc.msg)
			}
			after := snapshotObjects(t, st)
			if len(after) != len(before) {
				var extra []string
				for k := range after {
					if _, ok := before[k]; !ok {
						extra = append(extra, k)
					}
				}
				t.Fatalf("objects left behind: %v", extra)
			}
			if latestVersion(t, st) != 1 {
				t.Fatal("committed")
			}
		})
	}
}

var errReadFailed = errors.New("input read failed")

// failingReader fails after `after` batches.
type failingReader struct {
	array.RecordReader
	after, n int
	failed   bool
}

func (f *failingReader) Next() bool {
	if f.n >= f.after {
		f.failed = true
		return false
	}
	f.n++
	return f.RecordReader.Next()
}

func (f *failingReader) Err() error {
	if f.failed {
		return errReadFailed
	}
	return f.RecordReader.Err()
}

// TestWriteArrow_AppendsAtTheTableStorageVersion (spec 2.1 §8.4: a
// table's files all have the table's version): an append to a Lance 12
// 2.2 table writes 2.2 files (a 2.3 table's append 2.3 files); asking for
// another version, or a legacy table, is refused with ErrStorageVersion
// before anything is written; create defaults to 2.2 and takes 2.3/"next";
// overwrite keeps the table's version and schema.
func TestWriteArrow_AppendsAtTheTableStorageVersion(t *testing.T) {
	ctx := context.Background()
	dir := copyDir(t, "testdata/lance12_seeds_v0_zonemap.lance")
	st := localStoreAt(t, dir)
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
	if err != nil {
		t.Fatal(err)
	}
	if v := DataFormatVersion(head.Manifest); v != "2.2" {
		t.Fatalf("fixture is %s", v)
	}
	in := arrowSchemaOf(t, head.Manifest)
	r, err := WriteArrow(ctx, st, nullRecords(in, 5), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatalf("append to a 2.2 table: %v", err)
	}
	for _, f := range r.Manifest.GetFragments() {
		df := f.GetFiles()[0]
		if df.GetFileMajorVersion() != 2 || df.GetFileMinorVersion() != 2 {
			t.Fatalf("fragment %d: file version %d.%d", f.GetId(), df.GetFileMajorVersion(), df.GetFileMinorVersion())
		}
	}
	if _, err := WriteArrow(ctx, st, nullRecords(in, 5), WriteOptions{Mode: ModeAppend, DataStorageVersion: "2.0"}); !errors.Is(err, ErrStorageVersion) {
		t.Fatalf("append asking for 2.0: %v", err)
	}
	// Legacy table: typed refusal, nothing written.
	legacy := &pb.Manifest{DataFormat: &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "0.1"}}
	if _, err := chooseStorageVersion(WriteOptions{Mode: ModeAppend}, &manifest.File{Manifest: legacy}); !errors.Is(err, ErrStorageVersion) || !strings.Contains(err.Error(), "legacy") {
		t.Fatalf("legacy: %v", err)
	}
	for _, tc := range []struct {
		opts WriteOptions
		want datafile.FileVersion
	}{
		{WriteOptions{Mode: ModeCreate}, datafile.V2_2},
		{WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.1"}, datafile.V2_1},
		{WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.0"}, datafile.V2_0},
		{WriteOptions{Mode: ModeOverwrite}, datafile.V2_2},
		{WriteOptions{Mode: ModeCreate, DataStorageVersion: "stable"}, datafile.V2_2},
		// 2.3 ("next" in Lance 12): spec 2.1 §2.5
		{WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.3"}, datafile.V2_3},
		{WriteOptions{Mode: ModeCreate, DataStorageVersion: "next"}, datafile.V2_3},
	} {
		if got, err := chooseStorageVersion(tc.opts, nil); err != nil || got != tc.want {
			t.Errorf("%+v: %v %v", tc.opts, got, err)
		}
	}
	// an append to a 2.3 table writes 2.3 files; asking for 2.2 is refused
	t23 := &pb.Manifest{DataFormat: &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.3"}}
	if got, err := chooseStorageVersion(WriteOptions{Mode: ModeAppend}, &manifest.File{Manifest: t23}); err != nil || got != datafile.V2_3 {
		t.Errorf("append to 2.3: %v %v", got, err)
	}
	if _, err := chooseStorageVersion(WriteOptions{Mode: ModeAppend, DataStorageVersion: "2.2"}, &manifest.File{Manifest: t23}); !errors.Is(err, ErrStorageVersion) {
		t.Errorf("append at 2.2 to a 2.3 table: %v", err)
	}
	for _, v := range []string{"2.4", "legacy", "stable_2.0"} {
		if _, err := chooseStorageVersion(WriteOptions{Mode: ModeCreate, DataStorageVersion: v}, nil); !errors.Is(err, ErrStorageVersion) {
			t.Errorf("%s: %v", v, err)
		}
	}
	// Overwrite keeps the version and the schema (issue 15 item 15).
	ow, err := WriteArrow(ctx, st, nullRecords(in, 3), WriteOptions{Mode: ModeOverwrite})
	if err != nil {
		t.Fatal(err)
	}
	if v := DataFormatVersion(ow.Manifest); v != "2.2" {
		t.Fatalf("overwrite changed the storage version to %s", v)
	}
	if got, want := fieldsString(ow.Manifest.GetFields()), fieldsString(head.Manifest.GetFields()); got != want {
		t.Fatalf("overwrite changed the schema:\n got %s\nwant %s", got, want)
	}
	_ = flags.ZoneWriteSeeds
}

func fieldsString(fs []*pb.Field) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%d/%d %s %s %v; ", f.GetId(), f.GetParentId(), f.GetName(), f.GetLogicalType(), f.GetNullable())
	}
	return b.String()
}

// arrowSchemaOf is the Arrow schema of a manifest's fields (top level).
func arrowSchemaOf(t *testing.T, m *pb.Manifest) *arrow.Schema {
	t.Helper()
	s := &datafile.Schema{}
	at := map[int32]int{}
	for i, f := range m.GetFields() {
		at[f.GetId()] = i
		s.Fields = append(s.Fields, datafile.Field{Name: f.GetName(), ID: f.GetId(), ParentID: f.GetParentId(), LogicalType: f.GetLogicalType(), Nullable: f.GetNullable()})
		if p, ok := at[f.GetParentId()]; ok {
			s.Fields[p].Children = append(s.Fields[p].Children, i)
		}
	}
	sch, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// nullRecords is n rows of sch: zero / empty values, nulls where nullable.
func nullRecords(sch *arrow.Schema, n int) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i, f := range sch.Fields() {
		for r := 0; r < n; r++ {
			if f.Nullable && r%2 == 1 {
				b.Field(i).AppendNull()
			} else {
				b.Field(i).AppendEmptyValue()
			}
		}
	}
	rec := b.NewRecordBatch()
	rdr, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
	return rdr
}

// TestWriteFragments_WritesWithoutCommitting: WriteFragments writes the data
// files (one fragment per file, with seeds and the table schema) and
// commits nothing; the caller either commits them — the result is the one
// WriteArrow gives — or removes them with Cleanup. An append of no rows is
// refused.
func TestWriteFragments_WritesWithoutCommitting(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	md := arrow.NewMetadata([]string{"owner", seedio.LocatorKeyPrefix + "x"}, []string{"team", "locator"})
	schema := arrow.NewSchema(testArrowSchema.Fields(), &md)
	w, err := WriteFragments(ctx, st, testRecords(schema, 2, 100, 0), WriteOptions{Mode: ModeCreate, MaxRowsPerFile: 150, SeedAllColumns: true, Commit: Options{EnableZoneWriteSeeds: true}})
	if err != nil {
		t.Fatal(err)
	}
	if latestVersion(t, st) != 0 {
		t.Fatal("WriteFragments committed")
	}
	if w.Mode != ModeCreate || w.ReadVersion != 0 || w.Rows != 200 || len(w.Files) != 2 || len(w.Fragments) != 2 {
		t.Fatalf("mode %v read %d rows %d files %d fragments %d", w.Mode, w.ReadVersion, w.Rows, len(w.Files), len(w.Fragments))
	}
	for i, f := range w.Files {
		if !f.hasV1Seeds() || w.Fragments[i].GetPhysicalRows() != f.Rows || "data/"+w.Fragments[i].GetFiles()[0].GetPath() != f.Path {
			t.Fatalf("file %d: %+v does not match fragment %v", i, f, w.Fragments[i])
		}
	}
	if len(w.Schema) != 2 || w.Schema[0].GetName() != "x" || len(w.SchemaMetadata) != 1 || string(w.SchemaMetadata["owner"]) != "team" {
		t.Fatalf("schema %v, metadata %q (seed locator keys belong to data files only)", w.Schema, w.SchemaMetadata)
	}
	w.Cleanup(ctx)
	if left := snapshotObjects(t, st); len(left) != 0 {
		t.Fatalf("Cleanup left %v", left)
	}

	// Written, then committed by the caller.
	w, err = WriteFragments(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate})
	if err != nil {
		t.Fatal(err)
	}
	txn := NewOverwrite(w.ReadVersion, OverwriteSpec{Fragments: w.Fragments, Schema: w.Schema})
	r := mustCommit(t, st, txn, Options{})
	if r.Version != 1 || len(r.Manifest.GetFragments()) != 1 || r.Manifest.GetFragments()[0].GetPhysicalRows() != 10 {
		t.Fatalf("committed %v", r.Manifest)
	}
	w, err = WriteFragments(ctx, st, testRecords(testArrowSchema, 1, 0, 0), WriteOptions{Mode: ModeAppend})
	if !errors.Is(err, ErrInvalidTransaction) || w != nil {
		t.Fatalf("empty append: %v, %v", w, err)
	}
}
