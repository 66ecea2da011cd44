package codec

import (
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// fslMini: one validity bitmap per layer with has_validity (outer first),
// then the items (§7.11, mini-block).
func (d *decoder) fslMini(enc *pb21.CompressiveEncoding, f *pb21.FixedSizeList, bufs [][]byte, n uint64, depth int) (Block, error) {
	dim := f.GetItemsPerValue()
	if dim == 0 {
		return Block{}, d.errf(ErrCorrupt, enc, "fixed-size list of 0 items per value")
	}
	items, ok := mulOK(n, dim)
	if !ok {
		return Block{}, d.errf(ErrCorrupt, enc, "%d values of %d items", n, dim)
	}
	var valid []byte
	if f.GetHasValidity() {
		if len(bufs) < 2 {
			return Block{}, d.errf(ErrCorrupt, enc, "no buffer for the validity and the items")
		}
		size := (items + 7) / 8
		if size > uint64(len(bufs[0])) {
			return Block{}, d.errf(ErrCorrupt, enc, "validity of %d items in %d bytes", items, len(bufs[0]))
		}
		valid = bufs[0][:size:size]
		bufs = bufs[1:]
	}
	child, err := d.mini(f.GetValues(), bufs, items, depth+1)
	if err != nil {
		return Block{}, err
	}
	return Block{Kind: List, Num: n, Dim: dim, Validity: valid, Children: []Block{child}}, nil
}

// packedWidths checks a packed struct's field widths (whole bytes each).
func (d *decoder) packedWidths(enc *pb21.CompressiveEncoding, ps *pb21.PackedStruct) (uint64, error) {
	var row uint64
	if len(ps.GetBitsPerValue()) == 0 {
		return 0, d.errf(ErrCorrupt, enc, "packed struct without fields")
	}
	for i, w := range ps.GetBitsPerValue() {
		if w == 0 || w%8 != 0 || w > 1<<16 {
			return 0, d.errf(ErrUnsupported, enc, "field %d of %d bits", i, w)
		}
		row += w
	}
	return row, nil
}

// packedStruct: rows of the fields' LE values back to back (§7.12); each
// field is copied out into its own Fixed child.
func (d *decoder) packedStruct(enc *pb21.CompressiveEncoding, ps *pb21.PackedStruct, bufs [][]byte, n uint64, depth int) (Block, error) {
	row, err := d.packedWidths(enc, ps)
	if err != nil {
		return Block{}, err
	}
	var inner Block
	if d.ctx == ctxBlock {
		inner, err = d.block(ps.GetValues(), bufs[0], n, depth+1)
	} else {
		inner, err = d.mini(ps.GetValues(), bufs, n, depth+1)
	}
	if err != nil {
		return Block{}, err
	}
	if inner.Kind != Fixed || inner.Bits != row {
		return Block{}, d.errf(ErrCorrupt, enc, "rows of %d bits, the values are %s of %d bits", row, inner.Kind, inner.Bits)
	}
	return d.splitRows(enc, ps.GetBitsPerValue(), inner.Data, n, row/8)
}

func (d *decoder) splitRows(enc *pb21.CompressiveEncoding, widths []uint64, data []byte, n, rowBytes uint64) (Block, error) {
	if err := d.take(n*rowBytes, name(enc)); err != nil {
		return Block{}, err
	}
	out := Block{Kind: Struct, Num: n, Children: make([]Block, len(widths))}
	var at uint64
	for i, w := range widths {
		wb := w / 8
		col := make([]byte, n*wb)
		for r := uint64(0); r < n; r++ {
			copy(col[r*wb:r*wb+wb], data[r*rowBytes+at:])
		}
		out.Children[i] = Block{Kind: Fixed, Num: n, Bits: w, Data: col}
		at += wb
	}
	return out, nil
}
