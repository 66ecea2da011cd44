package s3_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// testFacade runs the embedder's journey through the root package on S3,
// with no endpoint in the environment (only the dataset URL carries it):
// Create with seeds and the explicit activation, Append, Open at a tag,
// versions, a branch written through its handle, Prune, a shallow clone
// to another prefix whose base path the facade resolves with the URL's
// endpoint (summary, seeds, pruning, scan, check read the source's files;
// a delete writes the clone's own deletion files), a deep clone to a local
// directory, and Restore.
func testFacade(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 3*time.Minute)
	unsetEndpointEnv(t)
	uri := srv.URL("facade/src.lance")
	ds, err := lancekeeper.Create(ctx, uri, rows(idRange(0, 300)...),
		lancekeeper.WithSeeds("id"), lancekeeper.WithRowsPerZone(100), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if _, err := ds.Tags().Create(ctx, "first", 0); err != nil {
		t.Fatal(err)
	}
	if ds, err = ds.Append(ctx, rows(idRange(300, 400)...), lancekeeper.WithSeeds("id"), lancekeeper.WithRowsPerZone(100)); err != nil {
		t.Fatal(err)
	}

	again, err := lancekeeper.Open(ctx, uri, lancekeeper.AtTag("first"))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Version() != 1 || !again.ZoneWriteSeeds() {
		t.Fatalf("at tag: version %d flag %v", again.Version(), again.ZoneWriteSeeds())
	}
	if vs, err := again.Versions(ctx); err != nil || len(vs) != 2 || vs[0].Tags[0] != "first" {
		t.Fatalf("versions %+v, %v", vs, err)
	}
	p, err := ds.Prune(ctx, "id >= 350")
	if err != nil {
		t.Fatal(err)
	}
	if p.FragmentsKept != 1 || p.ZonesKept != 1 || p.ZonesTotal != 4 {
		t.Fatalf("prune: %+v", p)
	}

	dev, err := ds.Branches().Create(ctx, "dev", 0)
	if err != nil {
		t.Fatal(err)
	}
	if dev, err = dev.Append(ctx, rows(idRange(400, 410)...)); err != nil {
		t.Fatal(err)
	}
	if s, err := dev.Summary(ctx); err != nil || s.Rows != 410 || s.Branch != "dev" {
		t.Fatalf("branch summary %+v, %v", s, err)
	}

	clone, err := ds.Clone(ctx, srv.URL("facade/clone.lance"))
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	if clone, err = clone.Append(ctx, rows(idRange(400, 450)...), lancekeeper.WithSeeds("id"), lancekeeper.WithRowsPerZone(100)); err != nil {
		t.Fatal(err)
	}
	if s, err := clone.Summary(ctx); err != nil || s.Rows != 450 || s.Fragments != 3 {
		t.Fatalf("clone summary %+v, %v", s, err)
	}
	files, err := clone.Seeds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Err != nil || len(f.Seeds) != 1 || f.Seeds[0].Err != nil {
			t.Fatalf("clone file %+v", f)
		}
	}
	if p, err := clone.Prune(ctx, "id < 100"); err != nil || p.FragmentsKept != 1 || p.RowsKept != 100 {
		t.Fatalf("clone prune %+v, %v", p, err)
	}

	// Scan and Check read the source's files through the base path too.
	rdr, err := clone.Scan(ctx, lancekeeper.Where("id < 10 OR id >= 440"), lancekeeper.WithColumns("id"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	if err := rdr.Err(); err != nil || n != 20 {
		t.Fatalf("clone scan: %d rows, %v", n, err)
	}
	rdr.Release()
	if r, err := clone.Check(ctx); err != nil || !r.OK() || r.Files != 3 {
		t.Fatalf("clone check %+v, %v", r, err)
	}
	// Delete by predicate on S3: the source's fragments get deletion files
	// under the clone's root.
	if clone, n2, err := clone.Delete(ctx, "id >= 290 AND id < 310"); err != nil || n2 != 20 {
		t.Fatalf("clone delete: %d rows, %v", n2, err)
	} else if s, err := clone.Summary(ctx); err != nil || s.Rows != 430 {
		t.Fatalf("after delete %+v, %v", s, err)
	}
	if s, err := ds.Summary(ctx); err != nil || s.Rows != 400 {
		t.Fatalf("source after the clone's delete %+v, %v", s, err)
	}

	deep, err := clone.Clone(ctx, filepath.Join(t.TempDir(), "deep.lance"), lancekeeper.Deep())
	if err != nil {
		t.Fatal(err)
	}
	defer deep.Close()
	if s, err := deep.Summary(ctx); err != nil || s.Rows != 450 { // the clone's version 3, before the delete
		t.Fatalf("deep clone summary %+v, %v", s, err)
	}

	head, err := again.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := head.Summary(ctx); err != nil || s.Version != 3 || s.Rows != 300 {
		t.Fatalf("restored %+v, %v", s, err)
	}
	if _, err := lancekeeper.Create(ctx, uri, rows(1)); !errors.Is(err, lancekeeper.ErrDatasetExists) {
		t.Fatalf("create over S3 dataset: %v", err)
	}
}
