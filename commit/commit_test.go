package commit

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

func TestCommit_CreateThenAppend(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   func(testing.TB) Store
	}{{"mem", func(tb testing.TB) Store { return memStore(tb) }}, {"local", func(tb testing.TB) Store { return localStore(tb) }}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := tc.st(t)
			r1 := mustCreate(t, st, fakeFrag("a", 10), fakeFrag("b", 5))
			if r1.Version != 1 || r1.ReadVersion != 0 || r1.ManifestPath != "_versions/18446744073709551614.manifest" {
				t.Fatalf("create: %+v", r1)
			}
			if got := sprintIDs(r1.Manifest); got != "[0 1]" {
				t.Fatalf("fragment ids %s", got)
			}
			r2 := mustCommit(t, st, appendTxn(1, fakeFrag("c", 7)), Options{})
			if r2.Version != 2 || r2.FragmentIDs[0] != 2 || r2.Manifest.GetMaxFragmentId() != 2 {
				t.Fatalf("append: version %d ids %v max %d", r2.Version, r2.FragmentIDs, r2.Manifest.GetMaxFragmentId())
			}
			f := readVersion(t, st, 2)
			m := f.Manifest
			if m.GetWriterVersion().GetLibrary() != "lancekeeper" || m.GetWriterVersion().GetVersion() != Version {
				t.Fatalf("writer version %v", m.GetWriterVersion())
			}
			if m.GetDataFormat().GetVersion() != "2.0" || m.GetDataFormat().GetFileFormat() != "lance" {
				t.Fatalf("data format %v", m.GetDataFormat())
			}
			if m.GetTimestamp() == nil || m.GetTimestamp().GetSeconds() == 0 {
				t.Fatal("no timestamp")
			}
			// Transaction: inline section and the .txn file, same content.
			if f.Transaction == nil || f.Transaction.GetReadVersion() != 1 || KindOf(f.Transaction) != OpAppend {
				t.Fatalf("inline transaction %v", f.Transaction)
			}
			if want := "1-" + f.Transaction.GetUuid() + ".txn"; m.GetTransactionFile() != want {
				t.Fatalf("transaction_file %q, want %q", m.GetTransactionFile(), want)
			}
			data, err := st.Get(ctx, "_transactions/"+m.GetTransactionFile())
			if err != nil {
				t.Fatal(err)
			}
			onDisk := &pb.Transaction{}
			if err := proto.Unmarshal(data, onDisk); err != nil || !proto.Equal(onDisk, f.Transaction) {
				t.Fatalf(".txn file differs from the inline transaction: %v", err)
			}
			// §4.5: the hint only on local stores.
			hint, err := st.Get(ctx, "_versions/latest_version_hint.json")
			if tc.name == "local" && (err != nil || string(hint) != `{"version":2}`) {
				t.Fatalf("hint %q %v", hint, err)
			}
			if tc.name == "mem" && !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("hint on a memory store: %q %v", hint, err)
			}
		})
	}
}

func TestCommit_KeepsV1Naming(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	r := mustCreate(t, st, fakeFrag("a", 1))
	// Rename the manifest to the V1 scheme, as an old table would have it.
	data, err := st.Get(ctx, r.ManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "_versions/1.manifest", data); err != nil {
		t.Fatal(err)
	}
	if err := st.Bucket().Delete(ctx, st.KeyPrefix()+r.ManifestPath); err != nil {
		t.Fatal(err)
	}
	r2 := mustCommit(t, st, appendTxn(1, fakeFrag("b", 1)), Options{})
	if r2.ManifestPath != "_versions/2.manifest" {
		t.Fatalf("V1 table got %s", r2.ManifestPath)
	}
}

func TestCommit_CreateTwiceIsDatasetExists(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	txn := NewOverwrite(0, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("b", 1)}, Schema: testSchema()})
	txn.MarkSeedFiles(false, "b.lance")
	_, err := Commit(context.Background(), st, txn, Options{})
	if !errors.Is(err, ErrDatasetExists) {
		t.Fatalf("got %v", err)
	}
}

func TestCommit_AppendWithoutDatasetIsNotFound(t *testing.T) {
	st := memStore(t)
	_, err := Commit(context.Background(), st, appendTxn(1, fakeFrag("a", 1)), Options{})
	if !errors.Is(err, ErrDatasetNotFound) {
		t.Fatalf("got %v", err)
	}
	if latestVersion(t, st) != 0 {
		t.Fatal("a manifest was written")
	}
}

func TestCommit_RebasedAppendKeepsReadVersion(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	mustCommit(t, st, appendTxn(1, fakeFrag("b", 1)), Options{})
	r := mustCommit(t, st, appendTxn(1, fakeFrag("c", 1)), Options{})
	if r.Version != 3 || r.ReadVersion != 1 || r.Transaction.GetReadVersion() != 1 {
		t.Fatalf("got version %d read %d", r.Version, r.ReadVersion)
	}
	if got := sprintIDs(r.Manifest); got != "[0 1 2]" {
		t.Fatalf("ids %s", got)
	}
	if !strings.HasPrefix(r.TransactionFile, "1-") {
		t.Fatalf("txn file %s", r.TransactionFile)
	}
}

func TestCommit_AppendAfterOverwriteIsIncompatible(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	ow := NewOverwrite(1, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("b", 1)}, Schema: testSchema()})
	ow.MarkSeedFiles(false, "b.lance")
	mustCommit(t, st, ow, Options{})
	_, err := Commit(context.Background(), st, appendTxn(1, fakeFrag("c", 1)), Options{})
	wantConflict(t, err, false, 2, "Overwrite")
	if want := "This Append transaction is incompatible with concurrent transaction Overwrite at version 2."; err.Error() != want {
		t.Fatalf("message %q", err)
	}
	if latestVersion(t, st) != 2 {
		t.Fatal("a version was committed")
	}
}

func TestCommit_RequirementLatestVersion(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	mustCommit(t, st, appendTxn(1, fakeFrag("b", 1)), Options{Requirements: []Requirement{RequireLatestVersion(1)}})
	_, err := Commit(context.Background(), st, appendTxn(1, fakeFrag("c", 1)), Options{Requirements: []Requirement{RequireLatestVersion(1)}})
	if !errors.Is(err, ErrRequirement) || !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v", err)
	}
}

func TestCommit_OverwriteContinuesFragmentIDs(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1), fakeFrag("b", 1))
	ow := NewOverwrite(1, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("c", 1)}, Schema: testSchema(), ConfigUpserts: map[string]string{"k": "v"}})
	ow.MarkSeedFiles(false, "c.lance")
	r := mustCommit(t, st, ow, Options{})
	if got := sprintIDs(r.Manifest); got != "[2]" {
		t.Fatalf("ids %s", got)
	}
	if r.Manifest.GetConfig()["k"] != "v" || r.Manifest.GetWriterFeatureFlags()&flags.TableConfig == 0 {
		t.Fatalf("config %v flags %d", r.Manifest.GetConfig(), r.Manifest.GetWriterFeatureFlags())
	}
}

func TestCommit_ReserveFragments(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1), fakeFrag("b", 1), fakeFrag("c", 1))
	r := mustCommit(t, st, NewReserveFragments(1, 4), Options{})
	if r.ReservedFirst != 3 || r.ReservedLast != 6 || r.Manifest.GetMaxFragmentId() != 6 {
		t.Fatalf("reserved %d..%d max %d", r.ReservedFirst, r.ReservedLast, r.Manifest.GetMaxFragmentId())
	}
	r2 := mustCommit(t, st, appendTxn(2, fakeFrag("d", 1)), Options{})
	if r2.FragmentIDs[0] != 7 {
		t.Fatalf("append after reserve got id %d", r2.FragmentIDs[0])
	}
}

func TestCommit_StableRowIDs(t *testing.T) {
	st := memStore(t)
	txn := NewOverwrite(0, OverwriteSpec{Fragments: []*pb.DataFragment{fakeFrag("a", 10)}, Schema: testSchema(), StableRowIDs: true})
	txn.MarkSeedFiles(false, "a.lance")
	r := mustCommit(t, st, txn, Options{})
	if r.Manifest.GetReaderFeatureFlags()&flags.StableRowIDs == 0 || r.Manifest.GetNextRowId() != 10 {
		t.Fatalf("flags %d next_row_id %d", r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetNextRowId())
	}
	// The exact bytes Lance 12 writes for a 10-row fragment (§3.5).
	if got := r.Manifest.GetFragments()[0].GetInlineRowIds(); string(got) != "\x0a\x04\x0a\x02\x10\x0a" {
		t.Fatalf("row ids % x", got)
	}
	if got := r.Manifest.GetFragments()[0].GetInlineCreatedAtVersions(); string(got) != "\x0a\x08\x0a\x04\x0a\x02\x10\x0a\x10\x01" {
		t.Fatalf("created-at % x", got)
	}
	r2 := mustCommit(t, st, appendTxn(1, fakeFrag("b", 5)), Options{})
	f := r2.Manifest.GetFragments()[1]
	seq := &pb.RowIdSequence{}
	if err := proto.Unmarshal(f.GetInlineRowIds(), seq); err != nil {
		t.Fatal(err)
	}
	rg := seq.GetSegments()[0].GetRange()
	if rg.GetStart() != 10 || rg.GetEnd() != 15 || r2.Manifest.GetNextRowId() != 15 {
		t.Fatalf("row ids %v next %d", rg, r2.Manifest.GetNextRowId())
	}
}

func TestCommit_RefusesUnsupportedWriterFlags(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	r := mustCreate(t, st, fakeFrag("a", 1))
	// Version 2 written by a newer writer with bit 12 in the writer word.
	publishFlags(t, st, r, r.Manifest.GetReaderFeatureFlags(), r.Manifest.GetWriterFeatureFlags()|flags.FragmentTree)
	_, err := Commit(ctx, st, appendTxn(2, fakeFrag("b", 1)), Options{})
	if !errors.Is(err, flags.ErrUnsupported) {
		t.Fatalf("got %v", err)
	}
	if latestVersion(t, st) != 2 {
		t.Fatal("committed on top of an unsupported writer flag")
	}
}

func TestCommit_AppendRejectsUnknownFieldAndVersionMismatch(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	bad := fakeFrag("b", 1)
	bad.Files[0].Fields = []int32{0, 9}
	_, err := Commit(context.Background(), st, appendTxn(1, bad), Options{})
	if !errors.Is(err, ErrInvalidTransaction) || !strings.Contains(err.Error(), "field id 9") {
		t.Fatalf("got %v", err)
	}
	v22 := fakeFrag("c", 1)
	v22.Files[0].FileMinorVersion = 2
	_, err = Commit(context.Background(), st, appendTxn(1, v22), Options{})
	if !errors.Is(err, ErrInvalidTransaction) || !strings.Contains(err.Error(), "2.2") {
		t.Fatalf("got %v", err)
	}
	if latestVersion(t, st) != 1 {
		t.Fatal("committed")
	}
}

func TestMergeAppends_GroupCommit(t *testing.T) {
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 1))
	a := appendTxn(1, fakeFrag("b", 1), fakeFrag("c", 1))
	b := seededAppend(1, "d")
	m, err := MergeAppends(a, b)
	if err != nil {
		t.Fatal(err)
	}
	r := mustCommit(t, st, m, Options{EnableZoneWriteSeeds: true})
	if r.Version != 2 || len(r.FragmentIDs) != 3 || r.FragmentIDs[2] != 3 || !hasBoth(r.Manifest) {
		t.Fatalf("merged commit: version %d ids %v", r.Version, r.FragmentIDs)
	}
	if _, err := MergeAppends(a, NewReserveFragments(1, 1)); !errors.Is(err, ErrInvalidTransaction) {
		t.Fatal(err)
	}
	if _, err := MergeAppends(appendTxn(1).SetTag("x")); !errors.Is(err, ErrInvalidTransaction) {
		t.Fatal(err)
	}
}

// A version without any transaction (no inline section, no .txn file)
// cannot be proven compatible: the commit fails as a conflict naming it
// (lance-table-format.md §4.6).
func TestCommit_MissingConcurrentTransactionIsAConflict(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	r := mustCreate(t, st, fakeFrag("a", 1))
	m := proto.Clone(r.Manifest).(*pb.Manifest)
	m.Version, m.TransactionFile = 2, ""
	data, _ := manifest.Encode(m, nil, nil)
	if err := st.CreateIfAbsent(ctx, manifest.ManifestPath(manifest.V2, 2), data); err != nil {
		t.Fatal(err)
	}
	_, err := Commit(ctx, st, appendTxn(1, fakeFrag("b", 1)), Options{})
	if !errors.Is(err, ErrIncompatibleConflict) || !strings.Contains(err.Error(), "Dataset version 2 does not have a transaction file") {
		t.Fatalf("got %v", err)
	}
	// Built on version 2, the same append commits.
	mustCommit(t, st, appendTxn(2, fakeFrag("b", 1)), Options{})
}
