package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

func totalRows(t testing.TB, st Store) uint64 {
	t.Helper()
	f, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatalf("dataset does not open: %v", err)
	}
	var n uint64
	for _, fr := range f.Manifest.GetFragments() {
		n += fr.GetPhysicalRows()
	}
	return n
}

// TestCrashSafety injects a crash at each step of a commit (lance §5.1 write
// order: data files → transaction file → manifest → hint). Afterwards the
// dataset opens at the last committed version — the old one if the crash
// came before the manifest create, the new one after it — and accepts the
// next commit at the next version.
func TestCrashSafety(t *testing.T) {
	steps := []struct {
		name      string
		op, key   string
		after     bool
		committed bool
	}{
		{"while opening a data file", "writer", "data/", false, false},
		{"after the data files, before the transaction file", "put", "_transactions/", false, false},
		{"after the transaction file, before the manifest create", "create", "_versions/", false, false},
		{"after the manifest create", "create", "_versions/", true, true},
		{"before the hint", "put", "_versions/" + manifest.HintName, false, true},
	}
	for _, backend := range []string{"local", "mem"} {
		for _, s := range steps {
			if s.name == "before the hint" && backend != "local" {
				continue // §4.5: only local stores get a hint
			}
			t.Run(backend+"/"+s.name, func(t *testing.T) {
				ctx := context.Background()
				var st *store.Store
				if backend == "local" {
					st = localStore(t)
				} else {
					st = memStore(t)
				}
				if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 100, 0), WriteOptions{Mode: ModeCreate}); err != nil {
					t.Fatal(err)
				}
				fs := crashAt(st, s.op, s.key, s.after)
				res, err := WriteArrow(ctx, fs, testRecords(testArrowSchema, 2, 50, 100), WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 60})
				switch {
				case s.name == "before the hint":
					// The hint is best effort: the commit succeeded.
					if err != nil || res.HintError == nil {
						t.Fatalf("err %v hint error %v", err, res.HintError)
					}
				case !errors.Is(err, errInjected):
					t.Fatalf("got %v, want the injected crash", err)
				}
				want := uint64(1)
				rows := uint64(100)
				if s.committed {
					want, rows = 2, 200
				}
				if v := latestVersion(t, st); v != want {
					t.Fatalf("latest version %d, want %d", v, want)
				}
				if got := totalRows(t, st); got != rows {
					t.Fatalf("rows %d, want %d", got, rows)
				}
				if s.committed && s.name == "after the manifest create" && !errors.Is(err, ErrCommitOutcomeUnknown) {
					t.Fatalf("an unverifiable manifest write must say so: %v", err)
				}
				checkFilesExist(t, st)
				// The next commit (a new process: the plain store) lands at
				// the next version, even with a stale hint.
				r, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 200), WriteOptions{Mode: ModeAppend})
				if err != nil {
					t.Fatal(err)
				}
				if r.Version != want+1 || totalRows(t, st) != rows+10 {
					t.Fatalf("next commit: version %d rows %d", r.Version, totalRows(t, st))
				}
				all, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
				if err != nil {
					t.Fatal(err)
				}
				for i, vi := range all {
					if vi.Version != uint64(i+1) {
						t.Fatalf("versions not contiguous: %v", all)
					}
				}
			})
		}
	}
}

// TestCrashSafety_StagingLeftovers: leftovers of a crashed writer in
// _versions/ (a staging name, a temporary file) are not manifests.
func TestCrashSafety_StagingLeftovers(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	for _, k := range []string{
		"_versions/" + manifest.ManifestName(manifest.V2, 2) + "-0b6d0c1e-6a54-4f53-9b0e-6d1f0e0b9d21",
		"_versions/.tmp_18446744073709551613.manifest_x",
	} {
		if err := st.Put(ctx, k, []byte("partial")); err != nil {
			t.Fatal(err)
		}
	}
	if v := latestVersion(t, st); v != 1 {
		t.Fatalf("latest %d", v)
	}
	r := mustCommit(t, st, appendTxn(1, fakeFrag("b", 1)), Options{})
	if r.Version != 2 {
		t.Fatalf("version %d", r.Version)
	}
}

// checkFilesExist fails when the latest manifest references a data or
// deletion file that does not exist.
func checkFilesExist(t testing.TB, st Store) {
	t.Helper()
	ctx := context.Background()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range f.Manifest.GetFragments() {
		for _, df := range fr.GetFiles() {
			if ok, err := st.Exists(ctx, "data/"+df.GetPath()); !ok || err != nil {
				t.Fatalf("version %d references missing data file %s (%v)", f.Manifest.GetVersion(), df.GetPath(), err)
			}
		}
	}
}

// TestPublish_AmbiguousCreateIsReadBack: a create that reports an error but
// landed (a timeout, or an SDK retry of a conditional PUT answered with
// "already exists") is recognised by reading the manifest back.
func TestPublish_AmbiguousCreateIsReadBack(t *testing.T) {
	for _, e := range []error{errors.New("i/o timeout"), store.ErrAlreadyExists} {
		t.Run(e.Error(), func(t *testing.T) {
			st := memStore(t)
			mustCreate(t, st, fakeFrag("a", 1))
			once := false
			fs := &faultStore{Store: st, after: func(op, key string) error {
				if op == "create" && !once {
					once = true
					return e
				}
				return nil
			}}
			r, err := Commit(context.Background(), fs, appendTxn(1, fakeFrag("b", 1)), Options{})
			if err != nil || r.Version != 2 || r.Attempts != 1 {
				t.Fatalf("got %v %+v", err, r)
			}
		})
	}
}
