package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seededDataset writes x = 0..199 (int64) and s = "sNNN" in two
// fragments with v1 seeds of 8 rows per zone on a flagged table.
func seededDataset(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 100)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--rows-per-zone", "8", "--enable-zone-write-seeds"); code != 0 {
		t.Fatal(errs)
	}
	writeCSVFile(t, in, 100, 100)
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--mode", "append", "--seeds", "all", "--rows-per-zone", "8"); code != 0 {
		t.Fatal(errs)
	}
	return ds
}

// TestScanCLI_WhereFormatsExplain: rows, formats, the plan, and the exit
// codes of bad predicates (issue 13 item 4, "Bad input").
func TestScanCLI_WhereFormatsExplain(t *testing.T) {
	ds := seededDataset(t)
	code, out, errs := runCLI(t, "scan", ds, "--where", "x BETWEEN 10 AND 12 OR s = 's150'", "--format", "csv", "--with-row-addr")
	if code != 0 || out != "x,s,_rowaddr\n10,s010,10\n11,s011,11\n12,s012,12\n150,s150,4294967346\n" {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	code, out, _ = runCLI(t, "scan", ds, "--where", "x >= 198", "--format", "jsonl", "--columns", "s")
	if code != 0 || out != "{\"s\":\"s198\"}\n{\"s\":\"s199\"}\n" {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "scan", ds, "--where", "x < 3", "--format", "json")
	var rows []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 3 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "scan", ds, "--limit", "2")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "x") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "scan", ds, "--where", "x BETWEEN 10 AND 12", "--explain")
	if code != 0 || !strings.Contains(out, "fragments: 1 kept, 1 pruned of 2") || !strings.Contains(out, "seed v1") || !strings.Contains(out, "rows: 8 of 200") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, f := range []string{"arrow", "parquet"} {
		p := filepath.Join(t.TempDir(), "out."+f)
		if code, _, errs := runCLI(t, "scan", ds, "--where", "x < 50", "--format", f, "--output", p); code != 0 {
			t.Fatal(errs)
		}
		if st, err := os.Stat(p); err != nil || st.Size() < 100 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for _, bad := range []struct{ pred, off string }{{"x >", "offset 3"}, {"nope = 1", "offset 0"}, {"x = 'a'", "offset 4"}, {"frob(x)", "offset 0"}} {
		code, out, errs := runCLI(t, "scan", ds, "--where", bad.pred)
		if code != exitBadInput || out != "" || !strings.Contains(errs, bad.off) {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", bad.pred, code, out, errs)
		}
	}
	code, out, _ = runCLI(t, "seeds", ds, "--where", "x < 4 OR x > 195", "--zones", "--column", "x")
	if code != 0 || !strings.Contains(out, "seeded zones kept: 2 of 26") || !strings.Contains(out, "pruned") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestDeleteCLI_Where: delete --where commits deletion files for the
// matching rows; the scan no longer returns them; a predicate matching
// nothing commits nothing.
func TestDeleteCLI_Where(t *testing.T) {
	ds := seededDataset(t)
	code, out, errs := runCLI(t, "delete", ds, "--where", "frob(x) = 0")
	if code != exitBadInput || !strings.Contains(errs, "offset") {
		t.Fatalf("unknown function: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "delete", ds, "--where", "x BETWEEN 5 AND 7 OR x = 150")
	if code != 0 || !strings.Contains(out, "deleted 4 rows in 2 fragments") {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "scan", ds, "--where", "x BETWEEN 4 AND 8 OR x BETWEEN 149 AND 151", "--format", "csv", "--columns", "x")
	if code != 0 || out != "x\n4\n8\n149\n151\n" {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "delete", ds, "--where", "x = 5")
	if code != 0 || !strings.Contains(out, "nothing committed") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	entries, _ := os.ReadDir(filepath.Join(ds, "_deletions"))
	if len(entries) != 2 {
		t.Fatalf("%d deletion files", len(entries))
	}
}
