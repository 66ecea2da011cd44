package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestSeedsVerify_R30_AlteredBoundIsUnsound: seeds verify proves our own
// v1 seeds sound (exit 0), and after one bound of one zone is changed in
// the data file so that it excludes a real value (the seed still
// validates), names that zone and value with exit 4 (issue 12 item 3).
func TestSeedsVerify_R30_AlteredBoundIsUnsound(t *testing.T) {
	for _, version := range []string{"2.0", "2.1", "2.2"} {
		t.Run(version, func(t *testing.T) {
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in.arrow")
			writeArrowFile(t, in, false, 0, 100)
			ds := filepath.Join(tmp, "ds")
			if code, _, errs := runCLI(t, "write", ds, "--from", in, "--data-storage-version", version, "--seeds", "all",
				"--rows-per-zone", "16", "--enable-zone-write-seeds"); code != 0 {
				t.Fatal(errs)
			}
			code, out, errs := runCLI(t, "seeds", "verify", ds)
			if code != 0 || !strings.Contains(out, "2 sound, 0 unsound") {
				t.Fatalf("exit %d:\n%s%s", code, out, errs)
			}
			// Lower zone 3's max of the int64 column x by one: its real max
			// (row 63 holds 63) is now outside [min, max].
			m := latest(t, ds).Manifest
			path := filepath.Join(ds, "data", m.GetFragments()[0].GetFiles()[0].GetPath())
			ctx := context.Background()
			st, err := store.Open(ctx, filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(filepath.Base(path)), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
			if err != nil {
				t.Fatal(err)
			}
			var si *datafile.SeedInfo
			for i := range infos {
				if infos[i].Column == "x" {
					si = &infos[i]
				}
			}
			if si == nil || si.Err != nil {
				t.Fatalf("no usable x seed among %d", len(infos))
			}
			s := *si.Seed
			s.Zones = append([]seedio.Zone(nil), s.Zones...)
			s.Zones[3].Max = s.Zones[3].Max.(int64) - 1
			b, err := seedio.Encode(&s)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(b)) != si.Buffer.Len {
				t.Fatalf("re-encoded seed is %d bytes, the buffer %d", len(b), si.Buffer.Len)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copy(raw[si.Buffer.Pos:], b)
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			// The altered seed still validates…
			code, out, _ = runCLI(t, "seeds", ds, "--column", "x")
			if code != 0 || strings.Contains(out, "invalid") {
				t.Fatalf("seeds: exit %d\n%s", code, out)
			}
			// …but verify refutes it.
			code, out, _ = runCLI(t, "seeds", "verify", ds)
			if code != exitSeedsUnsound || !strings.Contains(out, "x  v1  unsound: zone 3 max: real 63, seed 62") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			code, out, _ = runCLI(t, "seeds", "verify", ds, "--json", "--column", "x")
			var rep seedsVerifyJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitSeedsUnsound || rep.Unsound != 1 || rep.Sound != 0 {
				t.Fatalf("exit %d %v:\n%s", code, err, out)
			}
			v := rep.Files[0].Seeds[0]
			if v.Status != "unsound" || v.Zone == nil || *v.Zone != 3 || v.Check != "max" {
				t.Fatalf("verdict %+v", v)
			}
			if code, _, _ := runCLI(t, "seeds", "verify", filepath.Join(tmp, "missing")); code != exitBadInput {
				t.Fatalf("missing dataset: exit %d", code)
			}
		})
	}
}

// TestSeedsVerify_CorpusV0SeedsAreSound: the v0 seeds Lance 12 wrote into
// the 2.2 files of the corpus table seeds_v0_zonemap are proven sound at
// every version (R62: v0 seeds need no flag).
func TestSeedsVerify_CorpusV0SeedsAreSound(t *testing.T) {
	ds := filepath.Join(repoRoot(t), "..", "shared", "lance-corpus", "lance12", "seeds_v0_zonemap.lance")
	if _, err := os.Stat(ds); err != nil {
		if os.Getenv("LANCEKEEPER_REQUIRE_PEER") == "1" {
			t.Fatalf("corpus missing: %v", err)
		}
		t.Skipf("corpus missing: %v", err)
	}
	code, out, errs := runCLI(t, "seeds", "verify", ds)
	if code != exitOK || !strings.Contains(out, "24 sound, 0 unsound, 0 unusable, 0 unverified") || !strings.Contains(out, "lst  v0  sound") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
}
