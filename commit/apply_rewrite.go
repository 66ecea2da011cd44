package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// RewriteGroup is one group of a Rewrite (compaction): the old fragments,
// exactly as the read version records them, and the fragments holding
// their live rows. New fragments with id 0 get ids at commit from the
// fragment-id high-water mark; with stable row ids they must carry the row
// id sequence of the rows they hold (rows keep their ids, §5.5 Rewrite).
type RewriteGroup struct {
	Old []*pb.DataFragment
	New []*pb.DataFragment
}

// NewRewrite is a Rewrite transaction (lance-table-format.md §3.7 arm 104)
// as Lance's compaction writes it: groups only (old_fragments /
// new_fragments of the deprecated single group left empty) and no
// rewritten indices — index files are not rewritten; without stable row
// ids the rewritten fragments leave the index fragment bitmaps, so readers
// treat the new fragments as unindexed (see remapRewriteBitmaps).
func NewRewrite(readVersion uint64, groups []RewriteGroup) *Transaction {
	t := newTxn(readVersion)
	rw := &pb.Transaction_Rewrite{}
	for _, g := range groups {
		rw.Groups = append(rw.Groups, &pb.Transaction_RewriteGroup{OldFragments: cloneFrags(g.Old), NewFragments: cloneFrags(g.New)})
	}
	t.msg.Operation = &pb.Transaction_Rewrite_{Rewrite: rw}
	return t
}

// rewriteGroups returns the groups of a Rewrite; a Rewrite written with the
// deprecated fields only is one group (§3.7).
func rewriteGroups(r *pb.Transaction_Rewrite) []*pb.Transaction_RewriteGroup {
	if len(r.GetGroups()) > 0 {
		return r.GetGroups()
	}
	if len(r.GetOldFragments()) == 0 && len(r.GetNewFragments()) == 0 {
		return nil
	}
	return []*pb.Transaction_RewriteGroup{{OldFragments: r.GetOldFragments(), NewFragments: r.GetNewFragments()}}
}

// applyRewrite replaces each group's old fragments by its new ones (§5.5
// Rewrite). Every old fragment must still be in the latest version with
// the deletion file the rewrite read (the conflict matrix retries a
// Rewrite racing a Delete on the same fragment, so a change here is a
// malformed transaction). New fragments with id 0 get fresh ids.
//
// Index fragment bitmaps: this build writes no rewritten indices; see
// remapRewriteBitmaps (the old fragments leave every bitmap; with stable
// row ids the new ones join it, as the rows keep their ids).
func applyRewrite(b *builder, r *pb.Transaction_Rewrite) error {
	m := b.m
	groups := rewriteGroups(r)
	if len(groups) == 0 {
		return fmt.Errorf("%w: Rewrite without groups", ErrInvalidTransaction)
	}
	if len(r.GetRewrittenIndices()) > 0 {
		return fmt.Errorf("%w: this build cannot commit a Rewrite with rewritten indices", ErrInvalidTransaction)
	}
	byID := map[uint64]*pb.DataFragment{}
	for _, f := range m.GetFragments() {
		byID[f.GetId()] = f
	}
	removed := map[uint64]bool{}
	for gi, g := range groups {
		if len(g.GetOldFragments()) == 0 {
			return fmt.Errorf("%w: Rewrite group %d has no old fragments", ErrInvalidTransaction, gi)
		}
		for _, of := range g.GetOldFragments() {
			cur := byID[of.GetId()]
			if cur == nil || removed[of.GetId()] {
				return fmt.Errorf("%w: Rewrite group %d rewrites fragment %d, which version %d does not have", ErrInvalidTransaction, gi, of.GetId(), b.in.prev.GetVersion())
			}
			// Deletion files compared by identity: num_deleted_rows is a
			// statistic the §5.2 e fix-up may have recomputed.
			if deletionKey(cur.GetDeletionFile()) != deletionKey(of.GetDeletionFile()) || !sameDataFiles(cur, of) {
				return fmt.Errorf("%w: fragment %d changed since the rewrite read it", ErrInvalidTransaction, of.GetId())
			}
			removed[of.GetId()] = true
		}
	}
	kept := m.Fragments[:0]
	for _, f := range m.GetFragments() {
		if !removed[f.GetId()] {
			kept = append(kept, f)
		}
	}
	m.Fragments = kept

	hw, ok := highWater(b.in.prev)
	next := uint64(0)
	if ok {
		next = hw + 1
	}
	newIDs := make([][]uint64, len(groups))
	for gi, g := range groups {
		for _, f := range g.GetNewFragments() {
			nf := proto.Clone(f).(*pb.DataFragment)
			if nf.GetId() == 0 {
				nf.Id = next
				next++
			} else if byID[nf.GetId()] != nil && !removed[nf.GetId()] {
				return fmt.Errorf("%w: Rewrite new fragment id %d is in use", ErrInvalidTransaction, nf.GetId())
			}
			if nf.GetId() > 0xFFFFFFFF {
				return fmt.Errorf("%w: fragment id %d exceeds max_fragment_id's uint32 range", ErrInvalidTransaction, nf.GetId())
			}
			if nf.GetPhysicalRows() == 0 {
				return fmt.Errorf("%w: Rewrite new fragment %d has physical_rows 0 (unknown)", ErrInvalidTransaction, nf.GetId())
			}
			if b.stable && !hasRowIDs(nf) {
				return fmt.Errorf("%w: the table uses stable row ids and Rewrite new fragment %d has no row id sequence", ErrInvalidTransaction, nf.GetId())
			}
			if !b.stable && hasRowIDs(nf) {
				return fmt.Errorf("%w: Rewrite new fragment %d has a row id sequence but the table has no stable row ids", ErrInvalidTransaction, nf.GetId())
			}
			newIDs[gi] = append(newIDs[gi], nf.GetId())
			b.res.newFragmentIDs = append(b.res.newFragmentIDs, nf.GetId())
			m.Fragments = append(m.Fragments, nf)
		}
	}
	if n := next; n > 0 {
		if top := n - 1; m.MaxFragmentId == nil || uint64(m.GetMaxFragmentId()) < top {
			t := uint32(top)
			m.MaxFragmentId = &t
		}
	}
	return remapRewriteBitmaps(b.indices, groups, newIDs, b.stable)
}

// rewriteVsCreateIndex: Rewrite against a committed CreateIndex — R when a
// new index covers a fragment this Rewrite rewrites (§5.4 "R o").
func rewriteVsCreateIndex(mine, theirs *pb.Transaction) (outcome, string) {
	return retryIfIndexedFragmentsRewritten(theirs, mine)
}

// rewriteRow is the conflict-matrix row of a Rewrite being committed
// (§5.4): appends, configuration and schema-only changes are compatible;
// a concurrent Delete, Update, Rewrite or DataReplacement touching a
// rewritten fragment, and any Merge, make it retry; Overwrite and Restore
// make it incompatible.
func rewriteRow(row *[numOpKinds]cell) {
	row[OpDelete] = retryIfFragmentsOverlap
	row[OpUpdate] = retryIfFragmentsOverlap
	row[OpOverwrite] = xx
	row[OpCreateIndex] = rewriteVsCreateIndex
	row[OpRewrite] = retryIfFragmentsOverlap
	row[OpMerge] = rr
	row[OpRestore] = xx
	row[OpDataReplacement] = retryIfFragmentsOverlap
	row[OpDataOverlay] = rr // its fragment list is not decoded by this build
}
