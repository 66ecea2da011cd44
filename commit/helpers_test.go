package commit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

func memStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "mem://test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func localStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir()+"/ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func testSchema() []*pb.Field {
	return []*pb.Field{
		{Name: "x", Id: 0, ParentId: -1, LogicalType: "int64", Nullable: true, Encoding: pb.Encoding_PLAIN},
		{Name: "s", Id: 1, ParentId: -1, LogicalType: "string", Nullable: true, Encoding: pb.Encoding_VAR_BINARY},
	}
}

// fakeFrag is a fragment whose data file is never opened (its seed status
// is marked on the transaction).
func fakeFrag(name string, rows uint64) *pb.DataFragment {
	return &pb.DataFragment{
		PhysicalRows: rows,
		Files: []*pb.DataFile{{
			Path: name + ".lance", Fields: []int32{0, 1}, ColumnIndices: []int32{0, 1},
			FileMajorVersion: 2, FileMinorVersion: 0, FileSizeBytes: 1000,
		}},
	}
}

func fragPaths(frags []*pb.DataFragment) []string {
	var out []string
	for _, f := range frags {
		for _, df := range f.GetFiles() {
			out = append(out, df.GetPath())
		}
	}
	return out
}

// mustCreate creates a dataset with the given fragments (no seeds).
func mustCreate(t testing.TB, st Store, frags ...*pb.DataFragment) *Result {
	t.Helper()
	txn := NewOverwrite(0, OverwriteSpec{Fragments: frags, Schema: testSchema()})
	txn.MarkSeedFiles(false, fragPaths(frags)...)
	res, err := Commit(context.Background(), st, txn, Options{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return res
}

func appendTxn(read uint64, frags ...*pb.DataFragment) *Transaction {
	txn := NewAppend(read, frags)
	txn.MarkSeedFiles(false, fragPaths(frags)...)
	return txn
}

func mustCommit(t testing.TB, st Store, txn *Transaction, opts Options) *Result {
	t.Helper()
	res, err := Commit(context.Background(), st, txn, opts)
	if err != nil {
		t.Fatalf("commit %s: %v", txn.Kind(), err)
	}
	return res
}

func readVersion(t testing.TB, st Store, v uint64) *manifest.File {
	t.Helper()
	f, err := manifest.ReadVersion(context.Background(), st.Bucket(), st.KeyPrefix(), v)
	if err != nil {
		t.Fatalf("read version %d: %v", v, err)
	}
	return f
}

func latestVersion(t testing.TB, st Store) uint64 {
	t.Helper()
	info, err := manifest.LatestVersion(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		if manifest.IsNotFound(err) {
			return 0
		}
		t.Fatal(err)
	}
	return info.Version
}

func bitmapOf(rows ...uint32) *roaring.Bitmap { return roaring.BitmapOf(rows...) }

func deletedRows(t testing.TB, st Store, m *pb.Manifest, fragID uint64) *roaring.Bitmap {
	t.Helper()
	for _, f := range m.GetFragments() {
		if f.GetId() == fragID {
			b, err := readDeletionVector(context.Background(), st, m, f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("version %d has no fragment %d", m.GetVersion(), fragID)
	return nil
}

func wantConflict(t testing.TB, err error, retryable bool, version uint64, concurrent string) {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("want *ConflictError, got %v", err)
	}
	if !errors.Is(err, ErrConflict) || errors.Is(err, ErrRetryableConflict) != retryable || errors.Is(err, ErrIncompatibleConflict) == retryable {
		t.Fatalf("conflict %v: retryable=%v, want %v", err, ce.Retryable, retryable)
	}
	if ce.Version != version || ce.ConcurrentOp != concurrent {
		t.Fatalf("conflict %v names %s at %d, want %s at %d", err, ce.ConcurrentOp, ce.Version, concurrent, version)
	}
}

func sprintIDs(m *pb.Manifest) string {
	var ids []uint64
	for _, f := range m.GetFragments() {
		ids = append(ids, f.GetId())
	}
	return fmt.Sprint(ids)
}

func localStoreAt(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// publishFlags publishes the version after r's as another writer would:
// r's manifest with the given reader and writer feature-flag words and a
// ReserveFragments transaction inline.
func publishFlags(t testing.TB, st Store, r *Result, readerFlags, writerFlags uint64) {
	t.Helper()
	m := proto.Clone(r.Manifest).(*pb.Manifest)
	m.Version, m.ReaderFeatureFlags, m.WriterFeatureFlags = r.Version+1, readerFlags, writerFlags
	data, err := manifest.Encode(m, nil, NewReserveFragments(r.Version, 0).msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateIfAbsent(context.Background(), manifest.ManifestPath(manifest.V2, m.Version), data); err != nil {
		t.Fatal(err)
	}
}
