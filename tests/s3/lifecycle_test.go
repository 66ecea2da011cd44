package s3_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// testLifecycle: create (two fragments), append, delete (a deletion file on
// S3), tags (create, update, list, delete, checkout by tag, refusal of a
// duplicate), restore of the tagged version, inspect — all through the
// library, every commit a conditional PUT on the server.
func testLifecycle(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 2*time.Minute)
	url := srv.URL("lifecycle/ds.lance")
	st := openStore(t, ctx, url)
	if !st.AtomicCreate() || st.Kind() != store.KindS3 {
		t.Fatalf("store %s: kind %s atomic %v", st, st.Kind(), st.AtomicCreate())
	}

	// Create: 100 rows in two data files.
	res, err := commit.WriteArrow(ctx, st, rows(idRange(0, 100)...), commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 50})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if res.Version != 1 || len(res.Files) != 2 || res.Rows != 100 {
		t.Fatalf("create: version %d, %d files, %d rows", res.Version, len(res.Files), res.Rows)
	}
	// Append 20 rows.
	res, err = commit.WriteArrow(ctx, st, rows(idRange(100, 120)...), commit.WriteOptions{Mode: commit.ModeAppend})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if res.Version != 2 || res.ReadVersion != 1 || res.Attempts != 1 {
		t.Fatalf("append: version %d read %d attempts %d", res.Version, res.ReadVersion, res.Attempts)
	}
	v2 := readManifest(t, ctx, st, 2)
	wantIDs(t, "version 2", liveIDs(t, ctx, st, v2.Manifest), idRange(0, 120))

	// Delete the ids divisible by 10 from the first fragment (ids 0..49).
	first := v2.Manifest.GetFragments()[0]
	offsets := roaring.New()
	offsets.AddMany([]uint32{0, 10, 20, 30, 40})
	del, err := commit.NewDelete(ctx, st, v2, map[uint64]*roaring.Bitmap{first.GetId(): offsets}, "id % 10 = 0 AND id < 50")
	if err != nil {
		t.Fatal(err)
	}
	dres, err := commit.Commit(ctx, st, del, commit.Options{})
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if dres.Version != 3 {
		t.Fatalf("delete committed version %d", dres.Version)
	}
	v3 := readManifest(t, ctx, st, 3)
	afterDelete := slices.DeleteFunc(idRange(0, 120), func(id int64) bool { return id < 50 && id%10 == 0 })
	wantIDs(t, "version 3 (after delete)", liveIDs(t, ctx, st, v3.Manifest), afterDelete)
	delFiles, err := st.List(ctx, manifest.DeletionsDir+"/", store.ListOptions{})
	if err != nil || len(delFiles) != 1 {
		t.Fatalf("deletion files on S3: %v, %v", delFiles, err)
	}

	// Inspect.
	d := snapshot.NewDataset(url, st)
	sum, err := inspect.Summarize(ctx, d, inspect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Version != 3 || sum.NumRows == nil || *sum.NumRows != 115 || sum.DeletedRows == nil || *sum.DeletedRows != 5 || sum.NumFragments != 3 {
		t.Fatalf("inspect: version %d rows %v deleted %v fragments %d", sum.Version, sum.NumRows, sum.DeletedRows, sum.NumFragments)
	}

	// Tags.
	if _, err := d.CreateTag(ctx, "before-delete", snapshot.Ref{Version: 2}, map[string]string{"by": "s3 suite"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTag(ctx, "before-delete", snapshot.Ref{Version: 1}, nil); !errors.Is(err, manifest.ErrRefExists) {
		t.Fatalf("duplicate tag: want ErrRefExists (a conditional create refused by the server), got %v", err)
	}
	if _, err := d.CreateTag(ctx, "moving", snapshot.Ref{Version: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.UpdateTag(ctx, "moving", snapshot.Ref{}); err != nil {
		t.Fatal(err)
	}
	if tg, err := d.GetTag(ctx, "moving"); err != nil || tg.Version != 3 {
		t.Fatalf("updated tag: %+v %v", tg, err)
	}
	if ok, err := st.Exists(ctx, snapshot.TagPath("before-delete")); err != nil || !ok {
		t.Fatalf("tag file %s on S3: %v %v", snapshot.TagPath("before-delete"), ok, err)
	}
	if err := d.DeleteTag(ctx, "moving"); err != nil {
		t.Fatal(err)
	}
	tags, err := d.ListTags(ctx)
	if err != nil || len(tags) != 1 || tags[0].Name != "before-delete" || tags[0].Version != 2 || tags[0].Metadata["by"] != "s3 suite" {
		t.Fatalf("tags: %+v %v", tags, err)
	}
	if s, err := d.Checkout(ctx, snapshot.Options{Ref: snapshot.Ref{Tag: "before-delete"}}); err != nil || s.Version != 2 {
		t.Fatalf("checkout by tag: %v %v", s, err)
	}

	// Restore the tagged version: version 4 has version 2's rows.
	rs, rres, err := d.Restore(ctx, snapshot.Ref{Tag: "before-delete"}, snapshot.RestoreOptions{})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if rs.Version != 4 || rres.ReadVersion != 3 {
		t.Fatalf("restore: version %d read %d", rs.Version, rres.ReadVersion)
	}
	wantIDs(t, "version 4 (restored 2)", liveIDs(t, ctx, st, rs.Manifest()), idRange(0, 120))
	sum, err = inspect.Summarize(ctx, d, inspect.Options{})
	if err != nil || sum.Version != 4 || *sum.NumRows != 120 {
		t.Fatalf("inspect after restore: %+v %v", sum, err)
	}
	if sum, err := inspect.Summarize(ctx, d, inspect.Options{Tag: "before-delete"}); err != nil || sum.Version != 2 || !slices.Equal(sum.Tags, []string{"before-delete"}) {
		t.Fatalf("inspect by tag: %+v %v", sum, err)
	}
	wantContiguous(t, versionNumbers(t, ctx, st), 4)
	// Old versions are untouched by the restore.
	wantIDs(t, "version 3 after the restore", liveIDs(t, ctx, st, readManifest(t, ctx, st, 3).Manifest), afterDelete)
}
