package commit

import (
	"errors"
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Sample transactions, one or more per arm, for the matrix test.
func sampleTxns() map[string]*pb.Transaction {
	str := func(s string) *string { return &s }
	frag := func(id uint64) *pb.DataFragment {
		return &pb.DataFragment{Id: id, Files: []*pb.DataFile{{Path: fmt.Sprintf("f%d.lance", id), Fields: []int32{0, 1}}}}
	}
	bm := func(ids ...uint32) []byte {
		b, _ := roaring.BitmapOf(ids...).ToBytes()
		return b
	}
	idx := func(field int32, frags ...uint32) *pb.IndexMetadata {
		return &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: make([]byte, 16)}, Name: "i", Fields: []int32{field}, FragmentBitmap: bm(frags...)}
	}
	uc := func(key string, del bool) *pb.Transaction {
		e := &pb.Transaction_UpdateMapEntry{Key: key}
		if !del {
			e.Value = str("v")
		}
		return &pb.Transaction{Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{
			ConfigUpdates: &pb.Transaction_UpdateMap{UpdateEntries: []*pb.Transaction_UpdateMapEntry{e}}}}}
	}
	return map[string]*pb.Transaction{
		"Append":             {Operation: &pb.Transaction_Append_{Append: &pb.Transaction_Append{Fragments: []*pb.DataFragment{frag(0)}}}},
		"Delete(f1)":         {Operation: &pb.Transaction_Delete_{Delete: &pb.Transaction_Delete{UpdatedFragments: []*pb.DataFragment{frag(1)}}}},
		"Delete(f2)":         {Operation: &pb.Transaction_Delete_{Delete: &pb.Transaction_Delete{UpdatedFragments: []*pb.DataFragment{frag(2)}}}},
		"Delete(remove f1)":  {Operation: &pb.Transaction_Delete_{Delete: &pb.Transaction_Delete{DeletedFragmentIds: []uint64{1}}}},
		"Update(f1)":         {Operation: &pb.Transaction_Update_{Update: &pb.Transaction_Update{UpdatedFragments: []*pb.DataFragment{frag(1)}}}},
		"Update(remove f1)":  {Operation: &pb.Transaction_Update_{Update: &pb.Transaction_Update{RemovedFragmentIds: []uint64{1}}}},
		"Overwrite":          {Operation: &pb.Transaction_Overwrite_{Overwrite: &pb.Transaction_Overwrite{}}},
		"Overwrite(k)":       {Operation: &pb.Transaction_Overwrite_{Overwrite: &pb.Transaction_Overwrite{ConfigUpsertValues: map[string]string{"k": "v"}}}},
		"CreateIndex(x,f1)":  {Operation: &pb.Transaction_CreateIndex_{CreateIndex: &pb.Transaction_CreateIndex{NewIndices: []*pb.IndexMetadata{idx(0, 1)}}}},
		"CreateIndex(x,f3)":  {Operation: &pb.Transaction_CreateIndex_{CreateIndex: &pb.Transaction_CreateIndex{NewIndices: []*pb.IndexMetadata{idx(0, 3)}}}},
		"DropIndex":          {Operation: &pb.Transaction_CreateIndex_{CreateIndex: &pb.Transaction_CreateIndex{RemovedIndices: []*pb.IndexMetadata{idx(0, 1)}}}},
		"Rewrite(f1)":        {Operation: &pb.Transaction_Rewrite_{Rewrite: &pb.Transaction_Rewrite{Groups: []*pb.Transaction_RewriteGroup{{OldFragments: []*pb.DataFragment{frag(1)}}}}}},
		"Merge":              {Operation: &pb.Transaction_Merge_{Merge: &pb.Transaction_Merge{}}},
		"Project":            {Operation: &pb.Transaction_Project_{Project: &pb.Transaction_Project{}}},
		"Restore":            {Operation: &pb.Transaction_Restore_{Restore: &pb.Transaction_Restore{Version: 1}}},
		"ReserveFragments":   {Operation: &pb.Transaction_ReserveFragments_{ReserveFragments: &pb.Transaction_ReserveFragments{NumFragments: 2}}},
		"UpdateConfig(k)":    uc("k", false),
		"UpdateConfig(-k)":   uc("k", true),
		"UpdateConfig(j)":    uc("j", false),
		"UpdateConfig(none)": {Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{}}},
		"UpdateConfig(schema)": {Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{
			SchemaMetadataUpdates: &pb.Transaction_UpdateMap{UpdateEntries: []*pb.Transaction_UpdateMapEntry{{Key: "a", Value: str("b")}}}}}},
		"UpdateConfig(field0)": {Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{
			FieldMetadataUpdates: map[int32]*pb.Transaction_UpdateMap{0: {UpdateEntries: []*pb.Transaction_UpdateMapEntry{{Key: "a", Value: str("b")}}}}}}},
		"UpdateConfig(field1)": {Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{
			FieldMetadataUpdates: map[int32]*pb.Transaction_UpdateMap{1: {UpdateEntries: []*pb.Transaction_UpdateMapEntry{{Key: "a", Value: str("b")}}}}}}},
		"UpdateConfig(tm)": {Operation: &pb.Transaction_UpdateConfig_{UpdateConfig: &pb.Transaction_UpdateConfig{
			TableMetadataUpdates: &pb.Transaction_UpdateMap{UpdateEntries: []*pb.Transaction_UpdateMapEntry{{Key: "t", Value: str("b")}}}}}},
		"DataReplacement(f1,x)": {Operation: &pb.Transaction_DataReplacement_{DataReplacement: &pb.Transaction_DataReplacement{
			Replacements: []*pb.Transaction_DataReplacementGroup{{FragmentId: 1, NewFile: &pb.DataFile{Fields: []int32{0}}}}}}},
		"DataReplacement(f2,s)": {Operation: &pb.Transaction_DataReplacement_{DataReplacement: &pb.Transaction_DataReplacement{
			Replacements: []*pb.Transaction_DataReplacementGroup{{FragmentId: 2, NewFile: &pb.DataFile{Fields: []int32{1}}}}}}},
		"UpdateMemWalState": {Operation: &pb.Transaction_UpdateMemWalState_{UpdateMemWalState: &pb.Transaction_UpdateMemWalState{}}},
		"Clone":             {Operation: &pb.Transaction_Clone_{Clone: &pb.Transaction_Clone{}}},
		"UpdateBases":       {Operation: &pb.Transaction_UpdateBases_{UpdateBases: &pb.Transaction_UpdateBases{}}},
		"DataOverlay":       {Operation: &pb.Transaction_DataOverlay_{DataOverlay: &pb.Transaction_DataOverlay{}}},
		"Unknown":           {},
	}
}

// TestConflictMatrix checks the rows of lance-table-format.md §5.4 for the
// operations this package commits, cell by cell.
func TestConflictMatrix(t *testing.T) {
	const (
		C = outcomeCompatible
		B = outcomeRebase
		R = outcomeRetryable
		X = outcomeIncompatible
	)
	txns := sampleTxns()
	all := func(mine string, want outcome, except map[string]outcome) []struct {
		mine, theirs string
		want         outcome
	} {
		var out []struct {
			mine, theirs string
			want         outcome
		}
		for theirs := range txns {
			w := want
			if e, ok := except[theirs]; ok {
				w = e
			}
			out = append(out, struct {
				mine, theirs string
				want         outcome
			}{mine, theirs, w})
		}
		return out
	}
	var cases []struct {
		mine, theirs string
		want         outcome
	}
	// Append: ✓ except Overwrite, Restore, UpdateMemWal (X); unknown arm R.
	cases = append(cases, all("Append", C, map[string]outcome{"Overwrite": X, "Overwrite(k)": X, "Restore": X, "UpdateMemWalState": X, "Unknown": R})...)
	// Delete: B vs Delete/Update on common fragments (R when the other side
	// removed it), R o vs Rewrite / DataReplacement, R vs Merge, X vs
	// Overwrite / Restore / UpdateMemWal.
	cases = append(cases, all("Delete(f1)", C, map[string]outcome{
		"Delete(f1)": B, "Delete(remove f1)": R, "Update(f1)": B, "Update(remove f1)": R,
		"Overwrite": X, "Overwrite(k)": X, "Rewrite(f1)": R, "Merge": R, "Restore": X,
		"DataReplacement(f1,x)": R, "UpdateMemWalState": X, "DataOverlay": R, "Unknown": R,
	})...)
	cases = append(cases, all("Delete(remove f1)", C, map[string]outcome{
		"Delete(f1)": R, "Delete(remove f1)": R, "Update(f1)": R, "Update(remove f1)": R,
		"Overwrite": X, "Overwrite(k)": X, "Rewrite(f1)": R, "Merge": R, "Restore": X,
		"DataReplacement(f1,x)": R, "UpdateMemWalState": X, "DataOverlay": R, "Unknown": R,
	})...)
	// Overwrite: conflicts only on the same config keys (NOV25) and with
	// UpdateMemWal.
	cases = append(cases, all("Overwrite", C, map[string]outcome{"UpdateMemWalState": X, "Unknown": R})...)
	cases = append(cases, all("Overwrite(k)", C, map[string]outcome{
		"Overwrite(k)": X, "UpdateConfig(k)": X, "UpdateConfig(-k)": X, "UpdateMemWalState": X, "Unknown": R})...)
	// CreateIndex: X vs Overwrite/Restore/UpdateMemWal, R o vs Rewrite of an
	// indexed fragment, R when a replaced field is indexed.
	cases = append(cases, all("CreateIndex(x,f1)", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "Restore": X, "UpdateMemWalState": X,
		"Rewrite(f1)": R, "DataReplacement(f1,x)": R, "DataOverlay": R, "Unknown": R})...)
	cases = append(cases, all("CreateIndex(x,f3)", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "Restore": X, "UpdateMemWalState": X,
		"DataReplacement(f1,x)": R, "DataOverlay": R, "Unknown": R})...)
	cases = append(cases, all("DropIndex", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "Restore": X, "UpdateMemWalState": X, "DataOverlay": R, "Unknown": R})...)
	// ReserveFragments: X vs Overwrite and Restore.
	cases = append(cases, all("ReserveFragments", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "Restore": X, "Unknown": R})...)
	// UpdateConfig: X on the same keys / schema or field metadata.
	cases = append(cases, all("UpdateConfig(k)", C, map[string]outcome{
		"Overwrite(k)": X, "UpdateConfig(k)": X, "UpdateConfig(-k)": X, "Unknown": R})...)
	cases = append(cases, all("UpdateConfig(schema)", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "UpdateConfig(schema)": X, "Unknown": R})...)
	cases = append(cases, all("UpdateConfig(field0)", C, map[string]outcome{
		"Overwrite": X, "Overwrite(k)": X, "UpdateConfig(field0)": X, "Unknown": R})...)
	cases = append(cases, all("UpdateConfig(tm)", C, map[string]outcome{"UpdateConfig(tm)": X, "Unknown": R})...)
	cases = append(cases, all("UpdateConfig(none)", C, map[string]outcome{"Unknown": R})...)
	// Restore trumps everything except UpdateMemWal.
	cases = append(cases, all("Restore", C, map[string]outcome{"UpdateMemWalState": X, "Unknown": R})...)

	for _, tc := range cases {
		got, why := checkConflict(txns[tc.mine], txns[tc.theirs])
		if got != tc.want {
			t.Errorf("%s vs committed %s: got %s (%s), want %s", tc.mine, tc.theirs, got, why, tc.want)
		}
	}
	if len(cases) < 300 {
		t.Fatalf("only %d cells checked", len(cases))
	}
}

func TestConflictMatrix_UncommittableKinds(t *testing.T) {
	txns := sampleTxns()
	for _, k := range []string{"Merge", "Project", "Update(f1)", "DataReplacement(f1,x)", "UpdateBases", "Unknown"} {
		if got, _ := checkConflict(txns[k], txns["Append"]); got != outcomeIncompatible {
			t.Errorf("%s: got %s", k, got)
		}
	}
}

func TestConflictError_MessagesAndIs(t *testing.T) {
	r := &ConflictError{Op: "Delete", ConcurrentOp: "Rewrite", Version: 7, Retryable: true}
	if r.Error() != "This Delete transaction was preempted by concurrent transaction Rewrite at version 7. Please retry." {
		t.Fatal(r.Error())
	}
	x := &ConflictError{Op: "Append", ConcurrentOp: "Overwrite", Version: 3}
	if x.Error() != "This Append transaction is incompatible with concurrent transaction Overwrite at version 3." {
		t.Fatal(x.Error())
	}
	wrapped := fmt.Errorf("write: %w", r)
	if !errors.Is(wrapped, ErrConflict) || !errors.Is(wrapped, ErrRetryableConflict) || errors.Is(wrapped, ErrIncompatibleConflict) {
		t.Fatal("retryable Is")
	}
	if !errors.Is(x, ErrConflict) || errors.Is(x, ErrRetryableConflict) || !errors.Is(x, ErrIncompatibleConflict) {
		t.Fatal("incompatible Is")
	}
	if !errors.Is(ErrRetryableConflict, ErrConflict) || !errors.Is(ErrIncompatibleConflict, ErrConflict) ||
		!errors.Is(ErrTooManyRetries, ErrRetryableConflict) || !errors.Is(ErrRequirement, ErrConflict) {
		t.Fatal("sentinel Is")
	}
}
