package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// §8.1: a shallow clone's first manifest is the source's with every file
// lacking a base_id pointed at a new base path {id 0, the source root, no
// name for main, is_dataset_root}, the version kept, tag cleared, and a
// Clone transaction (is_shallow, ref_version, ref_path) with read_version =
// the source version. Index segments get the base id too; every file
// resolves through it.
func TestShallowCloneManifestShape(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/scalar_indices.lance")
	srcFile := latestFile(t, src)
	dst := filepath.Join(t.TempDir(), "shallow.lance")
	res, err := Clone(ctx, src, dst, CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Snapshot.Dataset.Close()
	s := res.Snapshot
	m := s.Manifest()
	sm := srcFile.Manifest
	if m.GetVersion() != sm.GetVersion() || s.Path != manifest.ManifestPath(manifest.V2, sm.GetVersion()) {
		t.Errorf("clone version %d at %s, want %d (V2 name)", m.GetVersion(), s.Path, sm.GetVersion())
	}
	if len(m.GetBasePaths()) != 1 {
		t.Fatalf("base paths %v", m.GetBasePaths())
	}
	bp := m.GetBasePaths()[0]
	if bp.GetId() != 0 || bp.Name != nil || !bp.GetIsDatasetRoot() || bp.GetPath() != absPath(t, src) {
		t.Errorf("base path %v, want id 0, no name, dataset root %s", bp, absPath(t, src))
	}
	if m.Branch != nil || m.GetTag() != "" {
		t.Errorf("branch %v tag %q", m.Branch, m.GetTag())
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId == nil || df.GetBaseId() != 0 {
				t.Errorf("fragment %d file %s base_id %v", f.GetId(), df.GetPath(), df.BaseId)
			}
		}
		if d := f.GetDeletionFile(); d != nil && (d.BaseId == nil || d.GetBaseId() != 0) {
			t.Errorf("fragment %d deletion file base_id %v", f.GetId(), d.BaseId)
		}
	}
	if len(s.Indices()) != len(srcFile.Indices()) || len(s.Indices()) == 0 {
		t.Fatalf("indices %d, want %d", len(s.Indices()), len(srcFile.Indices()))
	}
	for _, idx := range s.Indices() {
		if idx.BaseId == nil || idx.GetBaseId() != 0 {
			t.Errorf("index %s base_id %v", idx.GetName(), idx.BaseId)
		}
	}
	if got := flagWords(m); got != [2]uint64{sm.GetReaderFeatureFlags() | 16, sm.GetWriterFeatureFlags() | 16} {
		t.Errorf("flags %v", got)
	}
	if m.GetMaxFragmentId() != sm.GetMaxFragmentId() || m.GetNextRowId() != sm.GetNextRowId() ||
		!proto.Equal(m.GetDataFormat(), sm.GetDataFormat()) || !proto.Equal(m.GetWriterVersion(), sm.GetWriterVersion()) {
		t.Errorf("copied fields differ from the source")
	}
	txn := s.File.Transaction
	c := txn.GetClone()
	if c == nil || !c.GetIsShallow() || c.GetRefVersion() != sm.GetVersion() || c.GetRefPath() != absPath(t, src) ||
		c.RefName != nil || c.BranchName != nil || txn.GetReadVersion() != sm.GetVersion() {
		t.Errorf("clone transaction %v", txn)
	}
	if _, err := os.Stat(filepath.Join(dst, "_transactions", m.GetTransactionFile())); err != nil {
		t.Errorf("transaction file: %v", err)
	}
	if n := assertFilesResolve(t, s); n < 5 {
		t.Errorf("only %d referenced files", n)
	}
	// Nothing but the manifest, transaction and hint is written under the clone.
	for k := range treeState(t, dst) {
		if k != "./" && k != "_versions/" && k != "_transactions/" && filepath.Dir(k) != "_versions" && filepath.Dir(k) != "_transactions" {
			t.Errorf("shallow clone wrote %s", k)
		}
	}
}

// §8.1: a clone's later writes put new files under the clone root with no
// base_id, while old files stay referenced through the base path.
func TestShallowCloneNewFragmentsLiveUnderClone(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/tags.lance")
	dst := filepath.Join(t.TempDir(), "c.lance")
	res, err := Clone(ctx, src, dst, CloneOptions{Source: Ref{Version: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Snapshot.Dataset.Close()
	// Append a fragment that reuses an existing data file of the source
	// (copied under the clone's data/) — the commit engine writes no base id.
	srcFrag := res.Snapshot.Manifest().GetFragments()[0]
	df := proto.Clone(srcFrag.GetFiles()[0]).(*pb.DataFile)
	df.BaseId = nil
	b, err := os.ReadFile(filepath.Join(src, "data", df.GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	df.Path = "copied-" + df.GetPath()
	if err := os.MkdirAll(filepath.Join(dst, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "data", df.GetPath()), b, 0o644); err != nil {
		t.Fatal(err)
	}
	frag := &pb.DataFragment{Files: []*pb.DataFile{df}, PhysicalRows: srcFrag.GetPhysicalRows()}
	txn := commit.NewAppend(2, []*pb.DataFragment{frag}).MarkSeedFiles(false, df.GetPath())
	cr, err := commit.Commit(ctx, res.Snapshot.Dataset.Store(), txn, commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := res.Snapshot.Dataset.Checkout(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != cr.Version || len(s.Manifest().GetFragments()) != 3 {
		t.Fatalf("after append: version %d, %d fragments", s.Version, len(s.Manifest().GetFragments()))
	}
	last := s.Manifest().GetFragments()[2]
	if last.GetFiles()[0].BaseId != nil {
		t.Errorf("new fragment has base_id %d", last.GetFiles()[0].GetBaseId())
	}
	if got := flagWords(s.Manifest()); got[0]&flags.BasePaths == 0 {
		t.Errorf("bit 4 lost after append: %v", got)
	}
	assertFilesResolve(t, s)
}

// §8.1 "ref_name = branch name of the source ref (tag → the tag's branch)":
// cloning by a tag on main records no name; by a tag on a branch, the
// branch's name, its root as the base path, and the tag's version.
func TestCloneByTagRecordsSourceBranch(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, src)
	if _, _, err := d.CreateBranch(ctx, "dev", Ref{Version: 2}, BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTag(ctx, "on-dev", Ref{Branch: "dev"}, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tag, name, path string
		version         uint64
		baseID          uint32
	}{
		{"release", "", absPath(t, src), 3, 0},
		{"on-dev", "dev", absPath(t, src) + "/tree/dev", 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "c.lance")
			res, err := d.CloneTo(ctx, openDS(t, dst), CloneOptions{Source: Ref{Tag: tt.tag}})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Snapshot.Manifest()
			bps := m.GetBasePaths()
			bp := bps[len(bps)-1]
			if m.GetVersion() != tt.version || bp.GetPath() != tt.path || bp.GetName() != tt.name || (bp.Name != nil) != (tt.name != "") || bp.GetId() != tt.baseID {
				t.Errorf("version %d base path %v", m.GetVersion(), bp)
			}
			c := res.Snapshot.File.Transaction.GetClone()
			if c.GetRefName() != tt.name || c.GetRefPath() != tt.path || c.GetRefVersion() != tt.version {
				t.Errorf("clone txn %v", c)
			}
			if m.Branch != nil {
				t.Errorf("clone has branch %q", m.GetBranch())
			}
			assertFilesResolve(t, res.Snapshot)
		})
	}
}

// §8.2: a deep clone copies every referenced file (data, deletion, index)
// to the same relative path, clears base paths / base ids / branch, and
// references nothing outside its root.
func TestDeepCloneCopiesEveryReferencedFile(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/scalar_indices.lance")
	srcFile := latestFile(t, src)
	dst := filepath.Join(t.TempDir(), "deep.lance")
	var reports []CopyProgress
	res, err := Clone(ctx, src, dst, CloneOptions{Deep: true, Progress: func(p CopyProgress) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Snapshot.Dataset.Close()
	s := res.Snapshot
	m := s.Manifest()
	if len(m.GetBasePaths()) != 0 || m.Branch != nil || flagWords(m) != flagWords(srcFile.Manifest) {
		t.Errorf("deep clone: bases %v branch %v flags %v (source %v)", m.GetBasePaths(), m.Branch, flagWords(m), flagWords(srcFile.Manifest))
	}
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			if df.BaseId != nil {
				t.Errorf("file %s keeps base_id", df.GetPath())
			}
		}
	}
	for _, idx := range s.Indices() {
		if idx.BaseId != nil {
			t.Errorf("index %s keeps base_id", idx.GetName())
		}
	}
	c := s.File.Transaction.GetClone()
	if c == nil || c.GetIsShallow() || c.GetRefVersion() != srcFile.Manifest.GetVersion() {
		t.Errorf("clone transaction %v", c)
	}
	n := assertFilesResolve(t, s)
	if res.Copied != n || res.Skipped != 0 || n == 0 {
		t.Errorf("copied %d skipped %d of %d files", res.Copied, res.Skipped, n)
	}
	last := reports[len(reports)-1]
	if len(reports) != n+1 || last.FilesDone != n || last.FilesTotal != n || last.BytesDone != last.BytesTotal || last.BytesDone != res.Bytes {
		t.Errorf("progress: %d reports, last %+v, bytes %d", len(reports), last, res.Bytes)
	}
	// The clone is self-contained: every file is under its root and equal
	// to the source's.
	srcState, dstState := treeState(t, src), treeState(t, dst)
	for _, f := range m.GetFragments() {
		for _, df := range f.GetFiles() {
			k := "data/" + df.GetPath()
			if dstState[k] == "" || dstState[k] != srcState[k] {
				t.Errorf("%s not copied byte for byte", k)
			}
		}
	}
	// Removing the source does not break the clone.
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	assertFilesResolve(t, s)
}

// §8.2 resumability: an interrupted deep clone is re-run; files already
// copied with the right size are skipped, a truncated one is copied again.
func TestDeepCloneResumesAfterInterruption(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/scalar_indices.lance")
	dst := filepath.Join(t.TempDir(), "deep.lance")
	cctx, cancel := context.WithCancel(ctx)
	var first []string
	_, err := Clone(cctx, src, dst, CloneOptions{Deep: true, Progress: func(p CopyProgress) {
		if p.File != "" {
			first = append(first, p.File)
		}
		if p.FilesDone == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted clone: %v", err)
	}
	if len(first) != 3 {
		t.Fatalf("copied %v before the interruption", first)
	}
	if _, err := os.Stat(filepath.Join(dst, "_versions")); !os.IsNotExist(err) {
		t.Fatalf("interrupted clone committed a manifest: %v", err)
	}
	// Corrupt one already-copied file: wrong size ⇒ copied again.
	if err := os.Truncate(filepath.Join(dst, filepath.FromSlash(first[0])), 1); err != nil {
		t.Fatal(err)
	}
	res, err := Clone(ctx, src, dst, CloneOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Snapshot.Dataset.Close()
	if res.Skipped != 2 {
		t.Errorf("resumed clone skipped %d files, want 2", res.Skipped)
	}
	n := assertFilesResolve(t, res.Snapshot)
	if res.Copied != n-2 {
		t.Errorf("resumed clone copied %d of %d", res.Copied, n)
	}
	// A third run finds the clone committed.
	if _, err := Clone(ctx, src, dst, CloneOptions{Deep: true}); !errors.Is(err, commit.ErrDatasetExists) {
		t.Errorf("clone onto an existing dataset: %v", err)
	}
}

// A deep clone of a branch version copies the files from every base the
// branch references (the parent's root and the branch's own root).
func TestDeepCloneOfBranchVersion(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, src)
	if _, _, err := d.CreateBranch(ctx, "dev", Ref{Version: 4}, BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "deep.lance")
	res, err := d.CloneTo(ctx, openDS(t, dst), CloneOptions{Source: Ref{Branch: "dev"}, Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Snapshot.Manifest()
	if m.GetVersion() != 4 || len(m.GetBasePaths()) != 0 || flagWords(m) != [2]uint64{1, 1} {
		t.Errorf("version %d bases %v flags %v", m.GetVersion(), m.GetBasePaths(), flagWords(m))
	}
	if n := assertFilesResolve(t, res.Snapshot); n != 4 || res.Copied != 4 {
		t.Errorf("%d files, %d copied; want 3 data files + 1 deletion file", n, res.Copied)
	}
}

// Cloning refuses a source that cannot be read, and a target that exists.
func TestCloneRefusals(t *testing.T) {
	ctx := context.Background()
	src := copyCorpus(t, "lance12/tags.lance")
	foreignCommit(t, src, func(m *pb.Manifest) { m.ReaderFeatureFlags |= 1 << 12; m.WriterFeatureFlags |= 1 << 12 })
	dst := filepath.Join(t.TempDir(), "c.lance")
	if _, err := Clone(ctx, src, dst, CloneOptions{}); !errors.Is(err, flags.ErrUnsupported) {
		t.Errorf("clone of an unreadable head: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("refused clone created %s", dst)
	}
	res, err := Clone(ctx, src, dst, CloneOptions{Source: Ref{Version: 2}})
	if err != nil {
		t.Fatal(err)
	}
	res.Snapshot.Dataset.Close()
	if _, err := Clone(ctx, src, dst, CloneOptions{Source: Ref{Version: 3}}); !errors.Is(err, commit.ErrDatasetExists) {
		t.Errorf("clone onto an existing dataset: %v", err)
	}
}
