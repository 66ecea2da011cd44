package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemo_WritesActivatesAndShows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	for run := 0; run < 2; run++ { // a re-run recreates the dataset
		code, out, errs := runCLI(t, "demo", dir, "--rows", "40000")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, errs)
		}
		for _, want := range []string{"version 1: 20000 rows", "version 2 activates FLAG_ZONE_WRITE_SEEDS", "version 3: 20000 rows",
			"flag_zone_write_seeds", "pruning preview for id BETWEEN", "seeded zones kept: 1 of"} {
			if !strings.Contains(out, want) {
				t.Fatalf("run %d: output lacks %q:\n%s", run, want, out)
			}
		}
		if run == 1 && !strings.Contains(out, "removed the previous demo dataset") {
			t.Fatal("re-run did not say it recreated the dataset")
		}
		if m := latest(t, dir).Manifest; m.GetVersion() != 3 || m.GetReaderFeatureFlags() != 65536 {
			t.Fatalf("version %d flags %d", m.GetVersion(), m.GetReaderFeatureFlags())
		}
	}
	// A non-empty directory that is not a Lance dataset is never deleted.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "precious.txt"), []byte("x"), 0o644)
	if code, _, errs := runCLI(t, "demo", other); code != exitBadInput || !strings.Contains(errs, "refusing") {
		t.Fatalf("exit %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(other, "precious.txt")); err != nil {
		t.Fatal("demo deleted a foreign directory")
	}
}
