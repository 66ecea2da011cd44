package maint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// faultStore fails every write-side call after the first n.
type faultStore struct {
	*store.Store
	n, calls int
}

var errInjected = errors.New("injected fault")

func (f *faultStore) step() error {
	f.calls++
	if f.calls > f.n {
		return errInjected
	}
	return nil
}

func (f *faultStore) NewWriter(ctx context.Context, key string) (*store.Writer, error) {
	if err := f.step(); err != nil {
		return nil, err
	}
	return f.Store.NewWriter(ctx, key)
}

func (f *faultStore) Put(ctx context.Context, key string, data []byte) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.Store.Put(ctx, key, data)
}

func (f *faultStore) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := f.step(); err != nil {
		return err
	}
	return f.Store.CreateIfAbsent(ctx, key, data)
}

func crashTable(t *testing.T, frags, overwrites int) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	add := func(mode commit.Mode, from int64) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i := from; i < from+10; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		rec := b.NewRecordBatch()
		b.Release()
		rdr, _ := array.NewRecordReader(sch, []arrow.RecordBatch{rec})
		if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: mode}); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		rec.Release()
	}
	add(commit.ModeCreate, 0)
	for i := 1; i < frags; i++ {
		add(commit.ModeAppend, int64(i*10))
	}
	for i := 0; i < overwrites; i++ {
		add(commit.ModeOverwrite, int64(1000+i*10))
	}
	return st, dir
}

// checkIntact: the latest version opens and every file it references
// exists.
func checkIntact(t *testing.T, st *store.Store, wantVersion uint64) {
	t.Helper()
	ctx := context.Background()
	f, info, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if wantVersion != 0 && info.Version != wantVersion {
		t.Fatalf("latest version %d, want %d", info.Version, wantVersion)
	}
	for _, fr := range f.Manifest.GetFragments() {
		for _, df := range fr.GetFiles() {
			if ok, _ := st.Exists(ctx, "data/"+df.GetPath()); !ok {
				t.Fatalf("version %d references missing data file %s", info.Version, df.GetPath())
			}
		}
	}
}

// TestCompact_CrashPoints: a fault at every write step of a compaction
// (each data file, the transaction file, the manifest) leaves the table at
// its last good version with every referenced file present and none of the
// attempt's data files behind; without the fault it commits.
func TestCompact_CrashPoints(t *testing.T) {
	st, _ := crashTable(t, 4, 0)
	ctx := context.Background()
	before, _ := st.List(ctx, "data/", store.ListOptions{})
	for n := 0; ; n++ {
		fs := &faultStore{Store: st, n: n}
		res, err := Compact(ctx, fs, CompactOptions{TargetRowsPerFragment: 15, MaxAttempts: 1})
		if err == nil {
			if res.Version != 5 || n < 3 {
				t.Fatalf("committed version %d after %d allowed writes", res.Version, n)
			}
			checkIntact(t, st, 5)
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("step %d: %v", n, err)
		}
		checkIntact(t, st, 4)
		after, _ := st.List(ctx, "data/", store.ListOptions{})
		if len(after) != len(before) {
			t.Fatalf("step %d: %d data files left, want %d (the failed attempt's files deleted)", n, len(after), len(before))
		}
		if n > 20 {
			t.Fatal("never committed")
		}
	}
}

// TestCleanup_CrashPoints: a crash before each deletion of a cleanup leaves
// the latest version intact, and a second cleanup finishes the job with
// the same end state as an uninterrupted one.
func TestCleanup_CrashPoints(t *testing.T) {
	ctx := context.Background()
	ref, _ := crashTable(t, 1, 4)
	full, err := Cleanup(ctx, ref, CleanupOptions{RetainVersions: 1, DeleteUnverified: true})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= len(full.RemovedFiles); n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			st, _ := crashTable(t, 1, 4)
			if _, err := Cleanup(ctx, st, CleanupOptions{RetainVersions: 1, DeleteUnverified: true, crashAt: n}); !errors.Is(err, errCrash) {
				t.Fatalf("crash at %d: %v", n, err)
			}
			checkIntact(t, st, 5)
			again, err := Cleanup(ctx, st, CleanupOptions{RetainVersions: 1, DeleteUnverified: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := n - 1 + len(again.RemovedFiles); got != len(full.RemovedFiles) {
				t.Fatalf("removed %d+%d files, uninterrupted %d", n-1, len(again.RemovedFiles), len(full.RemovedFiles))
			}
			checkIntact(t, st, 5)
		})
	}
}
