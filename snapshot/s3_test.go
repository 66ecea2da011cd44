package snapshot

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// uploadDir copies a local dataset directory into an S3 prefix.
func uploadDir(t *testing.T, ctx context.Context, dir, url string) {
	t.Helper()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return st.Put(ctx, filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Snapshots on a real S3 server (SeaweedFS): tags, a branch, shallow and
// deep clones between prefixes and a restore. Base paths are recorded as
// s3://bucket/prefix (no connection options), and files referenced through
// them resolve with the dataset URL's endpoint settings.
func TestS3Snapshots(t *testing.T) {
	srv := s3util.Start(t, "snap")
	ctx := context.Background()
	srcURL := srv.URL("src/tags.lance")
	uploadDir(t, ctx, corpusPath(t, "lance12/tags.lance"), srcURL)
	activateSeedsURL(t, ctx, srcURL)

	d, err := OpenDataset(ctx, srcURL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Checkout(ctx, Options{ForWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 5 || !flags.Has(s.Manifest().GetReaderFeatureFlags(), s.Manifest().GetWriterFeatureFlags(), flags.ZoneWriteSeeds) {
		t.Fatalf("head %d flags %v", s.Version, flagWords(s.Manifest()))
	}
	if _, err := d.CreateTag(ctx, "t1", Ref{Version: 2}, nil); err != nil {
		t.Fatal(err)
	}
	if s, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "t1"}}); err != nil || s.Version != 2 {
		t.Fatalf("checkout tag: %v %v", s, err)
	}
	_, bs, err := d.CreateBranch(ctx, "dev", Ref{Version: 3}, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := bs.Manifest().GetBasePaths()[0].GetPath(); got != "s3://snap/src/tags.lance" {
		t.Errorf("branch base path %q", got)
	}
	assertFilesResolve(t, bs)

	shURL := srv.URL("clones/shallow.lance")
	sh, err := Clone(ctx, srcURL, shURL, CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Snapshot.Dataset.Close()
	if got := flagWords(sh.Snapshot.Manifest()); !flags.Has(got[0], got[1], flags.ZoneWriteSeeds|flags.BasePaths) {
		t.Errorf("shallow clone flags %v", got)
	}
	if n := assertFilesResolve(t, sh.Snapshot); n == 0 {
		t.Error("shallow clone references no files")
	}
	dpURL := srv.URL("clones/deep.lance")
	dp, err := Clone(ctx, shURL, dpURL, CloneOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Snapshot.Dataset.Close()
	m := dp.Snapshot.Manifest()
	if len(m.GetBasePaths()) != 0 || !flags.Has(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), flags.ZoneWriteSeeds) || m.GetReaderFeatureFlags()&flags.BasePaths != 0 {
		t.Errorf("deep clone of a shallow clone: bases %v flags %v", m.GetBasePaths(), flagWords(m))
	}
	if n := assertFilesResolve(t, dp.Snapshot); n == 0 || dp.Copied != n {
		t.Errorf("deep clone copied %d of %d files", dp.Copied, n)
	}
	r, _, err := d.Restore(ctx, Ref{Version: 1}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(r.Manifest()); got != [2]uint64{flags.ZoneWriteSeeds, flags.ZoneWriteSeeds} {
		t.Errorf("restore of the pre-activation version on S3: flags %v", got)
	}
}

func activateSeedsURL(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := NewDataset(url, st)
	s, err := d.Checkout(ctx, Options{ForWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	commitActivation(t, ctx, st, s.Version)
}
