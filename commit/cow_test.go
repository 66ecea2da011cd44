package commit

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// TestCopyOnWrite_CommittedManifestsStayUnchanged: appends build on the
// previous manifest without a deep copy (build.go: shareManifest, the memo
// of durable.go, manifest.EncodeFile copying the encoded fragments), so
// every manifest a commit returned must still be exactly what was
// committed after later appends, config updates and reservations through
// the same store — and each version on disk must be what its commit
// returned (lance-table-format.md §5.5: a new version never changes an
// older one).
func TestCopyOnWrite_CommittedManifestsStayUnchanged(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	type kept struct {
		res  *Result
		snap *pb.Manifest
	}
	var all []kept
	keep := func(res *Result) {
		all = append(all, kept{res, proto.Clone(res.Manifest).(*pb.Manifest)})
	}
	w, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate})
	if err != nil {
		t.Fatal(err)
	}
	keep(w.Result)
	for i := range 9 {
		switch i {
		case 3:
			keep(mustCommit(t, st, NewUpdateConfig(w.Version, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: proto.String("v")}}}), Options{}))
		case 6:
			keep(mustCommit(t, st, NewReserveFragments(all[len(all)-1].res.Version, 2), Options{}))
		}
		w, err = WriteArrow(ctx, st, testRecords(testArrowSchema, 1+i%2, 10, int64(100*i)), WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 10})
		if err != nil {
			t.Fatal(err)
		}
		keep(w.Result)
	}
	for _, k := range all {
		if !proto.Equal(k.res.Manifest, k.snap) {
			t.Fatalf("version %d: the manifest its commit returned changed afterwards", k.res.Version)
		}
		disk := readVersion(t, st, k.res.Version).Manifest
		disk.IndexSection, disk.TransactionSection = nil, nil
		if !proto.Equal(disk, k.snap) {
			t.Fatalf("version %d on disk differs from the manifest its commit returned", k.res.Version)
		}
	}
	if n := len(all[len(all)-1].res.Manifest.GetFragments()); n != 1+9+4 {
		t.Fatalf("%d fragments at the end, want 14", n)
	}
}

// TestCopyOnWrite_AppendChecksOnlyItsFragments: an append on a manifest
// this package built and checked (the memo) still refuses a data file the
// table already references and a fragment id that is taken
// (checkVersionInvariantsAfter, issue 15 item 2), exactly as the full
// check does.
func TestCopyOnWrite_AppendChecksOnlyItsFragments(t *testing.T) {
	prev := &pb.Manifest{Fragments: []*pb.DataFragment{fakeFrag("a", 1), fakeFrag("b", 1)}}
	prev.Fragments[1].Id = 1
	mf := uint32(5)
	for _, tc := range []struct {
		name    string
		add     []*pb.DataFragment
		wantErr bool
	}{
		{"new file", []*pb.DataFragment{fakeFrag("c", 1)}, false},
		{"file of an old fragment", []*pb.DataFragment{fakeFrag("a", 1)}, true},
		{"file twice in the new fragment", []*pb.DataFragment{{Id: 2, Files: []*pb.DataFile{{Path: "c.lance"}, {Path: "c.lance"}}}}, true},
		{"same path in another base", []*pb.DataFragment{{Id: 2, Files: []*pb.DataFile{{Path: "a.lance", BaseId: &mf}}}}, false},
		{"two new fragments, one file", []*pb.DataFragment{fakeFrag("c", 1), fakeFrag("c", 1)}, true},
		{"id taken", []*pb.DataFragment{{Id: 1, Files: []*pb.DataFile{{Path: "c.lance"}}}}, true},
		{"id above max_fragment_id", []*pb.DataFragment{{Id: 6, Files: []*pb.DataFile{{Path: "c.lance"}}}}, true},
		{"many new fragments (map)", []*pb.DataFragment{fakeFrag("c", 1), fakeFrag("d", 1), fakeFrag("e", 1), fakeFrag("f", 1), fakeFrag("g", 1), fakeFrag("a", 1)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := shareManifest(prev)
			m.MaxFragmentId = &mf
			for i, f := range tc.add {
				f = proto.Clone(f).(*pb.DataFragment)
				if f.Id == 0 {
					f.Id = uint64(2 + i)
				}
				m.Fragments = append(m.Fragments, f)
			}
			errAfter := checkVersionInvariantsAfter(m, prev.Fragments)
			errFull := checkVersionInvariantsFull(m)
			if (errAfter != nil) != tc.wantErr || (errFull != nil) != tc.wantErr {
				t.Fatalf("incremental check: %v; full check: %v; want an error: %v", errAfter, errFull, tc.wantErr)
			}
		})
	}
}

// TestCopyOnWrite_ResultTransactionIsTheCommittedOne: Result.Transaction
// is one copy shared with the store's memo (read-only, like
// Result.Manifest), and WriteArrow's transaction owns the fragments it
// wrote instead of copying them; still, Result.Transaction must be the
// transaction as committed (§3.1: the .txn file's content, the new
// fragments the manifest ends with), and later use of the
// caller's Transaction (SetTag, SetProperty) must not reach it.
func TestCopyOnWrite_ResultTransactionIsTheCommittedOne(t *testing.T) {
	ctx := context.Background()
	st := localStore(t)
	if _, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 1, 10, 0), WriteOptions{Mode: ModeCreate}); err != nil {
		t.Fatal(err)
	}
	check := func(name string, res *Result) {
		t.Helper()
		data, err := st.Get(ctx, "_transactions/"+res.TransactionFile)
		if err != nil {
			t.Fatal(err)
		}
		onDisk := &pb.Transaction{}
		if err := proto.Unmarshal(data, onDisk); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(onDisk, res.Transaction) {
			t.Fatalf("%s: Result.Transaction differs from the .txn file", name)
		}
		frags := res.Transaction.GetAppend().GetFragments()
		if len(frags) != len(res.FragmentIDs) || len(frags) == 0 {
			t.Fatalf("%s: %d fragments in the transaction, %d ids", name, len(frags), len(res.FragmentIDs))
		}
		mf := res.Manifest.GetFragments()
		for i, f := range frags {
			if got := mf[len(mf)-len(frags)+i].GetFiles()[0].GetPath(); f.GetFiles()[0].GetPath() != got {
				t.Fatalf("%s: fragment %d is %s in Result.Transaction, %s in the manifest", name, i, f.GetFiles()[0].GetPath(), got)
			}
		}
	}
	w, err := WriteArrow(ctx, st, testRecords(testArrowSchema, 2, 10, 100), WriteOptions{Mode: ModeAppend, MaxRowsPerFile: 10})
	if err != nil {
		t.Fatal(err)
	}
	check("WriteArrow", w.Result)

	wf, err := WriteFragments(ctx, st, testRecords(testArrowSchema, 1, 10, 200), WriteOptions{Mode: ModeAppend})
	if err != nil {
		t.Fatal(err)
	}
	txn := NewAppend(wf.ReadVersion, wf.Fragments)
	res := mustCommit(t, st, txn, Options{})
	check("NewAppend", res)
	snap := proto.Clone(res.Transaction)
	txn.SetTag("later").SetProperty("k", "v")
	if !proto.Equal(res.Transaction, snap) {
		t.Fatal("changing the caller's Transaction after the commit changed Result.Transaction")
	}
}
