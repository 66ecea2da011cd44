package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
)

// flaggedDataset writes a dataset with the CLI (version 1, columns x and s)
// and adds version 2: version 1's manifest with the given flag words.
func flaggedDataset(t *testing.T, reader, writer uint64) string {
	t.Helper()
	ds := filepath.Join(t.TempDir(), "ds.lance")
	in := filepath.Join(t.TempDir(), "in.arrow")
	writeArrowFile(t, in, false, 0, 10)
	if code, _, errs := runCLI(t, "write", ds, "--from", in); code != exitOK {
		t.Fatalf("write: exit %d: %s", code, errs)
	}
	v1 := latest(t, ds)
	m := v1.Manifest
	m.Version = 2
	m.ReaderFeatureFlags, m.WriterFeatureFlags = reader, writer
	data, err := manifest.Encode(m, v1.IndexSection, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ds, filepath.FromSlash(manifest.ManifestPath(manifest.V2, 2))), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestSpec6_3_FlagRefusalExits3 runs every command that reads or writes a
// version against a head this build refuses: an unknown bit in both words
// (read and write refused), an unknown writer bit (write refused, reading
// allowed) and bit 16 set in the reader word only (half-set, R59: refused
// for reading and writing). Whatever the command, a feature-flag refusal
// is exit 3 with one line on stderr naming the flags; commands that apply
// no check (versions, inspect without --check, tag create: refs are JSON
// files only, §6.5) succeed.
func TestSpec6_3_FlagRefusalExits3(t *testing.T) {
	in := filepath.Join(t.TempDir(), "more.arrow")
	writeArrowFile(t, in, false, 100, 5)
	datasets := []struct {
		name           string
		reader, writer uint64
		readRefused    bool
	}{
		{"unknown bit 9 in both words", 1 << 9, 1 << 9, true},
		{"unknown writer bit 20", 0, 1 << 20, false},
		{"half-set bit 16", 1 << 16, 0, true},
	}
	commands := []struct {
		name string
		args func(ds string, t *testing.T) []string
		// reads: the command only reads, so it succeeds when reading is
		// allowed; otherwise it is refused whenever writing is.
		reads bool
		// never: the command applies no flag check at all.
		never bool
	}{
		{"write append", func(ds string, t *testing.T) []string { return []string{"write", ds, "--from", in, "--mode", "append"} }, false, false},
		{"seeds enable", func(ds string, t *testing.T) []string { return []string{"seeds", "enable", ds} }, false, false},
		{"restore", func(ds string, t *testing.T) []string { return []string{"restore", ds, "--version", "1"} }, false, false},
		{"clone", func(ds string, t *testing.T) []string { return []string{"clone", ds, filepath.Join(t.TempDir(), "c")} }, false, false},
		{"branch create", func(ds string, t *testing.T) []string { return []string{"branch", "create", ds, "b1"} }, false, false},
		{"inspect --check", func(ds string, t *testing.T) []string { return []string{"inspect", ds, "--check"} }, false, false},
		{"seeds", func(ds string, t *testing.T) []string { return []string{"seeds", ds} }, true, false},
		{"tag create", func(ds string, t *testing.T) []string { return []string{"tag", "create", ds, "t1"} }, false, true}, // §6.5: refs only
		{"inspect", func(ds string, t *testing.T) []string { return []string{"inspect", ds} }, false, true},
		{"versions", func(ds string, t *testing.T) []string { return []string{"versions", ds} }, false, true},
	}
	for _, d := range datasets {
		for _, c := range commands {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				ds := flaggedDataset(t, d.reader, d.writer)
				want := exitRefused
				if c.never || (c.reads && !d.readRefused) {
					want = exitOK
				}
				code, _, errs := runCLI(t, c.args(ds, t)...)
				if code != want {
					t.Fatalf("exit %d, want %d; stderr %q", code, want, errs)
				}
				if want == exitRefused && (strings.Count(strings.TrimRight(errs, "\n"), "\n") > 1 || !strings.Contains(strings.ToLower(errs), "flag")) {
					t.Fatalf("stderr does not name the refusal: %q", errs)
				}
				if want == exitRefused && c.name != "inspect --check" {
					if v := latest(t, ds).Manifest.GetVersion(); v != 2 {
						t.Fatalf("a refused command committed version %d", v)
					}
				}
			})
		}
	}
}

// TestCLI_HelpExits0: -h / --help prints the command's synopsis and options
// on stderr and exits 0, for every command and subcommand; an unknown flag
// is exit 2.
func TestCLI_HelpExits0(t *testing.T) {
	for _, args := range [][]string{
		{"inspect"}, {"versions"}, {"write"}, {"seeds"}, {"seeds", "enable"}, {"demo"}, {"clone"}, {"restore"},
		{"tag"}, {"tag", "create"}, {"tag", "update"}, {"tag", "delete"}, {"tag", "list"},
		{"branch"}, {"branch", "create"}, {"branch", "list"},
	} {
		for _, h := range []string{"-h", "--help"} {
			t.Run(strings.Join(args, " ")+" "+h, func(t *testing.T) {
				code, _, errs := runCLI(t, append(append([]string{}, args...), h)...)
				if code != exitOK || !strings.Contains(errs, "usage: lancekeeper "+strings.Join(args, " ")+" ") {
					t.Fatalf("exit %d, stderr %q", code, errs)
				}
				if len(args) == 2 && !strings.Contains(errs, "DATASET") {
					t.Fatalf("subcommand usage lacks its synopsis: %q", errs)
				}
			})
		}
	}
	if code, _, _ := runCLI(t, "inspect", "--no-such-flag", "x"); code != exitBadInput {
		t.Fatalf("unknown flag: exit %d", code)
	}
}
