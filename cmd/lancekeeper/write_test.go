package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

var cliSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func cliRecord(start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, cliSchema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("s%03d", i))
	}
	return b.NewRecordBatch()
}

func writeArrowFile(t *testing.T, path string, stream bool, start, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := cliRecord(start, n)
	defer rec.Release()
	if stream {
		w := ipc.NewWriter(f, ipc.WithSchema(cliSchema))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(cliSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeParquetFile(t *testing.T, path string, start, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := cliRecord(start, n)
	defer rec.Release()
	tbl := array.NewTableFromRecords(cliSchema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

func writeCSVFile(t *testing.T, path string, start, n int) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("x,s\n")
	for i := start; i < start+n; i++ {
		fmt.Fprintf(&sb, "%d,s%03d\n", i, i)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listTree returns every file under dir (relative paths), sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func latest(t *testing.T, dir string) *manifest.File {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestWriteCLI_AllInputFormats(t *testing.T) {
	tmp := t.TempDir()
	ds := filepath.Join(tmp, "ds")
	inputs := []struct {
		name  string
		write func(path string)
	}{
		{"in.arrow", func(p string) { writeArrowFile(t, p, false, 0, 100) }},
		{"in.arrows", func(p string) { writeArrowFile(t, p, true, 100, 100) }},
		{"in.parquet", func(p string) { writeParquetFile(t, p, 200, 100) }},
		{"in.csv", func(p string) { writeCSVFile(t, p, 300, 100) }},
	}
	for i, in := range inputs {
		p := filepath.Join(tmp, in.name)
		in.write(p)
		args := []string{"write", ds, "--from", p, "--json"}
		if i == 3 {
			args = append(args, "--seeds", "x", "--rows-per-zone", "16", "--enable-zone-write-seeds")
		}
		code, out, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", in.name, code, errs)
		}
		var res writeJSON
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v\n%s", in.name, err, out)
		}
		wantMode := "append"
		if i == 0 {
			wantMode = "create"
		}
		if res.Version != uint64(i+1) || res.Rows != 100 || res.Mode != wantMode {
			t.Fatalf("%s: %+v", in.name, res)
		}
		if i == 3 && (!res.ZoneSeedsFlag || len(res.Files[0].Seeds) != 1) {
			t.Fatalf("seeded CSV write: %+v", res)
		}
	}
	m := latest(t, ds).Manifest
	var rows uint64
	for _, f := range m.GetFragments() {
		rows += f.GetPhysicalRows()
	}
	if rows != 400 || len(m.GetFields()) != 2 {
		t.Fatalf("rows %d fields %d", rows, len(m.GetFields()))
	}
	// Human output names the version and the seeds.
	p := filepath.Join(tmp, "more.csv")
	writeCSVFile(t, p, 400, 10)
	code, out, _ := runCLI(t, "write", ds, "--from", p, "--seeds", "all")
	if code != 0 || !strings.Contains(out, "committed version 5 (append") || !strings.Contains(out, "v1 seeds: x, s") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestWriteCLI_BadInputCommitsNothing: an unreadable source, a schema that
// does not match the dataset, a --seeds column that does not exist, seeds
// without the explicit opt-in — each one line on stderr, exit 2, no new
// version and no stray file.
// TestWriteCLI_InlineTransactionOnly: --inline-transaction-only commits
// without a _transactions/*.txn file and reports writer flag bit 5
// (DISABLE_TRANSACTION_FILE, lance-table-format.md §6.1) for that version.
func TestWriteCLI_InlineTransactionOnly(t *testing.T) {
	tmp := t.TempDir()
	ds := filepath.Join(tmp, "ds")
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 10)
	code, out, errs := runCLI(t, "write", ds, "--from", in, "--inline-transaction-only", "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var res writeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.WriterFlags&32 == 0 || res.ReaderFlags&32 != 0 {
		t.Fatalf("flags reader %d writer %d, want bit 5 (32) in the writer word only", res.ReaderFlags, res.WriterFlags)
	}
	if ents, err := os.ReadDir(filepath.Join(ds, "_transactions")); err == nil && len(ents) > 0 {
		t.Fatalf("%d transaction files written", len(ents))
	}
}

func TestWriteCLI_BadInputCommitsNothing(t *testing.T) {
	tmp := t.TempDir()
	ds := filepath.Join(tmp, "ds")
	good := filepath.Join(tmp, "good.csv")
	writeCSVFile(t, good, 0, 10)
	if code, _, errs := runCLI(t, "write", ds, "--from", good); code != 0 {
		t.Fatal(errs)
	}
	garbage := filepath.Join(tmp, "garbage.arrow")
	os.WriteFile(garbage, []byte("ARROW1\x00\x00 this is not arrow"), 0o644)
	noext := filepath.Join(tmp, "mystery.bin")
	os.WriteFile(noext, []byte("hello"), 0o644)
	badParquet := filepath.Join(tmp, "bad.parquet")
	os.WriteFile(badParquet, []byte("PAR1garbagePAR1"), 0o644)
	other := filepath.Join(tmp, "other.csv")
	os.WriteFile(other, []byte("x,y\n1,2\n"), 0o644)
	typed := filepath.Join(tmp, "typed.csv")
	os.WriteFile(typed, []byte("x,s\nabc,1\n"), 0o644)
	before := listTree(t, ds)
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"missing file", []string{"--from", filepath.Join(tmp, "nope.csv")}, "no such file"},
		{"garbage arrow", []string{"--from", garbage}, "cannot read input"},
		{"unknown format", []string{"--from", noext}, "not Arrow IPC"},
		{"garbage parquet", []string{"--from", badParquet}, "cannot read input"},
		{"schema mismatch (columns)", []string{"--from", other}, `the dataset has column "s"`},
		{"schema mismatch (types): CSV cast to the table type names line and column", []string{"--from", typed}, `line 2, column "x": "abc" is not an integer (int64)`},
		{"seed column does not exist", []string{"--from", good, "--seeds", "nope", "--enable-zone-write-seeds"}, `"nope"`},
		{"seeds without opt-in", []string{"--from", good, "--seeds", "x"}, "enable it explicitly"},
		{"create over existing", []string{"--from", good, "--mode", "create"}, "already exists"},
		{"bad mode", []string{"--from", good, "--mode", "upsert"}, "unknown write mode"},
		{"inline-only through a coordinator", []string{"--from", good, "--inline-transaction-only", "--coordinator", "http://127.0.0.1:1"}, "cannot be combined with --coordinator"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, append([]string{"write", ds}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(errs, tc.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line containing %q", code, errs, tc.msg)
			}
			if after := listTree(t, ds); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("files changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestSniffFormat(t *testing.T) {
	for _, tc := range []struct {
		head, name, want string
	}{
		{"ARROW1\x00\x00", "a", "arrow-file"},
		{"PAR1\x15\x04", "a", "parquet"},
		{"\xff\xff\xff\xff\x10\x00\x00\x00", "a", "arrow-stream"},
		{"x,y\n1,2", "data.CSV", "csv"},
		{"a\tb", "d.tsv", "csv"},
	} {
		got, err := sniffFormat([]byte(tc.head), tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%q %s: got %q %v", tc.head, tc.name, got, err)
		}
	}
	if _, err := sniffFormat([]byte("hello"), "x.txt"); err == nil {
		t.Error("unknown content accepted")
	}
}

func TestWriteCLI_ProgressBar(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.parquet")
	writeParquetFile(t, in, 0, 300)
	code, _, errs := runCLI(t, "write", filepath.Join(tmp, "ds"), "--from", in, "--progress")
	if code != 0 || !strings.Contains(errs, "100%") || !strings.Contains(errs, "300 rows") || !strings.HasPrefix(errs, "\r[") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// Without --progress and not on a terminal: nothing on stderr.
	code, _, errs = runCLI(t, "write", filepath.Join(tmp, "ds"), "--from", in)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
