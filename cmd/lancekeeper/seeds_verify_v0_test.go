package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestSeedsVerify_R30_CorpusV0AlteredBoundIsUnsound (issue 12 item 3): in a
// copy of the corpus table seeds_v0_zonemap, one bound of a v0 seed Lance
// 12 wrote is moved so that it excludes a real value (the int32 column's
// max of a zone lowered below the zone's real maximum, the seed rewritten
// as v0 in place): the seed still validates (`seeds` reports no invalid
// seed), but `seeds verify` exits 4 naming the column, the zone and the
// value, in text and JSON.
func TestSeedsVerify_R30_CorpusV0AlteredBoundIsUnsound(t *testing.T) {
	src := filepath.Join(repoRoot(t), "..", "shared", "lance-corpus", "lance12", "seeds_v0_zonemap.lance")
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("LANCEKEEPER_REQUIRE_PEER") == "1" {
			t.Fatalf("corpus missing: %v", err)
		}
		t.Skipf("corpus missing: %v", err)
	}
	ds := filepath.Join(t.TempDir(), "seeds.lance")
	if err := peerlance.CopyDir(src, ds); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(ds, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, _ := filepath.Glob(filepath.Join(ds, "data", "*.lance"))
	for _, path := range files {
		f, err := datafile.Open(ctx, st.Bucket(), st.BucketKey(filepath.Base(path)), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		infos, err := f.Seeds(ctx, seedio.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, si := range infos {
			if si.Column != "i32" || si.Err != nil {
				continue
			}
			// The seed is Lance's Arrow IPC stream: the max column's
			// values are consecutive little-endian int32s. Find those of
			// three zones with known bounds (a unique byte run) and lower
			// the first one's max by one, in place.
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			buf := raw[si.Buffer.Pos : si.Buffer.Pos+si.Buffer.Len]
			zone, at := -1, -1
			zs := si.Seed.Zones
			for z := 0; z+3 <= len(zs) && zone < 0; z++ {
				var needle []byte
				ok := true
				for k := z; k < z+3; k++ {
					mx, isInt := zs[k].Max.(int32)
					if !isInt {
						ok = false
						break
					}
					needle = binary.LittleEndian.AppendUint32(needle, uint32(mx))
				}
				mn, isInt := zs[z].Min.(int32)
				if !ok || !isInt || mn >= zs[z].Max.(int32) || bytes.Count(buf, needle) != 1 {
					continue
				}
				zone, at = z, bytes.Index(buf, needle)
			}
			if zone < 0 {
				t.Fatalf("%s: no zone of i32 whose max can be located in the seed", path)
			}
			binary.LittleEndian.PutUint32(buf[at:], uint32(zs[zone].Max.(int32)-1))
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, _ := runCLI(t, "seeds", ds, "--column", "i32")
			if code != 0 || strings.Contains(out, "invalid") {
				t.Fatalf("seeds: exit %d\n%s", code, out)
			}
			code, out, errs := runCLI(t, "seeds", "verify", ds, "--column", "i32")
			if code != exitSeedsUnsound || !strings.Contains(out, "i32  v0  unsound: zone ") {
				t.Fatalf("exit %d:\n%s%s", code, out, errs)
			}
			code, out, _ = runCLI(t, "seeds", "verify", ds, "--json", "--column", "i32")
			var rep seedsVerifyJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitSeedsUnsound || rep.Unsound != 1 {
				t.Fatalf("exit %d %v:\n%s", code, err, out)
			}
			for _, fl := range rep.Files {
				for _, v := range fl.Seeds {
					if v.Status == "unsound" && (v.Zone == nil || *v.Zone != zone || v.Check != "max") {
						t.Fatalf("verdict %+v, want zone %d max", v, zone)
					}
				}
			}
			t.Logf("zone %d of i32 in %s: %s", zone, filepath.Base(path), strings.TrimSpace(out[:min(len(out), 200)]))
			return
		}
	}
	t.Fatal("no i32 seed in the corpus table")
}
