package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// SymbolTable is an FSST symbol table (§7.7): up to 255 symbols of 1..8
// bytes; code 255 escapes one literal byte. Its serialized form is always
// SymbolTableSize bytes.
type SymbolTable struct {
	n      int
	on     bool // the encoder switch: false = strings stored verbatim
	sym    [256]uint64
	slen   [256]uint8
	byHead [256][]uint8 // encoder: codes by first byte, longest first
}

// SymbolTableSize is the size of a serialized symbol table.
const SymbolTableSize = 2312

const (
	fsstMagic  = 0x46535354
	fsstEscape = 255
)

// ParseSymbolTable reads a serialized symbol table: the u64 header (magic
// "FSST", switch, suffix limit, terminator, n), n 8-byte symbols and n
// lengths.
func ParseSymbolTable(b []byte) (*SymbolTable, error) {
	if len(b) < 8 {
		return nil, errf(ErrCorrupt, "fsst", "symbol table", "%d bytes, need at least 8", len(b))
	}
	h := binary.LittleEndian.Uint64(b)
	if h>>32 != fsstMagic {
		return nil, errf(ErrCorrupt, "fsst", "symbol table", "magic %#x is not FSST", h>>32)
	}
	t := &SymbolTable{n: int(h & 0xff), on: (h>>24)&0xff != 0}
	if len(b) < 8+9*t.n {
		return nil, errf(ErrCorrupt, "fsst", "symbol table", "%d symbols need %d bytes, %d present", t.n, 8+9*t.n, len(b))
	}
	for i := 0; i < t.n; i++ {
		t.sym[i] = binary.LittleEndian.Uint64(b[8+8*i:])
		l := b[8+8*t.n+i]
		if l < 1 || l > 8 {
			return nil, errf(ErrCorrupt, "fsst", "symbol table", "symbol %d has length %d", i, l)
		}
		t.slen[i] = l
	}
	t.index()
	return t, nil
}

// Len is the number of symbols.
func (t *SymbolTable) Len() int { return t.n }

// Bytes serializes the table in SymbolTableSize bytes.
func (t *SymbolTable) Bytes() []byte {
	b := make([]byte, SymbolTableSize)
	var sw uint64
	if t.on {
		sw = 1
	}
	binary.LittleEndian.PutUint64(b, fsstMagic<<32|sw<<24|uint64(t.n))
	for i := 0; i < t.n; i++ {
		binary.LittleEndian.PutUint64(b[8+8*i:], t.sym[i])
		b[8+8*t.n+i] = t.slen[i]
	}
	return b
}

// decodedLen is the expanded size of src, or an error for an unknown code
// or a dangling escape.
func (t *SymbolTable) decodedLen(src []byte) (uint64, error) {
	if !t.on {
		return uint64(len(src)), nil
	}
	var size uint64
	for i := 0; i < len(src); {
		c := src[i]
		if c == fsstEscape {
			if i+1 >= len(src) {
				return 0, fmt.Errorf("%w: escape at the end of a string", ErrCorrupt)
			}
			size++
			i += 2
			continue
		}
		l := t.slen[c]
		if l == 0 {
			return 0, fmt.Errorf("%w: code %d with %d symbols", ErrCorrupt, c, t.n)
		}
		size += uint64(l)
		i++
	}
	return size, nil
}

// expand writes the expansion of src at out[0:], which must have room for
// it plus 8 bytes of slack; it returns the bytes written. src must have
// passed decodedLen.
func (t *SymbolTable) expand(out, src []byte) int {
	if !t.on {
		return copy(out, src)
	}
	pos := 0
	for i := 0; i < len(src); {
		c := src[i]
		if c == fsstEscape {
			out[pos] = src[i+1]
			pos++
			i += 2
			continue
		}
		binary.LittleEndian.PutUint64(out[pos:pos+8], t.sym[c])
		pos += int(t.slen[c])
		i++
	}
	return pos
}

// Decode appends the expansion of one compressed string to dst.
func (t *SymbolTable) Decode(dst, src []byte) ([]byte, error) {
	n, err := t.decodedLen(src)
	if err != nil {
		return dst, &Error{Encoding: "fsst", Context: "string", Msg: "expand", Err: err}
	}
	start := len(dst)
	dst = append(dst, make([]byte, n+8)...)
	w := t.expand(dst[start:], src)
	return dst[:start+w], nil
}

// fsstExpand expands every string of a Variable block (§7.7).
func (d *decoder) fsstExpand(enc *pb21.CompressiveEncoding, table []byte, in Block) (Block, error) {
	if in.Kind != Variable {
		return Block{}, d.errf(ErrCorrupt, enc, "FSST values decode to %s, not variable", in.Kind)
	}
	t, err := ParseSymbolTable(table)
	if err != nil {
		return Block{}, err
	}
	lo, hi := in.Offset(0), in.Offset(in.Num)
	total, err := t.decodedLen(in.Data[lo:hi])
	if err != nil {
		// An escape may only dangle at a string's end; check per string.
		return Block{}, &Error{Encoding: "fsst", Context: d.ctx, Msg: "expand", Err: err}
	}
	if in.OffsetBits == 32 && total > math.MaxUint32 {
		return Block{}, d.errf(ErrLimit, enc, "%d expanded bytes do not fit 32-bit offsets", total)
	}
	ow := in.OffsetBits / 8
	if err := d.take(total+8+(in.Num+1)*ow, "fsst"); err != nil {
		return Block{}, err
	}
	out := make([]byte, total+8)
	offs := make([]byte, (in.Num+1)*ow)
	pos := 0
	for i := uint64(0); i < in.Num; i++ {
		s := in.Value(i)
		if len(s) > 0 && t.on {
			// An escape must not straddle two strings.
			if _, err := t.decodedLen(s); err != nil {
				return Block{}, &Error{Encoding: "fsst", Context: d.ctx, Msg: fmt.Sprintf("string %d", i), Err: err}
			}
		}
		pos += t.expand(out[pos:], s)
		if ow == 4 {
			binary.LittleEndian.PutUint32(offs[(i+1)*4:], uint32(pos))
		} else {
			binary.LittleEndian.PutUint64(offs[(i+1)*8:], uint64(pos))
		}
	}
	return Block{Kind: Variable, Num: in.Num, Data: out[:pos:pos], Offsets: offs, OffsetBits: in.OffsetBits}, nil
}

// ---- encoder ----

// fsstSampleTarget is the number of sample bytes the trainer looks at.
const fsstSampleTarget = 1 << 15

// TrainFSST builds a symbol table for strings like the sample, following
// the published FSST construction (Boncz, Neumann, Leis, VLDB 2020): five
// generations of compressing the sample with the current table, counting
// how often each symbol and each pair of adjacent symbols occur, and
// keeping the 255 candidates (symbols, pair concatenations up to 8 bytes,
// single bytes) with the largest gain = frequency × length.
func TrainFSST(sample [][]byte) *SymbolTable {
	// Take an evenly spread sample of about fsstSampleTarget bytes.
	var total int
	for _, s := range sample {
		total += len(s)
	}
	step := 1
	if total > fsstSampleTarget {
		step = total / fsstSampleTarget
	}
	var smp [][]byte
	for i := 0; i < len(sample); i += step {
		smp = append(smp, sample[i])
	}
	t := &SymbolTable{on: true}
	t.index()
	type pair struct{ a, b uint16 }
	for gen := 0; gen < 5; gen++ {
		count1 := make(map[uint16]int)
		count2 := make(map[pair]int)
		for _, s := range smp {
			prev := -1
			for pos := 0; pos < len(s); {
				c, l := t.match(s[pos:])
				code := uint16(256 + int(c))
				if l == 0 {
					code, l = uint16(s[pos]), 1
				}
				count1[code]++
				if l > 1 {
					count1[uint16(s[pos])]++
				}
				if prev >= 0 {
					count2[pair{uint16(prev), code}]++
				}
				prev = int(code)
				pos += l
			}
		}
		symOf := func(code uint16) (uint64, int) {
			if code < 256 {
				return uint64(code), 1
			}
			c := code - 256
			return t.sym[c], int(t.slen[c])
		}
		type cand struct {
			sym  uint64
			l    int
			gain int
		}
		type key struct {
			sym uint64
			l   int
		}
		cands := make(map[key]*cand)
		add := func(sym uint64, l, g int) {
			k := key{sym, l}
			if c, ok := cands[k]; ok {
				c.gain += g
				return
			}
			cands[k] = &cand{sym: sym, l: l, gain: g}
		}
		for code, f := range count1 {
			s, l := symOf(code)
			g := f * l
			if l == 1 {
				g = f // escaping costs one extra byte per occurrence
			}
			add(s, l, g)
		}
		if gen < 4 {
			for p, f := range count2 {
				s1, l1 := symOf(p.a)
				s2, l2 := symOf(p.b)
				if l1+l2 > 8 {
					continue
				}
				add(s1|s2<<(8*l1), l1+l2, f*(l1+l2))
			}
		}
		list := make([]*cand, 0, len(cands))
		for _, c := range cands {
			list = append(list, c)
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].gain != list[j].gain {
				return list[i].gain > list[j].gain
			}
			if list[i].l != list[j].l {
				return list[i].l > list[j].l
			}
			return list[i].sym < list[j].sym
		})
		if len(list) > 255 {
			list = list[:255]
		}
		nt := &SymbolTable{on: true, n: len(list)}
		for i, c := range list {
			nt.sym[i], nt.slen[i] = c.sym, uint8(c.l)
		}
		nt.index()
		t = nt
	}
	// Sort the final table for a stable, readable order: by length, then bytes.
	idx := make([]int, t.n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if t.slen[a] != t.slen[b] {
			return t.slen[a] > t.slen[b]
		}
		var x, y [8]byte
		binary.LittleEndian.PutUint64(x[:], t.sym[a])
		binary.LittleEndian.PutUint64(y[:], t.sym[b])
		return bytes.Compare(x[:], y[:]) < 0
	})
	out := &SymbolTable{on: true, n: t.n}
	for i, j := range idx {
		out.sym[i], out.slen[i] = t.sym[j], t.slen[j]
	}
	out.index()
	return out
}

// index builds the encoder's lookup: codes by first byte, longest first.
func (t *SymbolTable) index() {
	for i := range t.byHead {
		t.byHead[i] = nil
	}
	for c := 0; c < t.n; c++ {
		h := byte(t.sym[c])
		t.byHead[h] = append(t.byHead[h], uint8(c))
	}
	for h := range t.byHead {
		l := t.byHead[h]
		sort.SliceStable(l, func(i, j int) bool { return t.slen[l[i]] > t.slen[l[j]] })
	}
}

var symMask = [9]uint64{0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffff, 0xffffffffffff, 0xffffffffffffff, math.MaxUint64}

// match returns the code of the longest symbol that prefixes s and its
// length, or length 0 if none does.
func (t *SymbolTable) match(s []byte) (uint8, int) {
	cands := t.byHead[s[0]]
	if len(cands) == 0 {
		return 0, 0
	}
	var w uint64
	if len(s) >= 8 {
		w = binary.LittleEndian.Uint64(s)
	} else {
		for i := len(s) - 1; i >= 0; i-- {
			w = w<<8 | uint64(s[i])
		}
	}
	for _, c := range cands {
		l := int(t.slen[c])
		if l <= len(s) && w&symMask[l] == t.sym[c] {
			return c, l
		}
	}
	return 0, 0
}

// Encode appends the compressed form of src to dst: the longest symbol at
// each position, or an escape and the literal byte.
func (t *SymbolTable) Encode(dst, src []byte) []byte {
	if !t.on {
		return append(dst, src...)
	}
	for pos := 0; pos < len(src); {
		c, l := t.match(src[pos:])
		if l == 0 {
			dst = append(dst, fsstEscape, src[pos])
			pos++
			continue
		}
		dst = append(dst, c)
		pos += l
	}
	return dst
}
