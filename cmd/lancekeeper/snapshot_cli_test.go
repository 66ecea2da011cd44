package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// Tests of the tag, branch, clone and restore subcommands (issue 7 §5).

// exampleCopy copies examples/tags.lance (Lance 12's tags dataset: v1..v4,
// tags first→1, release→3) into a temp dir.
func exampleCopy(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "tags.lance")
	if err := peerlance.CopyDir(filepath.Join(repoRoot(t), "examples", "tags.lance"), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
}

func TestCLI_TagLifecycle(t *testing.T) {
	ds := exampleCopy(t)
	code, out, errs := runCLI(t, "tag", "create", ds, "v2", "--version", "2", "--meta", "k=v", "--json")
	if code != exitOK {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	var tg tagJSON
	mustJSON(t, out, &tg)
	if tg.Name != "v2" || tg.Version != 2 || tg.Branch != nil || tg.Metadata["k"] != "v" || tg.CreatedAt == nil || *tg.CreatedAt != *tg.UpdatedAt {
		t.Errorf("create output %+v", tg)
	}
	if code, _, errs := runCLI(t, "tag", "create", ds, "v2"); code != exitBadInput || !strings.Contains(errs, "tag v2 already exists") {
		t.Errorf("duplicate: exit %d: %s", code, errs)
	}
	code, out, _ = runCLI(t, "tag", "update", ds, "v2", "--tag", "release", "--json")
	var up tagJSON
	mustJSON(t, out, &up)
	if code != exitOK || up.Version != 3 || *up.CreatedAt != *tg.CreatedAt {
		t.Errorf("update: exit %d %+v", code, up)
	}
	code, out, _ = runCLI(t, "tag", "list", ds)
	if code != exitOK || !strings.Contains(out, "v2       main    3") || !strings.Contains(out, "first") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "tag", "delete", ds, "v2"); code != exitOK {
		t.Errorf("delete: exit %d", code)
	}
	for _, args := range [][]string{
		{"tag", "delete", ds, "v2"},                                    // missing
		{"tag", "create", ds, "a..b"},                                  // bad name
		{"tag", "create", ds, "x", "--version", "1", "--tag", "first"}, // both
		{"tag", "create", ds, "x", "--version", "99"},                  // no such version
		{"tag", "frobnicate", ds},                                      // bad subcommand
		{"tag", "list"},                                                // no dataset
		{"tag"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", args, code, exitBadInput)
		}
	}
	var list []tagJSON
	_, out, _ = runCLI(t, "tag", "list", ds, "--json")
	mustJSON(t, out, &list)
	if len(list) != 2 {
		t.Errorf("list --json: %+v", list)
	}
}

func TestCLI_BranchCreateAndList(t *testing.T) {
	ds := exampleCopy(t)
	code, out, errs := runCLI(t, "branch", "create", ds, "feat/x", "--version", "2", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var b branchJSON
	mustJSON(t, out, &b)
	if b.Name != "feat/x" || b.ParentBranch != nil || b.ParentVersion != 2 || b.LatestVersion == nil || *b.LatestVersion != 2 || len(b.VersionMapping) != 1 {
		t.Errorf("create output %+v", b)
	}
	if _, err := os.Stat(filepath.Join(ds, "_refs", "branches", "feat%2Fx.json")); err != nil {
		t.Error(err)
	}
	if code, _, errs := runCLI(t, "branch", "create", ds, "child", "--from", "feat/x"); code != exitOK {
		t.Fatalf("child: exit %d: %s", code, errs)
	}
	var list []branchJSON
	code, out, _ = runCLI(t, "branch", "list", ds, "--json")
	mustJSON(t, out, &list)
	if code != exitOK || len(list) != 2 || list[0].Name != "child" || *list[0].ParentBranch != "feat/x" || len(list[0].VersionMapping) != 2 {
		t.Errorf("list: %+v", list)
	}
	for _, args := range [][]string{
		{"branch", "create", ds, "feat/x"},
		{"branch", "create", ds, "main"},
		{"branch", "create", ds, "y", "--from", "nope"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	// The branch is readable through inspect and versions.
	if code, out, errs := runCLI(t, "versions", ds, "--branch", "feat/x"); code != exitOK || !strings.Contains(out, "2 ") {
		t.Errorf("versions --branch: exit %d %s %s", code, out, errs)
	}
}

func TestCLI_CloneShallowAndDeep(t *testing.T) {
	ds := exampleCopy(t)
	sh := filepath.Join(t.TempDir(), "shallow")
	code, out, errs := runCLI(t, "clone", ds, sh, "--tag", "release", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c cloneJSON
	mustJSON(t, out, &c)
	if c.Version != 3 || c.ReaderFlags&flags.BasePaths == 0 || len(c.BasePaths) != 1 || c.Deep {
		t.Errorf("shallow: %+v", c)
	}
	dp := filepath.Join(t.TempDir(), "deep")
	code, out, errs = runCLI(t, "clone", ds, dp, "--deep", "--progress", "--json")
	if code != exitOK {
		t.Fatalf("deep: exit %d: %s", code, errs)
	}
	mustJSON(t, out, &c)
	if c.Version != 4 || c.ReaderFlags&flags.BasePaths != 0 || len(c.BasePaths) != 0 || c.FilesCopied == 0 || !strings.Contains(errs, "100%") {
		t.Errorf("deep: %+v, stderr %q", c, errs)
	}
	if code, _, errs := runCLI(t, "clone", ds, dp); code != exitBadInput {
		t.Errorf("clone onto an existing dataset: exit %d: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "clone", ds); code != exitBadInput {
		t.Errorf("missing DST: exit %d", code)
	}
}

func TestCLI_RestoreAndRefusals(t *testing.T) {
	ds := exampleCopy(t)
	code, out, errs := runCLI(t, "restore", ds, "--tag", "first", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r restoreJSON
	mustJSON(t, out, &r)
	if r.Version != 5 || r.RestoredVersion != 1 || r.ReadVersion != 4 || r.Branch != nil || r.ReaderFlags != 0 {
		t.Errorf("restore output %+v", r)
	}
	for _, args := range [][]string{
		{"restore", ds},
		{"restore", ds, "--version", "1", "--tag", "first"},
		{"restore", ds, "--version", "42"},
	} {
		if code, _, _ := runCLI(t, args...); code != exitBadInput {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	// A head with an unknown writer bit: restore (a write) is refused with
	// exit 3 and the flag named, reading still works.
	f, err := os.ReadFile(filepath.Join(ds, "_versions", manifest.ManifestName(manifest.V2, 5)))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := manifest.Decode("v5", f)
	if err != nil {
		t.Fatal(err)
	}
	m := mf.Manifest
	m.Version = 6
	m.WriterFeatureFlags |= 1 << 14
	b, err := manifest.Encode(m, mf.IndexSection, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ds, "_versions", manifest.ManifestName(manifest.V2, 6)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "restore", ds, "--version", "2")
	if code != exitRefused || !strings.Contains(errs, "MANAGED_BLOBS") {
		t.Errorf("restore onto an unwritable head: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "clone", ds, filepath.Join(t.TempDir(), "c")); code != exitRefused {
		t.Errorf("clone of an unwritable head: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "tag", "create", ds, "still-ok"); code != exitOK {
		t.Errorf("tagging needs no write check: exit %d: %s", code, errs)
	}
}
