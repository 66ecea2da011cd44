package commit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

const seedBits = flags.ZoneWriteSeeds

func hasBoth(m *pb.Manifest) bool { return HasZoneWriteSeeds(m) }

func hasNeither(m *pb.Manifest) bool {
	return m.GetReaderFeatureFlags()&seedBits == 0 && m.GetWriterFeatureFlags()&seedBits == 0
}

// seededAppend is an Append whose new data file is known to carry a v1 seed.
func seededAppend(read uint64, name string) *Transaction {
	f := fakeFrag(name, 4)
	txn := NewAppend(read, []*pb.DataFragment{f})
	txn.MarkSeedFiles(true, name+".lance")
	return txn
}

// snapshotObjects returns every object of the store with its bytes.
func snapshotObjects(t testing.TB, st *store.Store) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	objs, err := st.List(ctx, "", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range objs {
		b, err := st.Get(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = b
	}
	return out
}

func TestR53_ActivationSetsBit16InBothWords(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	r := mustCommit(t, st, NewEnableZoneWriteSeeds(1), Options{})
	m := r.Manifest
	if m.GetReaderFeatureFlags() != 65536 || m.GetWriterFeatureFlags() != 65536 {
		t.Fatalf("flags %d/%d, want 65536/65536", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	// "changes nothing else": same fragments, schema, config; an empty
	// UpdateConfig with the activation property.
	prev := readVersion(t, st, 1).Manifest
	if !proto.Equal(&pb.Manifest{Fields: prev.Fields, Fragments: prev.Fragments, Config: prev.Config, MaxFragmentId: prev.MaxFragmentId},
		&pb.Manifest{Fields: m.Fields, Fragments: m.Fragments, Config: m.Config, MaxFragmentId: m.MaxFragmentId}) {
		t.Fatal("activation changed content")
	}
	if r.Transaction.GetTransactionProperties()[PropertyZoneWriteSeeds] != "enable" || KindOf(r.Transaction) != OpUpdateConfig {
		t.Fatalf("activation transaction %v", r.Transaction)
	}
}

// T69: the first commit adding a data file with a v1 seed sets both bits in
// the same manifest (R54).
func TestR54_FirstCommitReferencingV1SeedsCarriesBothBits(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	// Without opt-in and without the bits: refused, nothing committed.
	_, err := Commit(context.Background(), st, seededAppend(1, "s1"), Options{})
	if !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatalf("got %v", err)
	}
	if latestVersion(t, st) != 1 {
		t.Fatal("committed without opt-in")
	}
	// With the opt-in the very manifest that references the seed has both.
	r := mustCommit(t, st, seededAppend(1, "s2"), Options{EnableZoneWriteSeeds: true})
	if r.Version != 2 || !hasBoth(r.Manifest) {
		t.Fatalf("version %d flags %d/%d", r.Version, r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetWriterFeatureFlags())
	}
	// Creating a dataset with seeded files: version 1 carries them.
	st2 := memStore(t)
	ow := NewOverwrite(0, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("c", 1)}, Schema: testSchema()})
	ow.MarkSeedFiles(true, "c.lance")
	r2 := mustCommit(t, st2, ow, Options{EnableZoneWriteSeeds: true})
	if r2.Version != 1 || !hasBoth(r2.Manifest) {
		t.Fatal("create with v1 seeds lacks the bits")
	}
	// Once the dataset has the bits, seeded appends need no opt-in.
	r3 := mustCommit(t, st, seededAppend(2, "s3"), Options{})
	if !hasBoth(r3.Manifest) {
		t.Fatal("lost")
	}
}

// T73: a client without support for a bit refuses the table (R55); the
// real Lance 12 side of T73 is in tests/compat (refusal category).
func TestR55_UnknownBitsAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r, w uint64
		want error
	}{
		{"unknown reader bit", 1 << 20, 0, flags.ErrUnsupported},
		{"unknown writer bit", 0, 1 << 15, flags.ErrUnsupported},
		{"unstable overlay bit 6", 1 << 6, 1 << 6, flags.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memStore(t)
			publishFlags(t, st, mustCreate(t, st, fakeFrag("a", 1)), tc.r, tc.w)
			_, err := Commit(ctx, st, appendTxn(2, fakeFrag("b", 1)), Options{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// T74: opening and reading never sets the bits (R56).
func TestR56_NoImplicitActivation(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	before := snapshotObjects(t, st)
	// Reading: latest, every version, its transaction, the seed inspection
	// of a data file.
	if _, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix()); err != nil {
		t.Fatal(err)
	}
	d := &dataset{st: st, root: st.KeyPrefix(), files: map[uint64]*manifest.File{}}
	if _, err := d.transactionOf(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := DataFileCarriesV1Seed(ctx, st, "data/a.lance"); err == nil {
		t.Fatal("a.lance does not exist; want an error")
	}
	// A refused seeded append writes no manifest and leaves the flags alone.
	if _, err := Commit(ctx, st, seededAppend(1, "s"), Options{}); !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatal(err)
	}
	after := snapshotObjects(t, st)
	if len(after) != len(before) {
		t.Fatalf("reading or a refused commit wrote files: %d -> %d objects", len(before), len(after))
	}
	for k, v := range before {
		if !bytes.Equal(after[k], v) {
			t.Fatalf("%s changed", k)
		}
	}
}

// T70: dropping the index and overwriting away every v1 file keeps the bits;
// T71: shallow and deep clone and restore of a pre-flag version keep them (R57).
func TestR57_BitsSurviveEveryDerivedManifest(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	mustCreate(t, st, fakeFrag("a", 5), fakeFrag("b", 5))                                               // v1: no bits
	mustCommit(t, st, NewCreateIndex(1, []*pb.IndexMetadata{testIndex("ix", 1, 0, 1)}, nil), Options{}) // v2
	mustCommit(t, st, NewEnableZoneWriteSeeds(2), Options{})                                            // v3: activation
	steps := []struct {
		name string
		txn  func(read uint64) *Transaction
	}{
		{"append", func(r uint64) *Transaction { return appendTxn(r, fakeFrag("c", 2)) }},
		{"delete", func(r uint64) *Transaction { return mustDelete(t, st, r, map[uint64]*roaring.Bitmap{0: bitmapOf(1)}) }},
		{"index drop", func(r uint64) *Transaction {
			txn, err := NewDropIndex(r, readVersion(t, st, r).Indices(), "ix")
			if err != nil {
				t.Fatal(err)
			}
			return txn
		}},
		{"config change", func(r uint64) *Transaction {
			return NewUpdateConfig(r, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: ptr("v")}}})
		}},
		{"config removal", func(r uint64) *Transaction {
			return NewUpdateConfig(r, UpdateConfigSpec{Config: []ConfigChange{{Key: "k"}}})
		}},
		{"reserve fragments", func(r uint64) *Transaction { return NewReserveFragments(r, 2) }},
		{"restore of a pre-activation version", func(r uint64) *Transaction { return NewRestore(r, 1) }},
		{"overwrite", func(r uint64) *Transaction {
			ow := NewOverwrite(r, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("d", 1)}, Schema: testSchema()})
			return ow.MarkSeedFiles(false, "d.lance")
		}},
	}
	for _, s := range steps {
		latest := latestVersion(t, st)
		r := mustCommit(t, st, s.txn(latest), Options{})
		if !hasBoth(r.Manifest) {
			t.Fatalf("%s (version %d) lost FLAG_ZONE_WRITE_SEEDS: %d/%d", s.name, r.Version, r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetWriterFeatureFlags())
		}
	}
	head := readVersion(t, st, latestVersion(t, st))
	for _, shallow := range []bool{true, false} {
		dst := localStore(t)
		r, err := Commit(ctx, dst, NewClone(CloneSpec{Source: head.Manifest, SourceIndices: head.Indices(), Shallow: shallow, RefVersion: head.Manifest.GetVersion(), RefPath: "/src"}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !hasBoth(r.Manifest) {
			t.Fatalf("clone (shallow=%v) lost the bits", shallow)
		}
	}
}

func TestR58_HistoricalManifestsAreNeverRewritten(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	mustCreate(t, st, fakeFrag("a", 5))
	mustCommit(t, st, appendTxn(1, fakeFrag("b", 5)), Options{})
	manifests := func() map[string][]byte {
		out := map[string][]byte{}
		for k, v := range snapshotObjects(t, st) {
			if _, _, ok := manifest.ParseManifestName(filepath.Base(k)); ok {
				out[k] = v
			}
		}
		return out
	}
	before := manifests()
	mustCommit(t, st, NewEnableZoneWriteSeeds(2), Options{})
	mustCommit(t, st, seededAppend(3, "s"), Options{})
	mustCommit(t, st, NewRestore(4, 1), Options{})
	after := manifests()
	if len(after) != len(before)+3 {
		t.Fatalf("%d manifests, want %d", len(after), len(before)+3)
	}
	for k, v := range before {
		if !bytes.Equal(after[k], v) {
			t.Fatalf("historical manifest %s was rewritten", k)
		}
		m := readVersion(t, st, mustParseVersion(t, k)).Manifest
		if !hasNeither(m) {
			t.Fatalf("historical %s gained bits", k)
		}
	}
	_ = ctx
}

func mustParseVersion(t testing.TB, key string) uint64 {
	v, _, ok := manifest.ParseManifestName(filepath.Base(key))
	if !ok {
		t.Fatalf("not a manifest: %s", key)
	}
	return v
}

func TestR59_NeverProduceHalfSetPair(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r, w uint64
	}{{"reader only", seedBits, 0}, {"writer only", 0, seedBits}, {"bit 8 reader only", flags.MixedDataFileVersions, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			st := memStore(t)
			publishFlags(t, st, mustCreate(t, st, fakeFrag("a", 1)), tc.r, tc.w)
			for _, txn := range []*Transaction{appendTxn(2, fakeFrag("b", 1)), NewEnableZoneWriteSeeds(2), NewRestore(2, 1)} {
				if _, err := Commit(ctx, st, txn, Options{EnableZoneWriteSeeds: true}); !errors.Is(err, flags.ErrHalfSet) {
					t.Fatalf("%s on a half-set parent: %v", txn.Kind(), err)
				}
			}
			if latestVersion(t, st) != 2 {
				t.Fatal("committed on a half-set parent")
			}
		})
	}
	// Every manifest this package produced in a mixed history is paired.
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	mustCommit(t, st, seededAppend(1, "s"), Options{EnableZoneWriteSeeds: true})
	mustCommit(t, st, NewRestore(2, 1), Options{})
	for v := uint64(1); v <= 3; v++ {
		m := readVersion(t, st, v).Manifest
		if err := flags.CheckPaired(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()); err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
	}
}

func TestR60_V0AndV1SeedsCoexist(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	mustCommit(t, st, seededAppend(1, "v1"), Options{EnableZoneWriteSeeds: true})
	// A file with only v0 seeds (marked false: it carries no v1 seed) joins
	// a flagged table without changing anything about the flags.
	r := mustCommit(t, st, appendTxn(2, fakeFrag("v0", 1)), Options{})
	if !hasBoth(r.Manifest) {
		t.Fatal("bits lost")
	}
}

// copyDir copies a dataset directory (e.g. from testdata) to a temp dir.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := peerlance.CopyDir(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestR62_V0SeedsNeverRequireTheBits appends, to a real Lance 12 dataset
// whose data files carry v0 seeds, a fragment referencing such a file: the
// seed inspection finds no v1 seed, no opt-in is needed, no bit is set.
func TestR62_V0SeedsNeverRequireTheBits(t *testing.T) {
	ctx := context.Background()
	dir := copyDir(t, "testdata/lance12_seeds_v0_zonemap.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var seeded *pb.DataFragment
	for _, f := range head.Manifest.GetFragments() {
		df, err := DataFileCarriesV1Seed(ctx, st, "data/"+f.GetFiles()[0].GetPath())
		if err != nil {
			t.Fatal(err)
		}
		if df {
			t.Fatalf("fragment %d: Lance 12 v0 seed reported as v1", f.GetId())
		}
		if f.GetPhysicalRows() == 40 {
			seeded = f
		}
	}
	if seeded == nil {
		t.Fatal("corpus changed: no 40-row fragment with v0 seeds")
	}
	nf := proto.Clone(seeded).(*pb.DataFragment)
	nf.DeletionFile = nil
	// A copy under a new name: a version never references a data file
	// twice (issue 15 item 2).
	copyName := NewDataFileName()
	if err := st.Copy(ctx, "data/"+copyName, "data/"+seeded.GetFiles()[0].GetPath()); err != nil {
		t.Fatal(err)
	}
	nf.Files[0].Path = copyName
	txn := NewAppend(head.Manifest.GetVersion(), []*pb.DataFragment{nf}) // not marked: inspected
	r, err := Commit(ctx, st, txn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNeither(r.Manifest) || r.Version != head.Manifest.GetVersion()+1 {
		t.Fatalf("v0 seeds set bits: %d/%d", r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetWriterFeatureFlags())
	}
	// The Lance-written history (inline transactions) was read for nothing:
	// the new manifest keeps Lance's data format and schema.
	if r.Manifest.GetDataFormat().GetVersion() != head.Manifest.GetDataFormat().GetVersion() || len(r.Manifest.GetFields()) != len(head.Manifest.GetFields()) {
		t.Fatal("content changed")
	}
}

// TestQ18_RetryAndRebaseRederiveTheBits: the flag decision is re-made on
// every attempt against the manifest that attempt follows.
func TestQ18_RetryAndRebaseRederiveTheBits(t *testing.T) {
	t.Run("seeded append rebased over a plain append", func(t *testing.T) {
		st := memStore(t)
		mustCreate(t, st, fakeFrag("a", 1))
		seeded := seededAppend(1, "s")
		mustCommit(t, st, appendTxn(1, fakeFrag("b", 1)), Options{}) // wins the race
		r := mustCommit(t, st, seeded, Options{EnableZoneWriteSeeds: true})
		if r.Version != 3 || !hasBoth(r.Manifest) {
			t.Fatalf("rebased seeded append: version %d bits %v", r.Version, hasBoth(r.Manifest))
		}
		if hasNeither(readVersion(t, st, 2).Manifest) == false {
			t.Fatal("the concurrent plain append gained bits")
		}
	})
	t.Run("concurrent activation makes an unopted seeded append valid", func(t *testing.T) {
		st := memStore(t)
		mustCreate(t, st, fakeFrag("a", 1))
		seeded := seededAppend(1, "s")
		mustCommit(t, st, NewEnableZoneWriteSeeds(1), Options{})
		r := mustCommit(t, st, seeded, Options{})
		if !hasBoth(r.Manifest) {
			t.Fatal("bits")
		}
	})
	t.Run("lost races re-derive on each attempt", func(t *testing.T) {
		st := memStore(t)
		mustCreate(t, st, fakeFrag("a", 1))
		seeded := seededAppend(1, "s")
		// Two plain appends win the race just before our manifest create.
		n := 0
		fs := &faultStore{Store: st, before: func(op, key string) error {
			if op == "create" && strings.HasPrefix(key, "_versions/") && n < 2 {
				n++
				mustCommit(t, st, appendTxn(1, fakeFrag(fmt.Sprintf("p%d", n), 1)), Options{})
			}
			return nil
		}}
		r := mustCommit(t, fs, seeded, Options{EnableZoneWriteSeeds: true, Backoff: noBackoff})
		if r.Attempts != 3 || r.Version != 4 || !hasBoth(r.Manifest) {
			t.Fatalf("attempts %d version %d bits %v", r.Attempts, r.Version, hasBoth(r.Manifest))
		}
		for v := uint64(1); v <= 3; v++ {
			if !hasNeither(readVersion(t, st, v).Manifest) {
				t.Fatalf("version %d has bits", v)
			}
		}
	})
}
