package codec

import (
	"encoding/binary"
	"math"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// ValueDecoder decodes the items of a full-zip page (per-value context,
// §5.3): feed each visible item's bytes to Append (or AppendNull for a null
// variable-width item, which has no bytes), then take the result with
// Finish. Fixed-width encodings (flat, fixed_size_list, packed_struct)
// produce Fixed, List or Struct blocks; variable-width ones (variable,
// fsst, general) a Variable block; variable_packed_struct a Struct block
// whose children are Fixed or Variable.
type ValueDecoder struct {
	enc    *pb21.CompressiveEncoding
	d      decoder
	lim    uint64
	fixed  uint64
	root   *vbuild
	tables map[*pb21.Fsst]*SymbolTable
}

// vbuild accumulates the decoded items of one encoding level.
type vbuild struct {
	kind     Kind
	bits     uint64
	n        uint64
	data     []byte
	offs     []uint64
	valid    []byte
	dim      uint64
	widths   []uint64 // packed struct field widths
	children []*vbuild
}

// NewValueDecoder checks enc for the per-value context.
func NewValueDecoder(enc *pb21.CompressiveEncoding, lim Limits) (*ValueDecoder, error) {
	v := &ValueDecoder{enc: enc, d: decoder{ctx: ctxValue, left: lim.max()}, lim: lim.max(), tables: map[*pb21.Fsst]*SymbolTable{}}
	root, fixed, err := v.plan(enc, 0)
	if err != nil {
		return nil, err
	}
	v.root, v.fixed = root, fixed
	return v, nil
}

// plan builds the accumulator for enc and returns the fixed item size (0 =
// variable width).
func (v *ValueDecoder) plan(enc *pb21.CompressiveEncoding, depth int) (*vbuild, uint64, error) {
	d := &v.d
	if depth > maxDepth {
		return nil, 0, d.errf(ErrCorrupt, enc, "encodings nested deeper than %d", maxDepth)
	}
	if enc == nil || enc.Compression == nil {
		return nil, 0, d.errf(ErrCorrupt, enc, "compressive encoding is missing its compression variant")
	}
	switch c := enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Flat:
		b := c.Flat.GetBitsPerValue()
		if b == 0 || b%8 != 0 || c.Flat.Data != nil || b > 1<<20 {
			return nil, 0, d.errf(ErrUnsupported, enc, "per-value flat of %d bits", b)
		}
		return &vbuild{kind: Fixed, bits: b}, b / 8, nil
	case *pb21.CompressiveEncoding_Variable:
		if c.Variable.Values != nil {
			return nil, 0, d.errf(ErrUnsupported, enc, "compressed variable value bytes")
		}
		return &vbuild{kind: Variable}, 0, nil
	case *pb21.CompressiveEncoding_Fsst:
		t, err := parseSymbolTable(c.Fsst.GetSymbolTable())
		if err != nil {
			return nil, 0, err
		}
		v.tables[c.Fsst] = t
		if _, fx, err := v.plan(c.Fsst.GetValues(), depth+1); err != nil || fx != 0 {
			if err == nil {
				err = d.errf(ErrUnsupported, enc, "FSST over fixed-width values")
			}
			return nil, 0, err
		}
		return &vbuild{kind: Variable}, 0, nil
	case *pb21.CompressiveEncoding_General:
		if _, fx, err := v.plan(c.General.GetValues(), depth+1); err != nil || fx != 0 {
			if err == nil {
				err = d.errf(ErrUnsupported, enc, "per-value general compression of fixed-width values")
			}
			return nil, 0, err
		}
		return &vbuild{kind: Variable}, 0, nil
	case *pb21.CompressiveEncoding_FixedSizeList:
		f := c.FixedSizeList
		dim := f.GetItemsPerValue()
		if dim == 0 || dim > 1<<24 {
			return nil, 0, d.errf(ErrUnsupported, enc, "fixed-size list of %d items", dim)
		}
		child, fx, err := v.plan(f.GetValues(), depth+1)
		if err != nil {
			return nil, 0, err
		}
		if fx == 0 {
			return nil, 0, d.errf(ErrUnsupported, enc, "fixed-size list of variable-width items")
		}
		size, ok := mulOK(dim, fx)
		if !ok || size > 1<<32 {
			return nil, 0, d.errf(ErrUnsupported, enc, "fixed-size list items of %d × %d bytes", dim, fx)
		}
		if f.GetHasValidity() {
			size += (dim + 7) / 8
		}
		return &vbuild{kind: List, dim: dim, children: []*vbuild{child}}, size, nil
	case *pb21.CompressiveEncoding_PackedStruct:
		row, err := d.packedWidths(enc, c.PackedStruct)
		if err != nil {
			return nil, 0, err
		}
		b := &vbuild{kind: Struct, widths: c.PackedStruct.GetBitsPerValue()}
		for _, w := range b.widths {
			b.children = append(b.children, &vbuild{kind: Fixed, bits: w})
		}
		return b, row / 8, nil
	case *pb21.CompressiveEncoding_VariablePackedStruct:
		fs := c.VariablePackedStruct.GetFields()
		if len(fs) == 0 {
			return nil, 0, d.errf(ErrCorrupt, enc, "variable packed struct without fields")
		}
		b := &vbuild{kind: Struct}
		for i, f := range fs {
			child, fx, err := v.plan(f.GetValue(), depth+1)
			if err != nil {
				return nil, 0, err
			}
			switch l := f.Layout.(type) {
			case *pb21.FieldEncoding_BitsPerValue:
				if fx == 0 || l.BitsPerValue != fx*8 {
					return nil, 0, d.errf(ErrCorrupt, enc, "field %d: %d bits per value for an encoding of %d bytes", i, l.BitsPerValue, fx)
				}
			case *pb21.FieldEncoding_BitsPerLength:
				if fx != 0 || (l.BitsPerLength != 8 && l.BitsPerLength != 16 && l.BitsPerLength != 32 && l.BitsPerLength != 64) {
					return nil, 0, d.errf(ErrUnsupported, enc, "field %d: %d-bit lengths for a %d-byte encoding", i, l.BitsPerLength, fx)
				}
			default:
				return nil, 0, d.errf(ErrCorrupt, enc, "field %d has neither bits_per_value nor bits_per_length", i)
			}
			b.children = append(b.children, child)
		}
		b.widths = make([]uint64, len(fs))
		for i, f := range fs {
			if l, ok := f.Layout.(*pb21.FieldEncoding_BitsPerLength); ok {
				b.widths[i] = l.BitsPerLength
			}
		}
		return b, 0, nil
	}
	return nil, 0, d.errf(ErrUnsupported, enc, "not a per-value compression")
}

// FixedBytes is the size of one item of a fixed-width encoding (flat,
// fixed_size_list, packed_struct), 0 for variable-width encodings.
func (v *ValueDecoder) FixedBytes() uint64 { return v.fixed }

// Append decodes one item: exactly FixedBytes() bytes for a fixed-width
// encoding, one value's stored bytes otherwise.
func (v *ValueDecoder) Append(item []byte) error {
	if v.fixed > 0 && uint64(len(item)) != v.fixed {
		return v.d.errf(ErrCorrupt, v.enc, "item of %d bytes, items are %d", len(item), v.fixed)
	}
	if _, ok := v.enc.Compression.(*pb21.CompressiveEncoding_VariablePackedStruct); ok {
		return v.appendVPS(v.enc, v.root, item)
	}
	rest, err := v.appendItem(v.enc, v.root, item, 0)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return v.d.errf(ErrCorrupt, v.enc, "%d bytes left after the item", len(rest))
	}
	return nil
}

// AppendNull appends a null slot: an empty value (variable width) or a
// zero item (fixed width).
func (v *ValueDecoder) AppendNull() error {
	if v.fixed > 0 {
		if err := v.d.take(v.fixed, name(v.enc)); err != nil {
			return err
		}
		return v.Append(make([]byte, v.fixed))
	}
	v.appendEmpty(v.root)
	return nil
}

func (v *ValueDecoder) appendEmpty(b *vbuild) {
	b.n++
	switch b.kind {
	case Variable:
		if len(b.offs) == 0 {
			b.offs = append(b.offs, 0)
		}
		b.offs = append(b.offs, uint64(len(b.data)))
	case Fixed:
		b.data = append(b.data, make([]byte, b.bits/8)...)
	case Struct:
		for _, c := range b.children {
			v.appendEmpty(c)
		}
	}
}

// appendItem decodes one item of enc from the front of item and returns the
// rest (fixed-width encodings consume their size; variable ones all).
func (v *ValueDecoder) appendItem(enc *pb21.CompressiveEncoding, b *vbuild, item []byte, depth int) ([]byte, error) {
	d := &v.d
	switch c := enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Flat:
		w := b.bits / 8
		if uint64(len(item)) < w {
			return nil, d.errf(ErrCorrupt, enc, "item of %d bytes, need %d", len(item), w)
		}
		if err := d.take(w, "flat"); err != nil {
			return nil, err
		}
		b.data = append(b.data, item[:w]...)
		b.n++
		return item[w:], nil
	case *pb21.CompressiveEncoding_FixedSizeList:
		f := c.FixedSizeList
		if _, nested := f.GetValues().GetCompression().(*pb21.CompressiveEncoding_FixedSizeList); nested {
			return v.appendNestedFSL(enc, b, item, depth)
		}
		if f.GetHasValidity() {
			vb := (b.dim + 7) / 8
			if uint64(len(item)) < vb {
				return nil, d.errf(ErrCorrupt, enc, "item of %d bytes has no %d validity bytes", len(item), vb)
			}
			if err := d.take(vb, "fixed_size_list"); err != nil {
				return nil, err
			}
			base := b.n * b.dim
			for i := uint64(0); i < b.dim; i++ {
				bit := base + i
				if bit/8 >= uint64(len(b.valid)) {
					b.valid = append(b.valid, 0)
				}
				if item[i/8]>>(i%8)&1 != 0 {
					b.valid[bit/8] |= 1 << (bit % 8)
				}
			}
			item = item[vb:]
		} else if b.valid != nil {
			return nil, d.errf(ErrCorrupt, enc, "validity appeared mid-page")
		}
		var err error
		for i := uint64(0); i < b.dim; i++ {
			if item, err = v.appendItem(f.GetValues(), b.children[0], item, depth+1); err != nil {
				return nil, err
			}
		}
		b.n++
		return item, nil
	case *pb21.CompressiveEncoding_PackedStruct:
		var row uint64
		for _, w := range b.widths {
			row += w / 8
		}
		if uint64(len(item)) < row {
			return nil, d.errf(ErrCorrupt, enc, "row of %d bytes, need %d", len(item), row)
		}
		if err := d.take(row, "packed_struct"); err != nil {
			return nil, err
		}
		var at uint64
		for i, w := range b.widths {
			c := b.children[i]
			c.data = append(c.data, item[at:at+w/8]...)
			c.n++
			at += w / 8
		}
		b.n++
		return item[row:], nil
	}
	// Variable-width chains: the whole item is one value.
	if err := v.appendValue(enc, b, item, depth); err != nil {
		return nil, err
	}
	return nil, nil
}

// appendValue decodes one variable-width value and appends it to b.
func (v *ValueDecoder) appendValue(enc *pb21.CompressiveEncoding, b *vbuild, item []byte, depth int) error {
	raw, err := v.expandValue(enc, item, depth)
	if err != nil {
		return err
	}
	if err := v.d.take(uint64(len(raw))+8, name(enc)); err != nil {
		return err
	}
	if len(b.offs) == 0 {
		b.offs = append(b.offs, 0)
	}
	b.data = append(b.data, raw...)
	b.offs = append(b.offs, uint64(len(b.data)))
	b.n++
	return nil
}

// expandValue undoes the variable-width chain of one value.
func (v *ValueDecoder) expandValue(enc *pb21.CompressiveEncoding, item []byte, depth int) ([]byte, error) {
	d := &v.d
	switch c := enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Variable:
		return item, nil
	case *pb21.CompressiveEncoding_Fsst:
		raw, err := v.expandValue(c.Fsst.GetValues(), item, depth+1)
		if err != nil {
			return nil, err
		}
		t := v.tables[c.Fsst]
		n, err := t.decodedLen(raw)
		if err != nil {
			return nil, &Error{Encoding: "fsst", Context: ctxValue, Msg: "expand", Err: err}
		}
		if n > d.left {
			return nil, d.errf(ErrLimit, enc, "value of %d bytes, %d left", n, d.left)
		}
		out := make([]byte, n+8)
		w, _ := t.expand(out, raw)
		return out[:w], nil
	case *pb21.CompressiveEncoding_General:
		raw, err := d.general(enc, c.General.GetCompression(), item)
		if err != nil {
			return nil, err
		}
		d.left += uint64(len(raw)) // counted again when appended
		return v.expandValue(c.General.GetValues(), raw, depth+1)
	}
	return nil, d.errf(ErrUnsupported, enc, "not a variable-width per-value compression")
}

// appendVPS splits one variable-packed-struct row into its fields (§7.13).
func (v *ValueDecoder) appendVPS(enc *pb21.CompressiveEncoding, b *vbuild, item []byte) error {
	d := &v.d
	fs := enc.GetVariablePackedStruct().GetFields()
	for i, f := range fs {
		c := b.children[i]
		if lw := b.widths[i] / 8; lw > 0 {
			if uint64(len(item)) < lw {
				return d.errf(ErrCorrupt, enc, "field %d: no %d-byte length", i, lw)
			}
			var l uint64
			switch lw {
			case 1:
				l = uint64(item[0])
			case 2:
				l = uint64(binary.LittleEndian.Uint16(item))
			case 4:
				l = uint64(binary.LittleEndian.Uint32(item))
			default:
				l = binary.LittleEndian.Uint64(item)
			}
			item = item[lw:]
			if l > uint64(len(item)) {
				return d.errf(ErrCorrupt, enc, "field %d: length %d, %d bytes left", i, l, len(item))
			}
			if err := v.appendValue(f.GetValue(), c, item[:l], 1); err != nil {
				return err
			}
			item = item[l:]
			continue
		}
		var err error
		if item, err = v.appendItem(f.GetValue(), c, item, 1); err != nil {
			return err
		}
	}
	if len(item) != 0 {
		return d.errf(ErrCorrupt, enc, "%d bytes left after the row", len(item))
	}
	b.n++
	return nil
}

// Finish returns the decoded items and resets the decoder.
func (v *ValueDecoder) Finish() Block {
	out := finish(v.root)
	v.root = reset(v.root)
	v.d.left = v.lim
	return out
}

func finish(b *vbuild) Block {
	out := Block{Kind: b.kind, Num: b.n, Bits: b.bits, Data: b.data, Dim: b.dim, Validity: b.valid}
	if b.kind == Variable {
		offs := b.offs
		if len(offs) == 0 {
			offs = []uint64{0}
		}
		if offs[len(offs)-1] <= math.MaxUint32 {
			o := make([]byte, 4*len(offs))
			for i, x := range offs {
				binary.LittleEndian.PutUint32(o[4*i:], uint32(x))
			}
			out.Offsets, out.OffsetBits = o, 32
		} else {
			o := make([]byte, 8*len(offs))
			for i, x := range offs {
				binary.LittleEndian.PutUint64(o[8*i:], x)
			}
			out.Offsets, out.OffsetBits = o, 64
		}
		if out.Data == nil {
			out.Data = []byte{}
		}
	}
	if b.kind == List && b.valid != nil {
		need := (b.n*b.dim + 7) / 8
		out.Validity = b.valid[:need]
	}
	for _, c := range b.children {
		out.Children = append(out.Children, finish(c))
	}
	return out
}

func reset(b *vbuild) *vbuild {
	nb := &vbuild{kind: b.kind, bits: b.bits, dim: b.dim, widths: b.widths}
	for _, c := range b.children {
		nb.children = append(nb.children, reset(c))
	}
	return nb
}

// appendNestedFSL decodes one value of a fixed_size_list of
// fixed_size_list … (as Lance 12 writes it in full-zip pages): the
// bitmap of every level with has_validity, outer first, each covering
// all of that level's items in the value (⌈count/8⌉ bytes), then all
// the innermost items.
func (v *ValueDecoder) appendNestedFSL(enc *pb21.CompressiveEncoding, b *vbuild, item []byte, depth int) ([]byte, error) {
	d := &v.d
	count := uint64(1) // lists of the current level in this value
	for e, lb := enc, b; ; {
		f, ok := e.GetCompression().(*pb21.CompressiveEncoding_FixedSizeList)
		if !ok {
			// the innermost items
			var err error
			for i := uint64(0); i < count; i++ {
				if item, err = v.appendItem(e, lb, item, depth+1); err != nil {
					return nil, err
				}
			}
			return item, nil
		}
		if depth++; depth > maxDepth || len(lb.children) != 1 {
			return nil, d.errf(ErrCorrupt, e, "nested fixed-size lists deeper than the plan")
		}
		items, ok := mulOK(count, lb.dim)
		if !ok || items > 1<<32 {
			return nil, d.errf(ErrCorrupt, e, "%d lists of %d items", count, lb.dim)
		}
		if f.FixedSizeList.GetHasValidity() {
			vb := (items + 7) / 8
			if uint64(len(item)) < vb {
				return nil, d.errf(ErrCorrupt, e, "item of %d bytes has no %d validity bytes", len(item), vb)
			}
			if err := d.take(vb, "fixed_size_list"); err != nil {
				return nil, err
			}
			base := lb.n * lb.dim
			for i := uint64(0); i < items; i++ {
				bit := base + i
				for bit/8 >= uint64(len(lb.valid)) {
					lb.valid = append(lb.valid, 0)
				}
				if item[i/8]>>(i%8)&1 != 0 {
					lb.valid[bit/8] |= 1 << (bit % 8)
				}
			}
			item = item[vb:]
		} else if lb.valid != nil {
			return nil, d.errf(ErrCorrupt, e, "validity appeared mid-page")
		}
		lb.n += count
		count = items
		e, lb = f.FixedSizeList.GetValues(), lb.children[0]
	}
}
