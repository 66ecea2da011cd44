package compat_test

// Us → Lance for the 2.0 types added in session 22 (issue 12 item 2: "the
// 2.0 writer today refuses fixed_size_binary, decimals, lists, dictionary,
// null"): tables created and appended by lancekeeper at storage 2.0 with
// lists, large lists, lists of lists and of structs, dictionaries of
// strings and of fixed-width values, fixed_size_binary, decimals and a
// null column, with and without seeds, read by Lance 12 row for row;
// Lance 12 then appends and compacts (optimize) and still returns the same
// rows. And what Lance 12's 2.0 writer refuses (maps, null structs,
// dictionaries of dates/decimals/…), ours refuses too.

import (
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// schema20 has one column per kind of value the 2.0 writer stores.
func schema20() *arrow.Schema {
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: name != "id" && name != "st"}
	}
	var fields []arrow.Field
	for _, fl := range schema21("2.1").Fields() {
		switch fl.Name {
		case "st", "lst": // structs holding nulls: not in 2.0
			continue
		}
		fields = append(fields, fl)
	}
	return arrow.NewSchema(append(fields,
		// (schema21 brings the utf8, int64 and float64 dictionaries)
		f("fsb20", &arrow.FixedSizeBinaryType{ByteWidth: 20}),
		f("nul", arrow.Null),
		f("lli", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64))),
		f("lst", arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}))),
		f("st", arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true})),
	), nil)
}

// randomValue20 is randomValue without null structs at any depth (Lance's
// 2.0 format has no struct validity).
func randomValue20(rng *mrand.Rand, b array.Builder, nullable bool, id int64) {
	switch x := b.(type) {
	case *array.StructBuilder:
		x.Append(true)
		for i := range x.NumField() {
			randomValue20(rng, x.FieldBuilder(i), true, id)
		}
	case *array.ListBuilder:
		if nullable && rng.IntN(7) == 0 {
			x.AppendNull()
			return
		}
		x.Append(true)
		for range rng.IntN(4) {
			randomValue20(rng, x.ValueBuilder(), true, id)
		}
	case *array.LargeListBuilder:
		if nullable && rng.IntN(7) == 0 {
			x.AppendNull()
			return
		}
		x.Append(true)
		for range rng.IntN(4) {
			randomValue20(rng, x.ValueBuilder(), true, id)
		}
	default:
		randomValue(rng, b, nullable, id)
	}
}

func batch20(rng *mrand.Rand, first int64, n int) arrow.RecordBatch {
	schema := schema20()
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for r := range n {
		for i, fl := range schema.Fields() {
			randomValue20(rng, b.Field(i), fl.Nullable, first+int64(r))
		}
	}
	return b.NewRecordBatch()
}

// TestUsToLance20_EveryTypeReadByLance12 (spec §4.5, §4.7; the layouts are
// those of Lance's own 2.0 files, datafile
// TestSpec47_RewritesLance12StorageV20FileByteForByte).
func TestUsToLance20_EveryTypeReadByLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	record(t, catUsToLance)
	ctx := peerContext(t)
	rng := mrand.New(mrand.NewPCG(2020, 20))
	dir := filepath.Join(t.TempDir(), "ours20.lance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := localStore(ctx, t, dir)
	cols := columnNames(schema20())
	model := modelRows{}

	rec1 := batch20(rng, 0, 600)
	defer rec1.Release()
	w1 := writeOurs(ctx, t, st, rec1, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: "2.0", PageSize: 2048, MaxRowsPerFile: 400}, model)
	if got := w1.Manifest.GetDataFormat().GetVersion(); got != "2.0" {
		t.Fatalf("data_format %q, want 2.0", got)
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(w1.Files[0].Path), datafile.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Version() != datafile.V2_0 {
		t.Fatalf("file version %s", f.Version())
	}
	requireLanceRows(ctx, t, p, dir, "our 2.0 create", model, cols)

	rec2 := batch20(rng, 10000, 250)
	defer rec2.Release()
	writeOurs(ctx, t, st, rec2, commit.WriteOptions{Mode: commit.ModeAppend}, model)
	requireLanceRows(ctx, t, p, dir, "our 2.0 append", model, cols)

	rec3 := batch20(rng, 20000, 150)
	defer rec3.Release()
	appendWithSeedsNoFlag(ctx, t, st, rec3, datafile.V2_0, model)
	requireLanceRows(ctx, t, p, dir, "our 2.0 append with seeds in the files", model, cols)
	requireOurRowsAsLance(ctx, t, p, dir, "our 2.0 files")

	rec4 := batch20(rng, 30000, 100)
	defer rec4.Release()
	lanceAppend(ctx, t, p, dir, rec4, model)
	if _, err := p.Optimize(ctx, dir); err != nil {
		t.Fatalf("Lance optimize: %v", err)
	}
	lr, _, err := lanceRowsCanonical(ctx, p, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Rows) != len(model) {
		t.Fatalf("after optimize Lance has %d rows, want %d", len(lr.Rows), len(model))
	}
	requireOurRowsAsLance(ctx, t, p, dir, "after Lance's append and optimize")
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
}

// TestUsToLance20_LanceRefusesTheSameTypes: maps, structs holding null rows
// (also as list items) and dictionaries of dates, times, timestamps,
// durations, decimals or fixed_size_binary have no 2.0 encoding: Lance 12
// refuses to create such a 2.0 table (an error or a panic of its 2.0
// dictionary encoder), and our writer refuses them with a typed error
// (ErrInvalidSchema for the type, ErrInvalidData for null structs).
func TestUsToLance20_LanceRefusesTheSameTypes(t *testing.T) {
	p := peerlance.ServeForTest(t)
	record(t, catRefusal)
	ctx := peerContext(t)
	dict := func(v arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: v}
	}
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	for _, tc := range []struct {
		name string
		dt   arrow.DataType
		want error
	}{
		{"map", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), datafile.ErrInvalidSchema},
		{"null_struct", st, datafile.ErrInvalidData},
		{"list_of_null_struct", arrow.ListOf(st), datafile.ErrInvalidData},
		{"dict_date32", dict(arrow.FixedWidthTypes.Date32), datafile.ErrInvalidSchema},
		{"dict_decimal", dict(&arrow.Decimal128Type{Precision: 10, Scale: 2}), datafile.ErrInvalidSchema},
		{"dict_fsb", dict(&arrow.FixedSizeBinaryType{ByteWidth: 5}), datafile.ErrInvalidSchema},
		{"dict_timestamp", dict(arrow.FixedWidthTypes.Timestamp_us), datafile.ErrInvalidSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: tc.dt, Nullable: true}}, nil)
			rec := refusalRecord(t, sch)
			defer rec.Release()
			file := filepath.Join(t.TempDir(), "x.arrow")
			if err := peerlance.WriteIPCFile(file, sch, rec); err != nil {
				t.Fatal(err)
			}
			_, lerr := p.Create(ctx, filepath.Join(t.TempDir(), "lance.lance"), file, peerlance.CreateOptions{StorageVersion: "2.0"})
			if lerr == nil {
				t.Fatalf("Lance 12 writes %s at 2.0; the writer must not refuse it", tc.dt)
			}
			var werr error
			w, err := datafile.NewWriter(&strings.Builder{}, sch, datafile.WriterOptions{Version: datafile.V2_0})
			if err != nil {
				werr = err
			} else {
				werr = w.Write(rec)
			}
			if !errors.Is(werr, tc.want) {
				t.Fatalf("our 2.0 writer: %v, want %v (Lance 12: %v)", werr, tc.want, lerr)
			}
			t.Logf("Lance 12: %.160s | ours: %v", lerr.Error(), werr)
			// 2.2 stores maps and null structs; dictionaries of these
			// values fail in Lance 12 at 2.2 as well, and our 2.2 writer
			// refuses them too.
			if strings.HasPrefix(tc.name, "dict_") {
				_, lerr22 := p.Create(ctx, filepath.Join(t.TempDir(), "lance22.lance"), file, peerlance.CreateOptions{StorageVersion: "2.2"})
				_, err22 := datafile.NewWriter(&strings.Builder{}, sch, datafile.WriterOptions{Version: datafile.V2_2})
				if lerr22 == nil || !errors.Is(err22, datafile.ErrInvalidSchema) {
					t.Fatalf("2.2: Lance 12 %v, ours %v; both must refuse", lerr22, err22)
				}
				return
			}
			w22, err := datafile.NewWriter(&strings.Builder{}, sch, datafile.WriterOptions{Version: datafile.V2_2})
			if err == nil {
				err = w22.Write(rec)
			}
			if err == nil {
				_, err = w22.Close()
			}
			if err != nil {
				t.Fatalf("our 2.2 writer refuses it too: %v", err)
			}
		})
	}
}

// refusalRecord is 20 rows of sch: ids and random values, with every
// third struct null.
func refusalRecord(t *testing.T, sch *arrow.Schema) arrow.RecordBatch {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(5, 5))
	ids := array.NewInt64Builder(memory.NewGoAllocator())
	defer ids.Release()
	var col arrow.Array
	dt := sch.Field(1).Type
	if d, ok := dt.(*arrow.DictionaryType); ok {
		vb := array.NewBuilder(memory.NewGoAllocator(), d.ValueType)
		for range 4 {
			randomValue(rng, vb, false, 1)
		}
		vals := vb.NewArray()
		vb.Release()
		kb := array.NewInt32Builder(memory.NewGoAllocator())
		for r := range 20 {
			kb.Append(int32(r % 4))
		}
		keys := kb.NewArray()
		kb.Release()
		col = array.NewDictionaryArray(dt, keys, vals)
		keys.Release()
		vals.Release()
	} else {
		b := array.NewBuilder(memory.NewGoAllocator(), dt)
		for r := range 20 {
			switch x := b.(type) {
			case *array.StructBuilder:
				if r%3 == 0 {
					x.AppendNull()
				} else {
					randomValue20(rng, x, true, 1)
				}
			case *array.ListBuilder:
				x.Append(true)
				sb := x.ValueBuilder().(*array.StructBuilder)
				sb.AppendNull()
				randomValue20(rng, sb, true, 1)
			default:
				randomValue(rng, b, true, int64(r))
			}
		}
		col = b.NewArray()
		b.Release()
	}
	for r := range 20 {
		ids.Append(int64(r))
	}
	idc := ids.NewArray()
	defer idc.Release()
	defer col.Release()
	return array.NewRecordBatch(sch, []arrow.Array{idc, col}, 20)
}
