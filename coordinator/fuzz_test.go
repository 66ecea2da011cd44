package coordinator

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// FuzzCommitRequest feeds hostile commit bodies through the decoder and
// the transaction builder (against a real dataset in a memory root): no
// input may panic, and an accepted one yields something to commit.
func FuzzCommitRequest(f *testing.F) {
	s, err := New(context.Background(), Config{Roots: []Root{{URL: "mem://fuzz"}}, Logger: quietLogger()})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	root, _ := s.RootStore("")
	st, _ := root.Sub("d")
	frag := writeFile(f, st, 1, 2, 3)
	if _, err := commit.Commit(context.Background(), st, commit.NewOverwrite(0, commit.OverwriteSpec{Fragments: []*pb.DataFragment{frag}, Schema: oneColumnFields()}), commit.Options{}); err != nil {
		f.Fatal(err)
	}
	v := "1"
	idx := &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: []byte("0123456789abcdef")}, Name: "i", Fields: []int32{0}}
	seeds := []coordapi.CommitRequest{
		appendReq(f, "d", 1, true, writeFile(f, st, 4)),
		{Dataset: "d", Operation: coordapi.Operation{Overwrite: &coordapi.OverwriteOp{Fragments: rawFrags(f, frag), Schema: pjs(f, oneColumnFields()...),
			SchemaMetadata: map[string][]byte{"k": []byte("v")}, ConfigUpserts: map[string]string{"a": "b"}}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{Delete: &coordapi.DeleteOp{Fragments: []coordapi.FragmentDeletion{{ID: 0, Rows: []uint32{1}, Ranges: [][2]uint64{{0, 1}}}}}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{UpdateConfig: &coordapi.UpdateConfigOp{Config: map[string]*string{"a": &v, "b": nil},
			FieldMetadata: map[string]map[string]*string{"0": {"x": &v}}}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{CreateIndex: &coordapi.CreateIndexOp{NewIndices: pjs(f, idx), RemovedUUIDs: []string{"30313233-3435-3637-3839-616263646566"}}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{DropIndex: &coordapi.DropIndexOp{Name: "i"}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{EnableZoneWriteSeeds: &struct{}{}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{Restore: &coordapi.RestoreOp{Version: 1}}, Properties: map[string]string{"m": "x"},
			Requirements: []coordapi.Requirement{{Type: coordapi.RequireLatestVersion, Version: 1}, {Type: coordapi.RequireDataFilesAbsent}}},
		{Dataset: "d", ReadVersion: 1, Operation: coordapi.Operation{ReserveFragments: &coordapi.ReserveFragmentsOp{Count: 3}}},
	}
	for _, r := range seeds {
		b, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"dataset":"../x","operation":{"restore":{"version":1}}}`))
	f.Add([]byte(`{"dataset":"d","read_version":1,"operation":{"append":{"fragments":[{"files":[{"path":"../../etc/passwd"}]}]}}}`))
	f.Add([]byte(`{"dataset":"d","read_version":1,"operation":{"delete":{"fragments":[{"id":0,"ranges":[[0,4294967296]]}]}}}`))
	f.Add([]byte(`{"dataset":"d","read_version":18446744073709551615,"operation":{"append":{"fragments":[{"physical_rows":"18446744073709551615","files":[{"path":"x.lance","fields":[0]}]}]}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeCommitRequest(data)
		if err != nil {
			return
		}
		if req.Root != "" {
			return
		}
		dst, err := root.Sub(req.Dataset)
		if err != nil {
			t.Fatalf("accepted dataset name %q is not a valid key: %v", req.Dataset, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p, err := s.buildTransaction(ctx, dst, req)
		if err != nil {
			return
		}
		if p.txn == nil && !p.enableSeeds {
			t.Fatalf("accepted %s request built nothing", req.Operation.Kind())
		}
	})
}
