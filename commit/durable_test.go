package commit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// powerLossStore wraps a local *store.Store, implements the batched durable
// forms (batchStore) and models a power loss: it tracks which keys are
// durable — written by a durable Put/CreateIfAbsent/NewWriter, or named in
// a SyncKeys / CreateIfAbsentAfter batch — and which are only in the page
// cache (written deferred, not yet synced). crashAt is the index of the
// operation at which the machine loses power: that operation and every
// later one fail, and lose() then deletes every volatile file, the worst a
// crash can do to files that were never fsynced (their content and their
// directory entries may both be gone).
type powerLossStore struct {
	*store.Store
	dir     string
	crashAt int

	mu       sync.Mutex
	ops      []string
	volatile map[string]bool
	down     bool
	// race, when set, runs once between the first sync batch and its link:
	// another writer's commit that makes this one lose the race.
	race func()
}

func (p *powerLossStore) step(op, key string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return errInjected
	}
	p.ops = append(p.ops, op+" "+key)
	if p.crashAt >= 0 && len(p.ops)-1 == p.crashAt {
		p.down = true
		return errInjected
	}
	return nil
}

func (p *powerLossStore) mark(keys []string, volatile bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		if volatile {
			p.volatile[k] = true
		} else {
			delete(p.volatile, k)
		}
	}
}

func (p *powerLossStore) NewDeferredWriter(ctx context.Context, key string) (*store.Writer, error) {
	if err := p.step("deferred-writer", key); err != nil {
		return nil, err
	}
	p.mark([]string{key}, true)
	return p.Store.NewDeferredWriter(ctx, key)
}

func (p *powerLossStore) PutDeferred(ctx context.Context, key string, data []byte) error {
	if err := p.step("put-deferred", key); err != nil {
		return err
	}
	p.mark([]string{key}, true)
	return p.Store.PutDeferred(ctx, key, data)
}

// PutInPlace (the hint) is volatile as PutDeferred is.
func (p *powerLossStore) PutInPlace(ctx context.Context, key string, data []byte) error {
	if err := p.step("put-in-place", key); err != nil {
		return err
	}
	p.mark([]string{key}, true)
	return p.Store.PutInPlace(ctx, key, data)
}

func (p *powerLossStore) SyncKeys(ctx context.Context, keys []string) error {
	if err := p.step("sync", strings.Join(keys, ",")); err != nil {
		return err
	}
	err := p.Store.SyncKeys(ctx, keys)
	if err == nil {
		p.mark(keys, false)
	}
	return err
}

// CreateIfAbsentAfter is two steps: the batch sync (after it, the keys are
// durable) and the link (after it, the manifest exists and is durable).
func (p *powerLossStore) CreateIfAbsentAfter(ctx context.Context, key string, data []byte, after []string) (bool, error) {
	if err := p.step("sync-batch", strings.Join(after, ",")); err != nil {
		return false, err
	}
	if err := p.Store.SyncKeys(ctx, after); err != nil {
		return false, err
	}
	p.mark(after, false)
	if r := p.race; r != nil {
		p.race = nil
		r()
	}
	if err := p.step("create", key); err != nil {
		return true, err
	}
	return true, p.Store.CreateIfAbsent(ctx, key, data)
}

func (p *powerLossStore) Put(ctx context.Context, key string, data []byte) error {
	if err := p.step("put", key); err != nil {
		return err
	}
	return p.Store.Put(ctx, key, data)
}

func (p *powerLossStore) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := p.step("create", key); err != nil {
		return err
	}
	return p.Store.CreateIfAbsent(ctx, key, data)
}

// lose deletes the volatile files, as a power loss may, and leaves a torn
// hint (it is written in place).
func (p *powerLossStore) lose(t *testing.T) []string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var lost []string
	for k := range p.volatile {
		if strings.HasSuffix(k, manifest.HintName) {
			// The hint is written in place (PutInPlace): a crash may
			// leave any prefix of it, or a mix of old and new bytes.
			if err := os.WriteFile(filepath.Join(p.dir, filepath.FromSlash(k)), []byte(`{"versio`), 0o644); err != nil {
				t.Fatal(err)
			}
			lost = append(lost, k)
			continue
		}
		if err := os.Remove(filepath.Join(p.dir, filepath.FromSlash(k))); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		lost = append(lost, k)
	}
	slices.Sort(lost)
	return lost
}

var _ batchStore = (*powerLossStore)(nil)

// checkDataReadable fails unless every data file the latest manifest
// references opens and holds the fragment's rows.
func checkDataReadable(t testing.TB, st Store) {
	t.Helper()
	ctx := context.Background()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatalf("dataset does not open: %v", err)
	}
	for _, fr := range f.Manifest.GetFragments() {
		for _, df := range fr.GetFiles() {
			r, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+"data/"+df.GetPath(), datafile.OpenOptions{})
			if err != nil {
				t.Fatalf("version %d: data file %s: %v", f.Manifest.GetVersion(), df.GetPath(), err)
			}
			if n := r.NumRows(); n != fr.GetPhysicalRows() {
				t.Fatalf("data file %s has %d rows, fragment says %d", df.GetPath(), n, fr.GetPhysicalRows())
			}
		}
	}
}

// TestCrashSafety_BatchedDurability: the batched durable sequence
// (commit/durable.go: data files, transaction file written without fsync;
// one parallel sync batch; the manifest link; the hint in place, without
// fsync, left torn by a crash)
// survives a power loss at each of its steps (lance-table-format.md §5.1
// write order). A crash loses every file that was not fsynced; afterwards
// the dataset opens at the old version (crash before the manifest link) or
// the new one (after it), every data file the latest manifest names is
// present and complete, and the next commit lands at the next version.
func TestCrashSafety_BatchedDurability(t *testing.T) {
	// inline-only (Options.InlineTransactionOnly, flag bit 5): the same
	// sequence without the transaction file.
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline-only=%v", inline), func(t *testing.T) { crashBatchedDurability(t, inline) })
	}
}

func crashBatchedDurability(t *testing.T, inline bool) {
	ctx := context.Background()
	appendOpts := WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 60, Commit: Options{InlineTransactionOnly: inline}}
	// A dry run records the operations of one append of two data files.
	var steps []string
	// link is the step of the manifest link (create).
	link := 4
	{
		st, dir := localStoreDir(t)
		if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 100, 0), WriteOptions{Mode: ModeCreate}); err != nil {
			t.Fatal(err)
		}
		p := &powerLossStore{Store: st, dir: dir, crashAt: -1, volatile: map[string]bool{}}
		if _, err := WriteArrow(ctx, p, testRecords(testArrowSchema, 2, 50, 100), appendOpts); err != nil {
			t.Fatal(err)
		}
		steps = p.ops
		// The sequence is the batched one: nothing durable one by one.
		var kinds []string
		for _, s := range steps {
			kinds = append(kinds, strings.Fields(s)[0])
		}
		want := []string{"deferred-writer", "deferred-writer", "deferred-writer", "sync-batch", "create", "put-in-place"}
		if inline {
			want = want[1:]
			link = 3
		}
		if !slices.Equal(kinds, want) {
			t.Fatalf("operations %q, want kinds %q", steps, want)
		}
		batch := steps[link-1]
		if !strings.Contains(batch, "data/") || strings.Contains(batch, "_transactions/") == inline {
			t.Fatalf("the sync batch %q does not cover the data files and (unless inline-only) the transaction file", batch)
		}
	}
	for i := 0; i <= len(steps); i++ {
		name := "after everything"
		if i < len(steps) {
			name = fmt.Sprintf("at %d %s", i, strings.Fields(steps[i])[0])
		}
		t.Run(name, func(t *testing.T) {
			st, dir := localStoreDir(t)
			if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 100, 0), WriteOptions{Mode: ModeCreate}); err != nil {
				t.Fatal(err)
			}
			p := &powerLossStore{Store: st, dir: dir, crashAt: i, volatile: map[string]bool{}}
			if i == len(steps) {
				p.crashAt = -1
			}
			res, err := WriteArrow(ctx, p, testRecords(testArrowSchema, 2, 50, 100), appendOpts)
			committed := i > link // the link happened
			switch {
			case i == link+1:
				// Losing power while writing the hint: the commit returned.
				if err != nil || res.HintError == nil {
					t.Fatalf("err %v hint error %v", err, res)
				}
			case i <= link && !errors.Is(err, errInjected):
				t.Fatalf("got %v, want the injected crash", err)
			case i == len(steps) && err != nil:
				t.Fatal(err)
			}
			lost := p.lose(t)
			for _, k := range lost {
				if committed && !strings.HasSuffix(k, manifest.HintName) {
					t.Errorf("a committed version lost %s to the crash", k)
				}
			}
			want, rows := uint64(1), uint64(100)
			if committed {
				want, rows = 2, 200
			}
			if v := latestVersion(t, st); v != want {
				t.Fatalf("latest version %d, want %d", v, want)
			}
			if got := totalRows(t, st); got != rows {
				t.Fatalf("rows %d, want %d", got, rows)
			}
			checkDataReadable(t, st)
			r, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 200), WriteOptions{Mode: ModeAppend})
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != want+1 || totalRows(t, st) != rows+10 {
				t.Fatalf("next commit: version %d rows %d", r.Version, totalRows(t, st))
			}
			checkDataReadable(t, st)
		})
	}
}

// localStoreDir is localStore that also returns the directory.
func localStoreDir(t testing.TB) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir() + "/ds"
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

// TestCrashSafety_RetryAfterLostRace: a commit that loses the race at the
// link after its sync batch retries without syncing its data and
// transaction files again (the batch made them durable: CreateIfAbsentAfter
// reports synced) — the retry's batch holds only its new manifest. A power
// loss at each step of that sequence leaves version 1 (before the other
// writer's commit), 2 (the other writer's) or 3 (ours), with every data
// file the latest manifest names complete, and the next commit lands on
// top (lance-table-format.md §5.1 write order, §5.2 retries).
func TestCrashSafety_RetryAfterLostRace(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T, crashAt int) (*store.Store, *powerLossStore) {
		st, dir := localStoreDir(t)
		if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 100, 0), WriteOptions{Mode: ModeCreate}); err != nil {
			t.Fatal(err)
		}
		p := &powerLossStore{Store: st, dir: dir, crashAt: crashAt, volatile: map[string]bool{}}
		p.race = func() {
			if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 1000), WriteOptions{Mode: ModeAppend}); err != nil {
				t.Error(err)
			}
		}
		return st, p
	}
	var steps []string
	{
		_, p := setup(t, -1)
		res, err := WriteArrow(ctx, p, testRecords(testArrowSchema, 2, 50, 100), WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 60})
		if err != nil || res.Version != 3 || res.Attempts != 1 {
			t.Fatalf("dry run: %v %+v", err, res)
		}
		steps = p.ops
		var kinds []string
		for _, s := range steps {
			kinds = append(kinds, strings.Fields(s)[0])
		}
		want := []string{"deferred-writer", "deferred-writer", "deferred-writer", "sync-batch", "create", "sync-batch", "create", "put-in-place"}
		if !slices.Equal(kinds, want) {
			t.Fatalf("operations %q, want kinds %q", steps, want)
		}
		if len(strings.Fields(steps[5])) != 1 {
			t.Fatalf("the retry synced %q again; the first batch had made them durable", steps[5])
		}
	}
	for i := 0; i <= len(steps); i++ {
		name := "after everything"
		if i < len(steps) {
			name = fmt.Sprintf("at %d %s", i, strings.Fields(steps[i])[0])
		}
		t.Run(name, func(t *testing.T) {
			st, p := setup(t, i)
			if i == len(steps) {
				p.crashAt = -1
			}
			_, err := WriteArrow(ctx, p, testRecords(testArrowSchema, 2, 50, 100), WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 60})
			if i < 7 && !errors.Is(err, errInjected) {
				t.Fatalf("got %v, want the injected crash", err)
			}
			p.lose(t)
			want, rows := uint64(1), uint64(100)
			switch {
			case i > 6: // our link (step 6) happened
				want, rows = 3, 210
			case i >= 4: // the other writer committed before step 4
				want, rows = 2, 110
			}
			if v := latestVersion(t, st); v != want {
				t.Fatalf("latest version %d, want %d", v, want)
			}
			if got := totalRows(t, st); got != rows {
				t.Fatalf("rows %d, want %d", got, rows)
			}
			checkDataReadable(t, st)
			r, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 200), WriteOptions{Mode: ModeAppend})
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != want+1 || totalRows(t, st) != rows+10 {
				t.Fatalf("next commit: version %d rows %d", r.Version, totalRows(t, st))
			}
			checkDataReadable(t, st)
		})
	}
}

// notDurableStore links the manifest but reports that the fsync of its
// name failed, as CreateIfAbsentAfter does after a failed directory fsync.
type notDurableStore struct{ *store.Store }

func (n notDurableStore) CreateIfAbsentAfter(ctx context.Context, key string, data []byte, after []string) (bool, error) {
	if _, err := n.Store.CreateIfAbsentAfter(ctx, key, data, after); err != nil {
		return true, err
	}
	return true, fmt.Errorf("%w: injected fsync failure", store.ErrNotDurable)
}

// TestCrashSafety_FailedFsyncOfTheNameIsNoSuccess: a manifest linked to
// its name whose directory fsync then failed is visible but not durable;
// the commit must not report success (a power loss could still take the
// version away) and must not invite a cleanup of its files: the error
// wraps ErrCommitOutcomeUnknown (lance-table-format.md §5.1: the manifest
// is the commit point, durable before the commit returns).
func TestCrashSafety_FailedFsyncOfTheNameIsNoSuccess(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	_, err := WriteArrow(ctx, notDurableStore{st}, testRecords(testArrowSchema, 1, 10, 10), WriteOptions{Mode: ModeAppend})
	if !errors.Is(err, ErrCommitOutcomeUnknown) || !errors.Is(err, store.ErrNotDurable) {
		t.Fatalf("got %v, want ErrCommitOutcomeUnknown wrapping store.ErrNotDurable", err)
	}
}
