package codec

import (
	"encoding/binary"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// rleSide classifies one child of an Rle message: its decoded width in
// bits and, when it is out-of-line bit-packed rather than flat, the
// packing (nil for flat). Other compressions give ok = false.
func rleSide(ce *pb21.CompressiveEncoding) (bits uint64, packed *pb21.OutOfLineBitpacking, ok bool) {
	if f := ce.GetFlat(); f != nil && f.Data == nil {
		return f.BitsPerValue, nil, true
	}
	if o := ce.GetOutOfLineBitpacking(); o != nil {
		return o.UncompressedBitsPerValue, o, true
	}
	return 0, nil, false
}

// rle expands run values (V bits) by run lengths (u8, u16 or u32) to
// exactly n values (§7.5, §7.6). A zero run is corrupt (as in Lance 12).
// Both children are flat in Lance 12's 2.1/2.2 output; its 2.3 output
// (seen after optimize) also out-of-line bit-packs one child, the run
// lengths (`rle(v, oolbp(8←3))`): the flat child then gives the run count
// the packed one is decoded with. Two packed children are refused.
func (d *decoder) rle(enc *pb21.CompressiveEncoding, r *pb21.Rle, vals, runs []byte, n uint64) (Block, error) {
	vb, vp, vok := rleSide(r.GetValues())
	lb, lp, lok := rleSide(r.GetRunLengths())
	if !vok || !lok || (vp != nil && lp != nil) {
		return Block{}, d.errf(ErrUnsupported, enc, "RLE values and run lengths must be flat (or one of them out-of-line bit-packed)")
	}
	if vb == 0 || vb%8 != 0 || vb > 1<<16 {
		return Block{}, d.errf(ErrUnsupported, enc, "run values of %d bits", vb)
	}
	if lb != 8 && lb != 16 && lb != 32 {
		return Block{}, d.errf(ErrUnsupported, enc, "run lengths of %d bits", lb)
	}
	vw, lw := vb/8, lb/8
	var nruns uint64
	switch {
	case vp != nil:
		nruns = uint64(len(runs)) / lw
		if vp.UncompressedBitsPerValue > 64 {
			return Block{}, d.errf(ErrUnsupported, enc, "bit-packed run values of %d bits", vb)
		}
		blk, err := d.outOfLine(r.GetValues(), vp, vals, nruns)
		if err != nil {
			return Block{}, err
		}
		vals = blk.Data
	case lp != nil:
		nruns = uint64(len(vals)) / vw
		blk, err := d.outOfLine(r.GetRunLengths(), lp, runs, nruns)
		if err != nil {
			return Block{}, err
		}
		runs = blk.Data
	default:
		nruns = uint64(len(runs)) / lw
		if nv := uint64(len(vals)) / vw; nv < nruns {
			nruns = nv
		}
	}
	if uint64(len(vals)) < nruns*vw || uint64(len(runs)) < nruns*lw {
		return Block{}, d.errf(ErrCorrupt, enc, "%d runs in %d value and %d run-length bytes", nruns, len(vals), len(runs))
	}
	size, ok := mulOK(n, vw)
	if !ok {
		return Block{}, d.errf(ErrLimit, enc, "%d values of %d bits", n, vb)
	}
	if err := d.take(size, "rle"); err != nil {
		return Block{}, err
	}
	out := d.alloc(size)
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
