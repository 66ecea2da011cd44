package main

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestCLI_FlagNamesAgreeAcrossCommands: every *_feature_flag_names key
// (write, clone, restore, inspect --json) spells the bits the same way,
// lower case as in the corpus expect files (docs/cli.md).
func TestCLI_FlagNamesAgreeAcrossCommands(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "ds.lance")
	in := filepath.Join(t.TempDir(), "in.arrow")
	writeArrowFile(t, in, false, 0, 10)
	type names struct {
		Names []string `json:"reader_feature_flag_names"`
	}
	runJSON := func(args ...string) []string {
		t.Helper()
		code, out, errs := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var n names
		mustJSON(t, out, &n)
		return n.Names
	}
	inspectNames := func(dir string) []string { return runJSON("inspect", dir, "--json", "--no-rows") }
	for _, tc := range []struct {
		what string
		got  func() ([]string, string)
		want string
	}{
		{"write", func() ([]string, string) {
			return runJSON("write", ds, "--from", in, "--seeds", "all", "--enable-zone-write-seeds", "--json"), ds
		}, "flag_zone_write_seeds"},
		{"restore", func() ([]string, string) { return runJSON("restore", ds, "--version", "1", "--json"), ds }, "flag_zone_write_seeds"},
		{"clone", func() ([]string, string) {
			dst := filepath.Join(t.TempDir(), "c.lance")
			return runJSON("clone", ds, dst, "--json"), dst
		}, "base_paths"},
	} {
		got, dir := tc.got()
		if want := inspectNames(dir); !slices.Equal(got, want) || !slices.Contains(got, tc.want) {
			t.Errorf("%s --json names %v; inspect --json says %v (want %q among them)", tc.what, got, want, tc.want)
		}
	}
}
