package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestR61_V1SeedInUnflaggedTableIsUnusable: a table whose manifest lacks
// FLAG_ZONE_WRITE_SEEDS but references a data file with a v1 seed (written
// by a careless foreign writer): `seeds` reports the seed unusable (E26)
// and the pruning preview scans that fragment instead of using the seed.
func TestR61_V1SeedInUnflaggedTableIsUnusable(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	good := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, good, 0, 100)
	flagged := filepath.Join(tmp, "flagged")
	if code, _, errs := runCLI(t, "write", flagged, "--from", good, "--seeds", "x", "--rows-per-zone", "10", "--enable-zone-write-seeds"); code != 0 {
		t.Fatal(errs)
	}
	src := latest(t, flagged)
	// Copy the seeded data file into a new dataset whose manifest lies
	// about it (marked as carrying no v1 seed, so no bits are set).
	foreign := filepath.Join(tmp, "foreign")
	df := src.Manifest.GetFragments()[0].GetFiles()[0]
	b, err := os.ReadFile(filepath.Join(flagged, "data", df.GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(foreign, "data"), 0o755)
	os.WriteFile(filepath.Join(foreign, "data", df.GetPath()), b, 0o644)
	st, err := store.Open(ctx, foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	txn := commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{src.Manifest.GetFragments()[0]}, Schema: src.Manifest.GetFields()})
	txn.MarkSeedFiles(false, df.GetPath())
	if _, err := commit.Commit(ctx, st, txn, commit.Options{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		dir     string
		valid   bool
		scanned int
	}{{flagged, true, 0}, {foreign, false, 1}} {
		code, out, errs := runCLI(t, "seeds", tc.dir, "--json", "--where", "x = 42")
		if code != 0 {
			t.Fatal(errs)
		}
		var rep seedsJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		s := rep.Files[0].Seeds[0]
		if s.Valid != tc.valid || s.Version == nil || *s.Version != 1 {
			t.Fatalf("%s: seed %+v", tc.dir, s)
		}
		if !tc.valid && !strings.Contains(s.Error, "E26") {
			t.Fatalf("want E26, got %q", s.Error)
		}
		if rep.Prune.FragmentsScanned != tc.scanned {
			t.Fatalf("%s: prune %+v", tc.dir, rep.Prune)
		}
		if tc.valid && (rep.Prune.ZonesTotal != 10 || rep.Prune.ZonesKept != 1) {
			t.Fatalf("prune %+v", rep.Prune)
		}
	}
}

func TestSeedsCLI_TextAndEnable(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeCSVFile(t, in, 0, 50)
	ds := filepath.Join(tmp, "ds")
	if code, _, errs := runCLI(t, "write", ds, "--from", in); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ := runCLI(t, "seeds", "enable", ds)
	if code != 0 || !strings.Contains(out, "version 2 activates FLAG_ZONE_WRITE_SEEDS") {
		t.Fatalf("exit %d: %s", code, out)
	}
	m := latest(t, ds).Manifest
	if m.GetReaderFeatureFlags() != 65536 || m.GetWriterFeatureFlags() != 65536 {
		t.Fatalf("flags %d/%d", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	code, out, _ = runCLI(t, "seeds", "enable", ds)
	if code != 0 || !strings.Contains(out, "already set") || latest(t, ds).Manifest.GetVersion() != 2 {
		t.Fatalf("second enable: %d %s", code, out)
	}
	// Seeds now need no opt-in.
	if code, _, errs := runCLI(t, "write", ds, "--from", in, "--seeds", "all", "--rows-per-zone", "8"); code != 0 {
		t.Fatal(errs)
	}
	code, out, _ = runCLI(t, "seeds", ds, "--where", "s = 's010'", "--zones", "--column", "s")
	if code != 0 || !strings.Contains(out, "FLAG_ZONE_WRITE_SEEDS set") || !strings.Contains(out, "seeded zones kept: 1 of 7") ||
		!strings.Contains(out, `"s008"`) || !strings.Contains(out, "fragments kept:    2 of 2") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// Reading never writes (R56).
	before := listTree(t, ds)
	runCLI(t, "seeds", ds, "--json")
	if strings.Join(listTree(t, ds), ",") != strings.Join(before, ",") {
		t.Fatal("seeds wrote files")
	}
	for _, bad := range [][]string{{"seeds", ds, "--where", "x >"}, {"seeds", ds, "--where", "nope = 1"}, {"seeds", ds, "--where", "x = 'a'"},
		{"seeds", filepath.Join(tmp, "missing")}, {"seeds", "enable", filepath.Join(tmp, "missing")}} {
		if code, _, errs := runCLI(t, bad...); code != exitBadInput {
			t.Fatalf("%v: exit %d %s", bad, code, errs)
		}
	}
}
