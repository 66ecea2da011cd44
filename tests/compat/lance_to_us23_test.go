package compat_test

// Storage 2.3 (Lance 12's "next", spec lance-file-format-2.1.md §2.5):
// Lance 12 creates a 2.3 table, lancekeeper appends (with and without v1
// seeds), Lance 12 reads every row value by value, appends itself and
// compacts (optimize, whose 2.3 output bit-packs RLE run lengths), and our
// reader reads Lance's rows too.

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// schema23 covers the kinds issue w23 names: nullable ints (with runs, for
// RLE, and sparse, for RLE def levels), floats with NaN, strings, lists
// and structs with null parents.
func schema23() *arrow.Schema {
	f := func(name string, dt arrow.DataType, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: nullable}
	}
	return arrow.NewSchema([]arrow.Field{
		f("id", arrow.PrimitiveTypes.Int64, false),
		f("runs", arrow.PrimitiveTypes.Int32, true),
		f("sparse", arrow.PrimitiveTypes.Int64, true),
		f("f64", arrow.PrimitiveTypes.Float64, true),
		f("f32", arrow.PrimitiveTypes.Float32, true),
		f("s", arrow.BinaryTypes.String, true),
		f("l", arrow.ListOf(arrow.PrimitiveTypes.Int32), true),
		f("st", arrow.StructOf(f("x", arrow.PrimitiveTypes.Float64, true), f("y", arrow.BinaryTypes.String, true)), true),
	}, nil)
}

// batch23 builds n rows with ids first.. (salt varies the values).
func batch23(first int64, n, salt int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema23())
	defer b.Release()
	words := []string{"", "a", "lance", "ünïcode", "long string value number"}
	for r := range n {
		i := int(first) + r
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%500 == 499 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32((i/60 + salt) % 9))
		}
		if i%701 == 5 {
			b.Field(2).(*array.Int64Builder).Append(-int64(i) << 30)
		} else {
			b.Field(2).AppendNull()
		}
		switch (i + salt) % 13 {
		case 0:
			b.Field(3).AppendNull()
			b.Field(4).(*array.Float32Builder).Append(float32(math.NaN()))
		case 1:
			b.Field(3).(*array.Float64Builder).Append(math.NaN())
			b.Field(4).AppendNull()
		case 2:
			b.Field(3).(*array.Float64Builder).Append(math.Inf(-1))
			b.Field(4).(*array.Float32Builder).Append(float32(math.Copysign(0, -1)))
		default:
			b.Field(3).(*array.Float64Builder).Append(float64(i) / 7)
			b.Field(4).(*array.Float32Builder).Append(float32(i%100) / 4)
		}
		if i%8 == 0 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.StringBuilder).Append(words[(i+salt)%len(words)])
		}
		lb := b.Field(6).(*array.ListBuilder)
		switch i % 5 {
		case 0:
			lb.AppendNull()
		case 1:
			lb.Append(true)
		default:
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Int32Builder)
			for k := range i % 4 {
				vb.Append(int32(i*10 + k))
			}
			vb.AppendNull()
		}
		sb := b.Field(7).(*array.StructBuilder)
		if i%6 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			if i%4 == 0 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Float64Builder).Append(float64(i) * 1.5)
			}
			sb.FieldBuilder(1).(*array.StringBuilder).Append(words[i%len(words)])
		}
	}
	return b.NewRecordBatch()
}

// learnLanceRows adds to model the rows of rec at the addresses Lance
// reports for them (matched by id).
func learnLanceRows(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, rec arrow.RecordBatch, model modelRows) {
	t.Helper()
	lr, _, err := lanceRowsCanonical(ctx, p, dir)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64][]string{}
	for _, r := range canonicalRows(t, rec) {
		byID[canonicalInt(r[0])] = r
	}
	found := 0
	for i, a := range lr.Addrs {
		if r, ok := byID[canonicalInt(lr.Rows[i][0])]; ok {
			model[a] = r
			found++
		}
	}
	if found != len(byID) {
		t.Fatalf("Lance shows %d of the %d rows it wrote", found, len(byID))
	}
}

// requireFiles23: every data file of the table is (2,3) in the manifest
// and in its footer, and data_format is "2.3" (spec 2.1 §1.1, W1).
func requireFiles23(ctx context.Context, t *testing.T, st *store.Store, what string) *manifest.File {
	t.Helper()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), strings.TrimSuffix(st.KeyPrefix(), "/"))
	if err != nil {
		t.Fatal(err)
	}
	if v := head.Manifest.GetDataFormat().GetVersion(); v != "2.3" {
		t.Fatalf("%s: data_format %q, want 2.3", what, v)
	}
	for _, fr := range head.Manifest.GetFragments() {
		for _, df := range fr.GetFiles() {
			if df.GetFileMajorVersion() != 2 || df.GetFileMinorVersion() != 3 {
				t.Fatalf("%s: %s is %d.%d in the manifest", what, df.GetPath(), df.GetFileMajorVersion(), df.GetFileMinorVersion())
			}
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(manifest.DataDir+"/"+df.GetPath()), datafile.OpenOptions{})
			if err != nil {
				t.Fatalf("%s: %s: %v", what, df.GetPath(), err)
			}
			if ft := f.Footer(); ft.Major != 2 || ft.Minor != 3 || f.Version() != datafile.V2_3 {
				t.Fatalf("%s: %s footer (%d,%d)", what, df.GetPath(), ft.Major, ft.Minor)
			}
		}
	}
	return head
}

// TestLanceToUs23_S2_5_LanceCreatesWeAppendLanceReadsAppendsOptimizes
// (spec 2.1 §2.5, W3/W11/W12; zone-seeds R56/R61 for the seeded copy).
func TestLanceToUs23_S2_5_LanceCreatesWeAppendLanceReadsAppendsOptimizes(t *testing.T) {
	p := peerlance.ServeForTest(t)
	record(t, catUsToLance)
	ctx := peerContext(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "lance23.lance")
	cols := columnNames(schema23())
	model := modelRows{}

	// Lance 12 creates the table at 2.3.
	rec0 := batch23(0, 2500, 0)
	defer rec0.Release()
	in0 := filepath.Join(tmp, "create.arrow")
	if err := peerlance.WriteIPCFile(in0, rec0.Schema(), rec0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, dir, in0, peerlance.CreateOptions{StorageVersion: "2.3"}); err != nil {
		t.Fatalf("Lance create at 2.3: %v", err)
	}
	learnLanceRows(ctx, t, p, dir, rec0, model)
	st := localStore(ctx, t, dir)
	requireFiles23(ctx, t, st, "Lance's create")

	// We append (two files), Lance reads every row value by value.
	rec1 := batch23(10_000, 3000, 1)
	defer rec1.Release()
	w1 := writeOurs(ctx, t, st, rec1, commit.WriteOptions{Mode: commit.ModeAppend, MaxRowsPerFile: 2000}, model)
	requireFiles23(ctx, t, st, "our append")
	// W11: our 2.3 files carry RLE pages, with u8 run lengths (the datafile
	// test TestSpec21_2_5_W3_W11_W12_V23FileIsTheV22FileWithFooterMinor3
	// proves every run-length width is 8), which Lance 12 must read below.
	rlePages := 0
	for _, wf := range w1.Files {
		f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(wf.Path), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for ci := range f.NumColumns() {
			for _, pg := range f.Column(ci).Pages {
				kinds, err := pg.Kinds()
				if err != nil {
					t.Fatal(err)
				}
				if slices.Contains(kinds, "rle") {
					rlePages++
				}
			}
		}
	}
	if rlePages == 0 {
		t.Fatal("our 2.3 files hold no RLE page: the test no longer shows Lance 12 reading our u8 runs")
	}
	requireLanceRows(ctx, t, p, dir, "our append to Lance's 2.3 table", model, cols)

	// A seeded (v1) append on a copy: the seeds verify sound; the flag
	// (R56) makes Lance 12 refuse that copy, so Lance reads the main table.
	seeded := filepath.Join(tmp, "seeded.lance")
	if err := peerlance.CopyDir(dir, seeded); err != nil {
		t.Fatal(err)
	}
	sst := localStore(ctx, t, seeded)
	before := len(requireFiles23(ctx, t, sst, "copy").Manifest.GetFragments())
	rec2 := batch23(20_000, 1500, 2)
	defer rec2.Release()
	writeOurs(ctx, t, sst, rec2, commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true, RowsPerZone: 256,
		Commit: commit.Options{EnableZoneWriteSeeds: true}}, modelRows{})
	head := requireFiles23(ctx, t, sst, "our seeded append")
	for _, fr := range head.Manifest.GetFragments()[before:] {
		df := fr.GetFiles()[0]
		f, err := datafile.Open(ctx, sst.Bucket(), sst.BucketKey(manifest.DataDir+"/"+df.GetPath()), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		verdicts, err := f.VerifySeeds(ctx, datafile.VerifyOptions{TableFlagged: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(verdicts) != len(cols) {
			t.Errorf("%s: seeds verify audited %d seeds, want one per column (%d)", df.GetPath(), len(verdicts), len(cols))
		}
		for _, v := range verdicts {
			if v.Status != datafile.SeedSound {
				t.Errorf("%s: seed of %s: %+v", df.GetPath(), v.Column, v)
			}
		}
	}

	// Lance 12 appends again and compacts; our reader reads what it wrote
	// (the optimize output bit-packs RLE run lengths in 2.3).
	rec3 := batch23(30_000, 2000, 3)
	defer rec3.Release()
	lanceAppend(ctx, t, p, dir, rec3, model)
	requireOurRowsAsLance(ctx, t, p, dir, "after Lance's append")
	if _, err := p.Optimize(ctx, dir); err != nil {
		t.Fatalf("Lance optimize: %v", err)
	}
	requireFiles23(ctx, t, st, "Lance's optimize")
	requireOurRowsAsLance(ctx, t, p, dir, "after Lance's optimize")
	lr, _, err := lanceRowsCanonical(ctx, p, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Rows) != len(model) {
		t.Fatalf("after optimize Lance has %d rows, want %d", len(lr.Rows), len(model))
	}
	want := map[int64][]string{}
	for _, r := range model {
		want[canonicalInt(r[0])] = r
	}
	for _, r := range lr.Rows {
		w := want[canonicalInt(r[0])]
		for j := range r {
			if w == nil || r[j] != w[j] {
				t.Fatalf("after optimize: id %s column %s: Lance %s, written %v", r[0], cols[j], r[j], w)
			}
		}
	}
	// and we append once more to the compacted table
	rec4 := batch23(40_000, 700, 4)
	defer rec4.Release()
	writeOurs(ctx, t, st, rec4, commit.WriteOptions{Mode: commit.ModeAppend}, model)
	requireFiles23(ctx, t, st, "our append after optimize")
	if _, n, err := p.Count(ctx, dir); err != nil || n != int64(len(model)) {
		t.Fatalf("Lance counts %d rows (%v), want %d", n, err, len(model))
	}
	requireOurRowsAsLance(ctx, t, p, dir, "our append after optimize")
}
