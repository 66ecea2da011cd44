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
