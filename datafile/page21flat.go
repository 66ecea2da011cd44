package datafile

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// The flat mini-block path (lance-file-format-2.1.md §4.3): a large
// mini-block page of a flat fixed-width column (one item layer, no lists,
// no dictionary) read whole. Its chunk bytes are read in windows of about
// flatWindow bytes, each goroutine of a group of chunks reusing one window
// buffer, and each chunk is decoded straight into the output: the values
// copied into their place in the column's value buffer, the def levels
// turned into validity bits of the column's bitmap (def 0 = valid, 1 =
// null; nothing else is allowed for one item layer). No page-sized buffer,
// no level stream and no second pass over the levels.

const (
	// flatMinBytes is the chunk-buffer size from which a page takes the
	// flat path (below it the page is read whole in one request).
	flatMinBytes = 1 << 19
	// flatWindow is the bytes of chunks read per request on the flat path.
	flatWindow = 1 << 20
)

// flatEligible reports whether rows [a, b) of the mini-block page take the
// flat path.
func (pc *pageCtx) flatEligible(mb *pb21.MiniBlockLayout, a, b uint64, ls *leafStream) bool {
	least := uint64(flatMinBytes)
	if pc.r.flatMin > 0 {
		least = pc.r.flatMin
	}
	return a == 0 && b == pc.page.Length &&
		mb.GetDictionary() == nil && mb.GetRepCompression() == nil && mb.GetRepetitionIndexDepth() == 0 &&
		mb.GetValueCompression() != nil &&
		ls.li != nil && ls.li.maxRep == 0 && len(ls.li.layers) == 1 &&
		ls.vals.kind == codec.Fixed && ls.vals.bits >= 8 && ls.vals.bits%8 == 0 &&
		len(pc.page.Buffers) >= 2 && pc.page.Buffers[1].Len >= least
}

// toLevels turns the column's validity bitmap (flat path) back into def
// levels, for a page read by the level-stream paths.
func (ls *leafStream) toLevels() {
	if ls.vbits == nil {
		return
	}
	if ls.vnulls > 0 {
		ls.def = make([]uint16, ls.n, ls.n+int(min(ls.wantRows, 1<<24)))
		for e := range ls.n {
			if !bitutil.BitIsSet(ls.vbits, e) {
				ls.def[e] = 1
			}
		}
	}
	ls.vbits, ls.vnulls = nil, 0
}

// growBits extends the validity bitmap (made from the def levels so far
// when absent) by add entries, all unset. capBits bounds the capacity
// reserved for the rest of the read.
func (ls *leafStream) growBits(add, capBits uint64) {
	if ls.vbits == nil {
		c := max(uint64(ls.n)+add, min(ls.wantRows, capBits))
		ls.vbits = make([]byte, (ls.n+7)/8, (c+7)/8+1)
		ls.vnulls = 0
		for e := range ls.n {
			if ls.def == nil || ls.def[e] == 0 {
				bitutil.SetBit(ls.vbits, e)
			} else {
				ls.vnulls++
			}
		}
		ls.def = nil
	}
	need := (uint64(ls.n) + add + 7) / 8
	if k := need - uint64(len(ls.vbits)); need > uint64(len(ls.vbits)) {
		ls.vbits = append(ls.vbits, make([]byte, k)...)
	}
}

// chunkParts is one parsed mini-block chunk (§4.3).
type chunkParts struct {
	nl         uint64
	repB, defB []byte
	bufs       [][]byte
}

// parseChunk cuts a chunk into its levels and value buffers. bufs is reused
// when it has room.
func parseChunk(ch []byte, hasRep, hasDef bool, nbufs uint64, large bool, bufs [][]byte) (chunkParts, string) {
	var cp chunkParts
	p := uint64(0)
	u16 := func() (uint64, bool) {
		if p+2 > uint64(len(ch)) {
			return 0, false
		}
		v := uint64(binary.LittleEndian.Uint16(ch[p:]))
		p += 2
		return v, true
	}
	var ok bool
	if cp.nl, ok = u16(); !ok {
		return cp, "header past the chunk"
	}
	var repSize, defSize uint64
	if hasRep {
		if repSize, ok = u16(); !ok {
			return cp, "header past the chunk"
		}
	}
	if hasDef {
		if defSize, ok = u16(); !ok {
			return cp, "header past the chunk"
		}
	}
	var sizes [8]uint64
	sz := sizes[:0]
	if nbufs > uint64(len(sizes)) {
		sz = make([]uint64, 0, nbufs)
	}
	for range nbufs {
		var s uint64
		if large {
			if p+4 > uint64(len(ch)) {
				return cp, "header past the chunk"
			}
			s = uint64(binary.LittleEndian.Uint32(ch[p:]))
			p += 4
		} else if s, ok = u16(); !ok {
			return cp, "header past the chunk"
		}
		sz = append(sz, s)
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
	var ok1, ok2 bool
	cp.repB, ok1 = cut(repSize)
	cp.defB, ok2 = cut(defSize)
	if !ok1 || !ok2 {
		return cp, "levels past the chunk"
	}
	cp.bufs = bufs[:0]
	for i, s := range sz {
		b, ok := cut(s)
		if !ok {
			return cp, fmt.Sprintf("value buffer %d (%d bytes) past the chunk", i, s)
		}
		cp.bufs = append(cp.bufs, b)
	}
	return cp, ""
}

// defBits sets the validity bits [pos, pos+n) of dst (zero on entry) from n
// little-endian u16 def levels: def 0 is valid, 1 null. It returns the null
// count, or ok false when a level is above maxDef.
func defBits(dst []byte, pos uint64, src []byte, n uint64, maxDef uint16) (nulls uint64, ok bool) {
	var acc uint16
	k := uint64(0)
	for ; k < n && (pos+k)%8 != 0; k++ {
		d := binary.LittleEndian.Uint16(src[2*k:])
		acc |= d
		if d == 0 {
			dst[(pos+k)/8] |= 1 << ((pos + k) % 8)
		}
		nulls += uint64(d)
	}
	for ; k+8 <= n; k += 8 {
		s := src[2*k : 2*k+16]
		var b byte
		for t := range 8 {
			d := uint16(s[2*t]) | uint16(s[2*t+1])<<8
			acc |= d
			b |= byte(d^1) & 1 << t
			nulls += uint64(d)
		}
		dst[(pos+k)/8] = b
	}
	for ; k < n; k++ {
		d := binary.LittleEndian.Uint16(src[2*k:])
		acc |= d
		if d == 0 {
			dst[(pos+k)/8] |= 1 << ((pos + k) % 8)
		}
		nulls += uint64(d)
	}
	return nulls, acc <= maxDef
}

// window returns the page buffer i bytes [off, off+len(buf)): from the
// file's cached tail when there, else read into buf.
func (pc *pageCtx) window(i int, off uint64, buf []byte) ([]byte, error) {
	f := pc.r.f
	pos, n := int64(pc.page.Buffers[i].Pos+off), int64(len(buf))
	if pos >= f.tailStart && pos+n <= f.size {
		return f.cached(pos, n), nil
	}
	if into, ok := f.src.(intoSource); ok {
		if err := into.readRangeInto(pc.r.ctx, pos, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	b, err := f.src.readRange(pc.r.ctx, pos, n)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != n {
		return nil, pc.errf(ErrTruncated, "read %d of %d bytes at %d", len(b), n, pos)
	}
	return b, nil
}

// miniBlockFlat decodes a whole mini-block page on the flat path (the
// chunks are parsed and bounds-checked by the caller).
func (pc *pageCtx) miniBlockFlat(mb *pb21.MiniBlockLayout, chunks []mbChunk, nbufs uint64, large bool, ls *leafStream) error {
	sink := ls.vals
	w := sink.bits / 8
	var nv uint64
	for _, c := range chunks {
		nv += c.nvals
	}
	hasDef := mb.GetDefCompression() != nil
	maxDef := uint16(0)
	if ls.li.layers[0] == pb21.RepDefLayer_REPDEF_NULLABLE_ITEM {
		maxDef = 1
	}
	if err := sink.take(mulSat(nv, w)); err != nil {
		return err
	}
	bitBase := uint64(ls.n)
	if hasDef || ls.vbits != nil || ls.def != nil {
		if err := pc.r.budget.take(nv/8+2, pc.sec); err != nil {
			return err
		}
		ls.growBits(nv, uint64(ls.n)+nv+uint64(max(pc.r.budget.left, 0))*8)
		if !hasDef {
			bitutil.SetBitsTo(ls.vbits, int64(bitBase), int64(nv), true)
		}
	}
	at := uint64(len(sink.data))
	sink.data = slices.Grow(sink.data, int(nv*w))[:at+nv*w]
	region := sink.data[at:]

	// Groups of chunks of about equal value counts, one per goroutine; a
	// group starts at a byte boundary of the bitmap, so that no two
	// goroutines write the same bitmap byte.
	p := 1
	if nv >= parallelMinValues && len(chunks) >= 2 {
		p = min(runtime.GOMAXPROCS(0), 4)
	}
	type group struct {
		from, to int    // chunks
		v        uint64 // first value
		win      uint64 // largest window
		nulls    uint64
		err      error
	}
	groups := make([]group, 0, p)
	per := (nv + uint64(p) - 1) / uint64(p)
	var v, gv uint64
	from := 0
	for i, c := range chunks {
		v += c.nvals
		if i == len(chunks)-1 || (len(groups) < p-1 && v-gv >= per && (bitBase+v)%8 == 0) {
			groups = append(groups, group{from: from, to: i + 1, v: gv})
			from, gv = i+1, v
		}
	}
	// Windows: runs of chunks of at most flatWindow bytes (one chunk may
	// be larger); the buffers are taken from the budget up front.
	var winBytes uint64
	for g := range groups {
		gr := &groups[g]
		for i := gr.from; i < gr.to; {
			size := chunks[i].size
			j := i + 1
			for j < gr.to && size+chunks[j].size <= flatWindow {
				size += chunks[j].size
				j++
			}
			gr.win = max(gr.win, size)
			i = j
		}
		winBytes += gr.win
	}
	if err := pc.r.budget.take(winBytes, pc.sec); err != nil {
		return err
	}
	enc, defEnc := mb.GetValueCompression(), mb.GetDefCompression()
	run := func(dec *codec.Decoder, gr *group, buf []byte) []byte {
		if uint64(cap(buf)) < gr.win {
			buf = make([]byte, gr.win)
		}
		bufs := make([][]byte, 0, nbufs)
		v := gr.v
		for i := gr.from; i < gr.to; {
			size := chunks[i].size
			j := i + 1
			for j < gr.to && size+chunks[j].size <= flatWindow {
				size += chunks[j].size
				j++
			}
			win, err := pc.window(1, chunks[i].off, buf[:size])
			if err != nil {
				gr.err = err
				return buf
			}
			for k := i; k < j; k++ {
				c := chunks[k]
				cp, bad := parseChunk(win[c.off-chunks[i].off:][:c.size], false, hasDef, nbufs, large, bufs)
				if !hasDef {
					cp.nl = c.nvals // a chunk without levels holds a level count the reader ignores
				}
				if bad == "" && cp.nl != c.nvals {
					bad = fmt.Sprintf("%d levels for %d values without repetition", cp.nl, c.nvals)
				}
				if bad != "" {
					gr.err = pc.errf(ErrMalformed, "chunk %d: %s", k, bad)
					return buf
				}
				bufs = cp.bufs
				if hasDef {
					lv, err := dec.Block(defEnc, cp.defB, c.nvals)
					if err == nil && (lv.Kind != codec.Fixed || lv.Bits != 16 || uint64(len(lv.Data)) < 2*c.nvals) {
						err = fmt.Errorf("def levels must decode to %d 16-bit values, got %d %s values of %d bits: %w", c.nvals, lv.Num, lv.Kind, lv.Bits, ErrMalformed)
					}
					if err != nil {
						gr.err = pc.wrap(fmt.Errorf("chunk %d def levels: %w", k, err))
						return buf
					}
					nulls, ok := defBits(ls.vbits, bitBase+v, lv.Data, c.nvals, maxDef)
					if !ok {
						gr.err = pc.errf(ErrMalformed, "chunk %d: def level above %d in a column of one %s layer", k, maxDef, ls.li.layers[0])
						return buf
					}
					gr.nulls += nulls
				}
				vals, err := dec.MiniBlock(enc, cp.bufs, c.nvals)
				if err != nil {
					gr.err = pc.wrap(fmt.Errorf("chunk %d values: %w", k, err))
					return buf
				}
				if vals.Num != c.nvals || vals.Kind != codec.Fixed || vals.Bits != sink.bits || uint64(len(vals.Data)) < c.nvals*w {
					gr.err = pc.errf(ErrMalformed, "chunk %d: decoded %d %s values of %d bits for %d %d-bit values", k, vals.Num, vals.Kind, vals.Bits, c.nvals, sink.bits)
					return buf
				}
				copy(region[v*w:(v+c.nvals)*w], vals.Data[:c.nvals*w])
				v += c.nvals
			}
			i = j
		}
		return buf
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
			run(dec, gr, nil)
		}()
	}
	pc.r.scratch = run(pc.r.codec(), &groups[0], pc.r.scratch)
	wg.Wait()
	var nulls uint64
	for g := range groups {
		if err := groups[g].err; err != nil {
			sink.data = sink.data[:at]
			if ls.vbits != nil {
				ls.vbits = ls.vbits[:(ls.n+7)/8]
				if r := ls.n % 8; r != 0 {
					ls.vbits[len(ls.vbits)-1] &= byte(1)<<r - 1
				}
			}
			return err
		}
		nulls += groups[g].nulls
	}
	if hasDef && ls.vbits != nil {
		ls.vnulls += int(nulls)
	}
	sink.n += nv
	ls.n += int(nv)
	ls.rows += nv
	return nil
}
