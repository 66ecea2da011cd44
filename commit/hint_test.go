package commit

import (
	"context"
	"errors"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestSpec4_5_HintOnlyOnLocalStores: commits (and the first commit of a
// clone) write _versions/latest_version_hint.json, exactly {"version":N},
// on local stores only — Lance writes it only where listing cannot find the
// newest manifest cheaply; lexically listed object stores never get one.
// NoHint suppresses it on a local store too.
func TestSpec4_5_HintOnlyOnLocalStores(t *testing.T) {
	ctx := context.Background()
	bucketStore := func(tb testing.TB) *store.Store {
		b := memblob.OpenBucket(nil)
		tb.Cleanup(func() { b.Close() })
		st, err := store.FromBucket(b, "ds", true)
		if err != nil {
			tb.Fatal(err)
		}
		return st
	}
	for _, tc := range []struct {
		name     string
		st       func(testing.TB) *store.Store
		noHint   bool
		wantHint bool
	}{
		{"local", localStore, false, true},
		{"local with NoHint", localStore, true, false},
		{"memory", memStore, false, false},
		{"caller bucket", bucketStore, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hint := func(st Store, want uint64) {
				t.Helper()
				data, err := st.Get(ctx, manifest.VersionsDir+"/"+manifest.HintName)
				switch {
				case !tc.wantHint && !errors.Is(err, store.ErrNotFound):
					t.Fatalf("%s store got a hint: %q, %v", st.Kind(), data, err)
				case tc.wantHint && (err != nil || string(data) != string(manifest.EncodeHint(want))):
					t.Fatalf("hint %q, %v; want %s", data, err, manifest.EncodeHint(want))
				}
			}
			st := tc.st(t)
			opts := Options{NoHint: tc.noHint}
			txn := NewOverwrite(0, OverwriteSpec{Fragments: nil, Schema: testSchema()})
			if r, err := Commit(ctx, st, txn, opts); err != nil || r.HintError != nil {
				t.Fatal(err, r.HintError)
			}
			hint(st, 1)
			mustCommit(t, st, NewReserveFragments(1, 1), opts)
			hint(st, 2)

			dst := tc.st(t)
			f := readVersion(t, st, 2)
			mustCommit(t, dst, NewClone(CloneSpec{Source: f.Manifest, Shallow: true, RefVersion: 2, RefPath: "/src"}), opts)
			hint(dst, 2)
		})
	}
}

// TestSpec4_5_StaleOrGarbageHintNeverMisleadsACommit: the hint is never
// authoritative. A commit on a local store whose hint is garbage, points
// past the end or lags behind lands at latest+1 and rewrites the hint.
func TestSpec4_5_StaleOrGarbageHintNeverMisleadsACommit(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{`not json`, `{"version":99}`, `{"version":1}`, `{"version":0}`} {
		t.Run(bad, func(t *testing.T) {
			st := localStore(t)
			mustCreate(t, st, fakeFrag("a", 1))
			mustCommit(t, st, NewReserveFragments(1, 1), Options{})
			if err := st.Put(ctx, manifest.VersionsDir+"/"+manifest.HintName, []byte(bad)); err != nil {
				t.Fatal(err)
			}
			r := mustCommit(t, st, NewReserveFragments(2, 1), Options{})
			if r.Version != 3 {
				t.Fatalf("committed version %d with hint %s, want 3", r.Version, bad)
			}
			if data, err := st.Get(ctx, manifest.VersionsDir+"/"+manifest.HintName); err != nil || string(data) != `{"version":3}` {
				t.Fatalf("hint %q, %v", data, err)
			}
		})
	}
}
