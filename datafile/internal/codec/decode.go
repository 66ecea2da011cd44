package codec

import (
	"encoding/binary"

	"github.com/klauspost/compress/zstd"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// maxDepth bounds the nesting of CompressiveEncodings.
const maxDepth = 16

// decoder carries the context name, the remaining byte budget and a zstd
// decoder made on first use.
type decoder struct {
	ctx  string
	left uint64
	zstd *zstd.Decoder
}

// take reserves n decoded bytes of the budget.
func (d *decoder) take(n uint64, enc string) error {
	if n > d.left {
		return errf(ErrLimit, enc, d.ctx, "%d bytes requested, %d left of the limit", n, d.left)
	}
	d.left -= n
	return nil
}

func (d *decoder) errf(sentinel error, enc *pb21.CompressiveEncoding, format string, args ...any) error {
	return errf(sentinel, name(enc), d.ctx, format, args...)
}

// mini decodes the value buffers of one mini-block chunk (§7, mini-block).
func (d *decoder) mini(enc *pb21.CompressiveEncoding, bufs [][]byte, n uint64, depth int) (Block, error) {
	if depth > maxDepth {
		return Block{}, d.errf(ErrCorrupt, enc, "encodings nested deeper than %d", maxDepth)
	}
	if enc == nil || enc.Compression == nil {
		return Block{}, d.errf(ErrCorrupt, enc, "compressive encoding is missing its compression variant")
	}
	need := 1
	switch enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Rle:
		need = 2
	case *pb21.CompressiveEncoding_Constant:
		need = 0
	}
	if len(bufs) < need {
		return Block{}, d.errf(ErrCorrupt, enc, "%d value buffers in the chunk, need %d", len(bufs), need)
	}
	switch c := enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Flat:
		return d.flat(enc, c.Flat, bufs[0], n)
	case *pb21.CompressiveEncoding_Variable:
		return d.variableMini(enc, c.Variable, bufs[0], n)
	case *pb21.CompressiveEncoding_InlineBitpacking:
		return d.inlineBitpacking(enc, c.InlineBitpacking, bufs[0], n)
	case *pb21.CompressiveEncoding_OutOfLineBitpacking:
		return d.outOfLine(enc, c.OutOfLineBitpacking, bufs[0], n)
	case *pb21.CompressiveEncoding_Rle:
		return d.rle(enc, c.Rle, bufs[0], bufs[1], n)
	case *pb21.CompressiveEncoding_ByteStreamSplit:
		return d.bss(enc, c.ByteStreamSplit, bufs[0], n)
	case *pb21.CompressiveEncoding_General:
		raw, err := d.general(enc, c.General.GetCompression(), bufs[0])
		if err != nil {
			return Block{}, err
		}
		// T16: only the first value buffer is compressed.
		nb := make([][]byte, len(bufs))
		copy(nb, bufs)
		nb[0] = raw
		return d.mini(c.General.GetValues(), nb, n, depth+1)
	case *pb21.CompressiveEncoding_Fsst:
		inner, err := d.mini(c.Fsst.GetValues(), bufs, n, depth+1)
		if err != nil {
			return Block{}, err
		}
		return d.fsstExpand(enc, c.Fsst.GetSymbolTable(), inner)
	case *pb21.CompressiveEncoding_FixedSizeList:
		return d.fslMini(enc, c.FixedSizeList, bufs, n, depth)
	case *pb21.CompressiveEncoding_PackedStruct:
		return d.packedStruct(enc, c.PackedStruct, bufs, n, depth)
	case *pb21.CompressiveEncoding_Constant:
		return d.constant(enc, c.Constant, n)
	}
	return Block{}, d.errf(ErrUnsupported, enc, "not a mini-block value compression")
}

// block decodes one buffer of n values in the block context (§7, block).
func (d *decoder) block(enc *pb21.CompressiveEncoding, buf []byte, n uint64, depth int) (Block, error) {
	if depth > maxDepth {
		return Block{}, d.errf(ErrCorrupt, enc, "encodings nested deeper than %d", maxDepth)
	}
	if enc == nil || enc.Compression == nil {
		return Block{}, d.errf(ErrCorrupt, enc, "compressive encoding is missing its compression variant")
	}
	switch c := enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Flat:
		return d.flat(enc, c.Flat, buf, n)
	case *pb21.CompressiveEncoding_Variable:
		return d.variableBlock(enc, c.Variable, buf, n)
	case *pb21.CompressiveEncoding_InlineBitpacking:
		return d.inlineBitpacking(enc, c.InlineBitpacking, buf, n)
	case *pb21.CompressiveEncoding_OutOfLineBitpacking:
		return d.outOfLine(enc, c.OutOfLineBitpacking, buf, n)
	case *pb21.CompressiveEncoding_Rle:
		// §7.6: u64 size of the run values, the values, the run lengths.
		if len(buf) < 8 {
			return Block{}, d.errf(ErrCorrupt, enc, "RLE block of %d bytes has no size word", len(buf))
		}
		vs := binary.LittleEndian.Uint64(buf)
		if vs > uint64(len(buf)-8) {
			return Block{}, d.errf(ErrCorrupt, enc, "run values of %d bytes in a %d-byte block", vs, len(buf))
		}
		return d.rle(enc, c.Rle, buf[8:8+vs], buf[8+vs:], n)
	case *pb21.CompressiveEncoding_ByteStreamSplit:
		return d.bss(enc, c.ByteStreamSplit, buf, n)
	case *pb21.CompressiveEncoding_General:
		raw, err := d.general(enc, c.General.GetCompression(), buf)
		if err != nil {
			return Block{}, err
		}
		return d.block(c.General.GetValues(), raw, n, depth+1)
	case *pb21.CompressiveEncoding_Fsst:
		inner, err := d.block(c.Fsst.GetValues(), buf, n, depth+1)
		if err != nil {
			return Block{}, err
		}
		return d.fsstExpand(enc, c.Fsst.GetSymbolTable(), inner)
	case *pb21.CompressiveEncoding_Constant:
		return d.constant(enc, c.Constant, n)
	case *pb21.CompressiveEncoding_PackedStruct:
		return d.packedStruct(enc, c.PackedStruct, [][]byte{buf}, n, depth)
	}
	return Block{}, d.errf(ErrUnsupported, enc, "not a block compression")
}

// flat: n values of bits_per_value bits (§7.1), aliasing buf.
func (d *decoder) flat(enc *pb21.CompressiveEncoding, f *pb21.Flat, buf []byte, n uint64) (Block, error) {
	bits := f.GetBitsPerValue()
	if bits == 0 || (bits != 1 && bits%8 != 0) {
		return Block{}, d.errf(ErrUnsupported, enc, "flat values of %d bits", bits)
	}
	if f.Data != nil {
		raw, err := d.general(enc, f.Data, buf)
		if err != nil {
			return Block{}, err
		}
		buf = raw
	}
	size, ok := fixedBytes(n, bits)
	if !ok || size > uint64(len(buf)) {
		return Block{}, d.errf(ErrCorrupt, enc, "%d values of %d bits need more than the %d bytes present", n, bits, len(buf))
	}
	return Block{Kind: Fixed, Num: n, Bits: bits, Data: buf[:size:size]}, nil
}

// constant: n copies of the value (§7.14).
func (d *decoder) constant(enc *pb21.CompressiveEncoding, c *pb21.Constant, n uint64) (Block, error) {
	v := c.GetValue()
	if len(v) == 0 {
		return Block{}, d.errf(ErrUnsupported, enc, "constant without a value")
	}
	size, ok := mulOK(n, uint64(len(v)))
	if !ok {
		return Block{}, d.errf(ErrLimit, enc, "%d values of %d bytes", n, len(v))
	}
	if err := d.take(size, name(enc)); err != nil {
		return Block{}, err
	}
	out := make([]byte, 0, size)
	for i := uint64(0); i < n; i++ {
		out = append(out, v...)
	}
	return Block{Kind: Fixed, Num: n, Bits: uint64(len(v)) * 8, Data: out}, nil
}

// bss: byte-stream split of n values of 32 or 64 bits (§7.9).
func (d *decoder) bss(enc *pb21.CompressiveEncoding, b *pb21.ByteStreamSplit, buf []byte, n uint64) (Block, error) {
	f := b.GetValues().GetFlat()
	if f == nil || f.Data != nil || (f.BitsPerValue != 16 && f.BitsPerValue != 32 && f.BitsPerValue != 64) {
		return Block{}, d.errf(ErrUnsupported, enc, "byte-stream split values must be flat 16/32/64 bits")
	}
	w := f.BitsPerValue / 8
	size, ok := mulOK(n, w)
	if !ok || size > uint64(len(buf)) {
		return Block{}, d.errf(ErrCorrupt, enc, "%d values of %d bytes in a %d-byte buffer", n, w, len(buf))
	}
	if err := d.take(size, "byte_stream_split"); err != nil {
		return Block{}, err
	}
	out := make([]byte, size)
	unsplit(out, buf[:size], int(n), int(w))
	return Block{Kind: Fixed, Num: n, Bits: f.BitsPerValue, Data: out}, nil
}

// unsplit writes byte j of value i from src[j*n+i].
func unsplit(out, src []byte, n, w int) {
	switch w {
	case 4:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for i := 0; i < n; i++ {
			o := out[i*4 : i*4+4 : i*4+4]
			o[0], o[1], o[2], o[3] = s0[i], s1[i], s2[i], s3[i]
		}
	case 8:
		s0, s1, s2, s3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		s4, s5, s6, s7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		for i := 0; i < n; i++ {
			o := out[i*8 : i*8+8 : i*8+8]
			o[0], o[1], o[2], o[3] = s0[i], s1[i], s2[i], s3[i]
			o[4], o[5], o[6], o[7] = s4[i], s5[i], s6[i], s7[i]
		}
	default:
		for j := 0; j < w; j++ {
			s := src[j*n : (j+1)*n]
			for i := 0; i < n; i++ {
				out[i*w+j] = s[i]
			}
		}
	}
}

// split is the inverse of unsplit (the encoder side).
func split(out, src []byte, n, w int) {
	for i := 0; i < n; i++ {
		for j := 0; j < w; j++ {
			out[j*n+i] = src[i*w+j]
		}
	}
}
