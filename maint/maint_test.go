package maint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// batch returns rows with ids [from, from+n).
func batch(from, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(i)
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i))
		}
	}
	return b.NewRecordBatch()
}

func write(t testing.TB, st commit.Store, mode commit.Mode, from, n int64, opts commit.WriteOptions) *commit.WriteResult {
	t.Helper()
	rec := batch(from, n)
	defer rec.Release()
	rdr, err := array.NewRecordReader(testSchema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	opts.Mode = mode
	res, err := commit.WriteArrow(context.Background(), st, rdr, opts)
	if err != nil {
		t.Fatalf("write %d rows at %d: %v", n, from, err)
	}
	return res
}

func localDir(t testing.TB) (*store.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

// liveIDs reads the id column of every live row of the latest version.
func liveIDs(t testing.TB, st commit.Store) []int64 {
	t.Helper()
	ctx := context.Background()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, fr := range f.Manifest.GetFragments() {
		del := roaring.New()
		if d := fr.GetDeletionFile(); d != nil {
			name, _ := manifest.DeletionFileName(fr.GetId(), d)
			if del, err = manifest.ReadDeletionFile(ctx, st.Bucket(), st.KeyPrefix()+"_deletions/"+name, d.GetFileType()); err != nil {
				t.Fatal(err)
			}
		}
		for _, df := range fr.GetFiles() {
			file, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+"data/"+df.GetPath(), datafile.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			col, err := file.ReadColumn(ctx, "id")
			if err != nil {
				continue
			}
			for i := 0; i < col.Len(); i++ {
				if !del.Contains(uint32(i)) {
					out = append(out, col.(*array.Int64).Value(i))
				}
			}
			col.Release()
		}
	}
	slices.Sort(out)
	return out
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// deleteIDs deletes the rows whose id is in ids from the latest version.
func deleteIDs(ctx context.Context, st commit.Store, pred func(int64) bool) (*commit.Result, error) {
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		return nil, err
	}
	rows := map[uint64]*roaring.Bitmap{}
	for _, fr := range f.Manifest.GetFragments() {
		df := fr.GetFiles()[0]
		file, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+"data/"+df.GetPath(), datafile.OpenOptions{})
		if err != nil {
			return nil, err
		}
		col, err := file.ReadColumn(ctx, "id")
		if err != nil {
			return nil, err
		}
		for i := 0; i < col.Len(); i++ {
			if pred(col.(*array.Int64).Value(i)) {
				if rows[fr.GetId()] == nil {
					rows[fr.GetId()] = roaring.New()
				}
				rows[fr.GetId()].Add(uint32(i))
			}
		}
		col.Release()
	}
	if len(rows) == 0 {
		return nil, nil
	}
	txn, err := commit.NewDelete(ctx, st, f, rows, "")
	if err != nil {
		return nil, err
	}
	return commit.Commit(ctx, st, txn, commit.Options{})
}

// TestCompact_MergesSmallFragmentsDropsDeletions (§5.5 Rewrite, Lance's
// compaction plan): ten small fragments become one, deleted rows are gone,
// the latest version holds the same live rows and a second compaction has
// nothing to do.
func TestCompact_MergesSmallFragmentsDropsDeletions(t *testing.T) {
	ctx := context.Background()
	st, _ := localDir(t)
	write(t, st, commit.ModeCreate, 0, 100, commit.WriteOptions{})
	for i := int64(1); i < 10; i++ {
		write(t, st, commit.ModeAppend, i*100, 100, commit.WriteOptions{})
	}
	if _, err := deleteIDs(ctx, st, func(id int64) bool { return id%10 == 3 }); err != nil {
		t.Fatal(err)
	}
	want := liveIDs(t, st)
	res, err := maint.Compact(ctx, st, maint.CompactOptions{MaxRowsPerGroup: 64})
	if err != nil {
		t.Fatal(err)
	}
	if res.FragmentsRemoved != 10 || res.FragmentsAdded != 1 || res.RowsWritten != 900 || res.DeletedRowsDropped != 100 {
		t.Fatalf("compaction result %+v", *res)
	}
	if got := liveIDs(t, st); !slices.Equal(got, want) {
		t.Fatalf("rows changed: %d rows, want %d", len(got), len(want))
	}
	again, err := maint.Compact(ctx, st, maint.CompactOptions{})
	if err != nil || again.Version != 0 {
		t.Fatalf("second compaction: %+v, %v (want nothing to do)", again, err)
	}
	// Splitting at the target: 900 rows in fragments of at most 250.
	write(t, st, commit.ModeAppend, 1000, 50, commit.WriteOptions{})
	res, err = maint.Compact(ctx, st, maint.CompactOptions{TargetRowsPerFragment: 2000})
	if err != nil || res.FragmentsAdded != 1 {
		t.Fatalf("compaction into one: %+v %v", res, err)
	}
}

// TestCompact_RacesAppendsAndDelete (§5.4: Append ✓ Rewrite, Delete R o
// Rewrite): compactions racing four appenders and a deleter lose nothing,
// duplicate nothing, revive no deleted row, and the versions stay
// contiguous.
func TestCompact_RacesAppendsAndDelete(t *testing.T) {
	ctx := context.Background()
	st, _ := localDir(t)
	write(t, st, commit.ModeCreate, 0, 20, commit.WriteOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := int64(0); w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < 6; i++ {
				rec := batch(1000*(w+1)+i*10, 10)
				rdr, _ := array.NewRecordReader(testSchema, []arrow.RecordBatch{rec})
				_, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend})
				rdr.Release()
				rec.Release()
				if err != nil {
					errs <- fmt.Errorf("append: %w", err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 4; i++ {
			var err error
			for try := 0; try < 20; try++ {
				if _, err = deleteIDs(ctx, st, func(id int64) bool { return id%5 == 0 }); err == nil {
					break
				}
				var ce *commit.ConflictError
				if !errors.As(err, &ce) || !ce.Retryable {
					break
				}
			}
			if err != nil {
				errs <- fmt.Errorf("delete: %w", err)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 4; i++ {
			if _, err := maint.Compact(ctx, st, maint.CompactOptions{MaxAttempts: 20}); err != nil {
				errs <- fmt.Errorf("compact: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := deleteIDs(ctx, st, func(id int64) bool { return id%5 == 0 }); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, id := range seq(0, 20) {
		want = append(want, id)
	}
	for w := int64(1); w <= 4; w++ {
		want = append(want, seq(1000*w, 1000*w+60)...)
	}
	want = slices.DeleteFunc(want, func(id int64) bool { return id%5 == 0 })
	slices.Sort(want)
	if got := liveIDs(t, st); !slices.Equal(got, want) {
		t.Fatalf("rows after the race: %d, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	vs, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Version != uint64(i+1) {
			t.Fatalf("versions not contiguous: %d at position %d", v.Version, i)
		}
	}
}

// TestBackfillSeeds_RewritesNeverRelabels (R52, R54, R56): backfill is
// refused without the explicit activation; with it every data file gets a
// valid v1 seed for every column, the rows are the same, the flag pair is
// set, and a second run finds nothing to do (resumable).
func TestBackfillSeeds_RewritesNeverRelabels(t *testing.T) {
	ctx := context.Background()
	st, _ := localDir(t)
	write(t, st, commit.ModeCreate, 0, 300, commit.WriteOptions{})
	write(t, st, commit.ModeAppend, 300, 200, commit.WriteOptions{})
	if _, err := deleteIDs(ctx, st, func(id int64) bool { return id == 7 }); err != nil {
		t.Fatal(err)
	}
	want := liveIDs(t, st)
	if _, err := maint.BackfillSeeds(ctx, st, maint.BackfillOptions{}); !errors.Is(err, commit.ErrSeedsNotEnabled) {
		t.Fatalf("backfill without activation: %v", err)
	}
	res, err := maint.BackfillSeeds(ctx, st, maint.BackfillOptions{RowsPerZone: 64, FragmentsPerCommit: 1, Commit: commit.Options{EnableZoneWriteSeeds: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rewritten != 2 || len(res.Versions) != 2 {
		t.Fatalf("backfill: %+v", *res)
	}
	if got := liveIDs(t, st); !slices.Equal(got, want) {
		t.Fatal("rows changed")
	}
	f, _, _ := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if !commit.HasZoneWriteSeeds(f.Manifest) {
		t.Fatal("flag pair not set")
	}
	for _, fr := range f.Manifest.GetFragments() {
		file, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+"data/"+fr.GetFiles()[0].GetPath(), datafile.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seeds, err := file.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
		if err != nil || len(seeds) != 2 {
			t.Fatalf("fragment %d: %d seeds, %v", fr.GetId(), len(seeds), err)
		}
		for _, s := range seeds {
			if s.Err != nil || s.Seed.Version != 1 || s.Locator.RowsPerZone != 64 {
				t.Fatalf("fragment %d column %s: %+v", fr.GetId(), s.Column, s.Err)
			}
		}
	}
	again, err := maint.BackfillSeeds(ctx, st, maint.BackfillOptions{RowsPerZone: 64})
	if err != nil || again.Rewritten != 0 || again.Skipped != 2 {
		t.Fatalf("second backfill: %+v %v", again, err)
	}
}

// TestCleanup_RetainAndDryRun (§8.4): retain-versions keeps the newest N,
// a dry run deletes nothing, the latest version is never removed, and
// every file the kept versions reference is still there.
func TestCleanup_RetainAndDryRun(t *testing.T) {
	ctx := context.Background()
	st, _ := localDir(t)
	write(t, st, commit.ModeCreate, 0, 10, commit.WriteOptions{})
	for i := int64(1); i < 5; i++ {
		write(t, st, commit.ModeOverwrite, i*10, 10, commit.WriteOptions{})
	}
	dry, err := maint.Cleanup(ctx, st, maint.CleanupOptions{RetainVersions: 2, DeleteUnverified: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dry.RemovedVersions, []uint64{1, 2, 3}) || len(dry.RemovedFiles) == 0 {
		t.Fatalf("dry run: %+v", *dry)
	}
	for _, p := range dry.RemovedFiles {
		if ok, _ := st.Exists(ctx, p); !ok {
			t.Fatalf("dry run deleted %s", p)
		}
	}
	res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{RetainVersions: 2, DeleteUnverified: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.RemovedFiles, dry.RemovedFiles) {
		t.Fatalf("removed %v, dry run said %v", res.RemovedFiles, dry.RemovedFiles)
	}
	for _, v := range []uint64{4, 5} {
		f, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), v)
		if err != nil {
			t.Fatalf("kept version %d: %v", v, err)
		}
		for _, fr := range f.Manifest.GetFragments() {
			if ok, _ := st.Exists(ctx, "data/"+fr.GetFiles()[0].GetPath()); !ok {
				t.Fatalf("version %d lost data file %s", v, fr.GetFiles()[0].GetPath())
			}
		}
	}
	if got := liveIDs(t, st); !slices.Equal(got, seq(40, 50)) {
		t.Fatalf("latest rows %v", got)
	}
}

// TestDeleteBranch (§7.2): the ref and the branch tree go, a nested
// branch's tree stays, main and unknown branches are refused.
func TestDeleteBranch(t *testing.T) {
	ctx := context.Background()
	st, dir := localDir(t)
	write(t, st, commit.ModeCreate, 0, 10, commit.WriteOptions{})
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"a", "a/b"} {
		if _, _, err := d.CreateBranch(ctx, name, snapshot.Ref{}, snapshot.BranchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := maint.DeleteBranch(ctx, st, "main"); !errors.Is(err, maint.ErrBranch) {
		t.Fatalf("delete main: %v", err)
	}
	if _, err := maint.DeleteBranch(ctx, st, "zz"); !errors.Is(err, maint.ErrBranch) {
		t.Fatalf("delete unknown: %v", err)
	}
	res, err := maint.DeleteBranch(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RemovedFiles) == 0 {
		t.Fatal("no files removed")
	}
	brs, _ := d.ListBranches(ctx)
	if len(brs) != 1 || brs[0].Name != "a/b" {
		t.Fatalf("branches left: %+v", brs)
	}
	if _, err := d.Checkout(ctx, snapshot.Options{Ref: snapshot.Ref{Branch: "a/b"}}); err != nil {
		t.Fatalf("nested branch lost: %v", err)
	}
}

// TestAutoCleanup_AfterCommit (§5.2 step 4): a table whose config sets
// lance.auto_cleanup.interval = 2 and older_than = 0s is cleaned up after
// the commit of version 2 (a multiple of the interval), not after version
// 3; a broken config is reported, never failing the commit.
func TestAutoCleanup_AfterCommit(t *testing.T) {
	ctx := context.Background()
	st, _ := localDir(t)
	write(t, st, commit.ModeCreate, 0, 10, commit.WriteOptions{Config: map[string]string{
		maint.AutoCleanupInterval: "2", maint.AutoCleanupOlderThan: "0s"}})
	var logs []string
	hook := maint.AfterCommit(st, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	write(t, st, commit.ModeOverwrite, 10, 10, commit.WriteOptions{Commit: commit.Options{AfterCommit: hook}})
	if _, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 1); err == nil {
		t.Fatalf("version 1 survived the automatic cleanup after version 2 (logs %v)", logs)
	}
	write(t, st, commit.ModeAppend, 20, 10, commit.WriteOptions{Commit: commit.Options{AfterCommit: hook}})
	if _, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 2); err != nil {
		t.Fatalf("version 2 removed after version 3 (interval 2): %v", err)
	}
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	if got := liveIDs(t, st); !slices.Equal(got, seq(10, 30)) {
		t.Fatalf("rows %v", got)
	}
	if d, err := maint.ParseDuration("14days"); err != nil || d != 14*24*time.Hour {
		t.Fatalf("14days: %v %v", d, err)
	}
	if d, err := maint.ParseDuration("1h 30min"); err != nil || d != 90*time.Minute {
		t.Fatalf("1h 30min: %v %v", d, err)
	}
}

// TestCleanup_FilesNewerThanOldestKeptManifestStay (Lance 12's listing
// rule, §8.4): a file only a removed manifest references is still kept
// when it was modified after the timestamp of the oldest kept manifest —
// it may belong to a write in flight, or the table may be a copy whose
// files are all recent — even with the cutoff past it; the same file with
// an older modification time goes.
func TestCleanup_FilesNewerThanOldestKeptManifestStay(t *testing.T) {
	ctx := context.Background()
	for _, newer := range []bool{true, false} {
		t.Run(fmt.Sprintf("newer=%v", newer), func(t *testing.T) {
			st, dir := localDir(t)
			write(t, st, commit.ModeCreate, 0, 10, commit.WriteOptions{})
			v1, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 1)
			if err != nil {
				t.Fatal(err)
			}
			old := "data/" + v1.Manifest.GetFragments()[0].GetFiles()[0].GetPath()
			write(t, st, commit.ModeOverwrite, 10, 10, commit.WriteOptions{})
			v2, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 2)
			if err != nil {
				t.Fatal(err)
			}
			mt := v2.Manifest.GetTimestamp().AsTime().Add(-time.Second)
			if newer {
				mt = v2.Manifest.GetTimestamp().AsTime().Add(time.Minute)
			}
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(old)), mt, mt); err != nil {
				t.Fatal(err)
			}
			res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: time.Now().Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.RemovedVersions, []uint64{1}) {
				t.Fatalf("removed versions %v, want [1]", res.RemovedVersions)
			}
			ok, err := st.Exists(ctx, old)
			if err != nil {
				t.Fatal(err)
			}
			if ok != newer {
				t.Fatalf("%s exists = %v after cleanup, want %v (removed %v)", old, ok, newer, res.RemovedFiles)
			}
		})
	}
}
