package commit

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// rawFileblob is a gocloud fileblob bucket used directly (no lancekeeper
// link(2) committer): its IfNotExist is a stat and a rename under a
// process-local mutex, so the store declares no atomic create.
func rawFileblob(t *testing.T) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	st, err := store.FromBucket(b, "ds", false)
	if err != nil {
		t.Fatal(err)
	}
	return st, dir
}

func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// notAtomic is a Store (not a *store.Store) that declares no atomic create.
type notAtomic struct{ *store.Store }

func (notAtomic) AtomicCreate() bool { return false }

// The commit path refuses a store without an atomic create-if-absent
// (store.ErrNoAtomicCreate) before writing anything, unless the caller set
// AllowUnsafeCommit.
func TestUnsafeStoreRefusedUnlessAllowed(t *testing.T) {
	ctx := context.Background()
	st, dir := rawFileblob(t)

	_, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate})
	if !errors.Is(err, store.ErrNoAtomicCreate) {
		t.Fatalf("WriteArrow on a raw fileblob bucket: want ErrNoAtomicCreate, got %v", err)
	}
	if !strings.Contains(err.Error(), "AllowUnsafeCommit") {
		t.Errorf("the refusal does not say how to accept the risk: %v", err)
	}
	if files := filesUnder(t, dir); len(files) != 0 {
		t.Fatalf("a refused write left files: %v", files)
	}

	res, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.0", Commit: Options{AllowUnsafeCommit: true}})
	if err != nil || res.Version != 1 {
		t.Fatalf("WriteArrow with AllowUnsafeCommit: %v %+v", err, res)
	}

	txn := NewAppend(1, []*pb.DataFragment{fakeFrag("a", 5)})
	txn.MarkSeedFiles(false, "a.lance")
	if _, err := Commit(ctx, st, txn, Options{}); !errors.Is(err, store.ErrNoAtomicCreate) {
		t.Fatalf("Commit: want ErrNoAtomicCreate, got %v", err)
	}
	if _, _, err := EnableZoneWriteSeeds(ctx, st, Options{}); !errors.Is(err, store.ErrNoAtomicCreate) {
		t.Fatalf("EnableZoneWriteSeeds: want ErrNoAtomicCreate, got %v", err)
	}
	if _, err := Commit(ctx, notAtomic{memStore(t)}, NewAppend(0, nil), Options{}); !errors.Is(err, store.ErrNoAtomicCreate) {
		t.Fatalf("Commit on a Store declaring no atomic create: want ErrNoAtomicCreate, got %v", err)
	}
	r, err := Commit(ctx, st, txn, Options{AllowUnsafeCommit: true})
	if err != nil || r.Version != 2 {
		t.Fatalf("Commit with AllowUnsafeCommit: %v %+v", err, r)
	}
	if _, already, err := EnableZoneWriteSeeds(ctx, st, Options{AllowUnsafeCommit: true}); err != nil || already {
		t.Fatalf("EnableZoneWriteSeeds with AllowUnsafeCommit: already=%v %v", already, err)
	}
}
