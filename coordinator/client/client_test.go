package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/coordinator"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

const token = "test-token-0123456789"

// serve starts a coordinator (with a token) on a loopback test server and
// returns a client and the root directory.
func serve(t *testing.T) (*coordclient.Client, string) {
	t.Helper()
	dir := t.TempDir() + "/root"
	s, err := coordinator.New(context.Background(), coordinator.Config{Roots: []coordinator.Root{{URL: dir}}, Tokens: []string{token},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); s.Close() })
	c, err := coordclient.New(hs.URL, coordclient.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var schemaXS = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// records returns one batch of n rows (x = start.., s = "s<x>") in the
// column order of schema.
func records(schema *arrow.Schema, n int, start int64) array.RecordReader {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i := 0; i < n; i++ {
		for fi, f := range schema.Fields() {
			switch f.Name {
			case "x":
				bld.Field(fi).(*array.Int64Builder).Append(start + int64(i))
			case "s":
				bld.Field(fi).(*array.StringBuilder).Append(fmt.Sprintf("s%d", start+int64(i)))
			}
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

func dataFiles(t *testing.T, st *store.Store) int {
	t.Helper()
	objs, err := st.List(context.Background(), manifest.DataDir+"/", store.ListOptions{})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return len(objs)
}

// TestWriteArrow_ThroughCoordinator: create, append (columns in another
// order, several files), v1 seeds only with the opt-in, and a schema
// mismatch that writes and commits nothing.
func TestWriteArrow_ThroughCoordinator(t *testing.T) {
	ctx := context.Background()
	c, dir := serve(t)
	st := openStore(t, dir+"/team/events")
	r, err := c.WriteArrow(ctx, st, "team/events", records(schemaXS, 10, 0), commit.WriteOptions{Mode: commit.ModeCreate})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 || r.Rows != 10 || len(r.Files) != 1 || len(r.Manifest.GetFields()) != 2 || len(r.FragmentIDs) != 1 {
		t.Fatalf("create: %+v", r)
	}
	swapped := arrow.NewSchema([]arrow.Field{schemaXS.Field(1), schemaXS.Field(0)}, nil)
	r, err = c.WriteArrow(ctx, st, "team/events", records(swapped, 25, 10), commit.WriteOptions{Mode: commit.ModeAppend, MaxRowsPerFile: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 2 || len(r.Files) != 3 || len(r.FragmentIDs) != 3 || r.FragmentIDs[0] != 1 || len(r.Manifest.GetFragments()) != 4 {
		t.Fatalf("append: version %d files %d ids %v", r.Version, len(r.Files), r.FragmentIDs)
	}
	// Seeds without the opt-in: refused before anything is written.
	before := dataFiles(t, st)
	_, err = c.WriteArrow(ctx, st, "team/events", records(schemaXS, 5, 0), commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true})
	if !errors.Is(err, commit.ErrSeedsNotEnabled) || dataFiles(t, st) != before {
		t.Fatalf("seeds without opt-in: %v (%d files, had %d)", err, dataFiles(t, st), before)
	}
	r, err = c.WriteArrow(ctx, st, "team/events", records(schemaXS, 5, 0), commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !commit.HasZoneWriteSeeds(r.Manifest) {
		t.Fatal("R54: the first commit with v1 seeds did not set the flag")
	}
	// A schema mismatch: nothing written, nothing committed.
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}, schemaXS.Field(1)}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, other)
	bld.Field(0).(*array.StringBuilder).Append("nope")
	bld.Field(1).(*array.StringBuilder).Append("nope")
	rec := bld.NewRecordBatch()
	rdr, _ := array.NewRecordReader(other, []arrow.RecordBatch{rec})
	before = dataFiles(t, st)
	if _, err := c.WriteArrow(ctx, st, "team/events", rdr, commit.WriteOptions{Mode: commit.ModeAppend}); !errors.Is(err, commit.ErrSchemaMismatch) {
		t.Fatalf("schema mismatch: %v", err)
	}
	if dataFiles(t, st) != before {
		t.Fatal("a refused write left data files")
	}
	sum, err := c.Summary(ctx, "team/events")
	if err != nil || sum.Version != 3 || sum.PhysicalRows != 40 {
		t.Fatalf("summary %+v %v", sum, err)
	}
	if _, err := c.WriteArrow(ctx, st, "team/events", records(schemaXS, 1, 0), commit.WriteOptions{Mode: commit.ModeCreate}); !errors.Is(err, commit.ErrDatasetExists) {
		t.Fatalf("create over existing: %v", err)
	}
}

// TestWriteArrow_LocationMismatch: data files written somewhere the
// coordinator does not look are refused (data_file_not_found), and the
// client removes them.
func TestWriteArrow_LocationMismatch(t *testing.T) {
	ctx := context.Background()
	c, dir := serve(t)
	if _, err := c.WriteArrow(ctx, openStore(t, dir+"/d"), "d", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		t.Fatal(err)
	}
	// A copy of the dataset elsewhere: the client reads its head there and
	// writes its data files there.
	elsewhere := t.TempDir() + "/copy"
	src, dst := openStore(t, dir+"/d"), openStore(t, elsewhere)
	objs, _ := src.List(ctx, "", store.ListOptions{})
	for _, o := range objs {
		b, _ := src.Get(ctx, o.Key)
		if err := dst.Put(ctx, o.Key, b); err != nil {
			t.Fatal(err)
		}
	}
	before := dataFiles(t, dst)
	_, err := c.WriteArrow(ctx, dst, "d", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeAppend})
	var ce *coordclient.Error
	if !errors.As(err, &ce) || ce.Body.Code != coordapi.CodeDataFileNotFound || !strings.Contains(err.Error(), "same dataset location") {
		t.Fatalf("got %v", err)
	}
	if dataFiles(t, dst) != before {
		t.Fatal("data files of the refused write were not removed")
	}
}

// blindStore writes into the real dataset location but reads manifests
// from an empty bucket: the client cannot see what the coordinator
// committed.
type blindStore struct {
	*store.Store
	empty *blob.Bucket
}

func (b blindStore) Bucket() *blob.Bucket { return b.empty }
func (b blindStore) KeyPrefix() string    { return "" }

// TestWriteArrow_ReadBackFailureKeepsCommittedFiles: when the coordinator
// committed the data files but the client cannot read the new version
// back, the error says so and the files stay: they belong to a committed
// version now.
func TestWriteArrow_ReadBackFailureKeepsCommittedFiles(t *testing.T) {
	ctx := context.Background()
	c, dir := serve(t)
	st := openStore(t, dir+"/d")
	empty := memblob.OpenBucket(nil)
	defer empty.Close()
	_, err := c.WriteArrow(ctx, blindStore{st, empty}, "d", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeCreate})
	if err == nil || !strings.Contains(err.Error(), "cannot be read from") {
		t.Fatalf("got %v, want a read-back failure", err)
	}
	if n := dataFiles(t, st); n != 1 {
		t.Fatalf("%d data files after the committed write, want 1", n)
	}
	f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if frags := f.Manifest.GetFragments(); len(frags) != 1 || frags[0].GetPhysicalRows() != 3 {
		t.Fatalf("version 1 has fragments %v, want one of 3 rows", frags)
	}
}

// TestErrorsMatchTheLibrary: coordinator answers unwrap to the commit
// package's errors.
func TestErrorsMatchTheLibrary(t *testing.T) {
	ctx := context.Background()
	c, dir := serve(t)
	st := openStore(t, dir+"/d")
	if _, err := c.WriteArrow(ctx, st, "d", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		t.Fatal(err)
	}
	// An overwrite at version 2 makes an append read at 1 incompatible.
	if _, err := c.WriteArrow(ctx, st, "d", records(schemaXS, 3, 0), commit.WriteOptions{Mode: commit.ModeOverwrite}); err != nil {
		t.Fatal(err)
	}
	f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Append(ctx, "d", 1, f.Manifest.GetFragments(), coordclient.AppendOptions{})
	var conflict *commit.ConflictError
	if !errors.As(err, &conflict) || !errors.Is(err, commit.ErrIncompatibleConflict) || !errors.Is(err, commit.ErrConflict) || conflict.ConcurrentOp != "Overwrite" || conflict.Version != 2 {
		t.Fatalf("conflict: %v", err)
	}
	// data_files_absent: the files of version 2 are referenced already.
	_, err = c.Append(ctx, "d", 2, f.Manifest.GetFragments(), coordclient.AppendOptions{})
	var re *commit.RequirementError
	if !errors.As(err, &re) || !errors.Is(err, commit.ErrRequirement) || re.Latest != 2 {
		t.Fatalf("requirement: %v", err)
	}
	if _, err := c.Summary(ctx, "missing"); !errors.Is(err, commit.ErrDatasetNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := c.Summary(ctx, "../x"); !errors.Is(err, coordapi.ErrInvalidDatasetName) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := c.CreateTag(ctx, "d", "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTag(ctx, "d", "t", 1, nil); !errors.Is(err, manifest.ErrRefExists) {
		t.Fatalf("tag exists: %v", err)
	}
	if err := c.DeleteTag(ctx, "d", "nope"); !errors.Is(err, manifest.ErrRefNotFound) {
		t.Fatalf("missing tag: %v", err)
	}
	bad, _ := coordclient.New(strings.TrimSuffix(c.BaseURL(), "/"), coordclient.Options{Token: "wrong-token-0123456789"})
	if _, err := bad.Roots(ctx); !errors.Is(err, coordclient.ErrUnauthorized) {
		t.Fatalf("unauthorized: %v", err)
	}
	roots, err := c.Roots(ctx)
	if err != nil || len(roots) != 1 || roots[0].URL != dir {
		t.Fatalf("roots %+v %v", roots, err)
	}
	vs, err := c.AllVersions(ctx, "d")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %+v %v", vs, err)
	}
	if tags, err := c.Tags(ctx, "d"); err != nil || len(tags) != 1 || tags[0].Version != 1 {
		t.Fatalf("tags %+v %v", tags, err)
	}
	res, err := c.EnableZoneWriteSeeds(ctx, "d", 0)
	if err != nil || res.Version != 3 || !res.ZoneWriteSeeds {
		t.Fatalf("enable %+v %v", res, err)
	}
	if h, err := c.Health(ctx); err != nil || h != "ok" {
		t.Fatalf("health %q %v", h, err)
	}
}

// TestBusyAnswersAreRetried: 429/503 mean "not processed": the client waits
// Retry-After and resends, up to BusyRetries times.
func TestBusyAnswersAreRetried(t *testing.T) {
	var calls atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"code":"too_many_requests","message":"busy","retry_after_seconds":0}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"roots":[{"name":"default","url":"/x","kind":"local","default":true,"atomic_create":true}]}`)
	}))
	defer hs.Close()
	c, _ := coordclient.New(hs.URL, coordclient.Options{})
	roots, err := c.Roots(context.Background())
	if err != nil || len(roots) != 1 || calls.Load() != 3 {
		t.Fatalf("%v %v after %d calls", roots, err, calls.Load())
	}
	calls.Store(0)
	c, _ = coordclient.New(hs.URL, coordclient.Options{BusyRetries: -1})
	if _, err := c.Roots(context.Background()); !errors.Is(err, coordclient.ErrBusy) || calls.Load() != 1 {
		t.Fatalf("no retries: %v after %d calls", err, calls.Load())
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "http://u:p@host", "http://host/?q=1", "localhost:8470"} {
		if _, err := coordclient.New(u, coordclient.Options{}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestDatasetName: a dataset URL under an advertised root names the
// dataset relative to it.
func TestDatasetName(t *testing.T) {
	roots := []coordapi.RootInfo{{Name: "default", URL: "/srv/lk", Default: true}, {Name: "lake", URL: "s3://bucket/lake"}}
	for _, c := range []struct {
		url, root, name string
		bad             bool
	}{
		{"/srv/lk/events", "default", "events", false},
		{"/srv/lk/team/events.lance/", "default", "team/events.lance", false},
		{"file:///srv/lk/a", "default", "a", false},
		{"s3://bucket/lake/t?region=x&endpoint=http://h", "lake", "t", false},
		{"/srv/lk", "", "", true},
		{"/srv/lkx/a", "", "", true},
		{"s3://other/lake/t", "", "", true},
		{"/srv/lk/../etc", "", "", true},
	} {
		root, name, err := coordclient.DatasetName(roots, c.url)
		if c.bad != (err != nil) || (!c.bad && (root != c.root || name != c.name)) {
			t.Errorf("DatasetName(%q) = %q, %q, %v", c.url, root, name, err)
		}
	}
}
