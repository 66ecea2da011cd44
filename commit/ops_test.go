package commit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func mustDelete(t testing.TB, st Store, read uint64, rows map[uint64]*roaring.Bitmap) *Transaction {
	t.Helper()
	txn, err := NewDelete(context.Background(), st, readVersion(t, st, read), rows, "test")
	if err != nil {
		t.Fatal(err)
	}
	return txn
}

func TestDelete_WritesDeletionFilesAndSetsBit0(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 10), fakeFrag("b", 8000), fakeFrag("c", 3))
	big := roaring.New()
	big.AddRange(0, 6000)
	r := mustCommit(t, st, mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(1, 3), 1: big, 2: bitmapOf(0, 1, 2)}), Options{})
	m := r.Manifest
	if m.GetReaderFeatureFlags()&flags.DeletionFiles == 0 || m.GetWriterFeatureFlags()&flags.DeletionFiles == 0 {
		t.Fatalf("bit 0 not set: %d/%d", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	if got := sprintIDs(m); got != "[0 1]" {
		t.Fatalf("fully deleted fragment kept: %s", got)
	}
	d0, d1 := m.GetFragments()[0].GetDeletionFile(), m.GetFragments()[1].GetDeletionFile()
	if d0.GetFileType() != pb.DeletionFile_ARROW_ARRAY || d0.GetNumDeletedRows() != 2 || d0.GetReadVersion() != 1 {
		t.Fatalf("small delete %v", d0)
	}
	if d1.GetFileType() != pb.DeletionFile_BITMAP || d1.GetNumDeletedRows() != 6000 {
		t.Fatalf("large delete %v", d1)
	}
	if got := deletedRows(t, st, m, 0); !got.Equals(bitmapOf(1, 3)) {
		t.Fatalf("rows %v", got)
	}
	if got := r.Transaction.GetDelete().GetDeletedFragmentIds(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("deleted_fragment_ids %v", got)
	}
	// A second delete on fragment 0 writes a complete new file (union).
	r2 := mustCommit(t, st, mustDelete(t, st, 2, map[uint64]*roaring.Bitmap{0: bitmapOf(3, 5)}), Options{})
	if got := deletedRows(t, st, r2.Manifest, 0); !got.Equals(bitmapOf(1, 3, 5)) {
		t.Fatalf("rows %v", got)
	}
	if ok, _ := st.Exists(ctx, "_deletions/"+"0-1-"); ok {
		t.Fatal("unexpected")
	}
}

func TestDelete_RebaseMergesDeletionVectors(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 10), fakeFrag("b", 10))
	d1 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(1, 2)})
	d2 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(7), 1: bitmapOf(0)})
	mustCommit(t, st, d1, Options{})
	r := mustCommit(t, st, d2, Options{})
	if r.Version != 3 || r.ReadVersion != 1 {
		t.Fatalf("version %d read %d", r.Version, r.ReadVersion)
	}
	if got := deletedRows(t, st, r.Manifest, 0); !got.Equals(bitmapOf(1, 2, 7)) {
		t.Fatalf("merged rows %v", got)
	}
	// The rebased deletion file is named with the version it was rebased
	// onto (§5.2 use (3) of read_version); the untouched one with 1.
	if got := r.Manifest.GetFragments()[0].GetDeletionFile().GetReadVersion(); got != 2 {
		t.Fatalf("rebased deletion file read_version %d", got)
	}
	if got := r.Manifest.GetFragments()[1].GetDeletionFile().GetReadVersion(); got != 1 {
		t.Fatalf("deletion file read_version %d", got)
	}
	// The committed transaction is the rebased one.
	f := readVersion(t, st, 3)
	if !proto.Equal(f.Transaction, r.Transaction) || f.Transaction.GetDelete().GetUpdatedFragments()[0].GetDeletionFile().GetNumDeletedRows() != 3 {
		t.Fatalf("inline transaction not rebased: %v", f.Transaction)
	}
}

func TestDelete_SameRowsIsRetryable(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 10))
	d1 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(1, 2)})
	d2 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(2, 3)})
	mustCommit(t, st, d1, Options{})
	_, err := Commit(context.Background(), st, d2, Options{})
	wantConflict(t, err, true, 2, "Delete")
	if !strings.Contains(err.Error(), "deleted by both") {
		t.Fatalf("message %q", err)
	}
}

func TestDelete_RebaseThatEmptiesFragmentRemovesIt(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3), fakeFrag("b", 3))
	d1 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(0, 1)})
	d2 := mustDelete(t, st, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(2)})
	mustCommit(t, st, d1, Options{})
	r := mustCommit(t, st, d2, Options{})
	if got := sprintIDs(r.Manifest); got != "[1]" {
		t.Fatalf("ids %s", got)
	}
	if got := r.Transaction.GetDelete().GetDeletedFragmentIds(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("deleted ids %v", got)
	}
}

func TestDelete_AfterRestoreIsIncompatible(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	mustCommit(t, st, appendTxn(1, fakeFrag("b", 3)), Options{})
	d := mustDelete(t, st, 2, map[uint64]*roaring.Bitmap{1: bitmapOf(0)})
	mustCommit(t, st, NewRestore(2, 1), Options{})
	_, err := Commit(context.Background(), st, d, Options{})
	wantConflict(t, err, false, 3, "Restore")
}

func TestDelete_BadRowOffset(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	_, err := NewDelete(context.Background(), st, readVersion(t, st, 1), map[uint64]*roaring.Bitmap{0: bitmapOf(3)}, "")
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("got %v", err)
	}
	_, err = NewDelete(context.Background(), st, readVersion(t, st, 1), map[uint64]*roaring.Bitmap{5: bitmapOf(0)}, "")
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("got %v", err)
	}
}

func TestRestore_Section8_3(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	mustCommit(t, st, appendTxn(1, fakeFrag("b", 3)), Options{})
	mustCommit(t, st, NewUpdateConfig(2, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: ptr("v")}}}), Options{})
	old := readVersion(t, st, 1).Manifest
	r := mustCommit(t, st, NewRestore(3, 1), Options{})
	m := r.Manifest
	if m.GetVersion() != 4 || sprintIDs(m) != "[0]" || len(m.GetConfig()) != 0 {
		t.Fatalf("restored %d %s %v", m.GetVersion(), sprintIDs(m), m.GetConfig())
	}
	if m.GetMaxFragmentId() != 1 {
		t.Fatalf("max_fragment_id %d, want max(target, current) = 1", m.GetMaxFragmentId())
	}
	if !proto.Equal(m.GetWriterVersion(), old.GetWriterVersion()) {
		t.Fatal("writer_version must stay the target's")
	}
	if m.GetWriterFeatureFlags()&flags.TableConfig != 0 {
		t.Fatal("flags not recomputed from the target")
	}
	if KindOf(r.Transaction) != OpRestore || r.Transaction.GetRestore().GetVersion() != 1 {
		t.Fatal("transaction")
	}
	// The next append continues the fragment ids after 1.
	r2 := mustCommit(t, st, appendTxn(4, fakeFrag("c", 1)), Options{})
	if r2.FragmentIDs[0] != 2 {
		t.Fatalf("append after restore got id %d", r2.FragmentIDs[0])
	}
}

func TestRestore_RefusesDroppingStableRowIDs(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	// Version 2: an overwrite (by another writer) with stable row ids.
	ow := NewOverwrite(1, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("b", 3)}, Schema: testSchema()})
	ow.MarkSeedFiles(false, "b.lance")
	ow.stableRowIDs = true
	mustCommit(t, st, ow, Options{})
	_, err := Commit(context.Background(), st, NewRestore(2, 1), Options{})
	if err == nil || !strings.Contains(err.Error(), "Cannot restore version 1: stable row ids were enabled after it") {
		t.Fatalf("got %v", err)
	}
}

func ptr(s string) *string { return &s }

func testIndex(name string, b byte, field int32, covering ...int32) *pb.IndexMetadata {
	u := make([]byte, 16)
	u[15] = b
	bm, _ := roaring.BitmapOf(0).ToBytes()
	return &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: u}, Name: name, Fields: append([]int32{field}, covering...), CoveringFields: covering, FragmentBitmap: bm, DatasetVersion: 1}
}

func TestCreateIndexAndDrop(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	r := mustCommit(t, st, NewCreateIndex(1, []*pb.IndexMetadata{testIndex("ix", 1, 0), testIndex("iy", 2, 0, 1)}, nil), Options{})
	if len(r.Indices) != 2 {
		t.Fatalf("indices %d", len(r.Indices))
	}
	// Bit 7: an index with covering fields.
	if !flags.Has(r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetWriterFeatureFlags(), flags.CoveredIndexMetadata) {
		t.Fatal("bit 7 not derived")
	}
	f := readVersion(t, st, 2)
	if len(f.Indices()) != 2 || f.Manifest.IndexSection == nil || f.Manifest.GetIndexSection() != 0 {
		t.Fatalf("index section %v", f.Manifest.IndexSection)
	}
	drop, err := NewDropIndex(2, f.Indices(), "iy")
	if err != nil {
		t.Fatal(err)
	}
	r2 := mustCommit(t, st, drop, Options{})
	if len(r2.Indices) != 1 || r2.Indices[0].GetName() != "ix" {
		t.Fatalf("after drop %v", r2.Indices)
	}
	if r2.Manifest.GetReaderFeatureFlags()&flags.CoveredIndexMetadata != 0 {
		t.Fatal("bit 7 kept after dropping the last covering index (§6.5)")
	}
	if _, err := NewDropIndex(3, r2.Indices, "nope"); !errors.Is(err, ErrInvalidTransaction) {
		t.Fatal(err)
	}
	// Overwrite drops all indices.
	ow := NewOverwrite(3, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("b", 1)}, Schema: testSchema()})
	ow.MarkSeedFiles(false, "b.lance")
	r3 := mustCommit(t, st, ow, Options{})
	if len(r3.Indices) != 0 {
		t.Fatal("overwrite kept indices")
	}
}

func TestUpdateConfig_Maps(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	r := mustCommit(t, st, NewUpdateConfig(1, UpdateConfigSpec{
		Config:         []ConfigChange{{Key: "a", Value: ptr("1")}, {Key: "b", Value: ptr("2")}},
		TableMetadata:  []ConfigChange{{Key: "owner", Value: ptr("me")}},
		SchemaMetadata: []ConfigChange{{Key: "sm", Value: ptr("x")}},
		FieldMetadata:  map[int32][]ConfigChange{1: {{Key: "fm", Value: ptr("y")}}},
	}), Options{})
	m := r.Manifest
	if m.GetConfig()["a"] != "1" || m.GetTableMetadata()["owner"] != "me" || string(m.GetSchemaMetadata()["sm"]) != "x" ||
		string(m.GetFields()[1].GetMetadata()["fm"]) != "y" {
		t.Fatalf("manifest %v", m)
	}
	if m.GetWriterFeatureFlags()&flags.TableConfig == 0 || m.GetReaderFeatureFlags()&flags.TableConfig != 0 {
		t.Fatal("bit 3 is writer-only")
	}
	r2 := mustCommit(t, st, NewUpdateConfig(2, UpdateConfigSpec{Config: []ConfigChange{{Key: "a"}, {Key: "b"}}}), Options{})
	if len(r2.Manifest.GetConfig()) != 0 || r2.Manifest.GetWriterFeatureFlags()&flags.TableConfig != 0 {
		t.Fatalf("config %v flags %d", r2.Manifest.GetConfig(), r2.Manifest.GetWriterFeatureFlags())
	}
	_, err := Commit(context.Background(), st, NewUpdateConfig(3, UpdateConfigSpec{FieldMetadata: map[int32][]ConfigChange{42: {{Key: "k", Value: ptr("v")}}}}), Options{})
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatal(err)
	}
}

func TestUpdateConfig_ConcurrentSameKeyIsIncompatible(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 3))
	a := NewUpdateConfig(1, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: ptr("1")}}})
	b := NewUpdateConfig(1, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: ptr("2")}}})
	c := NewUpdateConfig(1, UpdateConfigSpec{Config: []ConfigChange{{Key: "j", Value: ptr("3")}}})
	mustCommit(t, st, a, Options{})
	_, err := Commit(context.Background(), st, b, Options{})
	wantConflict(t, err, false, 2, "UpdateConfig")
	r := mustCommit(t, st, c, Options{})
	if r.Manifest.GetConfig()["k"] != "1" || r.Manifest.GetConfig()["j"] != "3" {
		t.Fatalf("config %v", r.Manifest.GetConfig())
	}
}

func TestClone_ShallowAndDeep(t *testing.T) {
	ctx := context.Background()
	src := localStore(t)
	mustCreate(t, src, fakeFrag("a", 3))
	mustCommit(t, src, mustDelete(t, src, 1, map[uint64]*roaring.Bitmap{0: bitmapOf(1)}), Options{})
	mustCommit(t, src, NewCreateIndex(2, []*pb.IndexMetadata{testIndex("ix", 1, 0)}, nil), Options{})
	f := readVersion(t, src, 3)
	dst := localStore(t)
	r := mustCommit(t, dst, NewClone(CloneSpec{Source: f.Manifest, SourceIndices: f.Indices(), Shallow: true, RefVersion: 3, RefPath: "/abs/src"}), Options{})
	m := r.Manifest
	if m.GetVersion() != 3 || r.TransactionFile[:2] != "3-" || len(m.GetBasePaths()) != 1 {
		t.Fatalf("clone %d %s %v", m.GetVersion(), r.TransactionFile, m.GetBasePaths())
	}
	bp := m.GetBasePaths()[0]
	if bp.GetId() != 0 || bp.GetPath() != "/abs/src" || !bp.GetIsDatasetRoot() || bp.Name != nil {
		t.Fatalf("base path %v", bp)
	}
	fr := m.GetFragments()[0]
	if fr.GetFiles()[0].BaseId == nil || fr.GetDeletionFile().BaseId == nil || r.Indices[0].BaseId == nil {
		t.Fatal("base_id not set on data/deletion/index")
	}
	if !flags.Has(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), flags.BasePaths|flags.DeletionFiles) {
		t.Fatalf("flags %d/%d", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	}
	if _, err := Commit(ctx, dst, NewClone(CloneSpec{Source: f.Manifest, Shallow: true, RefVersion: 3, RefPath: "/abs/src"}), Options{}); !errors.Is(err, ErrDatasetExists) {
		t.Fatalf("second clone: %v", err)
	}
	// A later append to the clone puts new files under the clone root.
	r2 := mustCommit(t, dst, appendTxn(3, fakeFrag("z", 1)), Options{})
	if r2.Manifest.GetFragments()[1].GetFiles()[0].BaseId != nil {
		t.Fatal("new file got a base_id")
	}
	deep := localStore(t)
	r3 := mustCommit(t, deep, NewClone(CloneSpec{Source: r2.Manifest, SourceIndices: r2.Indices, Shallow: false, RefVersion: 4, RefPath: "/x"}), Options{})
	if len(r3.Manifest.GetBasePaths()) != 0 || r3.Manifest.GetFragments()[0].GetFiles()[0].BaseId != nil ||
		r3.Manifest.GetReaderFeatureFlags()&flags.BasePaths != 0 {
		t.Fatal("deep clone kept base references")
	}
}
