package maint

import (
	"encoding/binary"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Row id and row version sequences (lance-table-format.md §3.5). A
// compaction keeps the stable row ids of the rows it moves: the new
// fragment's sequence is the old fragments' sequences with the deleted rows
// left out, and the created-at / last-updated-at version sequences follow
// the same rows.

// decodeU64Array expands an EncodedU64Array, refusing more than limit values.
func decodeU64Array(a *pb.EncodedU64Array, limit uint64) ([]uint64, error) {
	switch v := a.GetArray().(type) {
	case *pb.EncodedU64Array_U16Array_:
		b := v.U16Array.GetOffsets()
		if len(b)%2 != 0 || uint64(len(b)/2) > limit {
			return nil, fmt.Errorf("%w: u16 array of %d bytes (limit %d values)", ErrCorruptRowIDs, len(b), limit)
		}
		out := make([]uint64, len(b)/2)
		for i := range out {
			out[i] = v.U16Array.GetBase() + uint64(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return out, nil
	case *pb.EncodedU64Array_U32Array_:
		b := v.U32Array.GetOffsets()
		if len(b)%4 != 0 || uint64(len(b)/4) > limit {
			return nil, fmt.Errorf("%w: u32 array of %d bytes (limit %d values)", ErrCorruptRowIDs, len(b), limit)
		}
		out := make([]uint64, len(b)/4)
		for i := range out {
			out[i] = v.U32Array.GetBase() + uint64(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out, nil
	case *pb.EncodedU64Array_U64Array_:
		b := v.U64Array.GetValues()
		if len(b)%8 != 0 || uint64(len(b)/8) > limit {
			return nil, fmt.Errorf("%w: u64 array of %d bytes (limit %d values)", ErrCorruptRowIDs, len(b), limit)
		}
		out := make([]uint64, len(b)/8)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: encoded array without a known arm", ErrCorruptRowIDs)
}

// decodeSegment appends the values of a U64Segment to out, never growing
// out past limit values.
func decodeSegment(s *pb.U64Segment, out []uint64, limit uint64) ([]uint64, error) {
	room := limit - uint64(len(out))
	span := func(start, end uint64) error {
		if end < start || end-start > room {
			return fmt.Errorf("%w: segment [%d, %d) exceeds the fragment's %d rows", ErrCorruptRowIDs, start, end, limit)
		}
		return nil
	}
	switch v := s.GetSegment().(type) {
	case *pb.U64Segment_Range_:
		r := v.Range
		if err := span(r.GetStart(), r.GetEnd()); err != nil {
			return nil, err
		}
		for x := r.GetStart(); x < r.GetEnd(); x++ {
			out = append(out, x)
		}
		return out, nil
	case *pb.U64Segment_RangeWithHoles_:
		r := v.RangeWithHoles
		if r.GetEnd() < r.GetStart() {
			return nil, fmt.Errorf("%w: range with holes [%d, %d)", ErrCorruptRowIDs, r.GetStart(), r.GetEnd())
		}
		holes, err := decodeU64Array(r.GetHoles(), r.GetEnd()-r.GetStart())
		if err != nil {
			return nil, err
		}
		hs := map[uint64]bool{}
		for _, h := range holes {
			if h < r.GetStart() || h >= r.GetEnd() {
				return nil, fmt.Errorf("%w: hole %d outside [%d, %d)", ErrCorruptRowIDs, h, r.GetStart(), r.GetEnd())
			}
			hs[h] = true
		}
		if n := r.GetEnd() - r.GetStart() - uint64(len(hs)); n > room {
			return nil, fmt.Errorf("%w: range with holes of %d values exceeds the fragment's %d rows", ErrCorruptRowIDs, n, limit)
		}
		for x := r.GetStart(); x < r.GetEnd(); x++ {
			if !hs[x] {
				out = append(out, x)
			}
		}
		return out, nil
	case *pb.U64Segment_RangeWithBitmap_:
		r := v.RangeWithBitmap
		if r.GetEnd() < r.GetStart() || uint64(len(r.GetBitmap()))*8 < r.GetEnd()-r.GetStart() {
			return nil, fmt.Errorf("%w: range with bitmap [%d, %d) and %d bitmap bytes", ErrCorruptRowIDs, r.GetStart(), r.GetEnd(), len(r.GetBitmap()))
		}
		bm := r.GetBitmap()
		for i := uint64(0); i < r.GetEnd()-r.GetStart(); i++ {
			if bm[i/8]&(1<<(i%8)) != 0 {
				if uint64(len(out)) >= limit {
					return nil, fmt.Errorf("%w: range with bitmap exceeds the fragment's %d rows", ErrCorruptRowIDs, limit)
				}
				out = append(out, r.GetStart()+i)
			}
		}
		return out, nil
	case *pb.U64Segment_SortedArray:
		vals, err := decodeU64Array(v.SortedArray, room)
		if err != nil {
			return nil, err
		}
		return append(out, vals...), nil
	case *pb.U64Segment_Array:
		vals, err := decodeU64Array(v.Array, room)
		if err != nil {
			return nil, err
		}
		return append(out, vals...), nil
	}
	return nil, fmt.Errorf("%w: segment without a known arm", ErrCorruptRowIDs)
}

// decodeRowIDs returns the row ids of a fragment's inline sequence; it
// must hold exactly rows values.
func decodeRowIDs(data []byte, rows uint64) ([]uint64, error) {
	var seq pb.RowIdSequence
	if err := proto.Unmarshal(data, &seq); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptRowIDs, err)
	}
	out := make([]uint64, 0, min(rows, 1<<20))
	var err error
	for _, s := range seq.GetSegments() {
		if out, err = decodeSegment(s, out, rows); err != nil {
			return nil, err
		}
	}
	if uint64(len(out)) != rows {
		return nil, fmt.Errorf("%w: row id sequence holds %d ids for %d rows", ErrCorruptRowIDs, len(out), rows)
	}
	return out, nil
}

// decodeVersions returns one version per row of an inline
// RowDatasetVersionSequence (runs over row offsets 0..rows).
func decodeVersions(data []byte, rows uint64) ([]uint64, error) {
	var seq pb.RowDatasetVersionSequence
	if err := proto.Unmarshal(data, &seq); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptRowIDs, err)
	}
	out := make([]uint64, 0, min(rows, 1<<20))
	for _, run := range seq.GetRuns() {
		n := len(out)
		var err error
		if out, err = decodeSegment(run.GetSpan(), out, rows); err != nil {
			return nil, err
		}
		for i := n; i < len(out); i++ {
			out[i] = run.GetVersion()
		}
	}
	if uint64(len(out)) != rows {
		return nil, fmt.Errorf("%w: version sequence covers %d of %d rows", ErrCorruptRowIDs, len(out), rows)
	}
	return out, nil
}

func rangeSeg(start, end uint64) *pb.U64Segment {
	return &pb.U64Segment{Segment: &pb.U64Segment_Range_{Range: &pb.U64Segment_Range{Start: start, End: end}}}
}

// encodeRowIDs encodes ids as a RowIdSequence: runs of consecutive ids as
// Range segments, the rest as plain u64 Array segments.
func encodeRowIDs(ids []uint64) ([]byte, error) {
	var seq pb.RowIdSequence
	var loose []uint64
	flush := func() {
		if len(loose) == 0 {
			return
		}
		b := make([]byte, 8*len(loose))
		for i, v := range loose {
			binary.LittleEndian.PutUint64(b[8*i:], v)
		}
		seq.Segments = append(seq.Segments, &pb.U64Segment{Segment: &pb.U64Segment_Array{Array: &pb.EncodedU64Array{
			Array: &pb.EncodedU64Array_U64Array_{U64Array: &pb.EncodedU64Array_U64Array{Values: b}}}}})
		loose = loose[:0]
	}
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		if j-i >= 4 {
			flush()
			seq.Segments = append(seq.Segments, rangeSeg(ids[i], ids[j-1]+1))
		} else {
			loose = append(loose, ids[i:j]...)
		}
		i = j
	}
	flush()
	return proto.MarshalOptions{Deterministic: true}.Marshal(&seq)
}

// encodeVersions encodes one version per row as runs over row offsets.
func encodeVersions(vs []uint64) ([]byte, error) {
	var seq pb.RowDatasetVersionSequence
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j] == vs[i] {
			j++
		}
		seq.Runs = append(seq.Runs, &pb.RowDatasetVersionRun{Span: rangeSeg(uint64(i), uint64(j)), Version: vs[i]})
		i = j
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(&seq)
}
