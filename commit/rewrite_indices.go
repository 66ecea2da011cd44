package commit

import (
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// remapRewriteBitmaps updates the index fragment bitmaps after a Rewrite
// that records no rewritten indices (lance-table-format.md §5.5 Rewrite;
// this build never rewrites index files).
//
// With stable row ids the rows keep their ids, so the entries of an index
// keyed by row id stay valid: a bitmap that covered every old fragment of a
// group covers the group's new fragments instead (bitmaps follow the rows),
// which is what Lance 12's compaction commits on such a table (same index
// uuid, no rewritten_indices, bitmap [old…] → [new…]; observed through the
// peer for BTree and bitmap indices). A bitmap covering only some old
// fragments of a group (never planned by Lance or by maint.Compact) loses
// them: the new fragments mix indexed and unindexed rows, so they must
// count as unindexed. Zone-based indices (ZoneMap, bloom filter) key their
// zones by fragment id and row offset whatever the row ids, as does any
// index whose type this build does not know: those are treated as without
// stable row ids (following the rows made Lance 12 prune the new fragment
// to nothing — TestCompactIndicesLance12 with a ZoneMap index).
//
// Without stable row ids the index entries hold row addresses (fragment id
// << 32 | offset) of the old fragments, which no longer exist. Lance 12
// rewrites the index files with the addresses remapped (rewritten_indices
// with a new uuid); this build instead takes the old fragments out of
// every bitmap and leaves the new ones out, so readers treat the new
// fragments as unindexed and scan them, and the entries of the vanished
// fragments are never consulted (a reader intersects the bitmap with the
// fragments it has). Lance 12's optimize then indexes the new fragments.
func remapRewriteBitmaps(indices []*pb.IndexMetadata, groups []*pb.Transaction_RewriteGroup, newIDs [][]uint64, stable bool) error {
	for _, idx := range indices {
		raw := idx.GetFragmentBitmap()
		if len(raw) == 0 {
			continue
		}
		bm := roaring.New()
		if _, err := bm.FromUnsafeBytes(raw); err != nil {
			return fmt.Errorf("%w: index %q: fragment bitmap: %v", ErrInvalidTransaction, idx.GetName(), err)
		}
		bm = bm.Clone()
		follow := stable && keyedByRowID(idx)
		changed := false
		for gi, g := range groups {
			all, any := true, false
			for _, of := range g.GetOldFragments() {
				if of.GetId() <= 0xFFFFFFFF && bm.Contains(uint32(of.GetId())) {
					any = true
					bm.Remove(uint32(of.GetId()))
				} else {
					all = false
				}
			}
			if !any {
				continue
			}
			changed = true
			if follow && all {
				for _, id := range newIDs[gi] {
					bm.Add(uint32(id))
				}
			}
		}
		if changed {
			bm.RunOptimize()
			out, err := bm.ToBytes()
			if err != nil {
				return err
			}
			idx.FragmentBitmap = out
		}
	}
	return nil
}

// keyedByRowID reports whether an index's entries name rows by row id (so
// they survive a rewrite of the rows' fragments under stable row ids): the
// BTree, bitmap, label-list, inverted (FTS), n-gram and vector indices,
// known by their index_details type. Zone-based indices (ZoneMap, bloom
// filter) name fragment ids and offsets; an index without details or of an
// unknown type is assumed to do so too.
func keyedByRowID(idx *pb.IndexMetadata) bool {
	u := idx.GetIndexDetails().GetTypeUrl()
	if i := strings.LastIndexByte(u, '.'); i >= 0 {
		u = u[i+1:]
	}
	switch u {
	case "BTreeIndexDetails", "BitmapIndexDetails", "LabelListIndexDetails",
		"InvertedIndexDetails", "NGramIndexDetails", "VectorIndexDetails":
		return true
	}
	return false
}
