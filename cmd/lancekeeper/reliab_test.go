package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
