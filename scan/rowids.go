package scan

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// ErrRowIDs: a fragment's stable row id sequence cannot be decoded or does
// not fit the fragment.
var ErrRowIDs = errors.New("scan: bad row id sequence")

// rowIDs decodes a fragment's stable row id sequence (one id per physical
// row, lance-table-format.md §3.5). read fetches an external sequence.
func rowIDs(ctx context.Context, f *pb.DataFragment, physRows uint64, read func(ctx context.Context, path string, off, size uint64) ([]byte, error)) ([]uint64, error) {
	var raw []byte
	switch s := f.GetRowIdSequence().(type) {
	case nil:
		return nil, nil
	case *pb.DataFragment_InlineRowIds:
		raw = s.InlineRowIds
	case *pb.DataFragment_ExternalRowIds:
		ext := s.ExternalRowIds
		if ext.GetSize() > 64<<20 {
			return nil, fmt.Errorf("%w: fragment %d: external sequence of %d bytes", ErrRowIDs, f.GetId(), ext.GetSize())
		}
		b, err := read(ctx, ext.GetPath(), ext.GetOffset(), ext.GetSize())
		if err != nil {
			return nil, fmt.Errorf("fragment %d: row id sequence %s: %w", f.GetId(), ext.GetPath(), err)
		}
		raw = b
	}
	var seq pb.RowIdSequence
	if err := proto.Unmarshal(raw, &seq); err != nil {
		return nil, fmt.Errorf("%w: fragment %d: %v", ErrRowIDs, f.GetId(), err)
	}
	out := make([]uint64, 0, min(physRows, 1<<20))
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: fragment %d: %s", ErrRowIDs, f.GetId(), fmt.Sprintf(format, args...))
	}
	add := func(v uint64) error {
		if uint64(len(out)) >= physRows {
			return bad("more ids than the fragment's %d rows", physRows)
		}
		out = append(out, v)
		return nil
	}
	for _, seg := range seq.GetSegments() {
		switch {
		case seg.GetRange() != nil:
			r := seg.GetRange()
			if r.GetEnd() < r.GetStart() || r.GetEnd()-r.GetStart() > physRows-uint64(len(out)) {
				return nil, bad("range [%d, %d) does not fit", r.GetStart(), r.GetEnd())
			}
			for v := r.GetStart(); v < r.GetEnd(); v++ {
				out = append(out, v)
			}
		case seg.GetRangeWithHoles() != nil:
			r := seg.GetRangeWithHoles()
			holes, err := decodeU64s(r.GetHoles(), physRows+r.GetEnd()-r.GetStart())
			if err != nil {
				return nil, bad("holes: %v", err)
			}
			if r.GetEnd() < r.GetStart() || r.GetEnd()-r.GetStart() > physRows-uint64(len(out))+uint64(len(holes)) {
				return nil, bad("range with holes [%d, %d) does not fit", r.GetStart(), r.GetEnd())
			}
			h := map[uint64]bool{}
			for _, v := range holes {
				h[v] = true
			}
			for v := r.GetStart(); v < r.GetEnd(); v++ {
				if !h[v] {
					if err := add(v); err != nil {
						return nil, err
					}
				}
			}
		case seg.GetRangeWithBitmap() != nil:
			r := seg.GetRangeWithBitmap()
			bm := r.GetBitmap()
			if r.GetEnd() < r.GetStart() || (r.GetEnd()-r.GetStart()+7)/8 > uint64(len(bm)) {
				return nil, bad("range with bitmap [%d, %d): bitmap of %d bytes", r.GetStart(), r.GetEnd(), len(bm))
			}
			for i := uint64(0); i < r.GetEnd()-r.GetStart(); i++ {
				if bm[i/8]&(1<<(i%8)) != 0 {
					if err := add(r.GetStart() + i); err != nil {
						return nil, err
					}
				}
			}
		case seg.GetSortedArray() != nil || seg.GetArray() != nil:
			a := seg.GetSortedArray()
			if a == nil {
				a = seg.GetArray()
			}
			vs, err := decodeU64s(a, physRows-uint64(len(out)))
			if err != nil {
				return nil, bad("array: %v", err)
			}
			out = append(out, vs...)
		default:
			return nil, bad("empty segment")
		}
	}
	if uint64(len(out)) != physRows {
		return nil, bad("%d ids for %d rows", len(out), physRows)
	}
	return out, nil
}

func decodeU64s(a *pb.EncodedU64Array, limit uint64) ([]uint64, error) {
	if a == nil {
		return nil, nil
	}
	var out []uint64
	switch {
	case a.GetU16Array() != nil:
		x := a.GetU16Array()
		b := x.GetOffsets()
		if len(b)%2 != 0 || uint64(len(b)/2) > limit {
			return nil, fmt.Errorf("u16 array of %d bytes", len(b))
		}
		for i := 0; i < len(b); i += 2 {
			out = append(out, x.GetBase()+uint64(binary.LittleEndian.Uint16(b[i:])))
		}
	case a.GetU32Array() != nil:
		x := a.GetU32Array()
		b := x.GetOffsets()
		if len(b)%4 != 0 || uint64(len(b)/4) > limit {
			return nil, fmt.Errorf("u32 array of %d bytes", len(b))
		}
		for i := 0; i < len(b); i += 4 {
			out = append(out, x.GetBase()+uint64(binary.LittleEndian.Uint32(b[i:])))
		}
	case a.GetU64Array() != nil:
		b := a.GetU64Array().GetValues()
		if len(b)%8 != 0 || uint64(len(b)/8) > limit {
			return nil, fmt.Errorf("u64 array of %d bytes", len(b))
		}
		for i := 0; i < len(b); i += 8 {
			out = append(out, binary.LittleEndian.Uint64(b[i:]))
		}
	}
	return out, nil
}
