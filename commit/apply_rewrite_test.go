package commit

import (
	"context"
	"errors"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// TestConflictMatrix_RewriteRow checks the Rewrite row of §5.4: ✓ against
// Append, Project, ReserveFragments, UpdateConfig, UpdateBases, Clone,
// UpdateMemWal; R o against Delete, Update, Rewrite, DataReplacement and a
// CreateIndex covering a rewritten fragment; R against Merge; X against
// Overwrite and Restore.
func TestConflictMatrix_RewriteRow(t *testing.T) {
	txns := sampleTxns()
	want := map[string]outcome{
		"Delete(f1)": outcomeRetryable, "Delete(f2)": outcomeCompatible, "Delete(remove f1)": outcomeRetryable,
		"Update(f1)": outcomeRetryable, "Update(remove f1)": outcomeRetryable,
		"Overwrite": outcomeIncompatible, "Overwrite(k)": outcomeIncompatible,
		"CreateIndex(x,f1)": outcomeRetryable, "CreateIndex(x,f3)": outcomeCompatible, "DropIndex": outcomeCompatible,
		"Rewrite(f1)": outcomeRetryable, "Merge": outcomeRetryable, "Restore": outcomeIncompatible,
		"DataReplacement(f1,x)": outcomeRetryable, "DataReplacement(f2,s)": outcomeCompatible,
		"DataOverlay": outcomeRetryable, "Unknown": outcomeRetryable,
	}
	for theirs, tx := range txns {
		w, ok := want[theirs]
		if !ok {
			w = outcomeCompatible
		}
		if got, why := checkConflict(txns["Rewrite(f1)"], tx); got != w {
			t.Errorf("Rewrite(f1) vs committed %s: got %s (%s), want %s", theirs, got, why, w)
		}
	}
}

// TestRewrite_ReplacesGroupsAndRacesAppend (§5.5 Rewrite): the old
// fragments of each group go, the new ones get fresh ids above the
// high-water mark, a concurrent Append is compatible (its fragment stays),
// and a concurrent Delete on a rewritten fragment preempts the Rewrite.
func TestRewrite_ReplacesGroupsAndRacesAppend(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	mustCreate(t, st, fakeFrag("a", 10), fakeFrag("b", 10), fakeFrag("c", 10))
	m := readVersion(t, st, 1).Manifest
	rw := NewRewrite(1, []RewriteGroup{{Old: m.Fragments[:2], New: []*pb.DataFragment{fakeFrag("ab", 20)}}})
	rw.MarkSeedFiles(false, "ab.lance")
	mustCommit(t, st, appendTxn(1, fakeFrag("d", 5)), Options{})
	res := mustCommit(t, st, rw, Options{})
	got := sprintIDs(res.Manifest)
	if got != "[2 3 4]" {
		t.Fatalf("fragments after rewrite: %s, want [2 3 4] (c, the append, the rewritten one)", got)
	}
	if res.FragmentIDs[0] != 4 || res.Manifest.GetMaxFragmentId() != 4 {
		t.Fatalf("new fragment id %v, max_fragment_id %d", res.FragmentIDs, res.Manifest.GetMaxFragmentId())
	}
	// A Rewrite racing a Delete of the fragment it rewrites: retryable.
	m = res.Manifest
	rw2 := NewRewrite(res.Version, []RewriteGroup{{Old: m.Fragments[:2], New: []*pb.DataFragment{fakeFrag("cd", 15)}}})
	rw2.MarkSeedFiles(false, "cd.lance")
	del := newTxn(res.Version)
	del.msg.Operation = &pb.Transaction_Delete_{Delete: &pb.Transaction_Delete{DeletedFragmentIds: []uint64{m.Fragments[0].Id}}}
	mustCommit(t, st, del, Options{})
	_, err := Commit(ctx, st, rw2, Options{})
	var ce *ConflictError
	if !errors.As(err, &ce) || !ce.Retryable {
		t.Fatalf("rewrite racing a delete: %v, want a retryable conflict", err)
	}
}
