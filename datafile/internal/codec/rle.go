package codec

import (
	"encoding/binary"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// rle expands run values (flat, V bits) by run lengths (flat u8 or u16)
// to exactly n values (§7.5, §7.6). A zero run is corrupt (as in Lance 12).
func (d *decoder) rle(enc *pb21.CompressiveEncoding, r *pb21.Rle, vals, runs []byte, n uint64) (Block, error) {
	vf, lf := r.GetValues().GetFlat(), r.GetRunLengths().GetFlat()
	if vf == nil || lf == nil || vf.Data != nil || lf.Data != nil {
		return Block{}, d.errf(ErrUnsupported, enc, "RLE values and run lengths must be flat")
	}
	vb, lb := vf.BitsPerValue, lf.BitsPerValue
	if vb == 0 || vb%8 != 0 || vb > 1<<16 {
		return Block{}, d.errf(ErrUnsupported, enc, "run values of %d bits", vb)
	}
	if lb != 8 && lb != 16 && lb != 32 {
		return Block{}, d.errf(ErrUnsupported, enc, "run lengths of %d bits", lb)
	}
	vw, lw := vb/8, lb/8
	nruns := uint64(len(runs)) / lw
	if nv := uint64(len(vals)) / vw; nv < nruns {
		nruns = nv
	}
	size, ok := mulOK(n, vw)
	if !ok {
		return Block{}, d.errf(ErrLimit, enc, "%d values of %d bits", n, vb)
	}
	if err := d.take(size, "rle"); err != nil {
		return Block{}, err
	}
	out := make([]byte, size)
	pos := uint64(0)
	for j := uint64(0); j < nruns && pos < n; j++ {
		var l uint64
		switch lw {
		case 1:
			l = uint64(runs[j])
		case 2:
			l = uint64(binary.LittleEndian.Uint16(runs[2*j:]))
		default:
			l = uint64(binary.LittleEndian.Uint32(runs[4*j:]))
		}
		if l == 0 {
			return Block{}, d.errf(ErrCorrupt, enc, "run %d has length zero", j)
		}
		if l > n-pos {
			return Block{}, d.errf(ErrCorrupt, enc, "run %d of %d values passes the count %d", j, l, n)
		}
		v := vals[j*vw : j*vw+vw]
		o := out[pos*vw : (pos+l)*vw]
		switch vw {
		case 1:
			b := v[0]
			for i := range o {
				o[i] = b
			}
		case 2:
			x := binary.LittleEndian.Uint16(v)
			for i := 0; i < len(o); i += 2 {
				binary.LittleEndian.PutUint16(o[i:], x)
			}
		case 4:
			x := binary.LittleEndian.Uint32(v)
			for i := 0; i < len(o); i += 4 {
				binary.LittleEndian.PutUint32(o[i:], x)
			}
		case 8:
			x := binary.LittleEndian.Uint64(v)
			for i := 0; i < len(o); i += 8 {
				binary.LittleEndian.PutUint64(o[i:], x)
			}
		default:
			for i := 0; i < len(o); i += int(vw) {
				copy(o[i:], v)
			}
		}
		pos += l
	}
	if pos != n {
		return Block{}, d.errf(ErrCorrupt, enc, "runs cover %d values, the count is %d", pos, n)
	}
	return Block{Kind: Fixed, Num: n, Bits: vb, Data: out}, nil
}
