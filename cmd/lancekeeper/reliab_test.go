package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestItem12_RowsPerZoneZeroRefused is issue 15 item 12: --rows-per-zone
// 0 was accepted and silently became 8192.
func TestItem12_RowsPerZoneZeroRefused(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 10)
	ds := filepath.Join(tmp, "ds")
	code, _, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--enable-zone-write-seeds", "--rows-per-zone", "0")
	if code != exitBadInput || !strings.Contains(errs, "rows-per-zone") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if len(listTree(t, ds)) != 0 {
		t.Fatal("a refused write wrote files")
	}
}

// TestItem11_ZonesShowNegativeNaNCount is issue 15 item 11: seeds --zones
// omitted negative_nan_count (v1); JSON now has it, text a NEG_NANS column.
func TestItem11_ZonesShowNegativeNaNCount(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 20)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--enable-zone-write-seeds", "--rows-per-zone", "8"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runCLI(t, "seeds", ds, "--zones", "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var rep struct {
		Files []struct {
			Seeds []struct {
				ZoneStats []map[string]any `json:"zone_stats"`
			} `json:"seeds"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	zones := 0
	for _, f := range rep.Files {
		for _, s := range f.Seeds {
			for _, z := range s.ZoneStats {
				zones++
				if v, ok := z["negative_nan_count"]; !ok || v != float64(0) {
					t.Fatalf("zone %v: negative_nan_count %v", z, v)
				}
			}
		}
	}
	if zones == 0 {
		t.Fatalf("no zones in %s", out)
	}
	code, out, _ = runCLI(t, "seeds", ds, "--zones")
	if code != 0 || !strings.Contains(out, "NEG_NANS") {
		t.Fatalf("text: %s", out)
	}
}

// TestCheckCLI: exit 0 on a clean dataset, 4 with the missing file named
// (inspect reported healthy row counts for such a version), --json.
func TestCheckCLI(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 10)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runCLI(t, "check", ds)
	if code != 0 || !strings.Contains(out, "clean") {
		t.Fatalf("clean dataset: exit %d %s %s", code, out, errs)
	}
	m := latest(t, ds).Manifest
	file := "data/" + m.GetFragments()[0].GetFiles()[0].GetPath()
	if err := os.Remove(filepath.Join(ds, filepath.FromSlash(file))); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "check", ds, "--all-versions")
	if code != 4 || !strings.Contains(out, file) || !strings.Contains(out, "missing_file") {
		t.Fatalf("missing file: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "check", ds, "--json", "--seeds")
	var rep struct {
		Problems []struct {
			File string `json:"file"`
			Kind string `json:"kind"`
		} `json:"problems"`
	}
	if code != 4 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Problems) != 1 || rep.Problems[0].File != file {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "check", filepath.Join(tmp, "nope")); code != exitBadInput {
		t.Fatalf("missing dataset: exit %d", code)
	}
}

// TestItem7_8_Float16SubnormalsAndInfinities is issue 15 items 7 and 8:
// a stored float16 bound 0x0001 was shown as 1.148e-41, a predicate between
// subnormals kept no zone although zones hold matches (the literal was
// flushed to zero), and `seeds --json` failed on an infinite bound.
func TestItem7_8_Float16SubnormalsAndInfinities(t *testing.T) {
	ctx := context.Background()
	ds := filepath.Join(t.TempDir(), "ds")
	st, err := store.Open(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "h", Type: arrow.FixedWidthTypes.Float16, Nullable: true}}, nil)
	b := array.NewFloat16Builder(memory.DefaultAllocator)
	for _, bits := range []uint16{0x0001, 0x0002, 0x0003, 0x0003, 0x3C00, 0x4000, 0x3C00, 0x4000, 0xFC00, 0x3C00, 0x7C00, 0x3C00} {
		b.Append(float16.FromBits(bits))
	}
	arr := b.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	rdr, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, SeedAllColumns: true, RowsPerZone: 4,
		Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "seeds", ds, "--zones", "--json")
	if code != 0 {
		t.Fatalf("seeds --json: exit %d %s", code, errs)
	}
	if !strings.Contains(out, "5.960464477539063e-8") || !strings.Contains(out, `"-Inf"`) || !strings.Contains(out, `"+Inf"`) {
		t.Fatalf("bounds not rendered exactly:\n%s", out)
	}
	// 0x0002 = 2^-23: between the first zone's subnormal bounds (the
	// third zone, -Inf..+Inf, holds everything); the second zone is
	// pruned. Before the fix the literal became 0 and the first zone was
	// pruned although it holds the match.
	code, out, errs = runCLI(t, "seeds", ds, "--where", "h = 1.1920928955078125e-07")
	if code != 0 || !strings.Contains(out, "seeded zones kept: 2 of 3") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, "seeds", ds, "--where", "h BETWEEN 1e-7 AND 1.5e-7")
	if code != 0 || !strings.Contains(out, "seeded zones kept: 2 of 3") {
		t.Fatalf("between: exit %d\n%s", code, out)
	}
}

// shortBoolIPC writes an Arrow IPC file of n rows: an int64 column and an
// all-null bool column whose values buffer is empty, as apache-arrow JS
// writes it (issue 15 item 9).
func shortBoolIPC(t *testing.T, path string, n int, nulls int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}}, nil)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range n {
		ib.Append(int64(i))
	}
	xs := ib.NewArray()
	validity := memory.NewBufferBytes(make([]byte, (n+7)/8)) // all null
	bd := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{validity, memory.NewBufferBytes(nil)}, nil, nulls, 0)
	bs := array.MakeFromData(bd)
	rec := array.NewRecordBatch(schema, []arrow.Array{xs, bs}, int64(n))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestItem9_ShortIPCBuffers is issue 15 item 9: `write` panicked ("index
// out of range") on an all-null bool column with a zero-length values
// buffer. Such a column is written (its values are never read); a short
// buffer under non-null rows is refused with exit 2 and one line.
func TestItem9_ShortIPCBuffers(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.arrow")
	shortBoolIPC(t, in, 100, 100)
	ds := filepath.Join(tmp, "ds")
	code, out, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--enable-zone-write-seeds")
	if code != 0 {
		t.Fatalf("all-null bool with an empty values buffer: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runCLI(t, "check", ds); code != 0 {
		t.Fatalf("check after the write: %d %s", code, errs)
	}
	bad := filepath.Join(tmp, "bad.arrow")
	shortBoolIPC(t, bad, 100, 3) // 3 nulls claimed, 97 values missing
	code, _, errs = runCLI(t, "write", filepath.Join(tmp, "ds2"), "--from", bad)
	if code != exitBadInput || strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Contains(errs, "goroutine") {
		t.Fatalf("short buffer: exit %d\n%s", code, errs)
	}
}

// TestItem16_BranchFlags is issue 15 item 16: `write --branch` and
// `seeds enable --branch` were refused as unknown flags.
func TestItem16_BranchFlags(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 10)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--branch", "nope"); code != exitBadInput || !strings.Contains(errs, "no branch") {
		t.Fatalf("missing branch: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "branch", "create", ds, "dev"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--branch", "dev"); code != 0 {
		t.Fatalf("write --branch: %d %s", code, errs)
	}
	if v := latest(t, ds).Manifest.GetVersion(); v != 1 {
		t.Fatalf("main moved to version %d", v)
	}
	if v := latest(t, filepath.Join(ds, "tree", "dev")).Manifest; v.GetVersion() != 2 || len(v.GetFragments()) != 2 {
		t.Fatalf("branch: version %d, %d fragments", v.GetVersion(), len(v.GetFragments()))
	}
	code, out, errs := runCLI(t, "seeds", "enable", ds, "--branch", "dev", "--yes")
	if code != 0 || !strings.Contains(out, "activates FLAG_ZONE_WRITE_SEEDS") || !strings.Contains(errs, "for good") {
		t.Fatalf("seeds enable --branch: %d %s %s", code, out, errs)
	}
	if commit.HasZoneWriteSeeds(latest(t, ds).Manifest) || !commit.HasZoneWriteSeeds(latest(t, filepath.Join(ds, "tree", "dev")).Manifest) {
		t.Fatal("the flag landed on the wrong branch")
	}
}

// TestItem17_SeedsEnableRefusedWhereThisBuildCannotWrite is issue 15 item
// 17: activation on a table whose files this build cannot write (legacy
// 0.1; 2.3 is written since session 25) is refused (exit 3, nothing
// written), and `write --seeds` on it no longer recommends the activation.
func TestItem17_SeedsEnableRefusedWhereThisBuildCannotWrite(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "lance-corpus", "lance12", "storage_legacy.lance")
	ds := filepath.Join(t.TempDir(), "ds")
	if err := os.CopyFS(ds, os.DirFS(src)); err != nil {
		t.Fatalf("the shared corpus is required: %v", err)
	}
	before := listTree(t, ds)
	code, _, errs := runCLI(t, "seeds", "enable", ds, "--yes")
	if code != exitRefused || !strings.Contains(errs, "2.3 only") {
		t.Fatalf("exit %d %s", code, errs)
	}
	if strings.Join(listTree(t, ds), ",") != strings.Join(before, ",") {
		t.Fatal("a refused activation wrote files")
	}
	in := filepath.Join(t.TempDir(), "in.csv")
	writeCSVFile(t, in, 0, 10)
	_, _, errs = runCLI(t, "write", ds, "--from", in, "--seeds", "all")
	if strings.Contains(errs, "seeds enable") || !strings.Contains(errs, "data files only") {
		t.Fatalf("write --seeds on a legacy table: %s", errs)
	}
}
