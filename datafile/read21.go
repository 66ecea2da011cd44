package datafile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// reader21 reads fields of a 2.1+ file: it gathers each leaf column's
// levels and values for the requested rows (page21.go) and assembles the
// Arrow arrays from them (§3).
type reader21 struct {
	ctx    context.Context
	f      *File
	budget *budget
	mem    memory.Allocator
	leafOf map[int]int // leaf field index -> column
	dec    *codec.Decoder
	// scratch holds the chunk bytes of the mini-block page being decoded
	// (reused from page to page).
	scratch []byte
	// flatMin overrides flatMinBytes (tests).
	flatMin uint64
}

// codec returns the reader's reusing codec decoder: its zstd state and FSST
// tables are kept across chunks and pages, and every call's output is valid
// only until the next call (callers copy the values out at once).
func (r *reader21) codec() *codec.Decoder {
	if r.dec == nil {
		r.dec = codec.NewDecoder(r.limits())
		r.dec.Reuse()
	}
	return r.dec
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func (r *reader21) limits() codec.Limits {
	left := r.budget.left
	if left <= 0 {
		left = 1
	}
	return codec.Limits{MaxBytes: uint64(left)}
}

func (f *File) newReader21(ctx context.Context, opts ReadOptions) (*reader21, error) {
	max := opts.MaxDecodeBytes
	if max <= 0 {
		max = DefaultMaxDecodeBytes
	}
	r := &reader21{ctx: ctx, f: f, budget: &budget{left: max}, mem: memory.DefaultAllocator, leafOf: map[int]int{}, flatMin: opts.flatMinBytes}
	next := 0
	var walk func(fi int)
	walk = func(fi int) {
		fld := &f.schema.Fields[fi]
		if isLeaf21(fld) {
			r.leafOf[fi] = next
			next++
			return
		}
		for _, c := range fld.Children {
			walk(c)
		}
	}
	for _, fi := range f.schema.TopLevel() {
		walk(fi)
	}
	if next != len(f.columns) {
		return nil, withPath(formatErr(ErrMalformed, "schema", -1,
			"the schema's %d leaf fields need %d columns, the file has %d", next, next, len(f.columns)), f.path)
	}
	return r, nil
}

// isLeaf21 reports whether a field has its own column in a 2.1+ file:
// fields without children, fixed-size lists, and packed structs (blob v2
// descriptors and `lance-encoding:packed` structs, spec §3.1).
func isLeaf21(fld *Field) bool {
	if len(fld.Children) == 0 {
		return true
	}
	lt, err := parseLogicalType(fld.LogicalType)
	if err == nil && lt.kind == lkFixedSizeList {
		return true
	}
	if lt.kind == lkStruct {
		if v, ok := fld.Metadata["lance-encoding:packed"]; ok && v != "false" {
			return true
		}
		if _, ok := fld.Metadata["lance-encoding:blob"]; ok {
			return true
		}
	}
	return false
}

// leafStream reads rows of the ranges of one leaf column.
func (r *reader21) leaf(fi int, dt arrow.DataType, ranges []RowRange) (*leafStream, error) {
	col := r.leafOf[fi]
	cm := &r.f.columns[col]
	vals, err := newSink(dt, r.budget)
	if err != nil {
		return nil, formatErr(ErrUnsupported, fmt.Sprintf("column %d (field %q)", col, r.f.schema.Fields[fi].Name), -1, "%v", err)
	}
	ls := &leafStream{vals: vals}
	// Pre-size the values for the rows requested (one value per row without
	// lists; lists grow from there), within the remaining budget.
	var want uint64
	for _, rg := range ranges {
		want = addSat(want, rg.End-rg.Start)
	}
	ls.wantRows = want
	if vals.kind == codec.Fixed && vals.bits >= 8 {
		vals.reserve(want, min(mulSat(want, vals.bits/8), uint64(max(r.budget.left, 0))))
	} else if vals.kind == codec.Variable {
		vals.reserve(min(want, uint64(max(r.budget.left, 0))/8), 0)
	}
	layouts := make([]*pb21.PageLayout, len(cm.Pages))
	var pageStart uint64
	pi := 0
	for _, rg := range ranges {
		// pages are in row order; find those overlapping rg
		for pi > 0 && pageStart > rg.Start {
			pi--
			pageStart -= cm.Pages[pi].Length
		}
		for ; pi < len(cm.Pages); pi++ {
			p := &cm.Pages[pi]
			pend := pageStart + p.Length
			if pend <= rg.Start {
				pageStart = pend
				continue
			}
			if pageStart >= rg.End {
				break
			}
			pc := &pageCtx{r: r, col: col, pi: pi, page: p,
				sec: fmt.Sprintf("column %d (field %q) page %d", col, r.f.schema.Fields[fi].Name, pi)}
			if layouts[pi] == nil {
				pl, err := pc.layout()
				if err != nil {
					return nil, err
				}
				layouts[pi] = pl
			}
			layers := pageLayers(layouts[pi])
			var pageLi *layerInfo
			if ls.li == nil {
				li, err := newLayerInfo(layers)
				if err != nil {
					return nil, pc.errf(ErrMalformed, "%v", err)
				}
				ls.li = li
			} else if !sameLayers(ls.li.layers, layers) {
				// Pages of one column may differ in nullability (Lance
				// 12 derives each page's layers from its data): the
				// stream keeps the union and each page's def levels are
				// renumbered into it.
				var err error
				if pageLi, err = ls.widenLayers(layers); err != nil {
					return nil, pc.errf(ErrMalformed, "page layers %v do not fit the column's %v: %v", layers, ls.li.layers, err)
				}
			}
			a, b := max(rg.Start, pageStart)-pageStart, min(rg.End, pend)-pageStart
			if pageLi == nil {
				if err := pc.readRows(layouts[pi], a, b, ls); err != nil {
					return nil, err
				}
			} else {
				colLi, before := ls.li, ls.n
				ls.li = pageLi
				err := pc.readRows(layouts[pi], a, b, ls)
				ls.li = colLi
				if err != nil {
					return nil, err
				}
				if ls.def != nil {
					remapDefs(ls.def[before:], pageLi, colLi)
				}
			}
			if b+pageStart < pend {
				break // the range ends inside this page
			}
			pageStart = pend
		}
	}
	if ls.li == nil {
		// no rows requested: an empty stream with one item layer
		li, _ := newLayerInfo([]pb21.RepDefLayer{pb21.RepDefLayer_REPDEF_NULLABLE_ITEM})
		ls.li = li
	}
	return ls, nil
}

// field reads top-level (or any) field fi for the ranges and assembles it.
func (r *reader21) field(fi int, dt arrow.DataType, ranges []RowRange, rows uint64) (arrow.ArrayData, error) {
	// Gather the leaves under fi.
	streams := map[int]*leafStream{}
	var walk func(fi int, dt arrow.DataType) error
	walk = func(fi int, dt arrow.DataType) error {
		fld := &r.f.schema.Fields[fi]
		if _, ok := r.leafOf[fi]; ok {
			ls, err := r.leaf(fi, dt, ranges)
			if err != nil {
				return err
			}
			streams[fi] = ls
			return nil
		}
		kids, err := childTypes(dt, len(fld.Children))
		if err != nil {
			return formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
		}
		for i, c := range fld.Children {
			if err := walk(c, kids[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(fi, dt); err != nil {
		return nil, err
	}
	for lf, ls := range streams {
		if ls.rows != rows {
			return nil, formatErr(ErrMalformed, "field "+r.f.schema.Fields[lf].Name, -1, "column holds %d of the %d rows requested", ls.rows, rows)
		}
	}
	a := &assembler{r: r, streams: streams}
	d, err := a.node(fi, dt, a.depthOf(fi))
	if err != nil {
		return nil, err
	}
	// (A struct child read alone is null where a struct above it is null:
	// the validity of layer i counts every absent layer outside it.)
	if uint64(d.Len()) != rows {
		d.Release()
		return nil, formatErr(ErrMalformed, "field "+r.f.schema.Fields[fi].Name, -1, "assembled %d rows, want %d", d.Len(), rows)
	}
	return d, nil
}

// childTypes returns the Arrow types of a nested type's schema children.
func childTypes(dt arrow.DataType, n int) ([]arrow.DataType, error) {
	var out []arrow.DataType
	switch t := dt.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			out = append(out, f.Type)
		}
	case *arrow.MapType:
		out = []arrow.DataType{t.Elem()}
	case *arrow.ListType:
		out = []arrow.DataType{t.Elem()}
	case *arrow.LargeListType:
		out = []arrow.DataType{t.Elem()}
	default:
		return nil, fmt.Errorf("type %s has no child fields", dt)
	}
	if len(out) != n {
		return nil, fmt.Errorf("type %s has %d children, the schema %d", dt, len(out), n)
	}
	return out, nil
}

// assembler rebuilds Arrow arrays from leaf streams (§3.4, Arrow-style: one
// layer at a time from the outside).
type assembler struct {
	r       *reader21
	streams map[int]*leafStream
}

// firstLeaf returns the first leaf stream under field fi (pre-order).
func (a *assembler) firstLeaf(fi int) (*leafStream, int, error) {
	if ls, ok := a.streams[fi]; ok {
		return ls, fi, nil
	}
	for _, c := range a.r.f.schema.Fields[fi].Children {
		if ls, lf, err := a.firstLeaf(c); err == nil {
			return ls, lf, nil
		}
	}
	return nil, -1, formatErr(ErrMalformed, "field "+a.r.f.schema.Fields[fi].Name, -1, "nested field without a leaf column")
}

// layerOf is the layer index of the node at depth in the leaf's layers.
func layerOf(ls *leafStream, depth int, leafDepth int) (int, error) {
	if len(ls.li.layers) != leafDepth+1 {
		return 0, fmt.Errorf("the leaf has %d rep/def layers but %d schema levels: %w", len(ls.li.layers), leafDepth+1, ErrMalformed)
	}
	return leafDepth - depth, nil
}

func (a *assembler) depthOf(fi int) int {
	d := 0
	f := &a.r.f.schema.Fields[fi]
	for f.ParentID != -1 {
		p := -1
		for i := range a.r.f.schema.Fields {
			if a.r.f.schema.Fields[i].ID == f.ParentID {
				p = i
				break
			}
		}
		if p < 0 || d > maxLayers {
			break
		}
		f = &a.r.f.schema.Fields[p]
		d++
	}
	return d
}

// slotRule says which entries give the node at layer i a slot: an entry
// whose rep level is at least start (a new element of the nearest enclosing
// list, else a new row) and whose def level d has exists[d] (no list layer
// in (i, owner(d)] made it absent).
func (ls *leafStream) slotRule(i int) (start int, exists []bool) {
	li := ls.li
	start = li.maxRep
	for j := i + 1; j < len(li.layers); j++ {
		if isList(li.layers[j]) {
			start = li.listLevel[j] - 1
			break
		}
	}
	exists = make([]bool, len(li.owner))
	for d := range li.owner {
		ok := true
		for j := i + 1; j <= li.owner[d]; j++ {
			if isList(li.layers[j]) {
				ok = false
				break
			}
		}
		exists[d] = ok
	}
	return start, exists
}

// slotTable turns a slot rule into per-def-level flags: bit 0 = the entry
// gives a slot, bit 1 = that slot is valid at layer i.
func (ls *leafStream) slotTable(i int) (start uint16, tab []uint8) {
	st, exists := ls.slotRule(i)
	tab = make([]uint8, len(exists))
	for d, ok := range exists {
		if ok {
			tab[d] = 1
			if ls.li.validAt(i, d) {
				tab[d] |= 2
			}
		}
	}
	if ls.rep == nil {
		st = 0
	}
	return uint16(st), tab
}

// validAt reports whether def level d leaves the node at layer i valid (an
// empty list at layer i is a valid list).
func (li *layerInfo) validAt(i, d int) bool {
	o := -1
	if d < len(li.owner) {
		o = li.owner[d]
	}
	return o < i || (o == i && li.ownerEmpty[d])
}

// flags returns the slot-table flags of entry e (0 when it gives no slot).
func (ls *leafStream) flags(e int, start uint16, tab []uint8) uint8 {
	if start > 0 && ls.rep[e] < start {
		return 0
	}
	if ls.def == nil {
		return 3
	}
	if d := int(ls.def[e]); d < len(tab) {
		return tab[d]
	}
	return 0
}

// nodeSlots counts the slots of the node at layer i and computes their
// validity bitmap (nil when none is null) and null count, in one pass over
// the entries and without listing the slots.
func (ls *leafStream) nodeSlots(i int) (n int, valid []byte, nulls int) {
	start, tab := ls.slotTable(i)
	if ls.def == nil {
		for e := 0; e < ls.n; e++ {
			if ls.flags(e, start, tab) != 0 {
				n++
			}
		}
		return n, nil, 0
	}
	valid = make([]byte, (ls.n+7)/8)
	def := ls.def[:ls.n]
	var rep []uint16
	if start > 0 {
		rep = ls.rep[:ls.n]
	}
	for e, d := range def {
		if rep != nil && rep[e] < start {
			continue
		}
		f := uint8(0)
		if int(d) < len(tab) {
			f = tab[d]
		}
		switch f {
		case 0:
			continue
		case 3:
			valid[n>>3] |= 1 << (n & 7)
		default:
			nulls++
		}
		n++
	}
	if nulls == 0 {
		return n, nil, 0
	}
	return n, valid[:(n+7)/8], nulls
}

// listOffsets builds the Arrow offsets (32-bit, or 64-bit when large) of
// the list node at layer i over its n slots: offset k is the number of
// slots of the child layer i-1 before the k-th list slot. It also returns
// the child's slot count.
func (ls *leafStream) listOffsets(i, n int, large bool) ([]byte, int) {
	ls0, t0 := ls.slotTable(i)
	cs, tc := ls.slotTable(i - 1)
	w := 4
	if large {
		w = 8
	}
	ob := make([]byte, w*(n+1))
	k, c := 0, 0
	if !large && ls.def != nil && ls.rep != nil && cs == 0 {
		// list<leaf>: every entry's rep is checked for the list only.
		rep, def := ls.rep[:ls.n], ls.def[:ls.n]
		for e, d := range def {
			if k < n && rep[e] >= ls0 && int(d) < len(t0) && t0[d] != 0 {
				putU32(ob[4*k:], uint32(c))
				k++
			}
			if int(d) < len(tc) && tc[d] != 0 {
				c++
			}
		}
	} else {
		for e := 0; e < ls.n; e++ {
			if k < n && ls.flags(e, ls0, t0) != 0 {
				if large {
					binary.LittleEndian.PutUint64(ob[8*k:], uint64(c))
				} else {
					putU32(ob[4*k:], uint32(c))
				}
				k++
			}
			if ls.flags(e, cs, tc) != 0 {
				c++
			}
		}
	}
	if large {
		binary.LittleEndian.PutUint64(ob[8*n:], uint64(c))
	} else {
		putU32(ob[4*n:], uint32(c))
	}
	return ob, c
}

func (a *assembler) node(fi int, dt arrow.DataType, depth int) (arrow.ArrayData, error) {
	fld := &a.r.f.schema.Fields[fi]
	if ls, ok := a.streams[fi]; ok {
		// Leaf: its slots are the visible entries, in value order.
		i, err := layerOf(ls, depth, depth)
		if err != nil {
			return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
		}
		var valid []byte
		nulls := 0
		if ls.vbits != nil {
			// Flat column read by the flat path: the bitmap is made.
			if uint64(ls.n) != ls.vals.n || ls.rep != nil || i != 0 || len(ls.li.layers) != 1 {
				return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%d entries but %d values", ls.n, ls.vals.n)
			}
			if ls.vnulls > 0 {
				valid, nulls = ls.vbits[:(ls.n+7)/8], ls.vnulls
			}
		} else if ls.def != nil && ls.rep == nil && i == 0 && len(ls.li.layers) == 1 {
			// Flat column: every entry is a value slot; valid iff def 0.
			if uint64(ls.n) != ls.vals.n {
				return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%d entries but %d values", ls.n, ls.vals.n)
			}
			valid = make([]byte, (ls.n+7)/8)
			for e, dv := range ls.def[:ls.n] {
				if dv == 0 {
					valid[e>>3] |= 1 << (e & 7)
				} else {
					nulls++
				}
			}
		} else if ls.def != nil {
			var n int
			n, valid, nulls = ls.nodeSlots(i)
			if uint64(n) != ls.vals.n {
				return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%d visible entries but %d values", n, ls.vals.n)
			}
		} else if uint64(ls.n) != ls.vals.n {
			return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%d entries but %d values", ls.n, ls.vals.n)
		}
		d, err := ls.vals.arrayData(dt, valid, nulls, a.r.mem)
		if err != nil {
			return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
		}
		return d, nil
	}
	ls, lf, err := a.firstLeaf(fi)
	if err != nil {
		return nil, err
	}
	i, err := layerOf(ls, depth, a.depthOf(lf))
	if err != nil {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
	}
	nslots, valid, nulls := ls.nodeSlots(i)
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	kids, err := childTypes(dt, len(fld.Children))
	if err != nil {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "%v", err)
	}
	children := make([]arrow.ArrayData, len(fld.Children))
	release := func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}
	for k, c := range fld.Children {
		cd, err := a.node(c, kids[k], depth+1)
		if err != nil {
			release()
			return nil, err
		}
		children[k] = cd
	}
	defer release()
	switch dt.(type) {
	case *arrow.StructType:
		if isList(ls.li.layers[i]) {
			return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "struct field has a list rep/def layer")
		}
		for k, c := range children {
			if c.Len() != nslots {
				return nil, formatErr(ErrMalformed, "field "+a.r.f.schema.Fields[fld.Children[k]].Name, -1,
					"struct child holds %d values, the struct %d", c.Len(), nslots)
			}
		}
		return newData(dt, nslots, []*memory.Buffer{vb}, children, nulls), nil
	}
	// list, large_list, map
	if !isList(ls.li.layers[i]) {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list field has an item rep/def layer")
	}
	_, large := dt.(*arrow.LargeListType)
	if i == 0 {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list field at the innermost rep/def layer")
	}
	ob, nchild := ls.listOffsets(i, nslots, large)
	if children[0].Len() != nchild {
		return nil, formatErr(ErrMalformed, "field "+fld.Name, -1, "list items hold %d values, the offsets %d", children[0].Len(), nchild)
	}
	if !large && nchild > 1<<31-1 {
		return nil, formatErr(ErrUnsupported, "field "+fld.Name, -1, "%d list items exceed 32-bit offsets", nchild)
	}
	return newData(dt, nslots, []*memory.Buffer{vb, memory.NewBufferBytes(ob)}, children, nulls), nil
}

func newData(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls int) arrow.ArrayData {
	return array.NewData(dt, n, bufs, children, nulls, 0)
}

func putU32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

// readRows21 is ReadRows for 2.1+ files.
// maxKeptScratch bounds the chunk buffer a File keeps between reads.
const maxKeptScratch = 16 << 20

func (f *File) readRows21(ctx context.Context, fields []int, afs []arrow.Field, ranges []RowRange, total uint64, opts ReadOptions) ([]arrow.Array, error) {
	r, err := f.newReader21(ctx, opts)
	if err != nil {
		return nil, err
	}
	if b, ok := f.scratch.Get().(*[]byte); ok {
		r.scratch = *b
	}
	defer func() {
		if r.dec != nil {
			r.dec.Close()
		}
		// every array below copied its values out of the scratch bytes
		// (they are overwritten page by page), so the next read may reuse them
		if c := cap(r.scratch); c > 0 && c <= maxKeptScratch {
			b := r.scratch[:0]
			f.scratch.Put(&b)
		}
	}()
	cols := make([]arrow.Array, 0, len(fields))
	for i, fi := range fields {
		d, err := r.field(fi, afs[i].Type, ranges, total)
		if err != nil {
			for _, c := range cols {
				c.Release()
			}
			return nil, withPath(err, f.path)
		}
		cols = append(cols, array.MakeFromData(d))
		d.Release()
	}
	return cols, nil
}

// widenLayers makes the stream's layers the union of its own and a page's
// (same depth, same list/item kind per layer; a layer is nullable or
// emptyable when either is), renumbering the def levels read so far, and
// returns the page's own layer info.
func (ls *leafStream) widenLayers(page []pb21.RepDefLayer) (*layerInfo, error) {
	cur := ls.li.layers
	if len(page) != len(cur) {
		return nil, fmt.Errorf("%d layers, the column has %d", len(page), len(cur))
	}
	flags := func(l pb21.RepDefLayer) (null, empty bool) {
		switch l {
		case pb21.RepDefLayer_REPDEF_NULLABLE_ITEM, pb21.RepDefLayer_REPDEF_NULLABLE_LIST:
			return true, false
		case pb21.RepDefLayer_REPDEF_EMPTYABLE_LIST:
			return false, true
		case pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
			return true, true
		}
		return false, false
	}
	union := make([]pb21.RepDefLayer, len(cur))
	for i := range cur {
		if isList(cur[i]) != isList(page[i]) {
			return nil, fmt.Errorf("layer %d is %s here and %s in the column", i, page[i], cur[i])
		}
		n1, e1 := flags(cur[i])
		n2, e2 := flags(page[i])
		null, empty := n1 || n2, e1 || e2
		switch {
		case !isList(cur[i]) && null:
			union[i] = pb21.RepDefLayer_REPDEF_NULLABLE_ITEM
		case !isList(cur[i]):
			union[i] = pb21.RepDefLayer_REPDEF_ALL_VALID_ITEM
		case null && empty:
			union[i] = pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
		case null:
			union[i] = pb21.RepDefLayer_REPDEF_NULLABLE_LIST
		case empty:
			union[i] = pb21.RepDefLayer_REPDEF_EMPTYABLE_LIST
		default:
			union[i] = pb21.RepDefLayer_REPDEF_ALL_VALID_LIST
		}
	}
	pageLi, err := newLayerInfo(page)
	if err != nil {
		return nil, err
	}
	if !sameLayers(union, cur) {
		uli, err := newLayerInfo(union)
		if err != nil {
			return nil, err
		}
		if ls.def != nil {
			remapDefs(ls.def, ls.li, uli)
		}
		ls.li = uli
	}
	return pageLi, nil
}

// remapDefs renumbers def levels from one layer numbering to a wider one
// (same layers, each at least as nullable/emptyable).
func remapDefs(def []uint16, from, to *layerInfo) {
	m := make([]uint16, len(from.owner))
	for d := 1; d < len(from.owner); d++ {
		for u := 1; u < len(to.owner); u++ {
			if to.owner[u] == from.owner[d] && to.ownerEmpty[u] == from.ownerEmpty[d] {
				m[d] = uint16(u)
				break
			}
		}
	}
	for i, d := range def {
		if int(d) < len(m) {
			def[i] = m[d]
		}
	}
}
