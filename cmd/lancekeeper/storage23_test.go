package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Storage23_BackfillCompactVerify: on copies of Lance 12's 2.3
// corpus table (storage "next", spec lance-file-format-2.1.md §2.5),
// `seeds backfill --enable-zone-write-seeds` rewrites the fragments with
// v1 seeds (zone-seeds R56 activation, locators as in 2.2) and `seeds
// verify` proves them sound; `compact` rewrites the table; every data
// file stays 2.3 and data_format stays "2.3".
func TestCLI_Storage23_BackfillCompactVerify(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "lance-corpus", "lance12", "storage_2_3.lance")
	for _, c := range []struct {
		name string
		cmds [][]string
	}{
		{"backfill", [][]string{{"seeds", "backfill", "DS", "--enable-zone-write-seeds", "--rows-per-zone", "64", "--json"}, {"seeds", "verify", "DS"}}},
		{"compact", [][]string{{"compact", "DS", "--json"}, {"seeds", "verify", "DS"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := filepath.Join(t.TempDir(), "ds.lance")
			if err := os.CopyFS(ds, os.DirFS(src)); err != nil {
				t.Fatalf("the shared corpus is required: %v", err)
			}
			before := latest(t, ds).Manifest.GetVersion()
			for _, args := range c.cmds {
				args = append([]string(nil), args...)
				for i := range args {
					if args[i] == "DS" {
						args[i] = ds
					}
				}
				code, out, errs := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
				if c.name == "backfill" && args[1] == "verify" && !strings.Contains(out, "  v1  sound") {
					t.Fatalf("seeds verify shows no sound v1 seed after backfill:\n%s", out)
				}
			}
			head := latest(t, ds)
			if head.Manifest.GetVersion() == before {
				t.Fatal("nothing was committed")
			}
			if v := head.Manifest.GetDataFormat().GetVersion(); v != "2.3" {
				t.Fatalf("data_format %q after %s", v, c.name)
			}
			for _, fr := range head.Manifest.GetFragments() {
				for _, df := range fr.GetFiles() {
					if got := fmt.Sprintf("%d.%d", df.GetFileMajorVersion(), df.GetFileMinorVersion()); got != "2.3" {
						t.Fatalf("%s: data file %s is %s", c.name, df.GetPath(), got)
					}
				}
			}
		})
	}
}
