package datafile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

const (
	typePageLayout21 = "lance.encodings21.PageLayout"
	// shredRows is the number of rows shredded at a time, so that pages
	// are flushed near their target size whatever the batch size.
	shredRows = 1 << 16
	// chunkValueBudget is the target bytes of values per mini-block chunk
	// (spec 2.1 §4.4: Lance keeps about 4 KiB of values per chunk).
	chunkValueBudget = 4096
	// maxChunkValues is the most values a chunk holds (§4.2: log2 ≤ 12).
	maxChunkValues = 4096
	// maxChunkLevels is the most rep/def levels a chunk holds (W14: u16).
	maxChunkLevels = 65535
	// maxChunk21 is the largest chunk of a 2.1 file (12 size bits, W6).
	maxChunk21 = 32 << 10
	// listChunkBudget is the target bytes of one list page (= one chunk,
	// rows never span chunks: W9).
	listChunkBudget21 = 28 << 10
	listChunkBudget22 = 256 << 10
)

// errChunkTooLarge marks a page whose mini-block chunk exceeds what the
// version allows; flushLeaf then cuts a list page in two.
var errChunkTooLarge = errors.New("mini-block chunk too large")

// firstListLayer is the layer index (inner → outer) of the innermost LIST
// layer, or len(path) when there is none: entries absent at a layer below
// it are visible (own a value slot), the others are not (§3.2).
func (l *leaf21) firstListLayer() int {
	for L := 0; L < len(l.path); L++ {
		if l.path[len(l.path)-1-L].list {
			return L
		}
	}
	return len(l.path)
}

func (l *leaf21) visible(code uint16) bool {
	return code == 0 || int(code-1)/2 < l.firstListLayer()
}

// entry appends one rep/def entry.
func (l *leaf21) entry(rep, code uint16) {
	if l.nlists > 0 {
		l.rep = append(l.rep, rep)
	}
	l.code = append(l.code, code)
	if code != 0 {
		l.anyCode = true
	}
}

// fillSlot appends the filler of a null visible item (zeros, empty).
func (l *leaf21) fillSlot() {
	switch l.kind {
	case lkFixed21:
		l.vals = append(l.vals, make([]byte, l.width/8)...)
	case lkBool21:
		l.vals = growBits(l.vals, l.slots+1)
	case lkVar21:
		l.ends = append(l.ends, uint64(len(l.data)))
	case lkFSL21:
		items := l.slots * l.dim
		if l.width == 1 {
			l.vals = growBits(l.vals, items+l.dim)
		} else {
			l.vals = append(l.vals, make([]byte, l.dim*l.width/8)...)
		}
		l.ivalid = growBits(l.ivalid, items+l.dim)
		if l.fslDims != nil {
			// the lists below a null row are null, as Arrow builders
			// leave them and Lance 12 writes them
			per := 1
			for lv := range l.lvalid {
				per *= l.fslDims[lv]
				l.lvalid[lv] = growBits(l.lvalid[lv], (l.slots+1)*per)
			}
			break
		}
		for k := range l.dim {
			bitutil.SetBit(l.ivalid, items+k)
		}
	}
	l.slots++
}

// descendFSL records the validity of the lists of every level below the
// top of the nested fixed_size_list fl[i] (slot l.slots) and returns the
// innermost items' array and the index of the row's first item in it.
func (l *leaf21) descendFSL(fl *array.FixedSizeList, i int) (arrow.Array, int64) {
	var arr arrow.Array = fl
	lo, n := int64(i), int64(1)
	per := 1
	for lv, d := range l.fslDims {
		f := arr.(*array.FixedSizeList)
		start, _ := f.ValueOffsets(int(lo))
		child := f.ListValues()
		lo, n = start, n*int64(d)
		if lv == len(l.fslDims)-1 {
			return child, lo
		}
		per *= d
		at := l.slots * per
		l.lvalid[lv] = growBits(l.lvalid[lv], at+per)
		for k := range per {
			if child.IsValid(int(lo) + k) {
				bitutil.SetBit(l.lvalid[lv], at+k)
			}
		}
		arr = child
	}
	return arr, lo
}

// appendValue appends the value at a[i] (valid) as one slot.
func (l *leaf21) appendValue(a arrow.Array, i int) {
	if d, ok := a.(*array.Dictionary); ok {
		a, i = d.Dictionary(), d.GetValueIndex(i)
		if a.IsNull(i) {
			l.fillSlot()
			return
		}
	}
	data := a.Data()
	off := data.Offset() + i
	switch l.kind {
	case lkFixed21:
		bw := l.width / 8
		l.vals = append(l.vals, data.Buffers()[1].Bytes()[off*bw:(off+1)*bw]...)
	case lkBool21:
		l.vals = growBits(l.vals, l.slots+1)
		if bitutil.BitIsSet(data.Buffers()[1].Bytes(), off) {
			bitutil.SetBit(l.vals, l.slots)
		}
	case lkVar21:
		s, e := binaryBounds(data, off)
		l.data = append(l.data, data.Buffers()[2].Bytes()[s:e]...)
		l.ends = append(l.ends, uint64(len(l.data)))
	case lkFSL21:
		fl := a.(*array.FixedSizeList)
		child := fl.ListValues()
		start, _ := fl.ValueOffsets(i)
		if l.fslDims != nil {
			child, start = l.descendFSL(fl, i)
		}
		cd := child.Data()
		coff := cd.Offset() + int(start)
		items := l.slots * l.dim
		if l.width == 1 {
			l.vals = growBits(l.vals, items+l.dim)
			src := cd.Buffers()[1].Bytes()
			for k := range l.dim {
				if bitutil.BitIsSet(src, coff+k) {
					bitutil.SetBit(l.vals, items+k)
				}
			}
		} else {
			bw := l.width / 8
			l.vals = append(l.vals, cd.Buffers()[1].Bytes()[coff*bw:(coff+l.dim)*bw]...)
		}
		l.ivalid = growBits(l.ivalid, items+l.dim)
		for k := range l.dim {
			if child.IsValid(int(start) + k) {
				bitutil.SetBit(l.ivalid, items+k)
			} else {
				l.inulls = true
				if l.width > 1 {
					bw := l.width / 8
					clear(l.vals[(items+k)*bw : (items+k+1)*bw])
				} else {
					bitutil.ClearBit(l.vals, items+k)
				}
			}
		}
	}
	l.slots++
}

// binaryBounds returns the byte range of value off of a binary-like array.
func binaryBounds(d arrow.ArrayData, off int) (int, int) {
	ob := d.Buffers()[1].Bytes()
	switch d.DataType().ID() {
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return int(int64(binary.LittleEndian.Uint64(ob[8*off:]))), int(int64(binary.LittleEndian.Uint64(ob[8*off+8:])))
	}
	return int(int32(binary.LittleEndian.Uint32(ob[4*off:]))), int(int32(binary.LittleEndian.Uint32(ob[4*off+4:])))
}

// walk shreds element i of a, at path depth d, into entries and slots
// (spec 2.1 §3: rep levels count lists from the outside, max_rep starts a
// row, 0 continues the innermost list).
func (l *leaf21) walk(a arrow.Array, i, d int, rep uint16, klist int) {
	L := len(l.path) - 1 - d
	if logicalNull(a, i) {
		code := uint16(2*L + 1)
		l.entry(rep, code)
		if l.visible(code) {
			l.fillSlot()
		}
		return
	}
	if d == len(l.path)-1 {
		l.entry(rep, 0)
		l.appendValue(a, i)
		return
	}
	node := l.path[d]
	if node.list {
		ll := a.(array.ListLike)
		start, end := ll.ValueOffsets(i)
		if start == end {
			l.entry(rep, uint16(2*L+2))
			return
		}
		child := ll.ListValues()
		for j := start; j < end; j++ {
			r := rep
			if j > start {
				r = uint16(l.nlists - (klist + 1))
			}
			l.walk(child, int(j), d+1, r, klist+1)
		}
		return
	}
	l.walk(a.(*array.Struct).Field(node.child), i, d+1, rep, klist)
}

// shred appends the rows of a (the leaf's top-level array).
func (l *leaf21) shred(a arrow.Array) {
	n := a.Len()
	if l.nlists > 0 {
		for i := range n {
			l.rowStart = append(l.rowStart, uint32(len(l.code)))
			l.walk(a, i, 0, uint16(l.nlists), 0)
		}
		return
	}
	// No lists: one entry and one slot per row. Absent codes from the
	// outermost null layer in.
	base := len(l.code)
	l.code = reserve(l.code, n)
	l.code = l.code[:base+n]
	codes := l.code[base:]
	clear(codes)
	arr := a
	for d := range l.path {
		L := len(l.path) - 1 - d
		if mayHoldNulls(arr) {
			for i := range n {
				if codes[i] == 0 && logicalNull(arr, i) {
					codes[i] = uint16(2*L + 1)
					l.anyCode = true
				}
			}
		}
		if d < len(l.path)-1 {
			arr = arr.(*array.Struct).Field(l.path[d].child)
		}
	}
	data := arr.Data()
	_, dict := arr.(*array.Dictionary)
	clean := !l.anyCode || allZero(codes)
	switch {
	case dict || l.kind == lkFSL21 || l.kind == lkBool21:
	case l.kind == lkNull21:
		l.slots += n
		return
	case l.kind == lkFixed21:
		// Referenced, copied by gather (null slots zeroed there).
		bw := l.width / 8
		off := data.Offset()
		data.Retain()
		l.held = append(l.held, data)
		l.segs = append(l.segs, data.Buffers()[1].Bytes()[off*bw:(off+n)*bw])
		l.segBytes += n * bw
		l.slots += n
		return
	case l.kind == lkVar21:
		l.shredVar(data, codes, clean)
		return
	}
	for i, c := range codes {
		if c != 0 {
			l.fillSlot()
		} else {
			l.appendValue(arr, i)
		}
	}
}

// shredVar appends the n = len(codes) string/binary values of data as
// slots: null slots (code != 0) get no bytes. The bytes are copied in one
// piece when the null slots are empty in Arrow already (as its builders
// make them), else run by run of valid values.
func (l *leaf21) shredVar(data arrow.ArrayData, codes []uint16, clean bool) {
	n := len(codes)
	off := data.Offset()
	var src []byte
	if b := data.Buffers()[2]; b != nil {
		src = b.Bytes()
	}
	var o32 []int32
	var o64 []int64
	if ob := data.Buffers()[1]; ob != nil {
		if data.DataType().ID() == arrow.LARGE_STRING || data.DataType().ID() == arrow.LARGE_BINARY {
			o64 = arrow.Int64Traits.CastFromBytes(ob.Bytes())[off : off+n+1]
		} else {
			o32 = arrow.Int32Traits.CastFromBytes(ob.Bytes())[off : off+n+1]
		}
	}
	bound := func(i int) int { // offset of value i of the batch
		if o64 != nil {
			return int(o64[i])
		}
		if o32 != nil {
			return int(o32[i])
		}
		return 0
	}
	bulk := true
	if !clean {
		for i, c := range codes {
			if c != 0 && bound(i) != bound(i+1) {
				bulk = false
				break
			}
		}
	}
	// The bytes are referenced (segs) and copied by gather; dataLen is the
	// length l.data will have then.
	dataLen := len(l.data) + l.segBytes
	ref := func(s, e int) {
		if e > s {
			l.segs = append(l.segs, src[s:e])
			l.segBytes += e - s
			dataLen += e - s
		}
	}
	data.Retain()
	l.held = append(l.held, data)
	l.ends = reserve(l.ends, n)
	if bulk {
		s, e := bound(0), bound(n)
		base := uint64(dataLen) - uint64(s)
		ref(s, e)
		if o32 != nil {
			for _, o := range o32[1:] {
				l.ends = append(l.ends, base+uint64(o))
			}
		} else {
			for i := 1; i <= n; i++ {
				l.ends = append(l.ends, base+uint64(bound(i)))
			}
		}
		l.slots += n
		return
	}
	run := -1 // first value of the current run of valid values
	for i := 0; i <= n; i++ {
		if i < n && codes[i] == 0 {
			if run < 0 {
				run = i
			}
			continue
		}
		if run >= 0 {
			s := bound(run)
			base := uint64(dataLen) - uint64(s)
			ref(s, bound(i))
			for k := run + 1; k <= i; k++ {
				l.ends = append(l.ends, base+uint64(bound(k)))
			}
			run = -1
		}
		if i < n {
			l.ends = append(l.ends, uint64(dataLen))
		}
	}
	l.slots += n
}

// gather copies the pending referenced values into vals (fixed width,
// zeroing null slots: spec 2.1 §8.1) or data (strings), and releases the
// arrays. Leaves with segments have one slot per entry (no lists).
func (l *leaf21) gather() {
	if len(l.segs) == 0 {
		l.releaseHeld()
		return
	}
	dst := &l.vals
	if l.kind == lkVar21 {
		dst = &l.data
	}
	at := len(*dst)
	if need := at + l.segBytes; cap(*dst) < need {
		nv := make([]byte, at, need)
		copy(nv, *dst)
		*dst = nv
	}
	for _, s := range l.segs {
		*dst = append(*dst, s...)
	}
	if l.kind == lkFixed21 && l.anyCode {
		bw := l.width / 8
		for i, c := range l.code {
			if c != 0 {
				clear(l.vals[i*bw : (i+1)*bw])
			}
		}
	}
	clear(l.segs)
	l.segs, l.segBytes = l.segs[:0], 0
	l.releaseHeld()
}

// releaseHeld releases the caller's arrays the leaf references.
func (l *leaf21) releaseHeld() {
	for _, d := range l.held {
		d.Release()
	}
	clear(l.held)
	l.held = l.held[:0]
}

func allZero(s []uint16) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// shredLeaf shreds the column of rec that l stores, in steps of at most
// shredRows rows, encoding a page whenever the pending values reach the
// page size. It returns the pages encoded after each step (nil for a step
// that completed none): the file writer writes them in (step, leaf) order,
// so the bytes do not depend on which leaf finished first. It touches only
// l's pending state, so the leaves of one record shred concurrently.
func (w *Writer) shredLeaf(l *leaf21, rec arrow.RecordBatch) ([][]encodedPage, error) {
	n := int(rec.NumRows())
	// Small pages (tests, tiny PageSize) need small steps to be cut near
	// their size; the default 8 MiB pages take 64 Ki rows at a time.
	step := min(shredRows, max(64, w.pageSize/16))
	var steps [][]encodedPage
	for start := 0; start < n; start += step {
		end := min(n, start+step)
		a := rec.Column(l.top)
		if start != 0 || end != n {
			a = array.NewSlice(a, int64(start), int64(end))
		}
		l.shred(a)
		if a != rec.Column(l.top) {
			a.Release()
		}
		var pages []encodedPage
		if l.valueBytes() >= w.pageSize {
			var err error
			if pages, err = w.flushLeaf(l); err != nil {
				return nil, err
			}
		}
		steps = append(steps, pages)
	}
	return steps, nil
}

// shredSteps is the number of steps shredLeaf takes for n rows.
func (w *Writer) shredSteps(n int) int {
	step := min(shredRows, max(64, w.pageSize/16))
	return (n + step - 1) / step
}

// flushLeaf encodes every pending row of l as one or more pages.
func (w *Writer) flushLeaf(l *leaf21) ([]encodedPage, error) {
	if len(l.code) == 0 {
		return nil, nil
	}
	l.gather()
	var pages []encodedPage
	var add func(e0, e1, s0, s1, rows int) error
	add = func(e0, e1, s0, s1, rows int) error {
		p, err := w.encodePage21(l, e0, e1, s0, s1, rows)
		if errors.Is(err, errChunkTooLarge) && l.nlists > 0 && rows > 1 {
			// A 2.1 chunk outgrew 32 KiB (its levels, mostly): cut the
			// page in two at the middle row and try again.
			r0 := 0
			for r0 < len(l.rowStart) && int(l.rowStart[r0]) < e0 {
				r0++
			}
			em := int(l.rowStart[r0+rows/2])
			sm := s0
			for k := e0; k < em; k++ {
				if l.visible(l.code[k]) {
					sm++
				}
			}
			if err := add(e0, em, s0, sm, rows/2); err != nil {
				return err
			}
			return add(em, e1, sm, s1, rows-rows/2)
		}
		if err != nil {
			return err
		}
		pages = append(pages, p)
		return nil
	}
	if l.nlists == 0 {
		if err := add(0, len(l.code), 0, l.slots, len(l.code)); err != nil {
			return nil, err
		}
	} else {
		// Values the codec compresses are in chunks of ≤ ~4 KiB
		// (compressedChunks21), so a page holds up to 65,535 levels as
		// Lance 12 cuts its list pages (observed: 37,449 rows of
		// list<utf8> = 65,535 levels per page), within the page size; a
		// 2.1 page whose chunk outgrows 32 KiB with its levels is cut in
		// two (add). Other pages are one chunk (rows never span it).
		budget, maxLevels := max(w.pageSize, listChunkBudget22), maxChunkLevels
		if w.noCompression || l.dict || (l.kind != lkFixed21 && l.kind != lkVar21 && l.kind != lkBool21) {
			budget = listChunkBudget22
			if w.version == V2_1 {
				// The page must fit a 2.1 chunk.
				budget = listChunkBudget21
			}
		}
		rows := len(l.rowStart)
		e0, s0, r0 := 0, 0, 0
		slots := 0 // slots before entry e
		e, r := 0, 0
		for r < rows {
			// extend the page by row r
			rEnd := len(l.code)
			if r+1 < rows {
				rEnd = int(l.rowStart[r+1])
			}
			rowSlots := 0
			for k := e; k < rEnd; k++ {
				if l.visible(l.code[k]) {
					rowSlots++
				}
			}
			if r > r0 && (rEnd-e0 > maxLevels || l.slotBytes(s0, slots+rowSlots)+4*(rEnd-e0) > budget) {
				if err := add(e0, e, s0, slots, r-r0); err != nil {
					return nil, err
				}
				e0, s0, r0 = e, slots, r
			}
			if rEnd-e0 > maxChunkLevels {
				return nil, fmt.Errorf("%w: column %q: a row has %d list levels; a page chunk holds at most %d", ErrInvalidData, l.name, rEnd-e0, maxChunkLevels)
			}
			e, slots, r = rEnd, slots+rowSlots, r+1
		}
		if err := add(e0, e, s0, slots, r-r0); err != nil {
			return nil, err
		}
	}
	l.rep, l.code, l.rowStart = l.rep[:0], l.code[:0], l.rowStart[:0]
	l.anyCode, l.inulls = false, false
	for i := range l.lvalid {
		l.lvalid[i] = l.lvalid[i][:0]
	}
	l.slots = 0
	l.vals, l.ivalid, l.ends, l.data = l.vals[:0], l.ivalid[:0], l.ends[:0], l.data[:0]
	return pages, nil
}

// slotBytes is the size of the values of slots [s0, s1).
func (l *leaf21) slotBytes(s0, s1 int) int {
	n := s1 - s0
	switch l.kind {
	case lkFixed21:
		return n * l.width / 8
	case lkBool21:
		return (n + 7) / 8
	case lkVar21:
		return l.varBytes(s0, s1) + 8*(n+1)
	case lkFSL21:
		b := n*l.dim*l.width/8 + (n*l.dim+7)/8 + 8
		per := 1
		for lv := range l.lvalid {
			per *= l.fslDims[lv]
			b += (n*per + 7) / 8
		}
		return b
	}
	return 0
}

func (l *leaf21) varBytes(s0, s1 int) int {
	start := uint64(0)
	if s0 > 0 {
		start = l.ends[s0-1]
	}
	end := start
	if s1 > 0 {
		end = l.ends[s1-1]
	}
	return int(end - start)
}

// layers21 computes the page's layers and the def value of each absent
// code (spec 2.1 §3.2) from the page's data, as Lance 12 does: a layer is
// NULLABLE / EMPTYABLE only when the page holds a null / an empty list
// there (a nullable column without nulls in a page gets ALL_VALID and no
// def levels), so pages of one column may differ (readers widen).
func (l *leaf21) layers21(codes []uint16) ([]pb21.RepDefLayer, []uint16, int) {
	depth := len(l.path)
	hasNull := make([]bool, depth)
	hasEmpty := make([]bool, depth)
	for _, c := range codes {
		if c != 0 {
			L := int(c-1) / 2
			if c%2 == 1 {
				hasNull[L] = true
			} else {
				hasEmpty[L] = true
			}
		}
	}
	layers := make([]pb21.RepDefLayer, depth)
	defOf := make([]uint16, 2*depth+1)
	next := uint16(1)
	for L := range depth {
		if !l.path[depth-1-L].list {
			if hasNull[L] {
				layers[L] = pb21.RepDefLayer_REPDEF_NULLABLE_ITEM
				defOf[2*L+1] = next
				next++
			} else {
				layers[L] = pb21.RepDefLayer_REPDEF_ALL_VALID_ITEM
			}
			continue
		}
		switch {
		case hasNull[L] && hasEmpty[L]:
			layers[L] = pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST
			defOf[2*L+1], defOf[2*L+2] = next, next+1
			next += 2
		case hasNull[L]:
			layers[L] = pb21.RepDefLayer_REPDEF_NULLABLE_LIST
			defOf[2*L+1] = next
			next++
		case hasEmpty[L]:
			layers[L] = pb21.RepDefLayer_REPDEF_EMPTYABLE_LIST
			defOf[2*L+2] = next
			next++
		default:
			layers[L] = pb21.RepDefLayer_REPDEF_ALL_VALID_LIST
		}
	}
	return layers, defOf, int(next - 1)
}

func flat21(bitsPerValue uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Flat{Flat: &pb21.Flat{BitsPerValue: bitsPerValue}}}
}

// flat16 is flat(16), the levels' default compression: one message per
// writer (made by NewWriter, so lanes only read it); the page layouts only
// marshal it, none modifies it.
func (w *Writer) flat16() *pb21.CompressiveEncoding { return w.levelsFlat16 }

func u16s(dst []byte, vs []uint16) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint16(dst, v)
	}
	return dst
}

// encodePage21 encodes entries [e0, e1) with slots [s0, s1) (rows rows) of
// l as one page: all-null / constant layout when no value is valid, else a
// mini-block page (spec 2.1 §8.1). The page's buffers are its own (never
// slices of l's pending state), so it may be written after l moves on.
func (w *Writer) encodePage21(l *leaf21, e0, e1, s0, s1, rows int) (encodedPage, error) {
	codes := l.code[e0:e1]
	layers, defOf, maxDef := l.layers21(codes)
	var rep []uint16
	if l.nlists > 0 {
		rep = l.rep[e0:e1]
	}
	defs := func(lo, hi int) []byte {
		b := make([]byte, 0, 2*(hi-lo))
		for _, c := range codes[lo:hi] {
			var d uint16
			if c != 0 {
				d = defOf[c]
			}
			b = binary.LittleEndian.AppendUint16(b, d)
		}
		return b
	}
	anyValid := l.kind != lkNull21
	if anyValid {
		anyValid = false
		for _, c := range codes {
			if c == 0 {
				anyValid = true
				break
			}
		}
	}
	var bufs [][]byte
	layout := &pb21.PageLayout{}
	if !anyValid {
		// All null (§6.1): no buffers in the simple case, else raw u16
		// rep and def level buffers (a 0-byte buffer is absent).
		cl := &pb21.ConstantLayout{Layers: layers}
		if !(len(layers) == 1 && l.nlists == 0) {
			var rb []byte
			if rep != nil {
				rb = u16s(nil, rep)
			}
			var db []byte
			if maxDef > 0 {
				db = defs(0, len(codes))
			}
			bufs = [][]byte{rb, db}
			if w.version >= V2_2 {
				// Compressed as Lance 12 compresses the levels of its
				// all-null pages (levelsBlock22); 2.1 keeps raw u16.
				if rb != nil {
					cl.RepCompression, bufs[0] = w.levelsBlock22(rep, rb)
					cl.NumRepValues = uint64(len(rep))
				}
				if db != nil {
					cl.DefCompression, bufs[1] = w.levelsBlock22(nil, db)
					cl.NumDefValues = uint64(len(codes))
				}
			}
		}
		layout.Layout = &pb21.PageLayout_ConstantLayout{ConstantLayout: cl}
	} else if cl := w.constant22(l, e0, e1, s0, s1, layers, maxDef > 0, defOf); cl != nil {
		layout.Layout = &pb21.PageLayout_ConstantLayout{ConstantLayout: cl.layout}
		bufs = cl.bufs
	} else if l.wantsFullZip(s0, s1) && !(!w.noCompression && l.dictFirst(e0, e1, s0, s1)) {
		var err error
		if bufs, layout, err = w.fullZip21(l, e0, e1, s0, s1, rows, layers, rep, defOf); err != nil {
			return encodedPage{}, err
		}
	} else {
		var err error
		bufs, layout, err = w.miniBlock21(l, e0, e1, s0, s1, rows, layers, rep, maxDef > 0, defs)
		if err != nil {
			return encodedPage{}, err
		}
	}
	enc, err := proto.MarshalOptions{Deterministic: true}.Marshal(layout)
	if err != nil {
		return encodedPage{}, fmt.Errorf("datafile: encode page layout: %w", err)
	}
	p := encodedPage{bufs: bufs, enc: enc, rows: uint64(rows), priority: l.rows}
	l.rows += uint64(rows)
	return p, nil
}

// chunk21 is one mini-block chunk: entries [e0,e1), slots [s0,s1).
type chunk21 struct{ e0, e1, s0, s1 int }

// chunks21 splits a page into chunks. With lists the page is one chunk
// (rows never span chunks, W9); otherwise entries are slots and every
// non-last chunk holds 2^k values (W5) of about chunkValueBudget bytes.
func (l *leaf21) chunks21(e0, e1, s0, s1 int) []chunk21 {
	if l.nlists > 0 {
		return []chunk21{{e0, e1, s0, s1}}
	}
	var out []chunk21
	for s := s0; s < s1; {
		rem := s1 - s
		if rem <= maxChunkValues && l.slotBytes(s, s1) <= chunkValueBudget {
			out = append(out, chunk21{e0 + s - s0, e1, s, s1})
			break
		}
		k := 1 << (bits.Len(uint(min(rem, maxChunkValues))) - 1)
		for k > 1 && (k == rem || l.slotBytes(s, s+k) > chunkValueBudget) {
			k >>= 1
		}
		if k == rem { // one value left: it is the last chunk
			out = append(out, chunk21{e0 + s - s0, e1, s, s1})
			break
		}
		out = append(out, chunk21{e0 + s - s0, e0 + s - s0 + k, s, s + k})
		s += k
	}
	return out
}

// fslValidity says, for each level of a (nested) fixed_size_list leaf,
// outer first, whether the items of that level in slots [s0, s1) hold a
// null (the page then stores that level's bitmap: has_validity).
func (l *leaf21) fslValidity(s0, s1 int) []bool {
	if l.kind != lkFSL21 {
		return []bool{false}
	}
	fv := make([]bool, len(l.lvalid)+1)
	anyClear := func(b []byte, from, n int) bool {
		return n > 0 && bitutil.CountSetBits(b, from, n) != n
	}
	per := 1
	for lv, v := range l.lvalid {
		per *= l.fslDims[lv]
		fv[lv] = anyClear(v, s0*per, (s1-s0)*per)
	}
	fv[len(fv)-1] = anyClear(l.ivalid, s0*l.dim, (s1-s0)*l.dim)
	return fv
}

// valueBuffers21 returns the value buffers of slots [s0, s1) and the value
// compression describing them.
func (l *leaf21) valueBuffers21(s0, s1 int, fv []bool) [][]byte {
	n := s1 - s0
	switch l.kind {
	case lkFixed21:
		bw := l.width / 8
		return [][]byte{l.vals[s0*bw : s1*bw]}
	case lkBool21:
		return [][]byte{copyBits(l.vals, s0, n)}
	case lkVar21:
		ow := 4
		if l.off64 {
			ow = 8
		}
		start := uint64(0)
		if s0 > 0 {
			start = l.ends[s0-1]
		}
		base := uint64((n + 1) * ow)
		end := start
		if n > 0 {
			end = l.ends[s1-1]
		}
		size := int(base) + int(end-start)
		padded := (size + ow - 1) / ow * ow
		b := make([]byte, 0, padded)
		put := func(v uint64) {
			if ow == 4 {
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			} else {
				b = binary.LittleEndian.AppendUint64(b, v)
			}
		}
		put(base)
		for k := s0; k < s1; k++ {
			put(base + l.ends[k] - start)
		}
		b = append(b, l.data[start:end]...)
		for len(b) < padded {
			b = append(b, 'H')
		}
		return [][]byte{b}
	case lkFSL21:
		var out [][]byte
		per := 1
		for lv, v := range l.lvalid { // nested: one bitmap per level, outer first
			per *= l.fslDims[lv]
			if fv[lv] {
				out = append(out, copyBits(v, s0*per, n*per))
			}
		}
		if fv[len(fv)-1] {
			out = append(out, copyBits(l.ivalid, s0*l.dim, n*l.dim))
		}
		if l.width == 1 {
			out = append(out, copyBits(l.vals, s0*l.dim, n*l.dim))
		} else {
			bw := l.width / 8
			out = append(out, l.vals[s0*l.dim*bw:s1*l.dim*bw])
		}
		return out
	}
	return nil
}

// copyBits copies n bits starting at bit from.
func copyBits(src []byte, from, n int) []byte {
	out := make([]byte, bitutil.BytesForBits(int64(n)))
	if from%8 == 0 {
		copy(out, src[from/8:])
		if r := n % 8; r != 0 {
			out[len(out)-1] &= byte(1<<r) - 1
		}
		return out
	}
	for k := range n {
		if bitutil.BitIsSet(src, from+k) {
			bitutil.SetBit(out, k)
		}
	}
	return out
}

func (l *leaf21) valueCompression21(fv []bool) *pb21.CompressiveEncoding {
	switch l.kind {
	case lkVar21:
		ob := uint64(32)
		if l.off64 {
			ob = 64
		}
		return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Variable{Variable: &pb21.Variable{Offsets: flat21(ob)}}}
	case lkFSL21:
		if l.fslDims == nil {
			return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{
				ItemsPerValue: uint64(l.dim), HasValidity: fv[0], Values: flat21(uint64(l.width))}}}
		}
		// nested: fixed_size_list{d0, fixed_size_list{d1, … flat(W)}}, each
		// level's has_validity saying whether its items (the next level's
		// lists, or the values) carry a bitmap, as Lance 12 writes it
		enc := flat21(uint64(l.width))
		for lv := len(l.fslDims) - 1; lv >= 0; lv-- {
			enc = &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{
				ItemsPerValue: uint64(l.fslDims[lv]), HasValidity: fv[lv], Values: enc}}}
		}
		return enc
	}
	return flat21(uint64(l.width))
}

// miniBlock21 encodes a mini-block page (spec 2.1 §4).
func (w *Writer) miniBlock21(l *leaf21, e0, e1, s0, s1, rows int, layers []pb21.RepDefLayer, rep []uint16, hasDef bool,
	defs func(lo, hi int) []byte) ([][]byte, *pb21.PageLayout, error) {
	large := w.version >= V2_2
	fslValidity := l.fslValidity(s0, s1)
	chunks, chunkVals, valueEnc, dict, err := w.compressedChunks21(l, e0, e1, s0, s1)
	if err != nil {
		return nil, nil, err
	}
	if chunks == nil {
		chunks = l.chunks21(e0, e1, s0, s1)
		valueEnc = l.valueCompression21(fslValidity)
	}
	// Rep and def levels of every chunk, compressed with one page-wide
	// encoding (the smallest of flat(16), inline bit-packing, RLE).
	var repBufs, defBufs [][]byte
	for _, c := range chunks {
		if rep != nil {
			repBufs = append(repBufs, u16s(nil, rep[c.e0-e0:c.e1-e0]))
		}
		if hasDef {
			defBufs = append(defBufs, defs(c.e0-e0, c.e1-e0))
		}
	}
	repEnc, repBufs := w.compressLevels(repBufs)
	defEnc, defBufs := w.compressLevels(defBufs)
	// Presize the page's data: headers, levels, values, 8-byte padding.
	est := 0
	for ci := range chunks {
		est += 8 + 4*4 + 3*8
		if rep != nil {
			est += len(repBufs[ci])
		}
		if hasDef {
			est += len(defBufs[ci])
		}
		if chunkVals != nil {
			for _, b := range chunkVals[ci] {
				est += len(b) + 8
			}
		}
	}
	if chunkVals == nil {
		est += l.slotBytes(s0, s1) + 16*len(chunks)
	}
	var repIdx []byte
	data := make([]byte, 0, est)
	words := make([]byte, 0, 4*len(chunks))
	for ci, c := range chunks {
		var vb [][]byte
		if chunkVals != nil {
			vb = chunkVals[ci]
		} else {
			vb = l.valueBuffers21(c.s0, c.s1, fslValidity)
		}
		var rb, db []byte
		if rep != nil {
			rb = repBufs[ci]
		}
		if hasDef {
			db = defBufs[ci]
		}
		if len(rb) > 0xffff || len(db) > 0xffff {
			return nil, nil, fmt.Errorf("%w: column %q: chunk levels exceed 64 KiB (%w)", ErrInvalidData, l.name, errChunkTooLarge)
		}
		start := len(data)
		levels := 0
		if rep != nil || hasDef {
			levels = c.e1 - c.e0
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(levels))
		if rep != nil {
			data = binary.LittleEndian.AppendUint16(data, uint16(len(rb)))
		}
		if hasDef {
			data = binary.LittleEndian.AppendUint16(data, uint16(len(db)))
		}
		for _, b := range vb {
			if large {
				data = binary.LittleEndian.AppendUint32(data, uint32(len(b)))
			} else {
				if len(b) > 0xffff {
					return nil, nil, fmt.Errorf("%w: column %q: a value of %d bytes does not fit a 2.1 mini-block chunk", ErrInvalidData, l.name, len(b))
				}
				data = binary.LittleEndian.AppendUint16(data, uint16(len(b)))
			}
		}
		pad8 := func() {
			for (len(data)-start)%8 != 0 {
				data = append(data, 0xFE)
			}
		}
		pad8()
		for _, b := range append([][]byte{rb, db}, vb...) {
			if b == nil {
				continue
			}
			data = append(data, b...)
			pad8()
		}
		size := len(data) - start
		if !large && size > maxChunk21 {
			return nil, nil, fmt.Errorf("%w: column %q: a chunk of %d bytes exceeds the 32 KiB of a 2.1 mini-block chunk (%w)", ErrInvalidData, l.name, size, errChunkTooLarge)
		}
		if uint64(size/8-1) >= 1<<28 {
			return nil, nil, fmt.Errorf("%w: column %q: a chunk of %d bytes is too large", ErrInvalidData, l.name, size)
		}
		logv := 0
		if ci < len(chunks)-1 {
			logv = bits.TrailingZeros(uint(c.s1 - c.s0))
		}
		word := uint64(size/8-1)<<4 | uint64(logv)
		if large {
			words = binary.LittleEndian.AppendUint32(words, uint32(word))
		} else {
			words = binary.LittleEndian.AppendUint16(words, uint16(word))
		}
		if rep != nil {
			// [ends, partial] (§4.6): row starts after the chunk's first
			// level, plus the last row when it ends in the chunk; else
			// partial = the levels of that row held here.
			cr := rep[c.e0-e0 : c.e1-e0]
			ends, lastStart := 0, 0
			for k, r := range cr {
				if int(r) == l.nlists {
					lastStart = k
					if k > 0 {
						ends++
					}
				}
			}
			partial := 0
			if ci < len(chunks)-1 && int(rep[c.e1-e0]) != l.nlists {
				partial = len(cr) - lastStart
			} else {
				ends++
			}
			repIdx = binary.LittleEndian.AppendUint64(repIdx, uint64(ends))
			repIdx = binary.LittleEndian.AppendUint64(repIdx, uint64(partial))
		}
	}
	numBuffers := len(l.valueBuffers21(s0, s0, fslValidity))
	if chunkVals != nil && len(chunkVals) > 0 {
		numBuffers = len(chunkVals[0])
	}
	mb := &pb21.MiniBlockLayout{
		ValueCompression: valueEnc,
		Layers:           layers,
		NumBuffers:       uint64(numBuffers),
		NumItems:         uint64(s1 - s0),
		HasLargeChunk:    large,
	}
	if rep != nil {
		mb.RepCompression = repEnc
		mb.RepetitionIndexDepth = 1
	}
	if hasDef {
		mb.DefCompression = defEnc
	}
	bufs := [][]byte{words, data}
	if dict != nil {
		// Dictionary page (§4.5): the chunks hold u32 indices, buffer 2
		// the dictionary.
		mb.Dictionary, mb.NumDictionaryItems = dict.enc, dict.items
		bufs = append(bufs, dict.buf)
	}
	if rep != nil {
		bufs = append(bufs, repIdx)
	}
	_ = rows
	return bufs, &pb21.PageLayout{Layout: &pb21.PageLayout_MiniBlockLayout{MiniBlockLayout: mb}}, nil
}

// compressedChunks21 compresses the values of a page without lists with
// the codec's encoders (bit-packing for integers, FSST for text; spec 2.1
// §7.3, §7.7), which also choose the chunking. It returns nil chunks when
// the page's values keep the plain forms (fixed_size_list, null, lists,
// or compression disabled).
func (w *Writer) compressedChunks21(l *leaf21, e0, e1, s0, s1 int) ([]chunk21, [][][]byte, *pb21.CompressiveEncoding, *dict21, error) {
	// An Arrow dictionary column needs dictionary pages even without
	// compression (Lance 12 reads it from nothing else).
	if (w.noCompression && !l.dict) || (l.kind != lkFixed21 && l.kind != lkVar21 && l.kind != lkBool21) {
		return nil, nil, nil, nil, nil
	}
	n := s1 - s0
	var b codec.Block
	switch l.kind {
	case lkFixed21:
		bw := l.width / 8
		b = codec.Block{Kind: codec.Fixed, Num: uint64(n), Bits: uint64(l.width), Data: l.vals[s0*bw : s1*bw]}
	case lkBool21:
		b = codec.Block{Kind: codec.Fixed, Num: uint64(n), Bits: 1, Data: copyBits(l.vals, s0, n)}
	case lkVar21:
		ob := uint64(32)
		if l.off64 {
			ob = 64
		}
		start := uint64(0)
		if s0 > 0 {
			start = l.ends[s0-1]
		}
		offs := make([]byte, 0, (n+1)*int(ob/8))
		put := func(v uint64) {
			if ob == 32 {
				offs = binary.LittleEndian.AppendUint32(offs, uint32(v))
			} else {
				offs = binary.LittleEndian.AppendUint64(offs, v)
			}
		}
		put(0)
		end := start
		for k := s0; k < s1; k++ {
			put(l.ends[k] - start)
			end = l.ends[k]
		}
		if ob == 32 && end-start > 1<<31-1 {
			return nil, nil, nil, nil, nil
		}
		b = codec.Block{Kind: codec.Variable, Num: uint64(n), OffsetBits: ob, Offsets: offs, Data: l.data[start:end]}
	}
	eo := codec.EncodeOptions{Minor: int(w.version.Minor())}
	if l.nlists > 0 && l.dict {
		// A dictionary under a list: the page is one chunk of flat indices
		// (writer21_dict.go, oneListChunk).
		eo.NoBitpacking, eo.NoRLE, eo.NoFSST = true, true, true
	}
	var dict *dict21
	var enc *pb21.CompressiveEncoding
	var cs []codec.Chunk
	if l.kind == lkVar21 {
		// A dictionary page when it is smaller than the variable or FSST
		// form (or the column is an Arrow dictionary). Those forms store
		// at least 4 offset bytes per value and, FSST codes expanding to
		// at most 8 bytes, an eighth of the value bytes: a dictionary page
		// below that bound wins without encoding them.
		d, denc, dcs, err := l.dictionary21(b, l.slotNulls(e0, e1, n), eo)
		if l.dict && d == nil {
			if err == nil {
				err = fmt.Errorf("no dictionary page")
			}
			return nil, nil, nil, nil, fmt.Errorf("%w: column %q: %v", ErrInvalidData, l.name, err)
		}
		if d != nil && (l.dict || d.size(dcs) < 4*n+len(b.Data)/8) {
			dict, enc, cs = d, denc, dcs
		} else {
			var err error
			if enc, cs, err = codec.EncodeMiniBlock(b, eo); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("%w: column %q: %v", ErrInvalidData, l.name, err)
			}
			if d != nil && d.size(dcs) < chunkBytes(cs) {
				dict, enc, cs = d, denc, dcs
			}
		}
	} else if l.dict {
		// An Arrow dictionary of fixed-width values (writer21_dict.go).
		d, denc, dcs, err := dictionaryFixed21(b, l.slotNulls(e0, e1, n), l.dictKey, l.dictSigned, eo)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%w: column %q: %v", ErrInvalidData, l.name, err)
		}
		dict, enc, cs = d, denc, dcs
	} else {
		var err error
		if enc, cs, err = codec.EncodeMiniBlock(b, eo); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%w: column %q: %v", ErrInvalidData, l.name, err)
		}
		if (w.version >= V2_2 && l.width >= 64 || l.width == 128) && l.kind == lkFixed21 && l.width%8 == 0 && fewDistinct(b.Data, l.width/8, n) {
			// Lance 12 dictionary-encodes a page of ≥ 100 values of ≥ 64
			// bits (2.2+) or of 128 bits (2.1: decimal128,
			// fixed_size_binary(16); 64-bit pages stay plain there, found
			// with the peer) when it passes Lance's rule (fewDistinct: at
			// most n/2 distinct values, w·distinct + 4·n below 0.8 of the
			// plain size): u32 indices
			// (bit-packed), the distinct values flat (2.1) or
			// `general[lz4](flat)` (2.2+). Kept only when smaller than the
			// plain/bit-packed form.
			if d, denc, dcs, err := dictionaryFixed21(b, l.slotNulls(e0, e1, n), 32, true, eo); err == nil {
				if d.size(dcs) < chunkBytes(cs) {
					dict, enc, cs = d, denc, dcs
				}
			}
		}
	}
	if l.nlists > 0 && l.dict {
		if dict == nil {
			return nil, nil, nil, nil, fmt.Errorf("datafile: column %q: no dictionary page under a list", l.name)
		}
		c, err := oneListChunk(cs, n)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%w: column %q: %v", ErrInvalidData, l.name, err)
		}
		return []chunk21{{e0, e1, s0, s1}}, [][][]byte{c.Buffers}, flat21(uint64(l.dictKey)), dict, nil
	}
	chunks := make([]chunk21, len(cs))
	vals := make([][][]byte, len(cs))
	at := 0
	for i, c := range cs {
		chunks[i] = chunk21{e0 + at, e0 + at + int(c.N), s0 + at, s0 + at + int(c.N)}
		vals[i] = c.Buffers
		at += int(c.N)
	}
	if at != n {
		return nil, nil, nil, nil, fmt.Errorf("datafile: column %q: the encoder chunked %d of %d values", l.name, at, n)
	}
	if l.nlists > 0 {
		// With lists a chunk's levels run from the end of the previous
		// chunk to the entry of its last value (§4.3); the last chunk
		// takes the rest, so rows may span chunks (the repetition index
		// records the partial row, miniBlock21).
		e, s := e0, s0
		for i := range chunks {
			c := &chunks[i]
			c.e0 = e
			for s < c.s1 {
				if l.visible(l.code[e]) {
					s++
				}
				e++
			}
			c.e1 = e
		}
		chunks[len(chunks)-1].e1 = e1
	}
	return chunks, vals, enc, dict, nil
}

// slotNulls reports, for the n slots of entries [e0, e1), which are null
// items (nil when none is).
func (l *leaf21) slotNulls(e0, e1, n int) []bool {
	var nulls []bool
	s := 0
	for _, c := range l.code[e0:e1] {
		if !l.visible(c) {
			continue
		}
		if c != 0 && s < n {
			if nulls == nil {
				nulls = make([]bool, n)
			}
			nulls[s] = true
		}
		s++
	}
	return nulls
}

// dict21 is the dictionary of a dictionary page.
type dict21 struct {
	enc   *pb21.CompressiveEncoding
	buf   []byte
	items uint64
}

func (d *dict21) size(cs []codec.Chunk) int {
	return len(d.buf) + chunkBytes(cs)
}

// chunkBytes is the size of every value buffer of the chunks (RLE chunks
// have two: values and run lengths).
func chunkBytes(cs []codec.Chunk) int {
	n := 0
	for _, c := range cs {
		for _, b := range c.Buffers {
			n += len(b)
		}
	}
	return n
}

// maxDictItems bounds the distinct values of a dictionary page; pages with
// more distinct values than a quarter of their values keep FSST/variable.
const maxDictItems = 1 << 16

// dictionary21 dictionary-encodes a string/binary page when its values are
// few and repeated (Lance 12's rule, varDictLimit; spec 2.1 §4.5): u32
// indices compressed by the mini-block encoder (bit-packing), the distinct
// values as the codec's dictionary block. The caller keeps it only when
// smaller than the variable/FSST form.
func (l *leaf21) dictionary21(b codec.Block, nulls []bool, eo codec.EncodeOptions) (*dict21, *pb21.CompressiveEncoding, []codec.Chunk, error) {
	n := int(b.Num)
	var limit int
	if l.dict {
		// An Arrow dictionary column always gets a dictionary page, whatever
		// its size and cardinality (Lance 12 refuses it otherwise).
		limit = n
	} else if limit = varDictLimit(b); limit <= 0 {
		return nil, nil, nil, nil
	}
	ids := make(map[string]uint32)
	idx := make([]byte, 0, 4*n)
	var offs, data []byte
	put := func(v uint64) {
		if b.OffsetBits == 32 {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(v))
		} else {
			offs = binary.LittleEndian.AppendUint64(offs, v)
		}
	}
	put(0)
	for i := 0; i < n; i++ {
		if nulls != nil && nulls[i] {
			// A null slot indexes item 0 (the def levels carry the null).
			idx = binary.LittleEndian.AppendUint32(idx, 0)
			continue
		}
		v := b.Data[b.Offset(uint64(i)):b.Offset(uint64(i+1))]
		id, ok := ids[string(v)]
		if !ok {
			if len(ids) >= limit {
				return nil, nil, nil, nil
			}
			id = uint32(len(ids))
			ids[string(v)] = id
			data = append(data, v...)
			put(uint64(len(data)))
		}
		idx = binary.LittleEndian.AppendUint32(idx, id)
	}
	if len(ids) == 0 {
		ids[""] = 0 // every slot null: one empty item
		put(0)
	}
	db := codec.Block{Kind: codec.Variable, Num: uint64(len(ids)), OffsetBits: b.OffsetBits, Offsets: offs, Data: data}
	denc, dbuf, err := codec.EncodeDictionary(db, eo)
	if err != nil {
		return nil, nil, nil, nil
	}
	ib := 32
	if l.dict {
		// An Arrow dictionary's indices have its key type's width.
		if idx, err = narrowIndices(idx, len(ids), l.dictKey, l.dictSigned); err != nil {
			return nil, nil, nil, err
		}
		ib = l.dictKey
	}
	ienc, cs, err := codec.EncodeMiniBlock(codec.Block{Kind: codec.Fixed, Num: uint64(n), Bits: uint64(ib), Data: idx}, eo)
	if err != nil {
		return nil, nil, nil, nil
	}
	return &dict21{enc: denc, buf: dbuf, items: uint64(len(ids))}, ienc, cs, nil
}

// compressLevels compresses the raw u16 levels of each chunk of a page with
// one encoding for the page (MiniBlockLayout has one rep and one def
// compression): inline bit-packing when every chunk has at most 1024
// levels (Lance's block use, spec 2.1 §7.3), out-of-line bit-packing at the
// page's widest level (§7.4, what Lance 12 writes for levels), an RLE
// block frame in 2.2+ when the codec finds it smaller for every chunk
// (§7.6), else flat(16) — whichever is smallest.
func (w *Writer) compressLevels(raw [][]byte) (*pb21.CompressiveEncoding, [][]byte) {
	if len(raw) == 0 || w.noCompression {
		return w.flat16(), raw
	}
	flatSize, bpOK := 0, true
	for _, r := range raw {
		flatSize += len(r)
		if n := len(r) / 2; n == 0 || n > 1024 {
			bpOK = false
		}
	}
	bestEnc, best, bestSize := w.flat16(), raw, flatSize
	if bpOK {
		out := make([][]byte, len(raw))
		size := 0
		for i, r := range raw {
			out[i] = codec.AppendBitpacked(nil, 16, r, len(r)/2)
			size += len(out[i])
		}
		if size < bestSize {
			bestEnc, best, bestSize = &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{
				InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: 16}}}, out, size
		}
	}
	// Out-of-line bit-packing at the page's widest level (Lance 12's
	// choice for levels, §7.4), when some level is non-zero.
	var or uint16
	for _, r := range raw {
		for k := 0; k+1 < len(r); k += 2 {
			or |= binary.LittleEndian.Uint16(r[k:])
		}
	}
	if wd := uint(bits.Len16(or)); wd > 0 {
		out := make([][]byte, len(raw))
		size := 0
		lv := make([]uint16, 0, 1024)
		for i, r := range raw {
			lv = lv[:0]
			for k := 0; k+1 < len(r); k += 2 {
				lv = append(lv, binary.LittleEndian.Uint16(r[k:]))
			}
			out[i] = codec.AppendOutOfLine16(nil, lv, wd)
			size += len(out[i])
		}
		if size < bestSize {
			bestEnc, best, bestSize = codec.OutOfLine16Encoding(wd), out, size
		}
	}
	if w.version >= V2_2 {
		out := make([][]byte, len(raw))
		size := 0
		var enc *pb21.CompressiveEncoding
		for i, r := range raw {
			lv := make([]uint16, len(r)/2)
			for k := range lv {
				lv[k] = binary.LittleEndian.Uint16(r[2*k:])
			}
			e, b := codec.EncodeLevels(lv, codec.EncodeOptions{Minor: int(w.version.Minor())})
			if e.GetRle() == nil {
				enc = nil
				break
			}
			enc, out[i] = e, b
			size += len(b)
		}
		if enc != nil && size < bestSize {
			bestEnc, best = enc, out
		}
	}
	return bestEnc, best
}

// levelsBlock22 compresses the rep or def levels of a 2.2+ all-null page
// (one buffer for the page, spec 2.1 §6.1) as Lance 12 does (observed on
// its pages, sizegaps session 24): with the estimates of the mini-block
// value rule — RLE (runs + n/255)·3 bytes, inline bit-packing per 1024
// levels one u16 word plus 1024·width bits — an RLE block frame (§7.6)
// when it is below the raw size and not above the bit-packing estimate;
// else bit-packing when no 1024-level block is all zero: inline (§7.3)
// for at most 1024 levels, out-of-line at the widest level (§7.4) above;
// else raw u16 (flat(16)). levels may be nil (raw holds them as u16).
func (w *Writer) levelsBlock22(levels []uint16, raw []byte) (*pb21.CompressiveEncoding, []byte) {
	if w.noCompression || len(raw) < 2 {
		return flat21(16), raw
	}
	if levels == nil {
		levels = make([]uint16, len(raw)/2)
		for k := range levels {
			levels[k] = binary.LittleEndian.Uint16(raw[2*k:])
		}
	}
	n := len(levels)
	runs := 1
	for k := 1; k < n; k++ {
		if levels[k] != levels[k-1] {
			runs++
		}
	}
	var wd uint
	zeroBlock := false
	packed := 0
	for k := 0; k < n; k += 1024 {
		var or uint16
		for _, v := range levels[k:min(k+1024, n)] {
			or |= v
		}
		zeroBlock = zeroBlock || or == 0
		bw := uint(bits.Len16(or))
		wd = max(wd, bw)
		packed += 2 * (1 + 64*int(bw))
	}
	rle := 3 * min(runs+n/255, n)
	if rle < len(raw) && !(packed < len(raw) && packed < rle) {
		if e, b := codec.EncodeLevels(levels, codec.EncodeOptions{Minor: int(w.version.Minor())}); e.GetRle() != nil {
			return e, b
		}
	}
	if zeroBlock {
		return flat21(16), raw
	}
	if n <= 1024 {
		// Lance skips a single block whose packed form is not smaller.
		if b := codec.AppendBitpacked(nil, 16, raw, n); len(b) < len(raw) {
			return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{
				InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: 16}}}, b
		}
		return flat21(16), raw
	}
	return codec.OutOfLine16Encoding(wd), codec.AppendOutOfLine16(nil, levels, wd)
}

// encodeColumnMetadata21 serializes a 2.1+ column: encoding "values", then
// pages whose encodings are PageLayout messages (W2).
func encodeColumnMetadata21(pages []Page, layouts [][]byte) []byte {
	size := 0
	for i := range pages {
		size += 24 + 2*len(pages[i].Buffers)*5 + len(layouts[i]) + len(typePageLayout21)
	}
	b := make([]byte, 0, size+48)
	b = columnEncodingValuesField(b)
	for i := range pages {
		b = pbAppendPageField(b, 2, &pages[i], typePageLayout21, layouts[i])
	}
	return b
}

// constPage is a constant page: its layout and buffers.
type constPage struct {
	layout *pb21.ConstantLayout
	bufs   [][]byte
}

// constant22 returns the constant layout (spec 2.1 §6.2, 2.2+) of a page
// without lists whose valid values are all equal, as Lance 12 writes it:
// fixed-width values of ≤ 32 bytes and booleans inline (one value's
// little-endian bytes), strings/binaries as a scalar value buffer (u32
// buffer count 2, the two lengths, offsets [0, len], the bytes); with
// nulls, a rep buffer (empty) and the def levels as raw u16 (flat(16)).
// nil when the page is not constant or the form does not apply (2.1,
// lists, Arrow dictionaries, fixed_size_list, NoCompression).
func (w *Writer) constant22(l *leaf21, e0, e1, s0, s1 int, layers []pb21.RepDefLayer, hasDef bool, defOf []uint16) *constPage {
	if w.version < V2_2 || w.noCompression || l.nlists > 0 || l.dict || s1-s0 < 2 {
		return nil
	}
	codes := l.code[e0:e1]
	first := -1
	same := func(a, b int) bool {
		switch l.kind {
		case lkFixed21:
			bw := l.width / 8
			return string(l.vals[a*bw:(a+1)*bw]) == string(l.vals[b*bw:(b+1)*bw])
		case lkBool21:
			return bitutil.BitIsSet(l.vals, a) == bitutil.BitIsSet(l.vals, b)
		case lkVar21:
			return string(l.varValue(a)) == string(l.varValue(b))
		}
		return false
	}
	switch l.kind {
	case lkFixed21:
		if l.width%8 != 0 || l.width/8 > 32 {
			return nil
		}
	case lkBool21, lkVar21:
	default:
		return nil
	}
	for k, c := range codes {
		if c != 0 {
			continue
		}
		if first < 0 {
			first = s0 + k
		} else if !same(first, s0+k) {
			return nil
		}
	}
	if first < 0 {
		return nil
	}
	cl := &pb21.ConstantLayout{Layers: layers}
	var bufs [][]byte
	switch l.kind {
	case lkFixed21:
		bw := l.width / 8
		cl.InlineValue = append([]byte{}, l.vals[first*bw:(first+1)*bw]...)
	case lkBool21:
		cl.InlineValue = []byte{0}
		if bitutil.BitIsSet(l.vals, first) {
			cl.InlineValue[0] = 1
		}
	case lkVar21:
		v := l.varValue(first)
		ow := 4
		if l.off64 {
			ow = 8
		}
		b := binary.LittleEndian.AppendUint32(nil, 2)
		b = binary.LittleEndian.AppendUint32(b, uint32(2*ow))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		if ow == 4 {
			b = binary.LittleEndian.AppendUint32(b, 0)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, 0)
			b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
		}
		bufs = append(bufs, append(b, v...))
	}
	if hasDef {
		// Def levels as raw u16 (flat(16)): Lance 12 fails ("Panic in
		// async function") on a constant page with a value whose def
		// levels are RLE-framed.
		lv := make([]byte, 0, 2*len(codes))
		for _, c := range codes {
			var d uint16
			if c != 0 {
				d = defOf[c]
			}
			lv = binary.LittleEndian.AppendUint16(lv, d)
		}
		bufs = append(bufs, nil, lv)
		cl.DefCompression, cl.NumDefValues = flat21(16), uint64(len(codes))
	}
	return &constPage{layout: cl, bufs: bufs}
}

// varValue returns the bytes of variable-width slot s.
func (l *leaf21) varValue(s int) []byte {
	start := uint64(0)
	if s > 0 {
		start = l.ends[s-1]
	}
	return l.data[start:l.ends[s]]
}

// fewDistinct reports whether n values of w bytes pass Lance 12's
// dictionary rule for fixed-width pages: n ≥ 100, at most n/2 distinct
// values (its dict-divisor 2) and an estimated dictionary form — the
// distinct values plus a u32 index per value, w·distinct + 4·n — below 0.8
// of the plain size w·n (dict-size-ratio 0.8). Found with the peer
// (session 24): float64 pages of 4,000 values are dictionaries with 900 and
// 1,150 distinct values, not with 1,250 (the bound is 1,200); decimal128
// ones with 1,800, not with 2,100 (the n/2 budget). A strided sample of
// 1024 values rules most high-cardinality pages out before the exact
// count, which stops as soon as the rule fails.
func fewDistinct(data []byte, w, n int) bool {
	if n < 100 || len(data) < n*w || w <= 0 {
		return false
	}
	// limit = the smallest distinct count that fails the rule.
	room := 8*w*n/10 - 4*n // w·distinct must stay below this
	if room <= 0 {
		return false
	}
	limit := min((room-1)/w, n/2) + 1
	if n > 4096 {
		// A sample of m values from c distinct ones repeats about
		// m²/(2c) times: far fewer repeats than at c = limit means far
		// more distinct values (unique ids, random floats).
		step := n / 1024
		seen := make(map[string]struct{}, 1024)
		m := 0
		for i := 0; i < n; i += step {
			seen[string(data[i*w:(i+1)*w])] = struct{}{}
			m++
		}
		if repeats := m - len(seen); float64(repeats) < float64(m)*float64(m)/float64(4*limit) {
			return false
		}
	}
	seen := make(map[string]struct{}, 256)
	for i := 0; i < n; i++ {
		seen[string(data[i*w:(i+1)*w])] = struct{}{}
		if len(seen) >= limit {
			return false
		}
	}
	return true
}

// varDictLimit is the number of distinct values from which a string/binary
// page fails Lance 12's dictionary rule (≥ 100 values and estimated
// dictionary size c·(avg + o) + n·o < 0.8 of the value and offset bytes,
// o the offset width), capped at maxDictItems; 0 when no count passes or a strided
// sample of 1024 values shows far more distinct values than that (too few
// repeats), so that unique strings are not hashed in full.
func varDictLimit(b codec.Block) int {
	n := int(b.Num)
	if n < 100 || len(b.Data) == 0 {
		return 0
	}
	o := int(b.OffsetBits / 8)
	avg := len(b.Data) / n
	// Lance's data size of a variable block counts its offsets too.
	room := (len(b.Data)+o*(n+1))*8/10 - n*o
	if room <= 0 || avg+o <= 0 {
		return 0
	}
	limit := min(maxDictItems, room/(avg+o))
	if limit <= 0 {
		return 0
	}
	if n > 4096 {
		step := n / 1024
		seen := make(map[string]struct{}, 1024)
		m := 0
		for i := 0; i < n; i += step {
			seen[string(b.Data[b.Offset(uint64(i)):b.Offset(uint64(i+1))])] = struct{}{}
			m++
		}
		if repeats := m - len(seen); float64(repeats) < float64(m)*float64(m)/float64(4*limit) {
			return 0
		}
	}
	return limit
}

// dictFirst reports whether a string/binary page with wide values passes
// Lance 12's dictionary rule (varDictLimit) with values below 16 KiB:
// Lance decides on a dictionary before the structural layout, so such a
// page is a mini-block dictionary page, not full-zip (the mini-block path
// still keeps the smaller of dictionary and variable/FSST; 16 KiB keeps a
// 2.1 chunk of one value within its 32 KiB). Lance counts only the valid
// values (found with the peer, session 24: 96 distinct wide values among
// 96 valid and 48 null items stay full-zip), so null slots are left out.
func (l *leaf21) dictFirst(e0, e1, s0, s1 int) bool {
	if l.kind != lkVar21 || l.dict || s1-s0 < 100 {
		return false
	}
	nulls := l.slotNulls(e0, e1, s1-s0)
	start := uint64(0)
	if s0 > 0 {
		start = l.ends[s0-1]
	}
	// The rule is evaluated with 8-byte offsets (slightly stricter than
	// Lance's for 32-bit offsets).
	offs := make([]byte, 0, 8*(s1-s0+1))
	offs = binary.LittleEndian.AppendUint64(offs, 0)
	prev := start
	n := 0
	for k := s0; k < s1; k++ {
		if l.ends[k]-prev >= 16<<10 {
			return false
		}
		prev = l.ends[k]
		if nulls != nil && nulls[k-s0] {
			continue // no bytes: only its offset is dropped
		}
		offs = binary.LittleEndian.AppendUint64(offs, l.ends[k]-start)
		n++
	}
	b := codec.Block{Kind: codec.Variable, Num: uint64(n), OffsetBits: 64, Offsets: offs, Data: l.data[start:l.ends[s1-1]]}
	limit := varDictLimit(b)
	if limit <= 0 {
		return false
	}
	seen := make(map[string]struct{}, 256)
	for k := s0; k < s1; k++ {
		if nulls != nil && nulls[k-s0] {
			continue
		}
		seen[string(l.varValue(k))] = struct{}{}
		if len(seen) >= limit {
			return false
		}
	}
	return true
}
