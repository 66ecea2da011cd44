package codec

import (
	"encoding/binary"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// offsetBits returns the width of a Variable's offsets (flat 32 or 64).
func (d *decoder) offsetBits(enc *pb21.CompressiveEncoding, v *pb21.Variable) (uint64, error) {
	f := v.GetOffsets().GetFlat()
	if f == nil || f.Data != nil || (f.BitsPerValue != 32 && f.BitsPerValue != 64) {
		return 0, d.errf(ErrUnsupported, enc, "variable offsets must be flat 32 or 64 bits")
	}
	if v.Values != nil {
		return 0, d.errf(ErrUnsupported, enc, "compressed variable value bytes (never written by Lance 12)")
	}
	return f.BitsPerValue, nil
}

// checkOffsets verifies n+1 offsets of w bytes at offs: non-decreasing,
// first ≥ lo, last ≤ hi.
func checkOffsets(offs []byte, n uint64, w int, lo, hi uint64) (bad uint64, ok bool) {
	prev := lo
	if w == 4 {
		for i := uint64(0); i <= n; i++ {
			o := uint64(binary.LittleEndian.Uint32(offs[i*4:]))
			if o < prev || o > hi {
				return i, false
			}
			prev = o
		}
		return 0, true
	}
	for i := uint64(0); i <= n; i++ {
		o := binary.LittleEndian.Uint64(offs[i*8:])
		if o < prev || o > hi {
			return i, false
		}
		prev = o
	}
	return 0, true
}

// variableMini: (n+1) offsets relative to the buffer start, then the bytes
// (§7.2, mini-block). The block aliases buf.
func (d *decoder) variableMini(enc *pb21.CompressiveEncoding, v *pb21.Variable, buf []byte, n uint64) (Block, error) {
	bits, err := d.offsetBits(enc, v)
	if err != nil {
		return Block{}, err
	}
	w := bits / 8
	size, ok := mulOK(n+1, w)
	if !ok || n+1 == 0 || size > uint64(len(buf)) {
		return Block{}, d.errf(ErrCorrupt, enc, "%d offsets of %d bits in a %d-byte buffer", n+1, bits, len(buf))
	}
	if i, ok := checkOffsets(buf, n, int(w), size, uint64(len(buf))); !ok {
		return Block{}, d.errf(ErrCorrupt, enc, "offset %d out of order or outside the %d-byte buffer", i, len(buf))
	}
	return Block{Kind: Variable, Num: n, Data: buf, Offsets: buf[:size:size], OffsetBits: bits}, nil
}

// variableBlock: `u32 32 | u32 data_start | (n+1) u32 offsets | bytes` or
// the u64 form (§7.2, block). Offsets count from data_start.
func (d *decoder) variableBlock(enc *pb21.CompressiveEncoding, v *pb21.Variable, buf []byte, n uint64) (Block, error) {
	if v.Values != nil {
		return Block{}, d.errf(ErrUnsupported, enc, "compressed variable value bytes (never written by Lance 12)")
	}
	if len(buf) < 4 {
		return Block{}, d.errf(ErrCorrupt, enc, "variable block of %d bytes", len(buf))
	}
	var bits, start, hdr uint64
	switch binary.LittleEndian.Uint32(buf) {
	case 32:
		if len(buf) < 8 {
			return Block{}, d.errf(ErrCorrupt, enc, "variable block of %d bytes", len(buf))
		}
		bits, start, hdr = 32, uint64(binary.LittleEndian.Uint32(buf[4:])), 8
	case 64:
		if len(buf) < 16 {
			return Block{}, d.errf(ErrCorrupt, enc, "variable block of %d bytes", len(buf))
		}
		bits, start, hdr = 64, binary.LittleEndian.Uint64(buf[8:]), 16
	default:
		return Block{}, d.errf(ErrUnsupported, enc, "variable block with offset width word %d (only 32 and 64)", binary.LittleEndian.Uint32(buf))
	}
	w := bits / 8
	size, ok := mulOK(n+1, w)
	if !ok || n+1 == 0 || size > uint64(len(buf))-hdr || start < hdr+size || start > uint64(len(buf)) {
		return Block{}, d.errf(ErrCorrupt, enc, "%d offsets of %d bits, data at %d, in a %d-byte block", n+1, bits, start, len(buf))
	}
	offs := buf[hdr : hdr+size : hdr+size]
	data := buf[start:]
	if i, ok := checkOffsets(offs, n, int(w), 0, uint64(len(data))); !ok {
		return Block{}, d.errf(ErrCorrupt, enc, "offset %d out of order or past the %d data bytes", i, len(data))
	}
	return Block{Kind: Variable, Num: n, Data: data, Offsets: offs, OffsetBits: bits}, nil
}
