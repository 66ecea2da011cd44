package datafile

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// This file decodes the pages of 2.1, 2.2 and 2.3 files
// (shared/spec/lance-file-format-2.1.md): the structural layouts (§4
// mini-block, §5 full-zip, §6 constant / all-null) into rep/def levels and
// value slots. The compression algorithms (§7) are package codec's.

const pageLayoutType = "lance.encodings21.PageLayout"

// maxLevel bounds the layers of a column (nesting depth).
const maxLayers = 64

// layerInfo is what the rep/def numbering of §3 derives from a page's layers.
type layerInfo struct {
	layers []pb21.RepDefLayer
	// owner[d] is the layer that def value d makes absent, and whether it
	// is an empty list (else null). owner[0] = -1.
	owner      []int
	ownerEmpty []bool
	listLevel  []int // per layer: its list level (0 for item layers)
	maxRep     int
	maxVisDef  int
}

func isList(l pb21.RepDefLayer) bool {
	switch l {
	case pb21.RepDefLayer_REPDEF_ALL_VALID_LIST, pb21.RepDefLayer_REPDEF_NULLABLE_LIST,
		pb21.RepDefLayer_REPDEF_EMPTYABLE_LIST, pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
		return true
	}
	return false
}

func newLayerInfo(layers []pb21.RepDefLayer) (*layerInfo, error) {
	if len(layers) == 0 || len(layers) > maxLayers {
		return nil, fmt.Errorf("page has %d rep/def layers: %w", len(layers), ErrMalformed)
	}
	li := &layerInfo{layers: layers, owner: []int{-1}, ownerEmpty: []bool{false}, listLevel: make([]int, len(layers))}
	seenList := false
	for i, l := range layers {
		var adds []bool // empty?
		switch l {
		case pb21.RepDefLayer_REPDEF_ALL_VALID_ITEM, pb21.RepDefLayer_REPDEF_ALL_VALID_LIST:
		case pb21.RepDefLayer_REPDEF_NULLABLE_ITEM, pb21.RepDefLayer_REPDEF_NULLABLE_LIST:
			adds = []bool{false}
		case pb21.RepDefLayer_REPDEF_EMPTYABLE_LIST:
			adds = []bool{true}
		case pb21.RepDefLayer_REPDEF_NULL_AND_EMPTY_LIST:
			adds = []bool{false, true}
		default:
			return nil, fmt.Errorf("rep/def layer %d is %s: %w", i, l, ErrMalformed)
		}
		if isList(l) {
			li.maxRep++
			li.listLevel[i] = li.maxRep
			seenList = true
		}
		for _, e := range adds {
			li.owner = append(li.owner, i)
			li.ownerEmpty = append(li.ownerEmpty, e)
			if !seenList {
				li.maxVisDef = len(li.owner) - 1
			}
		}
	}
	return li, nil
}

func sameLayers(a, b []pb21.RepDefLayer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// leafStream accumulates, for one leaf column, the rep/def levels and the
// visible value slots of the rows read so far.
type leafStream struct {
	li  *layerInfo
	rep []uint16 // nil when the column has no lists
	def []uint16 // nil while every entry so far has def 0
	// vbits is the validity bitmap of the entries of a flat column read by
	// the flat mini-block path (page21flat.go), used instead of def (at most
	// one of the two is non-nil); vnulls counts its unset bits.
	vbits  []byte
	vnulls int
	n      int // entries
	rows   uint64
	// wantRows is the number of rows the read asks for (to pre-size).
	wantRows uint64
	vals     *valueSink
}

// appendLevels appends entries; rep/def nil mean "every entry starts a row"
// and "def 0".
func (ls *leafStream) appendLevels(rep, def []uint16, n int) {
	if ls.li.maxRep > 0 {
		if rep == nil {
			for range n {
				ls.rep = append(ls.rep, uint16(ls.li.maxRep))
			}
		} else {
			ls.rep = append(ls.rep, rep[:n]...)
		}
	}
	if def != nil {
		if ls.def == nil {
			ls.def = make([]uint16, ls.n, ls.n+n)
		}
		ls.def = append(ls.def, def[:n]...)
	} else if ls.def != nil {
		ls.def = append(ls.def, make([]uint16, n)...)
	}
	ls.n += n
}

// pageCtx is one 2.1+ page being read.
type pageCtx struct {
	r    *reader21
	col  int
	pi   int
	page *Page
	sec  string
	// whole holds file bytes [wholePos, +len) covering every buffer of the
	// page when it is read whole in one request (see readWhole).
	whole    []byte
	wholePos uint64
}

// readWhole reads all buffers of the page in one request into the reader's
// scratch buffer when they lie together (separated by alignment padding
// only), so that a page read whole costs one storage request, not one per
// buffer. Buffers are then cut from it (valid until the next page).
func (pc *pageCtx) readWhole() error {
	var lo, hi, sum uint64
	lo = ^uint64(0)
	for _, br := range pc.page.Buffers {
		if br.Len == 0 {
			continue
		}
		lo, hi, sum = min(lo, br.Pos), max(hi, br.Pos+br.Len), sum+br.Len
	}
	if sum == 0 || hi-lo > sum+64*uint64(len(pc.page.Buffers)) {
		return nil
	}
	if err := pc.r.budget.take(hi-lo, pc.sec); err != nil {
		return err
	}
	b, err := pc.r.f.readRangeScratch(pc.r.ctx, int64(lo), int64(hi-lo), &pc.r.scratch)
	if err != nil {
		return err
	}
	pc.whole, pc.wholePos = b, lo
	return nil
}

// fromWhole returns [pos, pos+n) from the page bytes read whole, if any.
func (pc *pageCtx) fromWhole(pos, n uint64) ([]byte, bool) {
	if pc.whole == nil || pos < pc.wholePos || pos-pc.wholePos > uint64(len(pc.whole)) || n > uint64(len(pc.whole))-(pos-pc.wholePos) {
		return nil, false
	}
	o := pos - pc.wholePos
	return pc.whole[o : o+n : o+n], true
}

func (pc *pageCtx) errf(sentinel error, format string, args ...any) error {
	off := int64(-1)
	if len(pc.page.Buffers) > 0 {
		off = int64(pc.page.Buffers[0].Pos)
	}
	return formatErr(sentinel, pc.sec, off, format, args...)
}

// wrap turns a codec or structural error into a *FormatError naming the page.
func (pc *pageCtx) wrap(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*FormatError); ok {
		return err
	}
	sentinel := ErrMalformed
	if isUnsupported(err) {
		sentinel = ErrUnsupported
	} else if isTooLarge(err) {
		sentinel = ErrTooLarge
	}
	fe := pc.errf(sentinel, "%v", err).(*FormatError)
	fe.Err = &wrapped{sentinel: sentinel, cause: err}
	return fe
}

// wrapped keeps both a datafile sentinel and the codec cause in the chain.
type wrapped struct {
	sentinel error
	cause    error
}

func (w *wrapped) Error() string   { return w.cause.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.sentinel, w.cause} }

func isUnsupported(err error) bool {
	return errorsIs(err, ErrUnsupported) || errorsIs(err, codec.ErrUnsupported)
}

func isTooLarge(err error) bool {
	return errorsIs(err, ErrTooLarge) || errorsIs(err, codec.ErrLimit)
}

// buffer reads page buffer i, or [off, off+n) of it.
func (pc *pageCtx) bufferPart(i int, off, n uint64) ([]byte, error) {
	if i >= len(pc.page.Buffers) {
		return nil, pc.errf(ErrMalformed, "page has %d buffers, buffer %d is needed", len(pc.page.Buffers), i)
	}
	br := pc.page.Buffers[i]
	if off > br.Len || n > br.Len-off {
		return nil, pc.errf(ErrMalformed, "range [%d, +%d) outside buffer %d of %d bytes", off, n, i, br.Len)
	}
	if n == 0 {
		return nil, nil
	}
	if b, ok := pc.fromWhole(br.Pos+off, n); ok {
		return b, nil
	}
	if err := pc.r.budget.take(n, pc.sec); err != nil {
		return nil, err
	}
	b, err := pc.r.f.readRange(pc.r.ctx, int64(br.Pos+off), int64(n))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// bufferPartScratch is bufferPart reading into the reader's scratch buffer
// (valid until the next such call): for a mini-block page's chunk bytes,
// which are copied out before the next page.
func (pc *pageCtx) bufferPartScratch(i int, off, n uint64) ([]byte, error) {
	if i >= len(pc.page.Buffers) {
		return nil, pc.errf(ErrMalformed, "page has %d buffers, buffer %d is needed", len(pc.page.Buffers), i)
	}
	br := pc.page.Buffers[i]
	if off > br.Len || n > br.Len-off {
		return nil, pc.errf(ErrMalformed, "range [%d, +%d) outside buffer %d of %d bytes", off, n, i, br.Len)
	}
	if n == 0 {
		return nil, nil
	}
	if b, ok := pc.fromWhole(br.Pos+off, n); ok {
		return b, nil
	}
	if err := pc.r.budget.take(n, pc.sec); err != nil {
		return nil, err
	}
	return pc.r.f.readRangeScratch(pc.r.ctx, int64(br.Pos+off), int64(n), &pc.r.scratch)
}

func (pc *pageCtx) buffer(i int) ([]byte, error) {
	if i >= len(pc.page.Buffers) {
		return nil, pc.errf(ErrMalformed, "page has %d buffers, buffer %d is needed", len(pc.page.Buffers), i)
	}
	return pc.bufferPart(i, 0, pc.page.Buffers[i].Len)
}

// layout parses the page's PageLayout.
func (pc *pageCtx) layout() (*pb21.PageLayout, error) {
	if n := pc.page.Encoding.TypeName(); n != pageLayoutType {
		return nil, pc.errf(ErrUnsupported, "page encoding is %q, want %q", pc.page.Encoding.TypeURL, pageLayoutType)
	}
	var pl pb21.PageLayout
	if err := proto.Unmarshal(pc.page.Encoding.Value, &pl); err != nil {
		return nil, pc.errf(ErrMalformed, "PageLayout: %v", err)
	}
	return &pl, nil
}

// pageLayers returns the layers of a parsed page layout.
func pageLayers(pl *pb21.PageLayout) []pb21.RepDefLayer {
	switch l := pl.Layout.(type) {
	case *pb21.PageLayout_MiniBlockLayout:
		return l.MiniBlockLayout.GetLayers()
	case *pb21.PageLayout_FullZipLayout:
		return l.FullZipLayout.GetLayers()
	case *pb21.PageLayout_ConstantLayout:
		return l.ConstantLayout.GetLayers()
	case *pb21.PageLayout_BlobLayout:
		return l.BlobLayout.GetLayers()
	}
	return nil
}

// readRows appends rows [a, b) of the page (page-relative) to ls.
func (pc *pageCtx) readRows(pl *pb21.PageLayout, a, b uint64, ls *leafStream) error {
	if _, ok := pl.Layout.(*pb21.PageLayout_MiniBlockLayout); !ok {
		ls.toLevels()
	}
	switch l := pl.Layout.(type) {
	case *pb21.PageLayout_MiniBlockLayout:
		return pc.miniBlock(l.MiniBlockLayout, a, b, ls)
	case *pb21.PageLayout_FullZipLayout:
		return pc.fullZip(l.FullZipLayout, a, b, ls)
	case *pb21.PageLayout_ConstantLayout:
		return pc.constant(l.ConstantLayout, a, b, ls)
	case *pb21.PageLayout_BlobLayout:
		return pc.errf(ErrUnsupported, "blob page layout (legacy blob column): its values are stored outside the page and are not decoded")
	case nil:
		return pc.errf(ErrUnsupported, "page layout is missing or of an unknown kind (e.g. the 2.3 sparse layout)")
	}
	return pc.errf(ErrUnsupported, "unknown page layout")
}

// rowCuts returns the entry indexes where the k0-th and k1-th rows start in
// a level stream (k counted from the first row start; entries before it are
// a preamble). A row start past the stream gives n.
func rowCuts(rep []uint16, maxRep int, n int, k0, k1 uint64) (int, int) {
	if rep == nil || maxRep == 0 {
		return int(min(k0, uint64(n))), int(min(k1, uint64(n)))
	}
	e0, e1 := n, n
	var k uint64
	for i := 0; i < n; i++ {
		if int(rep[i]) == maxRep {
			if k == k0 {
				e0 = i
			}
			if k == k1 {
				e1 = i
				break
			}
			k++
		}
	}
	return e0, e1
}

// visible reports whether entry i owns a value slot.
func (li *layerInfo) visible(def []uint16, i int) bool {
	return def == nil || int(def[i]) <= li.maxVisDef
}

func (li *layerInfo) countVisible(def []uint16, from, to int) uint64 {
	if def == nil {
		return uint64(to - from)
	}
	var c uint64
	for _, d := range def[from:to] {
		if int(d) <= li.maxVisDef {
			c++
		}
	}
	return c
}

func (li *layerInfo) countRows(rep []uint16, n int) uint64 {
	if rep == nil || li.maxRep == 0 {
		return uint64(n)
	}
	var c uint64
	for _, r := range rep[:n] {
		if int(r) == li.maxRep {
			c++
		}
	}
	return c
}

// --- mini-block (§4) ---------------------------------------------------------

type mbChunk struct {
	off, size uint64
	nvals     uint64
}

type decodedChunk struct {
	nlevels int
	bufs    [][]byte // value buffers, decoded when the chunk's values are needed
	nvals   uint64
}

func (pc *pageCtx) miniBlock(mb *pb21.MiniBlockLayout, a, b uint64, ls *leafStream) error {
	large := mb.GetHasLargeChunk()
	switch v := pc.r.f.version; {
	case v == V2_1 && large:
		return pc.errf(ErrMalformed, "large mini-block chunks are not part of the 2.1 grammar")
	case v != V2_1 && !large:
		return pc.errf(ErrMalformed, "%s mini-block pages require the u32 chunk grammar (has_large_chunk)", v)
	}
	if mb.GetValueCompression() == nil {
		return pc.errf(ErrMalformed, "mini-block page without value_compression")
	}
	nbufs := mb.GetNumBuffers()
	if nbufs == 0 || nbufs > 64 {
		return pc.errf(ErrMalformed, "mini-block page with %d value buffers per chunk", nbufs)
	}
	hasDict := mb.GetDictionary() != nil
	depth := mb.GetRepetitionIndexDepth()
	need := 2
	if hasDict {
		need++
	}
	repIdxBuf := -1
	if depth > 0 {
		repIdxBuf = need
		need++
	}
	if len(pc.page.Buffers) < need {
		return pc.errf(ErrMalformed, "mini-block page has %d buffers, its layout needs %d", len(pc.page.Buffers), need)
	}
	flat := pc.flatEligible(mb, a, b, ls)
	if !flat {
		ls.toLevels()
	}
	if a == 0 && b == pc.page.Length && !flat {
		if err := pc.readWhole(); err != nil {
			return err
		}
	}
	meta, err := pc.buffer(0)
	if err != nil {
		return err
	}
	ww := 2
	if large {
		ww = 4
	}
	if len(meta)%ww != 0 {
		return pc.errf(ErrMalformed, "chunk metadata of %d bytes is not a multiple of %d", len(meta), ww)
	}
	nchunks := len(meta) / ww
	numItems := mb.GetNumItems()
	chunks := make([]mbChunk, nchunks)
	var off, vals uint64
	dataLen := pc.page.Buffers[1].Len
	for i := range chunks {
		var w uint64
		if large {
			w = uint64(binary.LittleEndian.Uint32(meta[4*i:]))
		} else {
			w = uint64(binary.LittleEndian.Uint16(meta[2*i:]))
		}
		size := ((w >> 4) + 1) * 8
		lg := w & 15
		var nv uint64
		if i < nchunks-1 {
			if lg > 12 {
				return pc.errf(ErrMalformed, "chunk %d: log2 of its value count is %d (> 12)", i, lg)
			}
			nv = 1 << lg
		} else {
			if vals > numItems {
				return pc.errf(ErrMalformed, "chunks hold more values than the page's %d items", numItems)
			}
			nv = numItems - vals
		}
		if size > dataLen || off > dataLen-size {
			return pc.errf(ErrMalformed, "chunk %d [%d, +%d) outside the %d-byte chunk buffer", i, off, size, dataLen)
		}
		chunks[i] = mbChunk{off: off, size: size, nvals: nv}
		off += size
		vals += nv
	}
	if vals != numItems && nchunks > 0 {
		return pc.errf(ErrMalformed, "chunks hold %d values, the page %d items", vals, numItems)
	}
	if nchunks == 0 {
		if numItems != 0 || pc.page.Length != 0 {
			return pc.errf(ErrMalformed, "mini-block page of %d rows has no chunks", pc.page.Length)
		}
		return nil
	}
	if flat {
		return pc.miniBlockFlat(mb, chunks, nbufs, large, ls)
	}
	li := ls.li
	// Which chunks hold rows [a, b), and the first row of the first one.
	c0, c1 := 0, nchunks-1
	var firstRow uint64
	hasRep := mb.GetRepCompression() != nil
	switch {
	case !hasRep:
		// Every entry is a row and owns a value slot.
		var r uint64
		c0, c1 = -1, -1
		for i, c := range chunks {
			if c0 < 0 && a < r+c.nvals {
				c0, firstRow = i, r
			}
			if c1 < 0 && b-1 < r+c.nvals {
				c1 = i
			}
			r += c.nvals
		}
		if c0 < 0 || c1 < 0 {
			return pc.errf(ErrMalformed, "rows [%d, %d) are past the page's %d values", a, b, vals)
		}
	case depth > 0:
		idx, err := pc.buffer(repIdxBuf)
		if err != nil {
			return err
		}
		stride := int(depth) + 1
		if uint64(len(idx)) < uint64(nchunks*stride*8) {
			return pc.errf(ErrMalformed, "repetition index of %d bytes for %d chunks of depth %d", len(idx), nchunks, depth)
		}
		var r uint64
		c0, c1 = -1, -1
		prevPartial := false
		for i := range chunks {
			ends := binary.LittleEndian.Uint64(idx[8*i*stride:])
			partial := binary.LittleEndian.Uint64(idx[8*(i*stride+stride-1):]) > 0
			starting := ends
			if partial {
				starting++
			}
			if prevPartial {
				if starting == 0 {
					return pc.errf(ErrMalformed, "repetition index: chunk %d continues a row but ends none", i)
				}
				starting--
			}
			if c0 < 0 && a < r+starting {
				c0, firstRow = i, r
			}
			if c1 < 0 && b-1 < r+starting {
				c1 = i
			}
			r += starting
			prevPartial = partial
		}
		if c0 < 0 || c1 < 0 {
			return pc.errf(ErrMalformed, "rows [%d, %d) are past the %d rows of the repetition index", a, b, r)
		}
		// Take one more chunk: the rest of row b-1 and the invisible entries
		// that follow its last value live there (§4.3).
		for c1 < nchunks-1 {
			c1++
			p := binary.LittleEndian.Uint64(idx[8*((c1-1)*stride+stride-1):])
			if p == 0 {
				break
			}
		}
	}
	var dict *codec.Block
	if hasDict {
		db, err := pc.buffer(2)
		if err != nil {
			return err
		}
		d, err := codec.DecodeBlock(mb.GetDictionary(), db, mb.GetNumDictionaryItems(), pc.r.limits())
		if err != nil {
			return pc.wrap(fmt.Errorf("dictionary: %w", err))
		}
		dict = &d
	}
	span, err := pc.bufferPartScratch(1, chunks[c0].off, chunks[c1].off+chunks[c1].size-chunks[c0].off)
	if err != nil {
		return err
	}
	var nv uint64
	for _, c := range chunks[c0 : c1+1] {
		nv += c.nvals
	}
	est := uint64(len(span)) * 2
	if ls.vals.kind == codec.Fixed {
		est = nv * ls.vals.bits / 8
	}
	if err := pc.r.budget.take(est, pc.sec); err != nil {
		return err
	}
	// Grow the values and levels for this page, extrapolated to the rows
	// of the read still to come (one growth per column, not one per page).
	var nl uint64
	for _, c := range chunks[c0 : c1+1] {
		nl += uint64(binary.LittleEndian.Uint16(span[c.off-chunks[c0].off:]))
	}
	scale := func(x uint64) uint64 {
		done := ls.rows + (b - a)
		if ls.wantRows <= done || done == 0 {
			return x
		}
		return min(mulSat(x, ls.wantRows)/done, uint64(max(pc.r.budget.left, 0)))
	}
	if ls.vals.kind == codec.Variable && dict == nil {
		// The bytes are reserved after the first chunk, from its expansion.
		ls.vals.reserve(scale(ls.vals.n+nv)-ls.vals.n, 0)
	} else {
		ls.vals.reserve(scale(ls.vals.n+nv)-ls.vals.n, scale(uint64(len(ls.vals.data))+est)-uint64(len(ls.vals.data)))
	}
	wantLevels := min(scale(uint64(ls.n)+nl), 1<<28)
	if wantLevels > uint64(ls.n) {
		if ls.li.maxRep > 0 {
			ls.rep = slices.Grow(ls.rep, int(wantLevels)-ls.n)
		}
		if mb.GetDefCompression() != nil && ls.def == nil {
			ls.def = make([]uint16, ls.n, wantLevels)
		} else if ls.def != nil {
			ls.def = slices.Grow(ls.def, int(wantLevels)-ls.n)
		}
	}
	// The chunks' levels are decoded straight into the column's level
	// streams (ls.rep, ls.def), then trimmed to the entries of rows [a, b).
	hasDef := mb.GetDefCompression() != nil
	lbase := ls.n
	if hasDef && ls.def == nil {
		ls.def = make([]uint16, ls.n)
	}
	dcs := make([]decodedChunk, 0, c1-c0+1)
	var totalLevels int
	for ci := c0; ci <= c1; ci++ {
		c := chunks[ci]
		dc, err := pc.decodeChunk(mb, ls, span[c.off-chunks[c0].off:][:c.size], c.nvals, nbufs, large, ci)
		if err != nil {
			ls.truncateLevels(lbase)
			return err
		}
		dcs = append(dcs, dc)
		totalLevels += dc.nlevels
	}
	var rep, def []uint16
	if li.maxRep > 0 {
		rep = ls.rep[lbase:]
	}
	if hasDef {
		def = ls.def[lbase:]
	}
	var e0, e1 int
	toEnd := b == pc.page.Length && c1 == nchunks-1
	if toEnd {
		// The rows run to the end of the stream: only the first cut is
		// searched for.
		e0, _ = rowCuts(rep, li.maxRep, totalLevels, a-firstRow, a-firstRow)
		e1 = totalLevels
	} else {
		e0, e1 = rowCuts(rep, li.maxRep, totalLevels, a-firstRow, b-firstRow)
	}
	if rows := countRowsBetween(rep, li.maxRep, e0, e1); rows != b-a {
		ls.truncateLevels(lbase)
		return pc.errf(ErrMalformed, "chunks %d..%d hold %d of the rows [%d, %d) the page should have", c0, c1, rows, a, b)
	}
	var v0, v1 uint64
	if e0 == 0 && e1 == totalLevels {
		v1 = nv // each chunk's visible entries were checked against its values
	} else {
		v0 = li.countVisible(def, 0, e0)
		v1 = v0 + li.countVisible(def, e0, e1)
	}
	if e0 > 0 {
		if ls.rep != nil {
			copy(ls.rep[lbase:], ls.rep[lbase+e0:lbase+e1])
		}
		if ls.def != nil {
			copy(ls.def[lbase:], ls.def[lbase+e0:lbase+e1])
		}
	}
	ls.truncateLevels(lbase + e1 - e0)
	ls.rows += b - a
	// Values [v0, v1) over the chunks: only chunks holding some are
	// decoded, each copied out before the next (the decoder reuses its
	// output buffer). A large page of fixed-width values is cut into
	// contiguous groups of chunks decoded on separate goroutines.
	enc := mb.GetValueCompression()
	if dict == nil && len(dcs) >= parallelMinChunks && v1-v0 >= parallelMinValues && runtime.GOMAXPROCS(0) > 1 &&
		ls.vals.kind == codec.Fixed && ls.vals.bits >= 8 {
		return pc.valuesParallel(enc, dcs, c0, v0, v1, ls.vals)
	}
	if ls.vals.kind == codec.Variable && dict == nil {
		return pc.valuesVariable(enc, dcs, c0, v0, v1, ls.vals, func(x uint64) uint64 {
			if ls.wantRows <= ls.rows || ls.rows == 0 {
				return x
			}
			return min(mulSat(x, ls.wantRows)/ls.rows, uint64(max(pc.r.budget.left, 0)))
		})
	}
	return pc.values(pc.r.codec(), enc, dict, dcs, c0, 0, v0, v1, ls.vals)
}

// valuesVariable is values for variable-width values: after the first
// chunk holding values it reserves the sink's bytes for the rest of the
// page (and, through scale, of the read) from that chunk's expansion ratio,
// so that a page's strings land in one buffer of about the right size.
func (pc *pageCtx) valuesVariable(enc *pb21.CompressiveEncoding, dcs []decodedChunk, c0 int, v0, v1 uint64, sink *valueSink, scale func(uint64) uint64) error {
	var base uint64
	first := -1
	for i := range dcs {
		if v0 < base+dcs[i].nvals {
			first = i
			break
		}
		base += dcs[i].nvals
	}
	if first < 0 || v0 >= v1 {
		return nil
	}
	before := uint64(len(sink.data))
	dec := pc.r.codec()
	if err := pc.values(dec, enc, nil, dcs[first:first+1], c0+first, base, v0, v1, sink); err != nil {
		return err
	}
	var in, rest uint64
	for _, b := range dcs[first].bufs {
		in += uint64(len(b))
	}
	for _, dc := range dcs[first+1:] {
		for _, b := range dc.bufs {
			rest += uint64(len(b))
		}
	}
	if out := uint64(len(sink.data)) - before; in > 0 && rest > 0 {
		want := scale(uint64(len(sink.data)) + rest/in*out + (rest%in)*out/in + rest/64)
		if want > uint64(len(sink.data)) {
			sink.reserve(0, want-uint64(len(sink.data)))
		}
	}
	return pc.values(dec, enc, nil, dcs[first+1:], c0+first+1, base+dcs[first].nvals, v0, v1, sink)
}

// Thresholds of the parallel value decode: below them a page's values are
// decoded on the calling goroutine.
const (
	parallelMinChunks = 64
	parallelMinValues = 1 << 16
)

// values decodes the chunks dcs (the first is chunk c0 of the page and holds
// value base) and appends their values in [v0, v1) to sink.
func (pc *pageCtx) values(dec *codec.Decoder, enc *pb21.CompressiveEncoding, dict *codec.Block, dcs []decodedChunk, c0 int, base, v0, v1 uint64, sink *valueSink) error {
	for i := range dcs {
		dc := &dcs[i]
		lo, hi := max(v0, base), min(v1, base+dc.nvals)
		if lo < hi {
			vals, err := dec.MiniBlock(enc, dc.bufs, dc.nvals)
			if err != nil {
				return pc.wrap(fmt.Errorf("chunk %d values: %w", c0+i, err))
			}
			if vals.Num != dc.nvals {
				return pc.errf(ErrMalformed, "chunk %d: decoded %d values, the chunk holds %d", c0+i, vals.Num, dc.nvals)
			}
			if dict != nil {
				err = sink.appendDict(dict, &vals, lo-base, hi-base)
			} else {
				err = sink.appendBlock(&vals, lo-base, hi-base)
			}
			if err != nil {
				return pc.wrap(fmt.Errorf("chunk %d: %w", c0+i, err))
			}
		}
		base += dc.nvals
	}
	return nil
}

// valuesParallel is values for a large page of fixed-width values without
// dictionary: the page's output region in sink is known from the value
// counts, so the chunks are cut into GOMAXPROCS groups of about equal value
// counts, each decoded on its own goroutine with its own codec.Decoder
// straight into its part of the region (no intermediate arrays).
func (pc *pageCtx) valuesParallel(enc *pb21.CompressiveEncoding, dcs []decodedChunk, c0 int, v0, v1 uint64, sink *valueSink) error {
	w := sink.bits / 8
	if err := sink.take(mulSat(v1-v0, w)); err != nil {
		return err
	}
	at := uint64(len(sink.data))
	sink.data = slices.Grow(sink.data, int((v1-v0)*w))[:at+(v1-v0)*w]
	region := sink.data[at:]
	p := min(runtime.GOMAXPROCS(0), 4)
	per := (v1 - v0 + uint64(p) - 1) / uint64(p)
	type group struct {
		from, to int    // chunks [from, to) of dcs
		base     uint64 // value index of chunk from
		err      error
	}
	groups := make([]group, 0, p)
	var base, gbase uint64
	from := 0
	for i := range dcs {
		base += dcs[i].nvals
		if (base-min(base, v0) >= per*uint64(len(groups)+1) && len(groups) < p-1) || i == len(dcs)-1 {
			groups = append(groups, group{from: from, to: i + 1, base: gbase})
			from, gbase = i+1, base
		}
	}
	run := func(dec *codec.Decoder, gr *group) error {
		base := gr.base
		for i := gr.from; i < gr.to; i++ {
			dc := &dcs[i]
			lo, hi := max(v0, base), min(v1, base+dc.nvals)
			if lo < hi {
				vals, err := dec.MiniBlock(enc, dc.bufs, dc.nvals)
				if err != nil {
					return pc.wrap(fmt.Errorf("chunk %d values: %w", c0+i, err))
				}
				if vals.Num != dc.nvals {
					return pc.errf(ErrMalformed, "chunk %d: decoded %d values, the chunk holds %d", c0+i, vals.Num, dc.nvals)
				}
				if vals.Kind != codec.Fixed || vals.Bits != sink.bits || uint64(len(vals.Data)) < (hi-base)*w {
					return pc.errf(ErrMalformed, "chunk %d: decoded %s values of %d bits for a %d-bit column", c0+i, vals.Kind, vals.Bits, sink.bits)
				}
				copy(region[(lo-v0)*w:(hi-v0)*w], vals.Data[(lo-base)*w:(hi-base)*w])
			}
			base += dc.nvals
		}
		return nil
	}
	lim := pc.r.limits()
	var wg sync.WaitGroup
	for g := 1; g < len(groups); g++ {
		gr := &groups[g]
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := codec.NewDecoder(lim)
			dec.Reuse()
			defer dec.Close()
			gr.err = run(dec, gr)
		}()
	}
	groups[0].err = run(pc.r.codec(), &groups[0])
	wg.Wait()
	for g := range groups {
		if groups[g].err != nil {
			sink.data = sink.data[:at]
			return groups[g].err
		}
	}
	sink.n += v1 - v0
	return nil
}

func countRowsBetween(rep []uint16, maxRep int, e0, e1 int) uint64 {
	if rep == nil || maxRep == 0 {
		return uint64(e1 - e0)
	}
	var c uint64
	for _, r := range rep[e0:e1] {
		if int(r) == maxRep {
			c++
		}
	}
	return c
}

func pad8(x uint64) uint64 { return (x + 7) &^ 7 }

// decodeChunk parses one chunk (§4.3) and decodes its levels and values.
func (pc *pageCtx) decodeChunk(mb *pb21.MiniBlockLayout, ls *leafStream, ch []byte, nvals, nbufs uint64, large bool, ci int) (decodedChunk, error) {
	li := ls.li
	var dc decodedChunk
	bad := func(format string, args ...any) (decodedChunk, error) {
		return dc, pc.errf(ErrMalformed, "chunk %d: "+format, append([]any{ci}, args...)...)
	}
	p := uint64(0)
	u16 := func() (uint64, bool) {
		if p+2 > uint64(len(ch)) {
			return 0, false
		}
		v := uint64(binary.LittleEndian.Uint16(ch[p:]))
		p += 2
		return v, true
	}
	nl, ok := u16()
	if !ok {
		return bad("header past the chunk")
	}
	hasRep, hasDef := mb.GetRepCompression() != nil, mb.GetDefCompression() != nil
	var repSize, defSize uint64
	if hasRep {
		if repSize, ok = u16(); !ok {
			return bad("header past the chunk")
		}
	}
	if hasDef {
		if defSize, ok = u16(); !ok {
			return bad("header past the chunk")
		}
	}
	sizes := make([]uint64, nbufs)
	for i := range sizes {
		if large {
			if p+4 > uint64(len(ch)) {
				return bad("header past the chunk")
			}
			sizes[i] = uint64(binary.LittleEndian.Uint32(ch[p:]))
			p += 4
		} else if sizes[i], ok = u16(); !ok {
			return bad("header past the chunk")
		}
	}
	p = pad8(p)
	cut := func(n uint64) ([]byte, bool) {
		if p > uint64(len(ch)) || n > uint64(len(ch))-p {
			return nil, false
		}
		b := ch[p : p+n]
		p = pad8(p + n)
		return b, true
	}
	repB, ok1 := cut(repSize)
	defB, ok2 := cut(defSize)
	if !ok1 || !ok2 {
		return bad("levels past the chunk")
	}
	bufs := make([][]byte, nbufs)
	for i := range bufs {
		if bufs[i], ok = cut(sizes[i]); !ok {
			return bad("value buffer %d (%d bytes) past the chunk", i, sizes[i])
		}
	}
	if !hasRep && !hasDef {
		nl = nvals
	}
	if !hasRep && nl != nvals {
		return bad("%d levels for %d values without repetition", nl, nvals)
	}
	// Levels are appended to the column's streams (the caller trims them
	// back on error): rep (a column with lists) and def (once any page has
	// def levels; zeros stand for a page without them).
	if err := pc.r.budget.take(4*nl, pc.sec); err != nil {
		return dc, err
	}
	var err error
	if li.maxRep > 0 {
		if hasRep {
			if ls.rep, err = pc.r.codec().LevelsInto(ls.rep, mb.GetRepCompression(), repB, nl); err != nil {
				return dc, pc.wrap(fmt.Errorf("chunk %d rep levels: %w", ci, err))
			}
		} else {
			for range nl {
				ls.rep = append(ls.rep, uint16(li.maxRep))
			}
		}
	}
	if hasDef {
		d0 := len(ls.def)
		if ls.def, err = pc.r.codec().LevelsInto(ls.def, mb.GetDefCompression(), defB, nl); err != nil {
			return dc, pc.wrap(fmt.Errorf("chunk %d def levels: %w", ci, err))
		}
		if vis := li.countVisible(ls.def[d0:], 0, int(nl)); vis != nvals {
			return bad("%d levels with %d visible entries for %d values", nl, vis, nvals)
		}
	} else if ls.def != nil {
		ls.def = append(ls.def, make([]uint16, nl)...)
	}
	ls.n += int(nl)
	dc.nlevels = int(nl)
	dc.nvals = nvals
	dc.bufs = bufs
	return dc, nil
}

// truncateLevels cuts the level streams back to n entries.
func (ls *leafStream) truncateLevels(n int) {
	if ls.rep != nil {
		ls.rep = ls.rep[:n]
	}
	if ls.def != nil {
		ls.def = ls.def[:n]
	}
	ls.n = n
}

// --- full-zip (§5) -----------------------------------------------------------

func bitsFor(v uint64) uint32 { return uint32(bits.Len64(v)) }

func (pc *pageCtx) fullZip(fz *pb21.FullZipLayout, a, b uint64, ls *leafStream) error {
	li := ls.li
	br, bd := fz.GetBitsRep(), fz.GetBitsDef()
	if br > 16 || bd > 16 || (br > 0 && li.maxRep == 0) {
		return pc.errf(ErrMalformed, "full-zip control word of %d rep and %d def bits", br, bd)
	}
	cw := uint64(0)
	switch t := br + bd; {
	case t == 0:
	case t <= 8:
		cw = 1
	case t <= 16:
		cw = 2
	default:
		cw = 4
	}
	vd, err := codec.NewValueDecoder(fz.GetValueCompression(), pc.r.limits())
	if err != nil {
		return pc.wrap(err)
	}
	var fixed, lenBytes uint64
	switch d := fz.Details.(type) {
	case *pb21.FullZipLayout_BitsPerValue:
		if d.BitsPerValue == 0 || d.BitsPerValue%8 != 0 {
			return pc.errf(ErrUnsupported, "full-zip items of %d bits (not whole bytes)", d.BitsPerValue)
		}
		fixed = uint64(d.BitsPerValue / 8)
	case *pb21.FullZipLayout_BitsPerOffset:
		if d.BitsPerOffset != 32 && d.BitsPerOffset != 64 {
			return pc.errf(ErrMalformed, "full-zip lengths of %d bits", d.BitsPerOffset)
		}
		lenBytes = uint64(d.BitsPerOffset / 8)
	default:
		return pc.errf(ErrMalformed, "full-zip layout without bits_per_value or bits_per_offset")
	}
	// The byte span of rows [a, b).
	var start, end uint64
	if len(pc.page.Buffers) >= 2 {
		n := pc.page.Length + 1
		il := pc.page.Buffers[1].Len
		if n == 0 || il%n != 0 {
			return pc.errf(ErrMalformed, "full-zip repetition index of %d bytes for %d rows", il, pc.page.Length)
		}
		w := il / n
		if w != 1 && w != 2 && w != 4 && w != 8 {
			return pc.errf(ErrMalformed, "full-zip repetition index entries of %d bytes", w)
		}
		ib, err := pc.bufferPart(1, a*w, w)
		if err != nil {
			return err
		}
		ie, err := pc.bufferPart(1, b*w, w)
		if err != nil {
			return err
		}
		start, end = leUint(ib), leUint(ie)
	} else {
		if br != 0 || fixed == 0 {
			return pc.errf(ErrMalformed, "full-zip page without a repetition index needs fixed-width items and no repetition")
		}
		item := cw + fixed
		start, end = mulSat(a, item), mulSat(b, item)
	}
	if start > end {
		return pc.errf(ErrMalformed, "full-zip rows [%d, %d) span [%d, %d)", a, b, start, end)
	}
	data, err := pc.bufferPart(0, start, end-start)
	if err != nil {
		return err
	}
	maxRep := uint16(li.maxRep)
	var rep, def []uint16
	p := uint64(0)
	n := 0
	for p < uint64(len(data)) {
		var r, d uint16
		if cw > 0 {
			if p+cw > uint64(len(data)) {
				return pc.errf(ErrMalformed, "full-zip control word past the data")
			}
			w := leUint(data[p : p+cw])
			p += cw
			d = uint16(w & (1<<bd - 1))
			r = uint16((w >> bd) & (1<<br - 1))
		}
		if br == 0 {
			r = maxRep
		}
		if bd > 0 && def == nil {
			def = make([]uint16, n, n+64)
		}
		if def != nil {
			def = append(def, d)
		}
		if li.maxRep > 0 {
			rep = append(rep, r)
		}
		n++
		if int(d) > li.maxVisDef {
			continue
		}
		switch {
		case fixed > 0:
			if p+fixed > uint64(len(data)) {
				return pc.errf(ErrMalformed, "full-zip item past the data")
			}
			if err := vd.Append(data[p : p+fixed]); err != nil {
				return pc.wrap(err)
			}
			p += fixed
		case d != 0:
			if err := vd.AppendNull(); err != nil {
				return pc.wrap(err)
			}
		default:
			if p+lenBytes > uint64(len(data)) {
				return pc.errf(ErrMalformed, "full-zip item length past the data")
			}
			l := leUint(data[p : p+lenBytes])
			p += lenBytes
			if l > uint64(len(data))-p {
				return pc.errf(ErrMalformed, "full-zip item of %d bytes past the data", l)
			}
			if err := vd.Append(data[p : p+l]); err != nil {
				return pc.wrap(err)
			}
			p += l
		}
	}
	if rows := countRowsBetween(rep, li.maxRep, 0, n); rows != b-a {
		return pc.errf(ErrMalformed, "full-zip span of rows [%d, %d) holds %d rows", a, b, rows)
	}
	blk := vd.Finish()
	ls.appendLevels(rep, def, n)
	ls.rows += b - a
	return pc.wrap(ls.vals.appendBlock(&blk, 0, blk.Num))
}

func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// --- constant and all-null (§6) ---------------------------------------------

func (pc *pageCtx) constant(cl *pb21.ConstantLayout, a, b uint64, ls *leafStream) error {
	li := ls.li
	nb := len(pc.page.Buffers)
	inline := cl.InlineValue != nil
	if pc.r.f.version == V2_1 && (inline || cl.GetRepCompression() != nil || cl.GetDefCompression() != nil || (nb != 0 && nb != 2)) {
		return pc.errf(ErrMalformed, "2.1 accepts only the all-null form of the constant page layout")
	}
	var scalar []byte
	hasScalar := inline
	levelBuf := -1
	switch {
	case inline && nb == 0:
	case inline && nb == 2:
		levelBuf = 0
	case !inline && nb == 1:
		hasScalar = true
	case !inline && nb == 3:
		hasScalar = true
		levelBuf = 1
	case !inline && nb == 0:
	case !inline && nb == 2:
		levelBuf = 0
	default:
		return pc.errf(ErrMalformed, "invalid constant layout: inline value %v with %d buffers", inline, nb)
	}
	if inline {
		scalar = cl.InlineValue
	} else if hasScalar {
		sb, err := pc.buffer(0)
		if err != nil {
			return err
		}
		if scalar, err = pc.scalarBuffer(sb, ls.vals); err != nil {
			return err
		}
	}
	// Levels.
	var rep, def []uint16
	var e0, e1 int
	if levelBuf >= 0 {
		var err error
		if rep, err = pc.constLevels(levelBuf, cl.GetRepCompression(), cl.GetNumRepValues()); err != nil {
			return err
		}
		if def, err = pc.constLevels(levelBuf+1, cl.GetDefCompression(), cl.GetNumDefValues()); err != nil {
			return err
		}
		n := int(pc.page.Length)
		switch {
		case rep != nil && def != nil && len(rep) != len(def):
			return pc.errf(ErrMalformed, "constant page: %d rep levels but %d def levels", len(rep), len(def))
		case rep != nil:
			n = len(rep)
		case def != nil:
			n = len(def)
		}
		if def != nil {
			for _, d := range def {
				if int(d) >= len(li.owner) {
					return pc.errf(ErrMalformed, "constant page: def level %d, the layers allow %d", d, len(li.owner)-1)
				}
			}
		}
		if li.maxRep == 0 {
			rep = nil
		} else if rep == nil {
			return pc.errf(ErrMalformed, "constant page of a list column without repetition levels")
		}
		if rows := li.countRows(rep, n); rows != pc.page.Length {
			return pc.errf(ErrMalformed, "constant page levels hold %d rows, the page %d", rows, pc.page.Length)
		}
		e0, e1 = rowCuts(rep, li.maxRep, n, a, b)
	} else {
		// No level buffers: one entry per row, every row the scalar, or
		// (all-null) every row null at the innermost nullable layer (lists:
		// the outermost null list).
		if err := pc.r.budget.take(mulSat(b-a, 8), pc.sec); err != nil {
			return err
		}
		n := int(b - a)
		e0, e1 = 0, n
		if li.maxRep > 0 {
			rep = make([]uint16, n)
			for i := range rep {
				rep[i] = uint16(li.maxRep)
			}
		}
		if !hasScalar {
			dv := -1
			for d := 1; d < len(li.owner); d++ {
				if !li.ownerEmpty[d] && (dv < 0 || li.maxRep > 0) {
					dv = d
				}
			}
			if dv < 0 {
				return pc.errf(ErrMalformed, "all-null page whose layers %v allow no null", li.layers)
			}
			def = make([]uint16, n)
			for i := range def {
				def[i] = uint16(dv)
			}
		}
	}
	var repPart, defPart []uint16
	if rep != nil {
		repPart = rep[e0:e1]
	}
	if def != nil {
		defPart = def[e0:e1]
	}
	if err := pc.r.budget.take(uint64(e1-e0)*4, pc.sec); err != nil {
		return err
	}
	if hasScalar && levelBuf < 0 {
		if err := pc.r.budget.take(mulSat(uint64(e1-e0), max(ls.vals.bits/8, 8)), pc.sec); err != nil {
			return err
		}
	}
	ls.appendLevels(repPart, defPart, e1-e0)
	ls.rows += b - a
	// Values: every visible entry; def 0 holds the scalar, others filler.
	var one *codec.Block
	if hasScalar {
		var err error
		if one, err = scalarBlock(ls.vals, scalar); err != nil {
			return pc.wrap(err)
		}
	}
	run := uint64(0) // pending scalar copies
	flush := func() error {
		if run == 0 {
			return nil
		}
		err := appendRepeated(ls.vals, one, run)
		run = 0
		return err
	}
	for i := e0; i < e1; i++ {
		if !li.visible(def, i) {
			continue
		}
		if one != nil && (def == nil || def[i] == 0) {
			run++
			continue
		}
		if err := flush(); err != nil {
			return pc.wrap(err)
		}
		if err := ls.vals.appendZeros(1); err != nil {
			return pc.wrap(err)
		}
	}
	return pc.wrap(flush())
}

// constLevels decodes constant-page level buffer i (size 0 = absent).
func (pc *pageCtx) constLevels(i int, comp *pb21.CompressiveEncoding, n uint64) ([]uint16, error) {
	b, err := pc.buffer(i)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	if comp == nil {
		if len(b)%2 != 0 {
			return nil, pc.errf(ErrMalformed, "constant page level buffer of %d bytes", len(b))
		}
		out := make([]uint16, len(b)/2)
		for j := range out {
			out[j] = binary.LittleEndian.Uint16(b[2*j:])
		}
		return out, nil
	}
	lv, err := codec.DecodeLevels(comp, b, n, pc.r.limits())
	if err != nil {
		return nil, pc.wrap(err)
	}
	return lv, nil
}

// scalarBuffer parses a constant page's scalar value buffer (§6.2, T18):
// u32 count, count×u32 lengths, the buffers. It returns the value's bytes.
func (pc *pageCtx) scalarBuffer(sb []byte, s *valueSink) ([]byte, error) {
	if len(sb) < 4 {
		return nil, pc.errf(ErrMalformed, "constant scalar buffer of %d bytes", len(sb))
	}
	k := uint64(binary.LittleEndian.Uint32(sb))
	if k == 0 || k > 8 || uint64(len(sb)) < 4+4*k {
		return nil, pc.errf(ErrMalformed, "constant scalar buffer with %d parts", k)
	}
	parts := make([][]byte, k)
	p := 4 + 4*k
	for i := range parts {
		l := uint64(binary.LittleEndian.Uint32(sb[4+4*i:]))
		if l > uint64(len(sb))-p {
			return nil, pc.errf(ErrMalformed, "constant scalar part %d of %d bytes past the buffer", i, l)
		}
		parts[i] = sb[p : p+l]
		p += l
	}
	switch s.kind {
	case codec.Variable:
		if k != 2 {
			return nil, pc.errf(ErrUnsupported, "constant variable-width scalar with %d parts", k)
		}
		offs, data := parts[0], parts[1]
		var o0, o1 uint64
		switch len(offs) {
		case 8:
			o0, o1 = uint64(binary.LittleEndian.Uint32(offs)), uint64(binary.LittleEndian.Uint32(offs[4:]))
		case 16:
			o0, o1 = binary.LittleEndian.Uint64(offs), binary.LittleEndian.Uint64(offs[8:])
		default:
			return nil, pc.errf(ErrMalformed, "constant scalar offsets of %d bytes", len(offs))
		}
		if o0 > o1 || o1 > uint64(len(data)) {
			return nil, pc.errf(ErrMalformed, "constant scalar offsets [%d, %d) outside %d bytes", o0, o1, len(data))
		}
		return data[o0:o1], nil
	case codec.Fixed:
		return parts[len(parts)-1], nil
	}
	return nil, pc.errf(ErrUnsupported, "constant page for a %s column", s.kind)
}

// scalarBlock makes a one-value block of the sink's shape from raw bytes.
func scalarBlock(s *valueSink, v []byte) (*codec.Block, error) {
	switch s.kind {
	case codec.Fixed:
		if s.bits == 0 {
			return &codec.Block{Kind: codec.Fixed, Num: 1}, nil
		}
		if s.bits == 1 {
			if len(v) < 1 {
				return nil, fmt.Errorf("constant bool value of %d bytes: %w", len(v), ErrMalformed)
			}
			return &codec.Block{Kind: codec.Fixed, Num: 1, Bits: 1, Data: []byte{v[0] & 1}}, nil
		}
		if uint64(len(v)) != s.bits/8 {
			return nil, fmt.Errorf("constant value of %d bytes for a %d-bit column: %w", len(v), s.bits, ErrMalformed)
		}
		return &codec.Block{Kind: codec.Fixed, Num: 1, Bits: s.bits, Data: v}, nil
	case codec.Variable:
		offs := make([]byte, 8)
		binary.LittleEndian.PutUint32(offs[4:], uint32(len(v)))
		return &codec.Block{Kind: codec.Variable, Num: 1, Data: v, Offsets: offs, OffsetBits: 32}, nil
	case codec.List:
		c := s.children[0]
		if c.kind != codec.Fixed || c.bits < 8 || uint64(len(v)) != s.dim*c.bits/8 {
			return nil, fmt.Errorf("constant fixed-size list value of %d bytes: %w", len(v), ErrUnsupported)
		}
		return &codec.Block{Kind: codec.List, Num: 1, Dim: s.dim, Children: []codec.Block{{Kind: codec.Fixed, Num: s.dim, Bits: c.bits, Data: v}}}, nil
	}
	return nil, fmt.Errorf("constant value for a %s column: %w", s.kind, ErrUnsupported)
}

// appendRepeated appends n copies of a one-value block.
func appendRepeated(s *valueSink, one *codec.Block, n uint64) error {
	if s.kind == codec.Fixed && s.bits >= 8 {
		w := s.bits / 8
		if err := s.take(mulSat(n, w)); err != nil {
			return err
		}
		for range n {
			s.data = append(s.data, one.Data[:w]...)
		}
		s.n += n
		return nil
	}
	for range n {
		if err := s.appendBlock(one, 0, 1); err != nil {
			return err
		}
	}
	return nil
}
