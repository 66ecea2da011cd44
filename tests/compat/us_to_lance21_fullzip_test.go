package compat_test

import (
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

// wideBatch has wide values (spec 2.1 §5): utf8 of 250 B up to 40 KiB
// (over a 2.1 mini-block chunk), list<binary> of ≥ 280-byte items with
// null/empty lists and null items, fixed_size_list<float32>[128] with null
// rows and null items, fixed_size_binary[300].
func wideBatch(first, n int) arrow.RecordBatch {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "lst", Type: arrow.ListOf(arrow.BinaryTypes.Binary), Nullable: true},
		{Name: "fsl", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 300}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i := range n {
		r := first + i
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		if r%5 == 1 {
			for k := 1; k <= 4; k++ {
				b.Field(k).AppendNull()
			}
			continue
		}
		size := 250 + r%50*37
		if r%40 == 7 {
			size = 40 << 10
		}
		b.Field(1).(*array.StringBuilder).Append(strings.Repeat(string(rune('a'+r%26)), size))
		lb := b.Field(2).(*array.ListBuilder)
		if r%5 == 2 {
			lb.AppendEmptyValue()
		} else {
			lb.Append(true)
			for k := range r%3 + 1 {
				if k == 1 {
					lb.ValueBuilder().AppendNull()
				} else {
					lb.ValueBuilder().(*array.BinaryBuilder).Append([]byte(strings.Repeat(string(rune('A'+k)), 280+k*(r%50))))
				}
			}
		}
		fb := b.Field(3).(*array.FixedSizeListBuilder)
		fb.Append(true)
		for k := range 128 {
			if k == r%128 {
				fb.ValueBuilder().AppendNull()
			} else {
				fb.ValueBuilder().(*array.Float32Builder).Append(float32(k*r) / 3)
			}
		}
		v := []byte(strings.Repeat("q", 300))
		v[r%300] = byte(r)
		b.Field(4).(*array.FixedSizeBinaryBuilder).Append(v)
	}
	return b.NewRecordBatch()
}

// TestUsToLance21_FullZipWideValuesReadByLance12 (spec 2.1 §5): tables
// whose wide columns our writer stores as full-zip pages, at 2.1 and 2.2,
// read by Lance 12 row for row; Lance then appends and compacts (optimize)
// and returns the same rows.
func TestUsToLance21_FullZipWideValuesReadByLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	for _, version := range []string{"2.1", "2.2"} {
		t.Run(version, func(t *testing.T) {
			record(t, catUsToLance)
			ctx := peerContext(t)
			dir := filepath.Join(t.TempDir(), "wide.lance")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			st := localStore(ctx, t, dir)
			rec1 := wideBatch(0, 120)
			defer rec1.Release()
			cols := columnNames(rec1.Schema())
			model := modelRows{}
			w1 := writeOurs(ctx, t, st, rec1, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: version, PageSize: 128 << 10}, model)
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(w1.Files[0].Path), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fullZip := 0
			for ci := range f.NumColumns() {
				for _, pg := range f.Column(ci).Pages {
					// PageLayout field 3 (full_zip_layout) starts the message.
					if v := pg.Encoding.Value; len(v) > 0 && v[0] == 3<<3|2 {
						fullZip++
					}
				}
			}
			if fullZip < 4 {
				t.Fatalf("only %d full-zip pages written", fullZip)
			}
			requireLanceRows(ctx, t, p, dir, "our full-zip create", model, cols)
			rec2 := wideBatch(1000, 60)
			defer rec2.Release()
			writeOurs(ctx, t, st, rec2, commit.WriteOptions{Mode: commit.ModeAppend}, model)
			requireLanceRows(ctx, t, p, dir, "our full-zip append", model, cols)
			rec3 := wideBatch(2000, 30)
			defer rec3.Release()
			lanceAppend(ctx, t, p, dir, rec3, model)
			if _, err := p.Optimize(ctx, dir); err != nil {
				t.Fatalf("Lance optimize: %v", err)
			}
			lr, _, err := lanceRowsCanonical(ctx, p, dir)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int64][]string{}
			for _, r := range model {
				want[canonicalInt(r[0])] = r
			}
			if len(lr.Rows) != len(want) {
				t.Fatalf("after optimize Lance has %d rows, want %d", len(lr.Rows), len(want))
			}
			for _, r := range lr.Rows {
				w := want[canonicalInt(r[0])]
				for j := range r {
					if w == nil || r[j] != w[j] {
						t.Fatalf("after optimize: row id %s column %s differs", r[0], cols[j])
					}
				}
			}
		})
	}
}
