package commit

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// TestInvariant_NoDataFileTwice is issue 15 item 2 at the commit engine:
// whatever path built it, a version never references a data file twice
// (before the fix an append of a referenced file was published).
func TestInvariant_NoDataFileTwice(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	r := mustCreate(t, st, fakeFrag("a.lance", 10))
	again := proto.Clone(r.Manifest.GetFragments()[0]).(*pb.DataFragment)
	_, err := Commit(ctx, st, appendTxn(r.Version, again), Options{})
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("re-append of a referenced file: %v", err)
	}
	_, err = Commit(ctx, st, appendTxn(r.Version, fakeFrag("b.lance", 1), fakeFrag("b.lance", 1)), Options{})
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("one file in two new fragments: %v", err)
	}
	if v := latestVersion(t, st); v != 1 {
		t.Fatalf("version %d published", v)
	}
}

// TestInvariant_CheckVersionInvariants covers the check itself.
func TestInvariant_CheckVersionInvariants(t *testing.T) {
	mx := func(v uint32) *uint32 { return &v }
	frag := func(id uint64, path string) *pb.DataFragment {
		return &pb.DataFragment{Id: id, Files: []*pb.DataFile{{Path: path}}}
	}
	for _, c := range []struct {
		name string
		m    *pb.Manifest
		ok   bool
	}{
		{"clean", &pb.Manifest{MaxFragmentId: mx(2), Fragments: []*pb.DataFragment{frag(0, "a"), frag(2, "b")}}, true},
		{"duplicate_id", &pb.Manifest{MaxFragmentId: mx(2), Fragments: []*pb.DataFragment{frag(1, "a"), frag(1, "b")}}, false},
		{"id_above_max", &pb.Manifest{MaxFragmentId: mx(1), Fragments: []*pb.DataFragment{frag(0, "a"), frag(5, "b")}}, false},
		{"file_twice", &pb.Manifest{MaxFragmentId: mx(1), Fragments: []*pb.DataFragment{frag(0, "a"), frag(1, "a")}}, false},
		{"same_name_other_base", &pb.Manifest{MaxFragmentId: mx(1), Fragments: []*pb.DataFragment{frag(0, "a"),
			{Id: 1, Files: []*pb.DataFile{{Path: "a", BaseId: proto.Uint32(1)}}}}}, true},
	} {
		err := checkVersionInvariants(c.m)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidTransaction)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestItem6_ReadVersionBeyondLatest: a read version the dataset never
// reached is ErrInvalidTransaction (a client mistake), not a bare error
// the coordinator answered 502.
func TestItem6_ReadVersionBeyondLatest(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a.lance", 10))
	_, err := Commit(context.Background(), st, appendTxn(1<<63, fakeFrag("b.lance", 1)), Options{})
	if !errors.Is(err, ErrInvalidTransaction) {
		t.Fatalf("got %v", err)
	}
}

// TestCleanup_KeepsReferencedFiles is issue 15 item 1 at the library: the
// cleanup after a failed commit never deletes a file a committed version
// references (the commit may have landed although its caller saw an error).
func TestCleanup_KeepsReferencedFiles(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	w, err := WriteFragments(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate})
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, st, NewOverwrite(w.ReadVersion, OverwriteSpec{Fragments: w.Fragments, Schema: w.Schema}), Options{})
	if v, found, err := w.Landed(ctx); err != nil || !found || v != 1 {
		t.Fatalf("Landed = %d %v %v", v, found, err)
	}
	if n := w.Cleanup(ctx); n != 0 {
		t.Fatalf("Cleanup deleted %d committed files", n)
	}
	if ok, err := st.Exists(ctx, w.Files[0].Path); err != nil || !ok {
		t.Fatalf("committed file gone: %v", err)
	}
	// Unreferenced files are deleted.
	w2, err := WriteFragments(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	if n := w2.Cleanup(ctx); n != 1 {
		t.Fatalf("Cleanup deleted %d of 1 unreferenced files", n)
	}
}
