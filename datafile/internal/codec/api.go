package codec

import (
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// Context names, as they appear in errors.
const (
	ctxMini  = "mini-block"
	ctxBlock = "block"
	ctxValue = "per-value"
)

// Decoder decodes many buffers with the same Limits, reusing its zstd
// state between calls (a page's chunks, say). The Limits apply to each
// call. A Decoder is not safe for concurrent use; Close releases it.
type Decoder struct {
	lim   Limits
	zstd  *zstd.Decoder
	arena *arena
	cache tableCache
}

// NewDecoder returns a Decoder with the given Limits.
func NewDecoder(lim Limits) *Decoder { return &Decoder{lim: lim} }

// Reuse makes the Decoder write every call's output into one buffer that
// the next call overwrites: a returned Block is then valid only until the
// next call on this Decoder (for callers that copy the values out at once).
// It saves an allocation per chunk.
func (dc *Decoder) Reuse() {
	if dc.arena == nil {
		dc.arena = &arena{}
	}
}

// Close releases the decoder's zstd state.
func (dc *Decoder) Close() {
	if dc.zstd != nil {
		dc.zstd.Close()
		dc.zstd = nil
	}
}

func (dc *Decoder) start(ctx string) decoder {
	if dc.arena != nil {
		dc.arena.off = 0
	}
	return decoder{ctx: ctx, left: dc.lim.max(), zstd: dc.zstd, arena: dc.arena, cache: &dc.cache}
}

func (dc *Decoder) keep(d *decoder) { dc.zstd = d.zstd }

// MiniBlock decodes the value buffers of one mini-block chunk (§4.3)
// holding n values, compressed with the page's value_compression.
func (dc *Decoder) MiniBlock(enc *pb21.CompressiveEncoding, bufs [][]byte, n uint64) (Block, error) {
	d := dc.start(ctxMini)
	b, err := d.mini(enc, bufs, n, 0)
	dc.keep(&d)
	return b, err
}

// Block decodes one buffer holding n values in the block context (levels,
// a mini-block page's dictionary, constant-page levels).
func (dc *Decoder) Block(enc *pb21.CompressiveEncoding, buf []byte, n uint64) (Block, error) {
	d := dc.start(ctxBlock)
	b, err := d.block(enc, buf, n, 0)
	dc.keep(&d)
	return b, err
}

// Levels decodes n 16-bit rep or def levels (block context); the encoding
// must produce 16-bit fixed-width values (§4.3).
func (dc *Decoder) Levels(enc *pb21.CompressiveEncoding, buf []byte, n uint64) ([]uint16, error) {
	b, err := dc.Block(enc, buf, n)
	if err != nil {
		return nil, err
	}
	if b.Kind != Fixed || b.Bits != 16 {
		return nil, errf(ErrCorrupt, name(enc), ctxBlock, "levels must decode to 16-bit values, got %s of %d bits", b.Kind, b.Bits)
	}
	if uint64(len(b.Data)) < 2*n {
		return nil, errf(ErrCorrupt, name(enc), ctxBlock, "%d level bytes for %d levels", len(b.Data), n)
	}
	return appendLevels(make([]uint16, 0, n), b.Data, n), nil
}

// LevelsInto is Levels appending the n levels to dst (no allocation when dst
// has room): the structural layer decodes a page's chunks straight into one
// level stream.
func (dc *Decoder) LevelsInto(dst []uint16, enc *pb21.CompressiveEncoding, buf []byte, n uint64) ([]uint16, error) {
	b, err := dc.Block(enc, buf, n)
	if err != nil {
		return dst, err
	}
	if b.Kind != Fixed || b.Bits != 16 {
		return dst, errf(ErrCorrupt, name(enc), ctxBlock, "levels must decode to 16-bit values, got %s of %d bits", b.Kind, b.Bits)
	}
	if uint64(len(b.Data)) < 2*n {
		return dst, errf(ErrCorrupt, name(enc), ctxBlock, "%d level bytes for %d levels", len(b.Data), n)
	}
	return appendLevels(dst, b.Data, n), nil
}

// appendLevels appends n little-endian u16 values of src to dst.
func appendLevels(dst []uint16, src []byte, n uint64) []uint16 {
	if n == 0 {
		return dst
	}
	if littleEndianHost() && uintptr(unsafe.Pointer(&src[0]))%2 == 0 {
		return append(dst, unsafe.Slice((*uint16)(unsafe.Pointer(&src[0])), n)...)
	}
	for i := uint64(0); i < n; i++ {
		dst = append(dst, uint16(src[2*i])|uint16(src[2*i+1])<<8)
	}
	return dst
}

// DecodeMiniBlock is NewDecoder(lim).MiniBlock for a single call.
func DecodeMiniBlock(enc *pb21.CompressiveEncoding, bufs [][]byte, n uint64, lim Limits) (Block, error) {
	dc := NewDecoder(lim)
	defer dc.Close()
	return dc.MiniBlock(enc, bufs, n)
}

// DecodeBlock is NewDecoder(lim).Block for a single call.
func DecodeBlock(enc *pb21.CompressiveEncoding, buf []byte, n uint64, lim Limits) (Block, error) {
	dc := NewDecoder(lim)
	defer dc.Close()
	return dc.Block(enc, buf, n)
}

// DecodeLevels is NewDecoder(lim).Levels for a single call.
func DecodeLevels(enc *pb21.CompressiveEncoding, buf []byte, n uint64, lim Limits) ([]uint16, error) {
	dc := NewDecoder(lim)
	defer dc.Close()
	return dc.Levels(enc, buf, n)
}

// name is the variant name of a CompressiveEncoding, for errors.
func name(enc *pb21.CompressiveEncoding) string {
	if enc == nil {
		return "missing"
	}
	switch enc.Compression.(type) {
	case *pb21.CompressiveEncoding_Flat:
		return "flat"
	case *pb21.CompressiveEncoding_Variable:
		return "variable"
	case *pb21.CompressiveEncoding_Constant:
		return "constant"
	case *pb21.CompressiveEncoding_OutOfLineBitpacking:
		return "out_of_line_bitpacking"
	case *pb21.CompressiveEncoding_InlineBitpacking:
		return "inline_bitpacking"
	case *pb21.CompressiveEncoding_Fsst:
		return "fsst"
	case *pb21.CompressiveEncoding_Dictionary:
		return "dictionary"
	case *pb21.CompressiveEncoding_Rle:
		return "rle"
	case *pb21.CompressiveEncoding_ByteStreamSplit:
		return "byte_stream_split"
	case *pb21.CompressiveEncoding_General:
		return "general"
	case *pb21.CompressiveEncoding_FixedSizeList:
		return "fixed_size_list"
	case *pb21.CompressiveEncoding_PackedStruct:
		return "packed_struct"
	case *pb21.CompressiveEncoding_VariablePackedStruct:
		return "variable_packed_struct"
	}
	return "unknown"
}
