// Package s3_test is lancekeeper's S3 suite: datasets created, appended,
// deleted from, tagged, cloned (S3 to a local root and back), restored,
// inspected and seeded on a real S3 server — SeaweedFS `weed mini` on
// loopback, built by tests/s3/seaweed.sh — through the library and through
// the built lancekeeper binary, plus four processes racing appends.
//
// Without the weed binary every test skips loudly, unless
// LANCEKEEPER_REQUIRE_S3=1 (CI), which makes that a failure.
package s3_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

func TestMain(m *testing.M) {
	// A child of TestS3/FourProcessesRacingAppends: append and report.
	if spec := os.Getenv(appenderEnv); spec != "" {
		os.Exit(appenderMain(spec))
	}
	os.Exit(m.Run())
}

// TestS3 starts one SeaweedFS server and runs every scenario against it,
// each under its own prefix of the bucket.
func TestS3(t *testing.T) {
	srv := s3util.Start(t, "lancekeeper-suite")
	t.Run("CreateAppendDeleteTagsRestore", func(t *testing.T) { testLifecycle(t, srv) })
	t.Run("ShallowCloneS3ToLocalAndBack", func(t *testing.T) { testCloneRoundTrip(t, srv) })
	t.Run("BasePathsCarryTheDatasetEndpoint", func(t *testing.T) { testBasePathsCarryEndpoint(t, srv) })
	t.Run("CLIBinary", func(t *testing.T) { testCLIBinary(t, srv) })
	t.Run("FourProcessesRacingAppends", func(t *testing.T) { testRacingAppends(t, srv) })
	t.Run("Facade", func(t *testing.T) { testFacade(t, srv) })
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// rows returns one record batch with the given ids and name "row<id>".
func rows(ids ...int64) array.RecordReader {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, rowSchema)
	defer bld.Release()
	for _, id := range ids {
		bld.Field(0).(*array.Int64Builder).Append(id)
		bld.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row%d", id))
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(rowSchema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

func idRange(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func openStore(t *testing.T, ctx context.Context, url string) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// readManifest reads version v (0: the latest) of the dataset in st.
func readManifest(t *testing.T, ctx context.Context, st *store.Store, v uint64) *manifest.File {
	t.Helper()
	if v == 0 {
		info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatalf("latest version of %s: %v", st, err)
		}
		v = info.Version
	}
	f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), v)
	if err != nil {
		t.Fatalf("read version %d of %s: %v", v, st, err)
	}
	return f
}

// versionNumbers lists the versions of the dataset in st, ascending.
func versionNumbers(t *testing.T, ctx context.Context, st *store.Store) []uint64 {
	t.Helper()
	vs, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint64, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

func wantContiguous(t *testing.T, got []uint64, n uint64) {
	t.Helper()
	want := make([]uint64, n)
	for i := range want {
		want[i] = uint64(i) + 1
	}
	if !slices.Equal(got, want) {
		t.Fatalf("versions %v, want 1..%d contiguous", got, n)
	}
}

// liveIDs reads the id column of every fragment of m (st is the dataset
// root) and drops deleted rows; files behind base paths are read from the
// base's own store, exactly as recorded (an s3:// base without connection
// options reaches the server through AWS_ENDPOINT_URL_S3). The ids come
// back sorted.
func liveIDs(t *testing.T, ctx context.Context, st *store.Store, m *pb.Manifest) []int64 {
	t.Helper()
	res, err := manifest.NewResolver(m)
	if err != nil {
		t.Fatal(err)
	}
	bases := map[string]*store.Store{"": st}
	storeOf := func(loc manifest.Location) *store.Store {
		if s, ok := bases[loc.Base]; ok {
			return s
		}
		s := openStore(t, ctx, loc.Base)
		bases[loc.Base] = s
		return s
	}
	var ids []int64
	for _, frag := range m.GetFragments() {
		if len(frag.GetFiles()) != 1 {
			t.Fatalf("fragment %d has %d data files", frag.GetId(), len(frag.GetFiles()))
		}
		df := frag.GetFiles()[0]
		loc, err := res.DataFile(df)
		if err != nil {
			t.Fatal(err)
		}
		s := storeOf(loc)
		f, err := datafile.Open(ctx, s.Bucket(), s.BucketKey(loc.Path), datafile.OpenOptions{})
		if err != nil {
			t.Fatalf("open data file %s: %v", loc, err)
		}
		col, err := f.ReadColumn(ctx, "id")
		if err != nil {
			t.Fatalf("read id of %s: %v", loc, err)
		}
		vals := col.(*array.Int64)
		deleted := map[uint32]bool{}
		if del := frag.GetDeletionFile(); del != nil {
			dloc, err := res.DeletionFile(frag.GetId(), del)
			if err != nil {
				t.Fatal(err)
			}
			ds := storeOf(dloc)
			bm, err := manifest.ReadDeletionFile(ctx, ds.Bucket(), ds.BucketKey(dloc.Path), del.GetFileType())
			if err != nil {
				t.Fatalf("read deletion file %s: %v", dloc, err)
			}
			for _, r := range bm.ToArray() {
				deleted[r] = true
			}
		}
		for i := 0; i < vals.Len(); i++ {
			if !deleted[uint32(i)] {
				ids = append(ids, vals.Value(i))
			}
		}
		col.Release()
	}
	slices.Sort(ids)
	return ids
}

func wantIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: ids %v, want %v", what, got, want)
	}
}
