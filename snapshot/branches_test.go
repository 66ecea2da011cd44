package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
)

// §7.2: a branch we create from main v2 of Lance 12's branches.lance has
// the same first manifest as Lance 12's own branch "dev" (forked at main
// v2), apart from the branch name, the root path and the commit-specific
// fields (timestamp, transaction, writer).
func TestBranchManifestMatchesLance12Branch(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/branches.lance")
	lance := readManifestFile(t, filepath.Join(dir, "tree", "dev", "_versions", manifest.ManifestName(manifest.V2, 2)))
	d := openDS(t, dir)
	_, s, err := d.CreateBranch(ctx, "dev2", Ref{Version: 2}, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ours := s.Manifest()
	lm := lance.Manifest
	if s.Path != manifest.ManifestPath(manifest.V2, 2) || ours.GetVersion() != lm.GetVersion() {
		t.Errorf("our branch starts at %s version %d, Lance's at version %d", s.Path, ours.GetVersion(), lm.GetVersion())
	}
	if ours.GetBranch() != "dev2" || lm.GetBranch() != "dev" {
		t.Errorf("branch fields %q / %q", ours.GetBranch(), lm.GetBranch())
	}
	if flagWords(ours) != flagWords(lm) {
		t.Errorf("flags %v, Lance %v", flagWords(ours), flagWords(lm))
	}
	if len(ours.GetFragments()) != len(lm.GetFragments()) {
		t.Fatalf("fragments %d vs %d", len(ours.GetFragments()), len(lm.GetFragments()))
	}
	for i := range lm.GetFragments() {
		if !proto.Equal(ours.GetFragments()[i], lm.GetFragments()[i]) {
			t.Errorf("fragment %d differs:\n%v\nLance:\n%v", i, ours.GetFragments()[i], lm.GetFragments()[i])
		}
	}
	ob, lb := ours.GetBasePaths(), lm.GetBasePaths()
	if len(ob) != 1 || len(lb) != 1 || ob[0].GetId() != lb[0].GetId() || (ob[0].Name != nil) != (lb[0].Name != nil) ||
		ob[0].GetIsDatasetRoot() != lb[0].GetIsDatasetRoot() || ob[0].GetPath() != absPath(t, dir) {
		t.Errorf("base paths %v, Lance %v", ob, lb)
	}
	if ours.GetMaxFragmentId() != lm.GetMaxFragmentId() || ours.GetNextRowId() != lm.GetNextRowId() ||
		!proto.Equal(ours.GetDataFormat(), lm.GetDataFormat()) || len(ours.GetFields()) != len(lm.GetFields()) {
		t.Errorf("copied fields differ from Lance's branch")
	}
	oc, lc := s.File.Transaction.GetClone(), lance.Transaction.GetClone()
	if oc.GetIsShallow() != lc.GetIsShallow() || oc.GetRefVersion() != lc.GetRefVersion() || (oc.RefName != nil) != (lc.RefName != nil) ||
		oc.GetBranchName() != "dev2" || oc.GetRefPath() != absPath(t, dir) || s.File.Transaction.GetReadVersion() != lance.Transaction.GetReadVersion() {
		t.Errorf("clone transaction %v, Lance %v", oc, lc)
	}
	if _, err := os.Stat(filepath.Join(dir, "tree", "dev2", "_transactions", ours.GetTransactionFile())); err != nil {
		t.Errorf("branch transaction file: %v", err)
	}
	assertFilesResolve(t, s)
}

// §7.2: the ref file — JSON shape, %2F in the name, tree/ with real
// directories, identifier = parent's mapping + [parent_version, 32 hex],
// createAt in seconds, manifestSize of the parent's manifest; listing and
// reading the branch's versions.
func TestBranchCreateRefFile(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/branches.lance")
	hist := manifestBytes(t, dir)
	d := openDS(t, dir)
	now := time.Date(2026, 12, 1, 8, 0, 0, 999, time.UTC)
	d.SetClock(func() time.Time { return now })
	br, s, err := d.CreateBranch(ctx, "feat/x", Ref{Branch: "dev", Version: 3}, BranchOptions{Metadata: map[string]string{"owner": "me"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "_refs", "branches", "feat%2Fx.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBranch("feat/x", raw)
	if err != nil {
		t.Fatal(err)
	}
	devRef, err := d.GetBranch(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if got.ParentBranch != "dev" || got.ParentVersion != 3 || got.CreateAt != now.Unix() || got.ManifestSize != 752 ||
		got.Metadata["owner"] != "me" || !got.HasIdentifier || len(got.Identifier) != 2 ||
		got.Identifier[0] != devRef.Identifier[0] || got.Identifier[1].Version != 3 ||
		!regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got.Identifier[1].ID) {
		t.Errorf("ref %+v", got)
	}
	if string(EncodeBranch(br)) != string(raw) {
		t.Errorf("returned branch differs from the file")
	}
	if _, err := os.Stat(filepath.Join(dir, "tree", "feat", "x", "_versions", manifest.ManifestName(manifest.V2, 3))); err != nil {
		t.Errorf("branch data not in tree/feat/x: %v", err)
	}
	// Base path: the parent branch's root, named after it, id 1 (dev's own is 0).
	bps := s.Manifest().GetBasePaths()
	if len(bps) != 2 || bps[1].GetId() != 1 || bps[1].GetName() != "dev" || bps[1].GetPath() != absPath(t, dir)+"/tree/dev" {
		t.Errorf("base paths %v", bps)
	}
	if got := flagWords(s.Manifest()); got != [2]uint64{16, 16} {
		t.Errorf("flags %v", got)
	}
	// Files of dev v3 live in main's data/ (base 0) and dev's data/ (base 1),
	// except the corpus base path, which names the machine Lance ran on.
	for _, f := range s.Manifest().GetFragments() {
		for _, df := range f.GetFiles() {
			if df.GetBaseId() == 1 {
				if _, err := os.Stat(filepath.Join(dir, "tree", "dev", "data", df.GetPath())); err != nil {
					t.Errorf("base 1 file %s: %v", df.GetPath(), err)
				}
			}
		}
	}
	brs, err := d.ListBranches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(brs) != 2 || brs[0].Name != "dev" || brs[1].Name != "feat/x" {
		t.Errorf("branches %+v", brs)
	}
	vs, err := d.Versions(ctx, "feat/x")
	if err != nil || len(vs) != 1 || vs[0].Version != 3 {
		t.Errorf("versions of feat/x: %v %v", vs, err)
	}
	// Duplicate and bad names.
	if _, _, err := d.CreateBranch(ctx, "feat/x", Ref{}, BranchOptions{}); !errors.Is(err, manifest.ErrRefExists) {
		t.Errorf("duplicate branch: %v", err)
	}
	for _, bad := range []string{"main", "a..b", "x.lock", "/a"} {
		if _, _, err := d.CreateBranch(ctx, bad, Ref{}, BranchOptions{}); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("branch %q: %v", bad, err)
		}
	}
	assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
}

// A tree/ directory left by an interrupted create (no ref file) is
// reported, not overwritten.
func TestBranchCreateRefusesLeftoverTree(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, dir)
	if _, _, err := d.CreateBranch(ctx, "b1", Ref{}, BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "_refs", "branches", "b1.json")); err != nil {
		t.Fatal(err)
	}
	hist := manifestBytes(t, dir)
	_, _, err := d.CreateBranch(ctx, "b1", Ref{}, BranchOptions{})
	if !errors.Is(err, manifest.ErrRefExists) {
		t.Fatalf("err = %v", err)
	}
	assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
}

// §7.2 legacy refs without an identifier: the lineage of a child is
// synthesized deterministically.
func TestBranchLineageOfLegacyParent(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, dir)
	if _, _, err := d.CreateBranch(ctx, "old", Ref{Version: 2}, BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	legacy := Branch{ParentVersion: 2, CreateAt: 1, ManifestSize: 1}
	if err := os.WriteFile(filepath.Join(dir, "_refs", "branches", "old.json"), EncodeBranch(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := d.lineage(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d.lineage(ctx, "old")
	if len(a) != 1 || a[0].Version != 2 || a[0] != b[0] {
		t.Fatalf("lineage %v / %v", a, b)
	}
	br, _, err := d.CreateBranch(ctx, "new", Ref{Branch: "old"}, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(br.Identifier) != 2 || br.Identifier[0] != a[0] {
		t.Errorf("identifier %v", br.Identifier)
	}
	// A cycle between legacy refs is an error, not a hang.
	cyc := Branch{ParentBranch: "old", ParentVersion: 2}
	if err := os.WriteFile(filepath.Join(dir, "_refs", "branches", "old.json"), EncodeBranch(Branch{ParentBranch: "cyc", ParentVersion: 2}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_refs", "branches", "cyc.json"), EncodeBranch(cyc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.lineage(ctx, "old"); !errors.Is(err, ErrInvalidRef) {
		t.Errorf("cycle: %v", err)
	}
}

// R58 across a whole session: branch, tag, clone and restore operations
// never rewrite any manifest that existed before them.
func TestR58_HistoricalManifestsAreNeverRewritten(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/branches.lance")
	activateSeeds(t, dir)
	d := openDS(t, dir)
	ops := []struct {
		name string
		run  func() error
	}{
		{"create branch", func() error { _, _, err := d.CreateBranch(ctx, "b", Ref{Version: 1}, BranchOptions{}); return err }},
		{"create tag", func() error { _, err := d.CreateTag(ctx, "t", Ref{Branch: "dev"}, nil); return err }},
		{"update tag", func() error { _, err := d.UpdateTag(ctx, "t", Ref{Version: 2}); return err }},
		{"restore main", func() error { _, _, err := d.Restore(ctx, Ref{Version: 1}, RestoreOptions{}); return err }},
		{"restore branch by tag", func() error {
			if _, err := d.UpdateTag(ctx, "t", Ref{Branch: "b"}); err != nil {
				return err
			}
			_, _, err := d.Restore(ctx, Ref{Tag: "t"}, RestoreOptions{})
			return err
		}},
		{"shallow clone", func() error {
			_, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "s")), CloneOptions{})
			return err
		}},
		{"deep clone", func() error {
			_, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "d")), CloneOptions{Deep: true, Source: Ref{Branch: "b"}})
			return err
		}},
		{"delete tag", func() error { return d.DeleteTag(ctx, "t") }},
		{"refused restore", func() error {
			withStableRowIDs(t, dir)
			if _, _, err := d.Restore(ctx, Ref{Version: 1}, RestoreOptions{}); err == nil {
				return errors.New("restore dropping stable row ids succeeded")
			}
			return nil
		}},
	}
	for _, op := range ops {
		before := manifestBytes(t, dir)
		if err := op.run(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		after := manifestBytes(t, dir)
		assertHistoryUnchanged(t, before, after)
		if t.Failed() {
			t.Fatalf("after %s", op.name)
		}
	}
	// Branch b forked from main v1, before the activation, so its restored
	// head must not have bit 16: stickiness follows lineage, not the dataset.
	s, err := d.Checkout(ctx, Options{Ref: Ref{Branch: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(s.Manifest()); got[0]&(1<<16) != 0 {
		t.Errorf("branch forked before activation gained bit 16: %v", got)
	}
}
