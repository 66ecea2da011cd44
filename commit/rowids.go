package commit

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Fragment ids and stable row ids (lance-table-format.md §3.5, §5.5): the
// id high-water mark new fragments continue from, and the row-id and
// version sequences a new fragment gets when the table uses stable row ids.

// highWater returns the highest fragment id ever used: max_fragment_id when
// present, else the largest id in fragments; ok=false when neither exists
// (§3.1 field 11, §9 trap 10).
func highWater(m *pb.Manifest) (uint64, bool) {
	if m == nil {
		return 0, false
	}
	if m.MaxFragmentId != nil {
		hw := uint64(m.GetMaxFragmentId())
		for _, f := range m.GetFragments() {
			hw = max(hw, f.GetId())
		}
		return hw, true
	}
	if len(m.GetFragments()) == 0 {
		return 0, false
	}
	var hw uint64
	for _, f := range m.GetFragments() {
		hw = max(hw, f.GetId())
	}
	return hw, true
}

func hasRowIDs(f *pb.DataFragment) bool { return f.GetRowIdSequence() != nil }

// usesStableRowIDs reports whether a manifest has stable row ids (bit 1 or
// any row-id sequence).
func usesStableRowIDs(m *pb.Manifest) bool {
	if m == nil {
		return false
	}
	if m.GetReaderFeatureFlags()&flags.StableRowIDs != 0 {
		return true
	}
	for _, f := range m.GetFragments() {
		if hasRowIDs(f) {
			return true
		}
	}
	return false
}

// rangeSegment encodes a U64Segment Range [start, end).
func rangeSegment(start, end uint64) *pb.U64Segment {
	return &pb.U64Segment{Segment: &pb.U64Segment_Range_{Range: &pb.U64Segment_Range{Start: start, End: end}}}
}

// assignRowIDs gives a new fragment stable row ids [next, next+rows) and
// created-at / last-updated-at sequences naming version (§3.5, §5.5).
func assignRowIDs(f *pb.DataFragment, next, version uint64) (uint64, error) {
	rows := f.GetPhysicalRows()
	if rows == 0 {
		return next, fmt.Errorf("%w: new fragment has physical_rows 0 (unknown); stable row ids need the row count", ErrInvalidTransaction)
	}
	seq, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.RowIdSequence{Segments: []*pb.U64Segment{rangeSegment(next, next+rows)}})
	if err != nil {
		return next, err
	}
	vs, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.RowDatasetVersionSequence{Runs: []*pb.RowDatasetVersionRun{{Span: rangeSegment(0, rows), Version: version}}})
	if err != nil {
		return next, err
	}
	f.RowIdSequence = &pb.DataFragment_InlineRowIds{InlineRowIds: seq}
	f.LastUpdatedAtVersionSequence = &pb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: vs}
	f.CreatedAtVersionSequence = &pb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: vs}
	return next + rows, nil
}

// addFragments assigns ids (and, with stable row ids, row ids) to the
// transaction's new fragments and appends copies to m.Fragments.
func addFragments(m *pb.Manifest, prevForIDs *pb.Manifest, frags []*pb.DataFragment, stable bool) ([]uint64, error) {
	hw, ok := highWater(prevForIDs)
	next := uint64(0)
	if ok {
		next = hw + 1
	}
	ids := make([]uint64, 0, len(frags))
	for _, f := range frags {
		nf := proto.Clone(f).(*pb.DataFragment)
		nf.Id = next
		if next > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w: fragment id %d exceeds max_fragment_id's uint32 range", ErrInvalidTransaction, next)
		}
		ids = append(ids, next)
		next++
		if stable && !hasRowIDs(nf) {
			var err error
			if m.NextRowId, err = assignRowIDs(nf, m.GetNextRowId(), m.GetVersion()); err != nil {
				return nil, err
			}
		}
		m.Fragments = append(m.Fragments, nf)
	}
	if len(ids) > 0 {
		last := uint32(ids[len(ids)-1])
		m.MaxFragmentId = &last
	}
	return ids, nil
}
