package codec

import (
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// Context names, as they appear in errors.
const (
	ctxMini  = "mini-block"
	ctxBlock = "block"
	ctxValue = "per-value"
)

// DecodeMiniBlock decodes the value buffers of one mini-block chunk (§4.3)
// holding n values, compressed with the page's value_compression.
func DecodeMiniBlock(enc *pb21.CompressiveEncoding, bufs [][]byte, n uint64, lim Limits) (Block, error) {
	d := decoder{ctx: ctxMini, left: lim.max()}
	return d.mini(enc, bufs, n, 0)
}

// DecodeBlock decodes one buffer holding n values in the block context
// (levels, a mini-block page's dictionary, constant-page levels).
func DecodeBlock(enc *pb21.CompressiveEncoding, buf []byte, n uint64, lim Limits) (Block, error) {
	d := decoder{ctx: ctxBlock, left: lim.max()}
	return d.block(enc, buf, n, 0)
}

// DecodeLevels decodes n 16-bit rep or def levels (block context); the
// encoding must produce 16-bit fixed-width values (W3/§4.3).
func DecodeLevels(enc *pb21.CompressiveEncoding, buf []byte, n uint64, lim Limits) ([]uint16, error) {
	b, err := DecodeBlock(enc, buf, n, lim)
	if err != nil {
		return nil, err
	}
	if b.Kind != Fixed || b.Bits != 16 {
		return nil, errf(ErrCorrupt, name(enc), ctxBlock, "levels must decode to 16-bit values, got %s of %d bits", b.Kind, b.Bits)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(b.Data[2*i]) | uint16(b.Data[2*i+1])<<8
	}
	return out, nil
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
