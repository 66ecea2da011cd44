package commit

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// FuzzTransaction feeds hostile transaction bytes (what a .txn file or an
// inline section of another writer may hold) through the decoder, the
// conflict matrix against every sample arm in both directions, and the
// manifest builder. Nothing may panic; the builder either refuses or yields
// a manifest whose flags pass the write check.
func FuzzTransaction(f *testing.F) {
	samples := sampleTxns()
	for _, t := range samples {
		b, _ := proto.Marshal(t)
		f.Add(b)
	}
	for _, t := range []*Transaction{appendTxn(1, fakeFrag("a", 3)), NewEnableZoneWriteSeeds(1), NewReserveFragments(1, 3),
		NewUpdateConfig(1, UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: ptr("v")}}, FieldMetadata: map[int32][]ConfigChange{0: {{Key: "a"}}}})} {
		b, _ := proto.Marshal(t.msg)
		f.Add(b)
	}
	prev := &pb.Manifest{Version: 1, Fields: testSchema(), Fragments: []*pb.DataFragment{fakeFrag("a", 3), fakeFrag("b", 3)},
		DataFormat: &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.0"}}
	prev.Fragments[1].Id = 1
	f.Fuzz(func(t *testing.T, data []byte) {
		txn := &pb.Transaction{}
		if err := proto.Unmarshal(data, txn); err != nil {
			return
		}
		for _, other := range samples {
			checkConflict(txn, other)
			checkConflict(other, txn)
		}
		for _, p := range []*pb.Manifest{prev, nil} {
			in := &buildInput{prev: p, txn: txn, version: p.GetVersion() + 1, now: time.Unix(1, 0), txnFile: "x.txn",
				restoreTarget: prev}
			res, err := build(in)
			if err != nil {
				continue
			}
			m := res.manifest
			if m.GetVersion() != p.GetVersion()+1 {
				t.Fatalf("built version %d", m.GetVersion())
			}
			for i := 1; i < len(m.GetFragments()); i++ {
				if m.GetFragments()[i].GetId() <= m.GetFragments()[i-1].GetId() {
					t.Fatal("fragments not sorted/unique")
				}
			}
		}
	})
}
