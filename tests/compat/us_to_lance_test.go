package compat_test

// Us → Lance (issue 4 §2): datasets we write with commit.WriteArrow (Lance
// 2.0 data files, small pages so that every column spans many pages), then
// append to, delete from (our deletion files), tag, shallow-clone and
// restore, open in real Lance 12 with bit-identical rows at the same row
// addresses: nulls, NaN payloads and signs, -0, subnormals, empty strings,
// multi-byte UTF-8. Lance 12 then appends to and deletes from them, and we
// read every version it made.

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// trickySchema has one column per kind of value our 2.0 writer encodes.
func trickySchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lbin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "t64", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
		{Name: "dur", Type: arrow.FixedWidthTypes.Duration_ms, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "America/New_York"}, Nullable: true},
		{Name: "fsl", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})},
	}, nil)
}

func trickyStrings() []string {
	return []string{"", "a", "héllo wörld", "日本語テキスト", "emoji 😀🎉", "Ω≈ç√∫", "tab\there", "quote ' \" both",
		"NaN", "-0", "null", "ß", "\u00a0", strings.Repeat("long·", 40)}
}

func trickyF64() []uint64 {
	return []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ff8dead0000beef, 0x7ff0000000000001, 0xfff4000000000123,
		1 << 63, 0, 0x7ff0000000000000, 0xfff0000000000000, 1, 0x800fffffffffffff, 0x7fefffffffffffff}
}

func trickyF32() []uint32 {
	return []uint32{0x7fc00000, 0xffc00000, 0x7fc0beef, 0x7f800001, 0xff800123, 1 << 31, 0, 0x7f800000, 0xff800000, 1, 0x807fffff}
}

func trickyF16() []uint16 {
	return []uint16{0x7e00, 0xfe00, 0x7e01, 0x7c01, 0xfd55, 0x8000, 0, 0x7c00, 0xfc00, 1, 0x83ff}
}

// trickyBatch generates n rows with ids first, first+1, …. For Lance's own
// appends vectorNaN must be false: lancedb refuses to add rows whose
// fixed-size float list ("vector") holds a NaN ("Vector column contains NaN
// values"); it reads ours with NaNs there.
func trickyBatch(rng *mrand.Rand, first int64, n int, vectorNaN bool) arrow.RecordBatch {
	schema := trickySchema()
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	pickS := func() string { return trickyStrings()[rng.IntN(len(trickyStrings()))] }
	for r := 0; r < n; r++ {
		for i, fl := range schema.Fields() {
			fb := b.Field(i)
			if fl.Nullable && rng.IntN(9) == 0 {
				fb.AppendNull()
				continue
			}
			special := rng.IntN(3) == 0
			switch bb := fb.(type) {
			case *array.Int64Builder:
				bb.Append(first + int64(r))
			case *array.Float64Builder:
				if special {
					bb.Append(math.Float64frombits(trickyF64()[rng.IntN(len(trickyF64()))]))
				} else {
					bb.Append(rng.NormFloat64() * 1e9)
				}
			case *array.Float32Builder:
				if special {
					bb.Append(math.Float32frombits(trickyF32()[rng.IntN(len(trickyF32()))]))
				} else {
					bb.Append(float32(rng.NormFloat64()))
				}
			case *array.Float16Builder:
				if special {
					bb.Append(float16.FromBits(trickyF16()[rng.IntN(len(trickyF16()))]))
				} else {
					bb.Append(float16.New(float32(rng.NormFloat64() * 10)))
				}
			case *array.StringBuilder:
				bb.Append(pickS())
			case *array.LargeStringBuilder:
				bb.Append(pickS() + pickS())
			case *array.BinaryBuilder: // binary and large_binary
				if bb.Type().ID() == arrow.LARGE_BINARY {
					bb.Append([]byte(pickS()))
					break
				}
				v := make([]byte, rng.IntN(12))
				for j := range v {
					v[j] = byte(rng.Uint32())
				}
				bb.Append(v)
			case *array.BooleanBuilder:
				bb.Append(rng.IntN(2) == 0)
			case *array.Int8Builder:
				bb.Append(int8(rng.IntN(256) - 128))
			case *array.Int16Builder:
				bb.Append([]int16{math.MinInt16, math.MaxInt16, 0, -1, int16(rng.IntN(65536) - 32768)}[rng.IntN(5)])
			case *array.Uint32Builder:
				bb.Append([]uint32{math.MaxUint32, 0, rng.Uint32()}[rng.IntN(3)])
			case *array.Uint64Builder:
				bb.Append([]uint64{math.MaxUint64, 0, 1 << 63, rng.Uint64()}[rng.IntN(4)])
			case *array.Date32Builder:
				bb.Append(arrow.Date32(rng.Int32N(400000) - 200000))
			case *array.Date64Builder:
				bb.Append(arrow.Date64(rng.Int64N(1e13)-5e12) / 86400000 * 86400000)
			case *array.Time64Builder:
				bb.Append(arrow.Time64(rng.Int64N(86400e6)))
			case *array.DurationBuilder:
				bb.Append(arrow.Duration(rng.Int64() >> 1))
			case *array.TimestampBuilder:
				bb.Append(arrow.Timestamp(rng.Int64()))
			case *array.FixedSizeListBuilder:
				bb.Append(true)
				vb := bb.ValueBuilder().(*array.Float32Builder)
				for j := 0; j < 3; j++ {
					v := math.Float32frombits(trickyF32()[rng.IntN(len(trickyF32()))])
					switch {
					case rng.IntN(7) == 0:
						vb.AppendNull()
					case v != v && !vectorNaN:
						vb.Append(float32(j))
					default:
						vb.Append(v)
					}
				}
			case *array.StructBuilder:
				bb.Append(true)
				if rng.IntN(5) == 0 {
					bb.FieldBuilder(0).AppendNull()
				} else {
					bb.FieldBuilder(0).(*array.Int32Builder).Append(rng.Int32() - 1<<30)
				}
				if rng.IntN(5) == 0 {
					bb.FieldBuilder(1).AppendNull()
				} else {
					bb.FieldBuilder(1).(*array.StringBuilder).Append(pickS())
				}
			default:
				panic(fmt.Sprintf("trickyBatch: no values for %T", fb))
			}
		}
	}
	return b.NewRecordBatch()
}

// modelRows maps row addresses to canonical rows: what every version must
// contain.
type modelRows map[uint64][]string

func (m modelRows) clone() modelRows {
	c := make(modelRows, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// rows returns the model as ourRows (ascending address).
func (m modelRows) rows(columns []string) *ourRows {
	out := &ourRows{Columns: columns, Rows: [][]string{}}
	for a := range m {
		out.Addrs = append(out.Addrs, a)
	}
	slices.Sort(out.Addrs)
	for _, a := range out.Addrs {
		out.Rows = append(out.Rows, m[a])
	}
	return out
}

// canonicalRows renders every row of rec in the peer's value encoding.
func canonicalRows(t *testing.T, rec arrow.RecordBatch) [][]string {
	t.Helper()
	out := make([][]string, rec.NumRows())
	for i := range out {
		out[i] = make([]string, rec.NumCols())
		for j := range out[i] {
			v, err := peerlance.Value(rec.Column(j), i)
			if err != nil {
				t.Fatal(err)
			}
			out[i][j] = v
		}
	}
	return out
}

func columnNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// writeOurs writes rec with WriteArrow and adds its rows to model at the
// fragments WriteArrow reports.
func writeOurs(ctx context.Context, t *testing.T, st *store.Store, rec arrow.RecordBatch, opts commit.WriteOptions, model modelRows) *commit.WriteResult {
	t.Helper()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	res, err := commit.WriteArrow(ctx, st, rdr, opts)
	if err != nil {
		t.Fatalf("WriteArrow (%s): %v", opts.Mode, err)
	}
	if len(res.Files) != len(res.FragmentIDs) {
		t.Fatalf("WriteArrow: %d files, %d fragment ids", len(res.Files), len(res.FragmentIDs))
	}
	rows := canonicalRows(t, rec)
	next := 0
	for i, f := range res.Files {
		for off := uint64(0); off < f.Rows; off++ {
			model[res.FragmentIDs[i]<<32|off] = rows[next]
			next++
		}
	}
	if next != len(rows) {
		t.Fatalf("WriteArrow placed %d of %d rows", next, len(rows))
	}
	return res
}

// deleteOurs deletes, with our Delete transaction, every live row whose
// canonical id satisfies match, and removes them from model.
func deleteOurs(ctx context.Context, t *testing.T, st *store.Store, model modelRows, match func(id int64) bool, what string) *commit.Result {
	t.Helper()
	root := strings.TrimSuffix(st.KeyPrefix(), "/")
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), root)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[uint64]*roaring.Bitmap{}
	for a, r := range model {
		if !match(canonicalInt(r[0])) {
			continue
		}
		if rows[a>>32] == nil {
			rows[a>>32] = roaring.New()
		}
		rows[a>>32].Add(uint32(a))
		delete(model, a)
	}
	txn, err := commit.NewDelete(ctx, st, f, rows, what)
	if err != nil {
		t.Fatal(err)
	}
	res, err := commit.Commit(ctx, st, txn, commit.Options{})
	if err != nil {
		t.Fatalf("our delete %s: %v", what, err)
	}
	return res
}

// requireLanceRows checks that Lance reads exactly model at the given
// version or tag.
func requireLanceRows(ctx context.Context, t *testing.T, p *peerlance.Peer, dir, what string, model modelRows, columns []string, opts ...peerlance.ReadOption) {
	t.Helper()
	lr, _, err := lanceRowsCanonical(ctx, p, dir, opts...)
	if err != nil {
		t.Fatalf("%s: Lance rows: %v", what, err)
	}
	if d := diffRows("Lance", lr, "written", model.rows(columns)); d != "" {
		t.Fatalf("%s: Lance reads other rows than we wrote:\n%s", what, d)
	}
}

// requireOurRowsAsLance: our reader (snapshot + datafile, every page of
// every file) returns exactly the rows, row addresses and values Lance 12
// returns for the latest version.
func requireOurRowsAsLance(ctx context.Context, t *testing.T, p *peerlance.Peer, dir, what string) {
	t.Helper()
	lr, _, err := lanceRowsCanonical(ctx, p, dir)
	if err != nil {
		t.Fatalf("%s: Lance rows: %v", what, err)
	}
	ours, _, err := readOurRows(ctx, dir, 0)
	if err != nil {
		t.Fatalf("%s: our reader: %v", what, err)
	}
	if ours.NotDecodable != "" {
		t.Fatalf("%s: our reader cannot decode: %s", what, ours.NotDecodable)
	}
	if d := diffRows("ours", ours, "Lance", lr); d != "" {
		t.Fatalf("%s: our reader and Lance 12 read other rows:\n%s", what, d)
	}
}

// lanceAppend has Lance append rec (an IPC file) to dir; the model learns
// the rows at the fragment Lance created (read back from Lance).
func lanceAppend(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, rec arrow.RecordBatch, model modelRows) uint64 {
	t.Helper()
	file := filepath.Join(t.TempDir(), "append.arrow")
	if err := peerlance.WriteIPCFile(file, rec.Schema(), rec); err != nil {
		t.Fatal(err)
	}
	res, err := p.Append(ctx, dir, file)
	if err != nil {
		t.Fatalf("Lance append: %v", err)
	}
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
	if found != int(rec.NumRows()) {
		t.Fatalf("Lance append: %d of %d new rows found", found, rec.NumRows())
	}
	return res.Version
}

func TestUsToLance_WrittenByUs(t *testing.T) {
	p := peerlance.ServeForTest(t)
	cases := []struct {
		name   string
		stable bool
		short  bool
	}{
		{name: "address_row_ids", short: true},
		{name: "stable_row_ids", stable: true},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: fewer cases")
			}
			record(t, catUsToLance)
			ctx := peerContext(t)
			rng := mrand.New(mrand.NewPCG(uint64(ci)+40, 4))
			dir := filepath.Join(t.TempDir(), "ours.lance")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			st := localStore(ctx, t, dir)
			cols := columnNames(trickySchema())
			model := modelRows{}
			history := map[uint64]modelRows{}

			// v1: create, 2 500 rows in three data files of many pages each.
			rec1 := trickyBatch(rng, 0, 2500, true)
			defer rec1.Release()
			w1 := writeOurs(ctx, t, st, rec1, commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 1000, PageSize: 2048, StableRowIDs: tc.stable}, model)
			history[w1.Version] = model.clone()
			// The wider columns of our files span several pages (in 2.0
			// every field has a column; the first 19 are the leading
			// top-level fields).
			df, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(w1.Files[0].Path), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"id", "f64", "s", "ls", "bin", "lbin", "u64", "ts", "fsl"} {
				i := trickySchema().FieldIndices(name)[0]
				if n := len(df.Column(i).Pages); n < 2 {
					t.Errorf("column %s of %s has %d page(s); the test wants multi-page columns", name, w1.Files[0].Path, n)
				}
			}
			if got := w1.Manifest.GetReaderFeatureFlags() & flags.StableRowIDs; (got != 0) != tc.stable {
				t.Errorf("stable row ids %v, reader flags %d", tc.stable, w1.Manifest.GetReaderFeatureFlags())
			}
			requireLanceRows(ctx, t, p, dir, "our create", model, cols)
			// v2: append 6 000 rows in one data file.
			rec2 := trickyBatch(rng, 10000, 6000, true)
			defer rec2.Release()
			w2 := writeOurs(ctx, t, st, rec2, commit.WriteOptions{Mode: commit.ModeAppend, PageSize: 1024}, model)
			history[w2.Version] = model.clone()
			requireLanceRows(ctx, t, p, dir, "our append", model, cols)
			// v3: delete every third row, every row of the second
			// fragment (which then leaves the manifest), and 5 500 rows of
			// the appended one (more than 5 000: a .bin deletion file).
			frag1 := w1.FragmentIDs[1]
			var inFrag1 = map[int64]bool{}
			for a, r := range model {
				if a>>32 == frag1 {
					inFrag1[canonicalInt(r[0])] = true
				}
			}
			d3 := deleteOurs(ctx, t, st, model, func(id int64) bool { return id%3 == 0 || inFrag1[id] || id >= 10000 && id < 15500 }, "id % 3 = 0 OR second fragment OR id in [10000, 15500)")
			history[d3.Version] = model.clone()
			kinds := map[string]int{}
			for _, f := range d3.Manifest.GetFragments() {
				if del := f.GetDeletionFile(); del != nil {
					kinds[del.GetFileType().String()]++
				}
			}
			if kinds["ARROW_ARRAY"] == 0 || kinds["BITMAP"] == 0 || len(d3.Manifest.GetFragments()) != 3 {
				t.Errorf("our delete left %d fragments with deletion files %v; want 3 fragments, .arrow and .bin files", len(d3.Manifest.GetFragments()), kinds)
			}
			requireLanceRows(ctx, t, p, dir, "our delete", model, cols)
			// A tag on v2, read by Lance.
			ds, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			if _, err := ds.CreateTag(ctx, "ours-v2", snapshot.Ref{Version: w2.Version}, nil); err != nil {
				t.Fatal(err)
			}
			requireLanceRows(ctx, t, p, dir, "our tag", history[w2.Version], cols, peerlance.AtTag("ours-v2"))

			// Our shallow clone: Lance reads it, appends to it, and we read
			// what Lance wrote there.
			clone := filepath.Join(t.TempDir(), "clone.lance")
			if _, err := snapshot.Clone(ctx, dir, clone, snapshot.CloneOptions{}); err != nil {
				t.Fatal(err)
			}
			requireLanceRows(ctx, t, p, clone, "our shallow clone", model, cols)
			cloneModel := model.clone()
			rec3 := trickyBatch(rng, 20000, 300, false)
			defer rec3.Release()
			lanceAppend(ctx, t, p, clone, rec3, cloneModel)
			if _, err := p.Delete(ctx, clone, "id % 5 = 1"); err != nil {
				t.Fatalf("Lance delete on our clone: %v", err)
			}
			for a, r := range cloneModel {
				if canonicalInt(r[0])%5 == 1 {
					delete(cloneModel, a)
				}
			}
			ours, _, err := readOurRows(ctx, clone, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRows("ours", ours, "expected", cloneModel.rows(cols)); d != "" {
				t.Errorf("the clone after Lance's append and delete:\n%s", d)
			}
			agClone := agreeOnDataset(ctx, t, p, clone)

			// Our restore of v1: Lance reads v1's rows at the new head.
			_, r4, err := ds.Restore(ctx, snapshot.Ref{Version: w1.Version}, snapshot.RestoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			model = history[w1.Version].clone()
			requireLanceRows(ctx, t, p, dir, "our restore", model, cols)
			// Lance appends and deletes on top of our versions; we read
			// every version on both sides.
			rec4 := trickyBatch(rng, 30000, 200, false)
			defer rec4.Release()
			v5 := lanceAppend(ctx, t, p, dir, rec4, model)
			if _, err := p.Delete(ctx, dir, "id % 4 = 2"); err != nil {
				t.Fatal(err)
			}
			if v5 != r4.Version+1 {
				t.Errorf("Lance's append made version %d after our restore %d", v5, r4.Version)
			}
			ag := agreeOnDataset(ctx, t, p, dir)
			if len(ag.notDecodable) > 0 || len(agClone.notDecodable) > 0 {
				t.Errorf("versions not decodable by us: %v, clone %v", ag.notDecodable, agClone.notDecodable)
			}
			t.Logf("%d versions (+%d of the clone) agree; rows of %d versions identical (%d rows)", ag.versions, agClone.versions, ag.rowVersions+agClone.rowVersions, ag.rows+agClone.rows)
		})
	}
}

// modelBatch generates n rows for the columns of a Lance-built random
// dataset (peerlance.MakeRandomDataset's column kinds), ids from first.
func modelBatch(rng *mrand.Rand, cols []peerlance.Column, first int64, n int) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for r := 0; r < n; r++ {
		id := first + int64(r)
		for i, c := range cols {
			fb := b.Field(i)
			switch {
			case c.Name == "id":
				fb.(*array.Int64Builder).Append(id)
				continue
			case strings.HasPrefix(c.Name, "added"):
				fb.(*array.Int64Builder).Append(2 * id) // Lance added them as `id * 2`
				continue
			case c.Nullable && rng.IntN(8) == 0:
				fb.AppendNull()
				continue
			}
			switch bb := fb.(type) {
			case *array.Int8Builder:
				bb.Append(int8(rng.IntN(256) - 128))
			case *array.Int32Builder:
				bb.Append(rng.Int32() - 1<<30)
			case *array.Int64Builder:
				bb.Append(int64(rng.Uint64()))
			case *array.Uint64Builder:
				bb.Append(rng.Uint64())
			case *array.Float32Builder:
				bb.Append(math.Float32frombits(trickyF32()[rng.IntN(len(trickyF32()))]))
			case *array.Float64Builder:
				bb.Append(math.Float64frombits(trickyF64()[rng.IntN(len(trickyF64()))]))
			case *array.StringBuilder:
				bb.Append(trickyStrings()[rng.IntN(len(trickyStrings()))])
			case *array.LargeStringBuilder:
				bb.Append(trickyStrings()[rng.IntN(len(trickyStrings()))])
			case *array.BinaryBuilder:
				bb.Append([]byte(trickyStrings()[rng.IntN(len(trickyStrings()))]))
			case *array.BooleanBuilder:
				bb.Append(rng.IntN(2) == 0)
			case *array.Date32Builder:
				bb.Append(arrow.Date32(rng.Int32N(100000)))
			case *array.TimestampBuilder:
				bb.Append(arrow.Timestamp(rng.Int64N(1e15)))
			default:
				panic(fmt.Sprintf("modelBatch: no values for %T", fb))
			}
		}
	}
	return b.NewRecordBatch()
}

// TestUsToLance_OnLanceRandomDatasets commits our appends and deletes on
// datasets Lance 12 built and evolved (indices, added columns, compaction,
// restores, stable row ids, V1 names): Lance reads our rows exactly and
// writes on top again, and both sides agree on every version.
func TestUsToLance_OnLanceRandomDatasets(t *testing.T) {
	p := peerlance.ServeForTest(t)
	cases := []randomCase{
		{seed: 1, opts: peerlance.RandomOptions{Ops: 14}, short: true},
		{seed: 5, opts: peerlance.RandomOptions{Ops: 12, StableRowIDs: true, MaxBatchRows: 60}},
		{seed: 4, opts: peerlance.RandomOptions{Ops: 12, V1Paths: true}},
		{seed: 7, opts: peerlance.RandomOptions{Ops: 20}},
		{seed: 6, opts: peerlance.RandomOptions{Ops: 16}},
		{seed: 8, opts: peerlance.RandomOptions{Ops: 20, MaxBatchRows: 200}},
		{seed: 9, opts: peerlance.RandomOptions{Ops: 16}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("seed%d", tc.seed), func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: fewer seeds")
			}
			record(t, catUsToLance)
			ctx := peerContext(t)
			dir := filepath.Join(t.TempDir(), "rand.lance")
			ds, err := peerlance.MakeRandomDataset(ctx, p, dir, tc.seed, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			st := localStore(ctx, t, dir)
			cols := ds.States[ds.Latest].Columns
			var names []string
			for _, c := range cols {
				names = append(names, c.Name)
			}
			// Expected content by id: Lance's head plus what we add.
			want := idModel{}
			for _, r := range ds.States[ds.Latest].Rows {
				want[r.ID] = r.Values
			}
			rng := mrand.New(mrand.NewPCG(tc.seed, 3))
			rec := modelBatch(rng, cols, 1_000_000, 150)
			defer rec.Release()
			if _, err := commit.WriteArrow(ctx, st, mustRecordReader(t, rec), commit.WriteOptions{Mode: commit.ModeAppend, MaxRowsPerFile: 100, PageSize: 256}); err != nil {
				t.Fatalf("our append to Lance's dataset: %v", err)
			}
			for _, r := range canonicalRows(t, rec) {
				want[canonicalInt(r[0])] = r
			}
			requireLanceByID(ctx, t, p, dir, names, want, "after our append")
			// Our delete across Lance's and our fragments.
			rows, _, err := readOurRows(ctx, dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			model := modelRows{}
			for i, a := range rows.Addrs {
				model[a] = rows.Rows[i]
			}
			deleteOurs(ctx, t, st, model, func(id int64) bool { return id%4 == 0 }, "id % 4 = 0")
			for id := range want {
				if id%4 == 0 {
					delete(want, id)
				}
			}
			requireLanceByID(ctx, t, p, dir, names, want, "after our delete")
			// Lance writes on top of our commits.
			more := modelBatch(rng, cols, 2_000_000, 20)
			defer more.Release()
			file := filepath.Join(t.TempDir(), "more.arrow")
			if err := peerlance.WriteIPCFile(file, more.Schema(), more); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Append(ctx, dir, file); err != nil {
				t.Fatalf("Lance append after ours: %v", err)
			}
			if _, err := p.Delete(ctx, dir, "id % 5 = 1"); err != nil {
				t.Fatalf("Lance delete after ours: %v", err)
			}
			for _, r := range canonicalRows(t, more) {
				want[canonicalInt(r[0])] = r
			}
			for id := range want {
				if id%5 == 1 {
					delete(want, id)
				}
			}
			requireLanceByID(ctx, t, p, dir, names, want, "after Lance's append and delete")
			ag := agreeOnDataset(ctx, t, p, dir)
			if len(ag.notDecodable) > 0 {
				t.Errorf("versions %v not decodable by us", ag.notDecodable)
			}
			t.Logf("seed %d: columns %v; %d versions agree, rows of %d versions identical", tc.seed, names, ag.versions, ag.rowVersions)
		})
	}
}

// requireLanceByID checks Lance's rows of the head against want, by id.
func requireLanceByID(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, columns []string, want idModel, what string) {
	t.Helper()
	lr, _, err := lanceRowsCanonical(ctx, p, dir)
	if err != nil {
		t.Fatalf("%s: Lance rows: %v", what, err)
	}
	if !slices.Equal(lr.Columns, columns) {
		t.Fatalf("%s: Lance columns %v, want %v", what, lr.Columns, columns)
	}
	if len(lr.Rows) != len(want) {
		t.Errorf("%s: Lance reads %d rows, want %d", what, len(lr.Rows), len(want))
	}
	for _, r := range lr.Rows {
		if w, ok := want[canonicalInt(r[0])]; !ok || !slices.Equal(r, w) {
			t.Fatalf("%s: Lance row %v, want %v", what, r, w)
		}
	}
}
