package commit

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// applyDelete removes the deleted fragments, replaces the updated ones
// (new deletion files) and keeps the indices still relevant (§5.5 Delete).
func applyDelete(b *builder, d *pb.Transaction_Delete) error {
	m := b.m
	byID := map[uint64]*pb.DataFragment{}
	for _, f := range m.GetFragments() {
		byID[f.GetId()] = f
	}
	for _, uf := range d.GetUpdatedFragments() {
		if byID[uf.GetId()] == nil {
			return fmt.Errorf("%w: Delete updates fragment %d, which version %d does not have", ErrInvalidTransaction, uf.GetId(), b.in.prev.GetVersion())
		}
	}
	removed := map[uint64]bool{}
	for _, id := range d.GetDeletedFragmentIds() {
		removed[id] = true
	}
	updated := map[uint64]*pb.DataFragment{}
	for _, uf := range d.GetUpdatedFragments() {
		updated[uf.GetId()] = uf
	}
	kept := m.Fragments[:0]
	for _, f := range m.GetFragments() {
		if removed[f.GetId()] {
			continue
		}
		if uf := updated[f.GetId()]; uf != nil {
			nf := proto.Clone(uf).(*pb.DataFragment)
			fillStatistics(nf, f)
			f = nf
		}
		kept = append(kept, f)
	}
	m.Fragments = kept
	b.indices = retainRelevantIndices(b.indices, m)
	return nil
}

// retainRelevantIndices drops indices whose fields left the schema and
// segments that no longer cover any remaining fragment, but keeps at least
// one segment per index name so the index definition survives (§5.5
// Delete). Segments with an unknown bitmap are kept.
func retainRelevantIndices(indices []*pb.IndexMetadata, m *pb.Manifest) []*pb.IndexMetadata {
	fieldIDs := map[int32]bool{}
	for _, f := range m.GetFields() {
		fieldIDs[f.GetId()] = true
	}
	frags := roaring.New()
	for _, f := range m.GetFragments() {
		if f.GetId() <= 0xFFFFFFFF {
			frags.Add(uint32(f.GetId()))
		}
	}
	type cand struct {
		idx   *pb.IndexMetadata
		empty bool
	}
	var cands []cand
	live := map[string]int{}
	for _, idx := range indices {
		allFields := true
		for _, fid := range idx.GetFields() {
			if !fieldIDs[fid] {
				allFields = false
			}
		}
		if !allFields {
			continue
		}
		empty := false
		if bm := idx.GetFragmentBitmap(); len(bm) > 0 {
			b := roaring.New()
			if _, err := b.FromUnsafeBytes(bm); err == nil {
				empty = !b.Intersects(frags)
			}
		}
		if !empty {
			live[idx.GetName()]++
		}
		cands = append(cands, cand{idx, empty})
	}
	out := indices[:0]
	keptEmpty := map[string]bool{}
	for _, c := range cands {
		if c.empty {
			if live[c.idx.GetName()] > 0 || keptEmpty[c.idx.GetName()] {
				continue
			}
			keptEmpty[c.idx.GetName()] = true
		}
		out = append(out, c.idx)
	}
	return out
}
