package s3_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// unsetEndpointEnv removes the SDK's endpoint variables for the test, so a
// base path opened without the dataset URL's endpoint would go to AWS and
// fail: only store.OpenBase's carried options reach the server.
func unsetEndpointEnv(t *testing.T) {
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
}

// testBasePathsCarryEndpoint: a shallow clone between two prefixes of one
// bucket on a custom endpoint (SeaweedFS) records its source as
// s3://bucket/prefix, without the endpoint. Every reader of base paths —
// inspect's row count, a delete merging the source's deletion vector, a deep
// clone — opens that base with the clone URL's endpoint, region and path
// style (store.OpenBase), with no AWS_ENDPOINT_URL_S3 in the environment.
func testBasePathsCarryEndpoint(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 2*time.Minute)
	unsetEndpointEnv(t)
	srcURL := srv.URL("bases/src.lance")
	src := openStore(t, ctx, srcURL)
	if _, err := commit.WriteArrow(ctx, src, rows(idRange(0, 30)...), commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 15}); err != nil {
		t.Fatal(err)
	}
	// A fragment that records no physical_rows (0 = unknown, §9 trap 2):
	// inspect must open its data file to count its rows.
	w, err := commit.WriteFragments(ctx, src, rows(idRange(100, 105)...), commit.WriteOptions{Mode: commit.ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range w.Fragments {
		f.PhysicalRows = 0
	}
	if _, err := commit.Commit(ctx, src, commit.NewAppend(w.ReadVersion, w.Fragments), commit.Options{}); err != nil {
		t.Fatal(err)
	}
	v2 := readManifest(t, ctx, src, 0)
	frag0 := v2.Manifest.GetFragments()[0].GetId()
	del, err := commit.NewDelete(ctx, src, v2, map[uint64]*roaring.Bitmap{frag0: roaring.BitmapOf(3)}, "id = 3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commit.Commit(ctx, src, del, commit.Options{}); err != nil {
		t.Fatal(err)
	}

	cloneURL := srv.URL("bases/clone.lance")
	cl, err := snapshot.Clone(ctx, srcURL, cloneURL, snapshot.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cl.Snapshot.Dataset.Close()
	if got := pathsOf(cl.Snapshot.Manifest().GetBasePaths()); !slices.Equal(got, []string{"s3://" + srv.Bucket + "/bases/src.lance"}) {
		t.Fatalf("clone base paths %v", got)
	}

	// inspect: 29 live rows of the counted fragments + 5 counted from the
	// data file behind the base path.
	d, err := snapshot.OpenDataset(ctx, cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sum, err := inspect.Summarize(ctx, d, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.NumRows == nil || *sum.NumRows != 34 || sum.NumRowsError != "" {
		t.Fatalf("inspect of the S3 clone: num_rows %v (%s), want 34", sum.NumRows, sum.NumRowsError)
	}

	// A delete on the clone merges the source's deletion file, read through
	// the base path.
	clone := openStore(t, ctx, cloneURL)
	head := readManifest(t, ctx, clone, 0)
	del, err = commit.NewDelete(ctx, clone, head, map[uint64]*roaring.Bitmap{frag0: roaring.BitmapOf(4)}, "id = 4")
	if err != nil {
		t.Fatalf("delete on the S3 clone: %v", err)
	}
	if _, err := commit.Commit(ctx, clone, del, commit.Options{}); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(append(idRange(0, 30), idRange(100, 105)...), func(id int64) bool { return id == 3 || id == 4 })
	wantIDs(t, "S3 clone after a delete", liveIDsVia(t, ctx, clone, readManifest(t, ctx, clone, 0).Manifest), want)

	// A deep clone of the clone copies the files behind the base path.
	deepURL := srv.URL("bases/deep.lance")
	dc, err := snapshot.Clone(ctx, cloneURL, deepURL, snapshot.CloneOptions{Deep: true})
	if err != nil {
		t.Fatalf("deep clone of the S3 clone: %v", err)
	}
	dc.Snapshot.Dataset.Close()
	deep := openStore(t, ctx, deepURL)
	wantIDs(t, "deep clone of the S3 clone", liveIDsVia(t, ctx, deep, dc.Snapshot.Manifest()), want)
}

// liveIDsVia is liveIDs reading base paths through store.Bases (the
// dataset URL's connection options), as the library does.
func liveIDsVia(t *testing.T, ctx context.Context, st *store.Store, m *pb.Manifest) []int64 {
	t.Helper()
	res, err := manifest.NewResolver(m)
	if err != nil {
		t.Fatal(err)
	}
	bases := store.NewBases(st)
	defer bases.Close()
	var ids []int64
	for _, frag := range m.GetFragments() {
		loc, err := res.DataFile(frag.GetFiles()[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := bases.Store(ctx, loc.Base)
		if err != nil {
			t.Fatal(err)
		}
		f, err := datafile.Open(ctx, s.Bucket(), s.BucketKey(loc.Path), datafile.OpenOptions{})
		if err != nil {
			t.Fatalf("open data file %s: %v", loc, err)
		}
		col, err := f.ReadColumn(ctx, "id")
		if err != nil {
			t.Fatal(err)
		}
		deleted := roaring.New()
		if dfile := frag.GetDeletionFile(); dfile != nil {
			dloc, err := res.DeletionFile(frag.GetId(), dfile)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := bases.Store(ctx, dloc.Base)
			if err != nil {
				t.Fatal(err)
			}
			if deleted, err = manifest.ReadDeletionFile(ctx, ds.Bucket(), ds.BucketKey(dloc.Path), dfile.GetFileType()); err != nil {
				t.Fatal(err)
			}
		}
		vals := col.(*array.Int64)
		for i := 0; i < vals.Len(); i++ {
			if !deleted.Contains(uint32(i)) {
				ids = append(ids, vals.Value(i))
			}
		}
		col.Release()
	}
	slices.Sort(ids)
	return ids
}
