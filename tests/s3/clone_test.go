package s3_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// testCloneRoundTrip: a shallow clone from S3 to a local root (whose
// manifest references the S3 files through a base path), an append to the
// local clone, a shallow clone of that back to S3 (referencing both the S3
// source and the local root), an append there, and a deep clone of the
// result to a local root. Every version's rows are read back through the
// recorded base paths; the sources are never written.
//
// A base path records no connection options (s3://bucket/prefix), so a
// dataset on another store reaches the S3 files through the SDK's
// environment, here AWS_ENDPOINT_URL_S3 (docs/storage.md).
func testCloneRoundTrip(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 2*time.Minute)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	srcURL := srv.URL("clone/src.lance")
	src := openStore(t, ctx, srcURL)
	if _, err := commit.WriteArrow(ctx, src, rows(idRange(0, 30)...), commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 15}); err != nil {
		t.Fatal(err)
	}
	v1 := readManifest(t, ctx, src, 1)
	bm := roaring.New()
	bm.Add(3)
	del, err := commit.NewDelete(ctx, src, v1, map[uint64]*roaring.Bitmap{v1.Manifest.GetFragments()[0].GetId(): bm}, "id = 3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commit.Commit(ctx, src, del, commit.Options{}); err != nil {
		t.Fatal(err)
	}
	srcIDs := slices.DeleteFunc(idRange(0, 30), func(id int64) bool { return id == 3 })
	srcKeys := keysOf(t, src)

	// S3 -> local, shallow.
	local := filepath.Join(t.TempDir(), "local.lance")
	lc, err := snapshot.Clone(ctx, srcURL, local, snapshot.CloneOptions{})
	if err != nil {
		t.Fatalf("shallow clone S3 -> local: %v", err)
	}
	lc.Snapshot.Dataset.Close()
	lm := lc.Snapshot.Manifest()
	if lc.Snapshot.Version != 2 || !slices.Equal(pathsOf(lm.GetBasePaths()), []string{"s3://" + srv.Bucket + "/clone/src.lance"}) ||
		lm.GetReaderFeatureFlags()&flags.BasePaths == 0 {
		t.Fatalf("local clone: version %d bases %v flags %d", lc.Snapshot.Version, pathsOf(lm.GetBasePaths()), lm.GetReaderFeatureFlags())
	}
	lst := openStore(t, ctx, local)
	wantIDs(t, "local shallow clone of S3", liveIDs(t, ctx, lst, lm), srcIDs)
	if _, err := commit.WriteArrow(ctx, lst, rows(idRange(1000, 1005)...), commit.WriteOptions{Mode: commit.ModeAppend}); err != nil {
		t.Fatalf("append to the local clone: %v", err)
	}
	localIDs := append(slices.Clone(srcIDs), idRange(1000, 1005)...)
	wantIDs(t, "local clone after append", liveIDs(t, ctx, lst, readManifest(t, ctx, lst, 0).Manifest), localIDs)

	// local -> S3, shallow.
	backURL := srv.URL("clone/back.lance")
	bc, err := snapshot.Clone(ctx, local, backURL, snapshot.CloneOptions{})
	if err != nil {
		t.Fatalf("shallow clone local -> S3: %v", err)
	}
	bc.Snapshot.Dataset.Close()
	bm2 := bc.Snapshot.Manifest()
	absLocal, _ := filepath.Abs(local)
	if got := pathsOf(bm2.GetBasePaths()); !slices.Contains(got, "s3://"+srv.Bucket+"/clone/src.lance") || !slices.Contains(got, filepath.ToSlash(absLocal)) {
		t.Fatalf("back clone base paths %v", got)
	}
	back := openStore(t, ctx, backURL)
	wantIDs(t, "S3 shallow clone of the local clone", liveIDs(t, ctx, back, bm2), localIDs)
	if objs, err := back.List(ctx, manifest.DataDir+"/", store.ListOptions{}); err != nil || len(objs) != 0 {
		t.Fatalf("a shallow clone copied data files: %v %v", objs, err)
	}
	if _, err := commit.WriteArrow(ctx, back, rows(2000, 2001), commit.WriteOptions{Mode: commit.ModeAppend}); err != nil {
		t.Fatalf("append to the S3 clone: %v", err)
	}
	backIDs := append(slices.Clone(localIDs), 2000, 2001)
	wantIDs(t, "S3 clone after append", liveIDs(t, ctx, back, readManifest(t, ctx, back, 0).Manifest), backIDs)

	// S3 -> local, deep: every file copied, no base paths left.
	deep := filepath.Join(t.TempDir(), "deep.lance")
	dc, err := snapshot.Clone(ctx, backURL, deep, snapshot.CloneOptions{Deep: true})
	if err != nil {
		t.Fatalf("deep clone S3 -> local: %v", err)
	}
	dc.Snapshot.Dataset.Close()
	if len(dc.Snapshot.Manifest().GetBasePaths()) != 0 || dc.Copied == 0 {
		t.Fatalf("deep clone: bases %v copied %d", pathsOf(dc.Snapshot.Manifest().GetBasePaths()), dc.Copied)
	}
	wantIDs(t, "local deep clone of the S3 clone", liveIDs(t, ctx, openStore(t, ctx, deep), dc.Snapshot.Manifest()), backIDs)

	if got := keysOf(t, src); !slices.Equal(got, srcKeys) {
		t.Fatalf("cloning wrote to the source: before %v after %v", srcKeys, got)
	}
}

func pathsOf(bps []*pb.BasePath) []string {
	out := make([]string, len(bps))
	for i, bp := range bps {
		out[i] = bp.GetPath()
	}
	return out
}

func keysOf(t *testing.T, st *store.Store) []string {
	t.Helper()
	objs, err := st.List(testContext(t, time.Minute), "", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key
	}
	return out
}
