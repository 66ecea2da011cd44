package seedio

// Validity-bitmap scanning and null-offset recording shared by the
// per-type accumulators.

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// nullRecorder collects the local row offsets of null rows (R41, R45) and
// builds the 32-bit Roaring bitmap of them. Offsets arrive in ascending
// order. The nulls of the current 2^16-row chunk are kept as a sorted array
// of their 16-bit offsets while there are at most 4096 of them (the array
// container the chunk will become; 8 KiB, constant memory), and as dense
// bits (8 KiB) from the 4097th on, so that a validity word costs two ORs
// however many nulls it holds. A finished chunk becomes one container of the
// portable Roaring layout (array, bitmap, or a single run for a chunk that
// is null throughout); serialize() assembles the containers, run-optimised,
// into one serialized bitmap. Memory is proportional to the size of the
// bitmap, which is what the seed stores anyway.
type nullRecorder struct {
	vals  [roaringArrayMax]uint16 // null offsets of chunk key (array mode)
	words [chunkWords]uint64      // null bits of chunk key (dense mode)
	dense bool
	key   uint64
	dirty bool
	card  int // nulls in chunk key

	keys  []uint16 // finished containers, ascending keys
	cards []uint32 // their cardinalities, 1…65536
	runs  []bool   // run container (else array or bitmap by cardinality)
	body  []byte   // container payloads, concatenated
}

const (
	chunkBits  = 16
	chunkRows  = 1 << chunkBits
	chunkWords = chunkRows / 64
)

func newNullRecorder() *nullRecorder { return &nullRecorder{} }

// switchChunk makes key the current chunk, flushing the previous one.
func (n *nullRecorder) switchChunk(key uint64) {
	if key != n.key {
		n.flush()
		n.key = key
	}
}

// orBits marks row pos+i null for every set bit i of w.
func (n *nullRecorder) orBits(pos, w uint64) {
	if w == 0 {
		return
	}
	n.switchChunk(pos >> chunkBits)
	bit := pos & (chunkRows - 1)
	if room := chunkRows - bit; room < 64 {
		// w crosses into the next chunk
		if lo := w & lowMask(int(room)); lo != 0 {
			n.setLocal(bit, lo, bits.OnesCount64(lo))
		}
		if hi := w >> room; hi != 0 {
			n.switchChunk(n.key + 1)
			n.setLocal(0, hi, bits.OnesCount64(hi))
		}
		return
	}
	n.setLocal(bit, w, bits.OnesCount64(w))
}

// setLocal marks offsets bit+i of the current chunk null for every set bit
// i of w (w != 0, c = its popcount, bit+63 inside the chunk unless w's high
// bits are zero). Rows are visited once, so the bits are not set yet.
func (n *nullRecorder) setLocal(bit, w uint64, c int) {
	n.dirty = true
	if !n.dense {
		if n.card+c <= roaringArrayMax {
			vals := n.vals[n.card : n.card+c : n.card+c]
			for k := range vals {
				vals[k] = uint16(bit + uint64(bits.TrailingZeros64(w)))
				w &= w - 1
			}
			n.card += c
			return
		}
		n.toDense()
	}
	wi, sh := bit>>6, bit&63
	n.words[wi] |= w << sh
	if sh != 0 {
		if hi := w >> (64 - sh); hi != 0 {
			n.words[wi+1] |= hi
		}
	}
	n.card += c
}

// toDense moves the chunk's offsets from the array to the dense bits.
func (n *nullRecorder) toDense() {
	for _, v := range n.vals[:n.card] {
		n.words[v>>6] |= 1 << (v & 63)
	}
	n.dense = true
}

// addRun records null rows [start, end) (global row offsets <= 2^32).
func (n *nullRecorder) addRun(start, end uint64) {
	for start < end {
		key := start >> chunkBits
		chunkEnd := (key + 1) << chunkBits
		e := min(end, chunkEnd)
		if start&(chunkRows-1) == 0 && e == chunkEnd && !(n.dirty && n.key == key) {
			// The whole chunk is null: one run container.
			n.flush()
			n.key = key
			n.appendContainer(uint16(key), chunkRows, true)
			n.body = binary.LittleEndian.AppendUint16(n.body, 1)      // one run
			n.body = binary.LittleEndian.AppendUint16(n.body, 0)      // from 0
			n.body = binary.LittleEndian.AppendUint16(n.body, 0xFFFF) // length-1
			start = e
			continue
		}
		for start < e {
			k := min(e-start, 64)
			n.orBits(start, lowMask(int(k)))
			start += k
		}
	}
}

func (n *nullRecorder) appendContainer(key uint16, card uint32, run bool) {
	n.keys = append(n.keys, key)
	n.cards = append(n.cards, card)
	n.runs = append(n.runs, run)
}

// flush turns the chunk into an array or bitmap container.
func (n *nullRecorder) flush() {
	if !n.dirty {
		return
	}
	card := n.card
	n.appendContainer(uint16(n.key), uint32(card), false)
	switch {
	case !n.dense:
		at := len(n.body)
		n.body = append(n.body, make([]byte, 2*card)...)
		out := n.body[at : at+2*card]
		for i, v := range n.vals[:card] {
			binary.LittleEndian.PutUint16(out[2*i:], v)
		}
	case card > roaringArrayMax:
		for _, w := range n.words {
			n.body = binary.LittleEndian.AppendUint64(n.body, w)
		}
	default:
		at := len(n.body)
		n.body = append(n.body, make([]byte, 2*card)...)
		out := n.body[at:]
		j := 0
		for i, w := range n.words {
			for w != 0 && j+2 <= len(out) {
				binary.LittleEndian.PutUint16(out[j:], uint16(i<<6|bits.TrailingZeros64(w)))
				j += 2
				w &= w - 1
			}
		}
	}
	if n.dense {
		clear(n.words[:])
	}
	n.dirty, n.dense, n.card = false, false, 0
}

// serialize flushes everything pending and returns the null bitmap in the
// portable Roaring layout, run-optimised like roaring's RunOptimize
// followed by ToBytes (R42, R48) — byte for byte, except where roaring/v2
// keeps a run container larger than the bitmap container of the same
// values (then every container of this form is the smallest for its values
// and both decode to the same set, FuzzNullRecorderMatchesRoaring; the
// whole can still be a few bytes longer than roaring's, at most 15, when
// roaring's extra run container earns the run cookie's shorter header):
// a container becomes a run container when
// 2 + 4·runs < min(8192, 2·cardinality), else an array container when its
// cardinality is at most 4096, else a bitmap container; the run cookie
// (12347, with an offset header from 4 containers on) is used when any
// container is a run container, the plain cookie (12346) otherwise.
func (n *nullRecorder) serialize() []byte { return n.appendSerialized(nil) }

// appendSerialized is serialize appending to dst (grown at most once).
func (n *nullRecorder) appendSerialized(dst []byte) []byte {
	n.flush()
	size := len(n.keys)
	if size == 0 {
		out, _ := hex.DecodeString(emptyNullBitmapHex)
		return append(dst, out...)
	}
	// Choose representations and build the container payloads.
	type rep struct {
		run     bool
		payload []byte
	}
	reps := make([]rep, size)
	anyRun := false
	at := 0
	for i, card := range n.cards {
		switch {
		case n.runs[i]: // a whole chunk: one run, always the smallest
			reps[i] = rep{true, n.body[at : at+6]}
			at += 6
		case card > roaringArrayMax:
			words := n.body[at : at+roaringBitmapBytes]
			at += roaringBitmapBytes
			if runs := bitmapRunCount(words); 2+4*runs < min(roaringBitmapBytes, 2*int(card)) {
				reps[i] = rep{true, bitmapToRuns(words, runs)}
			} else {
				reps[i] = rep{false, words}
			}
		default:
			vals := n.body[at : at+2*int(card)]
			at += 2 * int(card)
			if runs := arrayRunCount(vals); 2+4*runs < min(roaringBitmapBytes, 2*int(card)) {
				reps[i] = rep{true, arrayToRuns(vals, runs)}
			} else {
				reps[i] = rep{false, vals}
			}
		}
		anyRun = anyRun || reps[i].run
	}
	header := 8 + 4*size + 4*size // plain cookie: count, descriptive, offsets
	if anyRun {
		header = 4 + (size+7)/8 + 4*size
		if size >= roaringNoOffsetMax {
			header += 4 * size
		}
	}
	total := header
	for _, r := range reps {
		total += len(r.payload)
	}
	raw := slices.Grow(dst, total)
	if anyRun {
		raw = binary.LittleEndian.AppendUint32(raw, roaringCookieRun|uint32(size-1)<<16)
		flags := make([]byte, (size+7)/8)
		for i, r := range reps {
			if r.run {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		raw = append(raw, flags...)
	} else {
		raw = binary.LittleEndian.AppendUint32(raw, roaringCookieNoRun)
		raw = binary.LittleEndian.AppendUint32(raw, uint32(size))
	}
	for i, k := range n.keys {
		raw = binary.LittleEndian.AppendUint16(raw, k)
		raw = binary.LittleEndian.AppendUint16(raw, uint16(n.cards[i]-1))
	}
	if !anyRun || size >= roaringNoOffsetMax {
		off := uint32(header)
		for _, r := range reps {
			raw = binary.LittleEndian.AppendUint32(raw, off)
			off += uint32(len(r.payload))
		}
	}
	for _, r := range reps {
		raw = append(raw, r.payload...)
	}
	return raw
}

// arrayRunCount counts the runs of consecutive values in an array container
// payload (sorted little-endian uint16 values).
func arrayRunCount(vals []byte) int {
	runs := 0
	prev := -2
	for j := 0; j+2 <= len(vals); j += 2 {
		v := int(binary.LittleEndian.Uint16(vals[j:]))
		if v != prev+1 {
			runs++
		}
		prev = v
	}
	return runs
}

// arrayToRuns converts an array container payload to a run container payload.
func arrayToRuns(vals []byte, runs int) []byte {
	out := make([]byte, 0, 2+4*runs)
	out = binary.LittleEndian.AppendUint16(out, uint16(runs))
	start, prev := -1, -2
	for j := 0; j+2 <= len(vals); j += 2 {
		v := int(binary.LittleEndian.Uint16(vals[j:]))
		if v != prev+1 {
			if start >= 0 {
				out = binary.LittleEndian.AppendUint16(out, uint16(start))
				out = binary.LittleEndian.AppendUint16(out, uint16(prev-start))
			}
			start = v
		}
		prev = v
	}
	if start >= 0 {
		out = binary.LittleEndian.AppendUint16(out, uint16(start))
		out = binary.LittleEndian.AppendUint16(out, uint16(prev-start))
	}
	return out
}

// bitmapRunCount counts the runs of set bits of a bitmap container payload.
func bitmapRunCount(words []byte) int {
	runs := 0
	var carry uint64 // top bit of the previous word
	for j := 0; j+8 <= len(words); j += 8 {
		w := binary.LittleEndian.Uint64(words[j:])
		runs += bits.OnesCount64(w &^ (w<<1 | carry))
		carry = w >> 63
	}
	return runs
}

// bitmapToRuns converts a bitmap container payload to a run container payload.
func bitmapToRuns(words []byte, runs int) []byte {
	out := make([]byte, 0, 2+4*runs)
	out = binary.LittleEndian.AppendUint16(out, uint16(runs))
	inRun, start := false, 0
	emit := func(end int) { // run [start, end)
		out = binary.LittleEndian.AppendUint16(out, uint16(start))
		out = binary.LittleEndian.AppendUint16(out, uint16(end-1-start))
	}
	for j := 0; j+8 <= len(words); j += 8 {
		w := binary.LittleEndian.Uint64(words[j:])
		base := j * 8
		for bit := 0; bit < 64; {
			if inRun {
				z := ^w >> uint(bit)
				if z == 0 {
					break
				}
				tz := bits.TrailingZeros64(z)
				emit(base + bit + tz)
				inRun = false
				bit += tz
			} else {
				o := w >> uint(bit)
				if o == 0 {
					break
				}
				tz := bits.TrailingZeros64(o)
				start = base + bit + tz
				inRun = true
				bit += tz
			}
		}
	}
	if inRun {
		emit(chunkRows)
	}
	return out
}

func (n *nullRecorder) reset() {
	clear(n.words[:])
	n.key, n.dirty, n.dense, n.card = 0, false, false, 0
	n.keys, n.cards, n.runs, n.body = n.keys[:0], n.cards[:0], n.runs[:0], n.body[:0]
}

// validity returns the validity bitmap bytes and the bit offset of row 0 of
// arr, or nil when arr has no validity bitmap.
func validity(arr arrow.Array) ([]byte, int) {
	bufs := arr.Data().Buffers()
	if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() == 0 {
		return nil, 0
	}
	return bufs[0].Bytes(), arr.Data().Offset()
}

// loadBits returns 64 validity bits starting at bit position pos of b. Bits
// past the end of b read as 1 (valid); callers mask what is beyond their range.
func loadBits(b []byte, pos int) uint64 {
	i := pos >> 3
	shift := uint(pos & 7)
	if i+9 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if shift != 0 {
			w = w>>shift | uint64(b[i+8])<<(64-shift)
		}
		return w
	}
	var tmp [9]byte
	for k := range tmp {
		tmp[k] = 0xFF
		if i+k < len(b) {
			tmp[k] = b[i+k]
		}
	}
	w := binary.LittleEndian.Uint64(tmp[:])
	if shift != 0 {
		w = w>>shift | uint64(tmp[8])<<(64-shift)
	}
	return w
}

// lowMask returns a word with the low n bits set (0 <= n <= 64).
func lowMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(n) - 1
}

// recordValidityNulls records the null rows among rows [lo, hi) of an array
// with validity bitmap vb (bit offset off), as global offsets base+row, and
// returns how many there are.
func recordValidityNulls(vb []byte, off, lo, hi int, base uint64, nr *nullRecorder) uint64 {
	var count uint64
	r := lo
	if (off+lo)&7 == 0 {
		// Byte-aligned: plain 64-bit loads while 8 bytes remain.
		for i := (off + lo) >> 3; r+64 <= hi && i+8 <= len(vb); i += 8 {
			if nw := ^binary.LittleEndian.Uint64(vb[i:]); nw != 0 {
				c := bits.OnesCount64(nw)
				count += uint64(c)
				pos := base + uint64(r)
				if pos&63 == 0 && pos>>chunkBits == nr.key {
					// word-aligned in the current chunk
					nr.setLocal(pos&(chunkRows-1), nw, c)
				} else {
					nr.orBits(pos, nw)
				}
			}
			r += 64
		}
	}
	for ; r < hi; r += 64 {
		nw := ^loadBits(vb, off+r) & lowMask(hi-r)
		if nw != 0 {
			count += uint64(bits.OnesCount64(nw))
			nr.orBits(base+uint64(r), nw)
		}
	}
	return count
}

// nullsAndStretches scans the validity bitmap vb (bit offset off) over rows
// [lo, hi) once: it records the null rows as global offsets base+row, calls
// fn(s, e) for every maximal run [s, e) of valid rows, and returns the number
// of null rows.
func nullsAndStretches(vb []byte, off, lo, hi int, base uint64, nr *nullRecorder, fn func(s, e int)) uint64 {
	var count uint64
	start := lo // start of the current valid stretch
	for r := lo; r < hi; r += 64 {
		n := min(hi-r, 64)
		nw := ^loadBits(vb, off+r) & lowMask(n)
		if nw == 0 {
			continue
		}
		count += uint64(bits.OnesCount64(nw))
		nr.orBits(base+uint64(r), nw)
		for nw != 0 {
			tz := bits.TrailingZeros64(nw)
			if r+tz > start {
				fn(start, r+tz)
			}
			run := bits.TrailingZeros64(^(nw >> uint(tz))) // nulls at [tz, tz+run)
			start = r + tz + run
			if tz+run >= 64 {
				break
			}
			nw &^= lowMask(tz + run)
		}
	}
	if hi > start {
		fn(start, hi)
	}
	return count
}
