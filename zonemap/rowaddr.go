package zonemap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest"
)

// Lance's row-address tree map (the null_bitmap buffer), as Lance 12 reads
// and writes it: a little-endian u32 entry count, then per entry, in
// ascending fragment id, the u32 fragment id, the u32 byte size of a
// portable 32-bit Roaring bitmap of local row offsets, and those bytes. A
// size of 0 selects every row of the fragment. This is not the seed
// bitmap format (zone-seeds.md R42).

// EncodeRowAddrMap serializes per-fragment row offsets. Empty bitmaps are
// left out (an entry of size 0 would mean "every row").
func EncodeRowAddrMap(rows map[uint32]*roaring.Bitmap) ([]byte, error) {
	ids := make([]uint32, 0, len(rows))
	for id, bm := range rows {
		if bm != nil && !bm.IsEmpty() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out bytes.Buffer
	var u [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(u[:], v)
		out.Write(u[:])
	}
	put(uint32(len(ids)))
	for _, id := range ids {
		bm := rows[id].Clone()
		bm.RunOptimize()
		b, err := bm.ToBytes()
		if err != nil {
			return nil, fmt.Errorf("zonemap: null bitmap of fragment %d: %w", id, err)
		}
		if uint64(len(b)) > 1<<32-1 {
			return nil, fmt.Errorf("zonemap: null bitmap of fragment %d is %d bytes", id, len(b))
		}
		put(id)
		put(uint32(len(b)))
		out.Write(b)
	}
	return out.Bytes(), nil
}

// RowAddrMap is a decoded row-address tree map.
type RowAddrMap struct {
	// Rows holds the partial entries.
	Rows map[uint32]*roaring.Bitmap
	// Full lists fragments whose every row is selected (size-0 entries).
	Full map[uint32]bool
}

// DecodeRowAddrMap parses a row-address tree map strictly: entries in
// ascending fragment id, each bitmap a valid portable Roaring bitmap of
// exactly its declared size, no trailing bytes.
func DecodeRowAddrMap(b []byte) (*RowAddrMap, error) {
	bad := func(off int, format string, args ...any) error {
		return fmt.Errorf("%w: null bitmap at byte %d: %s", ErrInvalidIndex, off, fmt.Sprintf(format, args...))
	}
	if len(b) < 4 {
		return nil, bad(0, "%d bytes, want at least 4", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	// Every entry takes at least 8 bytes: refuse counts the input cannot hold.
	if uint64(n) > uint64(len(b)-4)/8 {
		return nil, bad(0, "%d entries do not fit in %d bytes", n, len(b))
	}
	m := &RowAddrMap{Rows: map[uint32]*roaring.Bitmap{}, Full: map[uint32]bool{}}
	off := 4
	var prev uint32
	for i := uint32(0); i < n; i++ {
		if len(b)-off < 8 {
			return nil, bad(off, "entry %d truncated", i)
		}
		frag := binary.LittleEndian.Uint32(b[off:])
		size := binary.LittleEndian.Uint32(b[off+4:])
		if i > 0 && frag <= prev {
			return nil, bad(off, "fragment %d after %d: entries must ascend", frag, prev)
		}
		prev = frag
		off += 8
		if size == 0 {
			m.Full[frag] = true
			continue
		}
		if uint64(size) > uint64(len(b)-off) {
			return nil, bad(off, "entry %d (fragment %d) declares %d bytes, %d remain", i, frag, size, len(b)-off)
		}
		raw := b[off : off+int(size)]
		bm, err := decodeRoaring("null bitmap", raw)
		if err != nil {
			return nil, bad(off, "fragment %d: %v", frag, err)
		}
		m.Rows[frag] = bm
		off += int(size)
	}
	if off != len(b) {
		return nil, bad(off, "%d trailing bytes", len(b)-off)
	}
	return m, nil
}

// decodeRoaring reads exactly one portable Roaring bitmap from raw with
// the strict decoder of manifest (the one for .bin deletion files and
// fragment bitmaps): the whole layout is checked in linear time before
// anything is allocated, trailing bytes are refused, and it never panics.
func decodeRoaring(what string, raw []byte) (*roaring.Bitmap, error) {
	return manifest.DecodeRoaring32(what, raw)
}
