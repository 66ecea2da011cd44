package datafile

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// fullZipMinBytes is the value size from which Lance 12 writes a page
// full-zip (spec 2.1 §5): variable-width values of which the largest is at
// least this long, fixed-width items (fixed_size_binary, fixed_size_list)
// at least this wide. Observed on tables the peer creates (a utf8 column
// of 250–530-byte values and a fixed_size_list<float32>[128] are full-zip).
const fullZipMinBytes = 256

// wantsFullZip reports whether slots [s0, s1) of l are written full-zip.
// Arrow dictionary columns stay dictionary pages (Lance 12 reads them from
// nothing else).
func (l *leaf21) wantsFullZip(s0, s1 int) bool {
	if l.dict {
		return false
	}
	switch l.kind {
	case lkVar21:
		prev := uint64(0)
		if s0 > 0 {
			prev = l.ends[s0-1]
		}
		for k := s0; k < s1; k++ {
			if l.ends[k]-prev >= fullZipMinBytes {
				return true
			}
			prev = l.ends[k]
		}
	case lkFixed21:
		return l.width%8 == 0 && l.width/8 >= fullZipMinBytes
	case lkFSL21:
		return l.width%8 == 0 && l.dim*l.width/8 >= fullZipMinBytes
	}
	return false
}

// fullZip21 encodes entries [e0, e1) / slots [s0, s1) of l as a full-zip
// page (spec 2.1 §5): per entry a control word (rep << bits_def | def, of
// 0/1/2/4 bytes as the widths of the largest rep and def present need),
// then for a visible entry its value — fixed: the item's bytes (zeros for
// a null item); fixed_size_list: ⌈dim/8⌉ item-validity bytes then the
// items; variable: a u32/u64 length and the bytes when the item is valid,
// nothing when null. Buffer 1, for variable items or with lists, is the
// repetition index: the byte offset of each row's start and the end, in
// the smallest of 1/2/4/8-byte integers that holds the length.
func (w *Writer) fullZip21(l *leaf21, e0, e1, s0, s1, rows int, layers []pb21.RepDefLayer, rep []uint16, defOf []uint16) ([][]byte, *pb21.PageLayout, error) {
	codes := l.code[e0:e1]
	var maxRep, maxDef uint16
	for k, c := range codes {
		if c != 0 {
			maxDef = max(maxDef, defOf[c])
		}
		if rep != nil {
			maxRep = max(maxRep, rep[k])
		}
	}
	bitsRep, bitsDef := bits.Len16(maxRep), bits.Len16(maxDef)
	cw := 0
	switch t := bitsRep + bitsDef; {
	case t == 0:
	case t <= 8:
		cw = 1
	case t <= 16:
		cw = 2
	default:
		cw = 4
	}
	ow := 4
	if l.off64 {
		ow = 8
	}
	fz := &pb21.FullZipLayout{BitsRep: uint32(bitsRep), BitsDef: uint32(bitsDef), NumItems: uint32(e1 - e0),
		NumVisibleItems: uint32(s1 - s0), Layers: layers}
	itemBytes := 0
	var fv []bool     // nested fixed_size_list: has_validity per level
	var fslBits []int // nested fixed_size_list: bitmap bits per value per level (0: none)
	var pv *perValue21
	switch l.kind {
	case lkVar21:
		fz.Details = &pb21.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(8 * ow)}
		fz.ValueCompression = l.valueCompression21([]bool{false})
		if !w.noCompression {
			var err error
			if pv, err = l.perValue21(codes, defOf, s0, s1); err != nil {
				return nil, nil, err
			}
			if pv != nil {
				defer pv.close()
				fz.ValueCompression = pv.enc
			}
		}
	case lkFixed21:
		itemBytes = l.width / 8
		fz.Details = &pb21.FullZipLayout_BitsPerValue{BitsPerValue: uint32(l.width)}
		fz.ValueCompression = flat21(uint64(l.width))
	case lkFSL21:
		if l.fslDims != nil {
			// nested: per value, the bitmap of each level that holds a
			// null in the page (outer first), then the items, as Lance
			// 12 writes them
			fv = l.fslValidity(s0, s1)
			fslBits = make([]int, len(fv))
			per := 1
			for lv := range fv {
				if lv < len(l.fslDims)-1 {
					per *= l.fslDims[lv]
				} else {
					per = l.dim
				}
				if fv[lv] {
					fslBits[lv] = per
					itemBytes += (per + 7) / 8
				}
			}
			itemBytes += l.dim * l.width / 8
			fz.Details = &pb21.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * itemBytes)}
			fz.ValueCompression = l.valueCompression21(fv)
			break
		}
		itemBytes = (l.dim+7)/8 + l.dim*l.width/8
		fz.Details = &pb21.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * itemBytes)}
		fz.ValueCompression = l.valueCompression21([]bool{true})
	default:
		return nil, nil, fmt.Errorf("datafile: column %q: no full-zip form for this type", l.name)
	}
	size := (e1-e0)*cw + (s1-s0)*itemBytes
	if l.kind == lkVar21 {
		size += (s1-s0)*ow + l.varBytes(s0, s1)
	}
	if pv != nil {
		size = (e1-e0)*cw + (s1-s0)*ow + pv.estimate
	}
	if size > 1<<32-1 && w.version == V2_1 {
		return nil, nil, fmt.Errorf("%w: column %q: a full-zip page of %d bytes", ErrInvalidData, l.name, size)
	}
	buf := make([]byte, 0, size)
	withIndex := l.kind == lkVar21 || l.nlists > 0
	var starts []uint64
	if withIndex {
		starts = make([]uint64, 0, rows+1)
	}
	s := s0
	for k, c := range codes {
		if withIndex && (rep == nil || rep[k] == uint16(l.nlists)) {
			starts = append(starts, uint64(len(buf)))
		}
		var d uint16
		if c != 0 {
			d = defOf[c]
		}
		if cw > 0 {
			var r uint16
			if rep != nil {
				r = rep[k]
			}
			word := uint32(r)<<bitsDef | uint32(d)
			switch cw {
			case 1:
				buf = append(buf, byte(word))
			case 2:
				buf = binary.LittleEndian.AppendUint16(buf, uint16(word))
			default:
				buf = binary.LittleEndian.AppendUint32(buf, word)
			}
		}
		if !l.visible(c) {
			continue
		}
		switch l.kind {
		case lkVar21:
			if d == 0 {
				start := uint64(0)
				if s > 0 {
					start = l.ends[s-1]
				}
				v := l.data[start:l.ends[s]]
				if pv != nil {
					// The item's length word, then the compressed bytes.
					at := len(buf)
					buf = append(buf, make([]byte, ow)...)
					buf = pv.append(buf, v)
					if n := len(buf) - at - ow; ow == 4 {
						binary.LittleEndian.PutUint32(buf[at:], uint32(n))
					} else {
						binary.LittleEndian.PutUint64(buf[at:], uint64(n))
					}
				} else {
					if ow == 4 {
						buf = binary.LittleEndian.AppendUint32(buf, uint32(len(v)))
					} else {
						buf = binary.LittleEndian.AppendUint64(buf, uint64(len(v)))
					}
					buf = append(buf, v...)
				}
			}
		case lkFixed21:
			buf = append(buf, l.vals[s*itemBytes:(s+1)*itemBytes]...)
		case lkFSL21:
			if l.fslDims != nil {
				for lv, per := range fslBits {
					if per == 0 {
						continue
					}
					src := l.ivalid
					if lv < len(l.lvalid) {
						src = l.lvalid[lv]
					}
					at := len(buf)
					buf = append(buf, make([]byte, (per+7)/8)...)
					for j := range per {
						if bitutil.BitIsSet(src, s*per+j) {
							bitutil.SetBit(buf[at:], j)
						}
					}
				}
				bw := l.width / 8
				buf = append(buf, l.vals[s*l.dim*bw:(s+1)*l.dim*bw]...)
				break
			}
			vb := (l.dim + 7) / 8
			at := len(buf)
			buf = append(buf, make([]byte, vb)...)
			for j := range l.dim {
				if bitutil.BitIsSet(l.ivalid, s*l.dim+j) {
					bitutil.SetBit(buf[at:], j)
				}
			}
			bw := l.width / 8
			buf = append(buf, l.vals[s*l.dim*bw:(s+1)*l.dim*bw]...)
		}
		s++
	}
	if s != s1 {
		return nil, nil, fmt.Errorf("datafile: column %q: full-zip page holds %d values, want %d", l.name, s-s0, s1-s0)
	}
	if len(buf) > 1<<32-1 && w.version == V2_1 {
		return nil, nil, fmt.Errorf("%w: column %q: a full-zip page of %d bytes", ErrInvalidData, l.name, len(buf))
	}
	out := [][]byte{buf}
	if withIndex {
		starts = append(starts, uint64(len(buf)))
		if len(starts) != rows+1 {
			return nil, nil, fmt.Errorf("datafile: column %q: full-zip page has %d row starts, want %d", l.name, len(starts)-1, rows)
		}
		iw := 8
		switch n := uint64(len(buf)); {
		case n <= 0xff:
			iw = 1
		case n <= 0xffff:
			iw = 2
		case n <= 0xffffffff:
			iw = 4
		}
		idx := make([]byte, 0, iw*len(starts))
		for _, v := range starts {
			switch iw {
			case 1:
				idx = append(idx, byte(v))
			case 2:
				idx = binary.LittleEndian.AppendUint16(idx, uint16(v))
			case 4:
				idx = binary.LittleEndian.AppendUint32(idx, uint32(v))
			default:
				idx = binary.LittleEndian.AppendUint64(idx, v)
			}
		}
		out = append(out, idx)
	}
	return out, &pb21.PageLayout{Layout: &pb21.PageLayout_FullZipLayout{FullZipLayout: fz}}, nil
}

// Per-value compression of a full-zip page of strings/binaries, chosen as
// Lance 12 chooses it (its default compression strategy for the per-value
// context): when the page's valid values total at least fsstMinBytes,
// values longer than perValueZstdMin make every item a zstd frame
// (`general[zstd, level 0](variable)`, u64 length prefix per item),
// otherwise values of at least fsstMinLen bytes make the items FSST codes
// of one page-wide symbol table (`fsst{table, variable}`). Below these the
// items stay raw (`variable`).
const (
	perValueZstdMin = 32 << 10
	fsstMinBytes    = 32 << 10
	fsstMinLen      = 5
)

type perValue21 struct {
	enc      *pb21.CompressiveEncoding
	zstd     *codec.ZstdValues
	fsst     *codec.SymbolTable
	estimate int // expected bytes of the items
}

func (p *perValue21) append(dst, v []byte) []byte {
	if p.zstd != nil {
		return p.zstd.Append(dst, v)
	}
	return p.fsst.Encode(dst, v)
}

func (p *perValue21) close() {
	if p.zstd != nil {
		p.zstd.Close()
	}
}

// perValue21 picks the per-value compression of slots [s0, s1) (entries
// codes, def numbering defOf); nil keeps the items raw.
func (l *leaf21) perValue21(codes, defOf []uint16, s0, s1 int) (*perValue21, error) {
	var total, maxLen int
	var vals [][]byte
	s := s0
	for _, c := range codes {
		if !l.visible(c) {
			continue
		}
		if c == 0 || defOf[c] == 0 {
			start := uint64(0)
			if s > 0 {
				start = l.ends[s-1]
			}
			v := l.data[start:l.ends[s]]
			total += len(v)
			maxLen = max(maxLen, len(v))
			vals = append(vals, v)
		}
		s++
	}
	if s != s1 || total < fsstMinBytes {
		return nil, nil
	}
	ob := uint64(32)
	if l.off64 {
		ob = 64
	}
	variable := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Variable{Variable: &pb21.Variable{Offsets: flat21(ob)}}}
	if maxLen > perValueZstdMin {
		z, err := codec.NewZstdValues()
		if err != nil {
			return nil, fmt.Errorf("datafile: column %q: %w", l.name, err)
		}
		level := int32(0)
		return &perValue21{zstd: z, estimate: total/2 + 32*len(vals), enc: &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{
			Compression: &pb21.BufferCompression{Scheme: pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD, Level: &level},
			Values:      variable}}}}, nil
	}
	if maxLen < fsstMinLen {
		return nil, nil
	}
	t := codec.TrainFSST(vals)
	return &perValue21{fsst: t, estimate: total + total/8 + 16, enc: &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Fsst{Fsst: &pb21.Fsst{
		SymbolTable: t.Bytes(), Values: variable}}}}, nil
}
