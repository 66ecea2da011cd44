package codec

import (
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// EncodeOptions steer the encoders.
type EncodeOptions struct {
	// Minor is the file's minor version: 1 (2.1), 2 (2.2) or 3 (2.3).
	// Forms a version does not allow are never produced (§8.4): no RLE
	// level frames and no LZ4-framed dictionaries in 2.1.
	Minor int
	// NoBitpacking keeps integers flat; NoFSST keeps strings variable.
	NoBitpacking bool
	NoFSST       bool
}

// Chunk is one mini-block chunk's values: N values in Buffers (the value
// buffers of §4.3, in order, unpadded; the caller pads each to 8).
type Chunk struct {
	N       uint64
	Buffers [][]byte
}

// EncodeMiniBlock compresses the values of one mini-block page. b must be
// a Fixed block (bits 1 or a multiple of 8) or a Variable block. It returns
// the page's value_compression and its chunks: every chunk but the last
// holds a power of two ≤ 4096 values (W5), sized like Lance's (§4.4).
func EncodeMiniBlock(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []Chunk, error) {
	return encodeMiniBlock(b, opts)
}

// EncodeLevels compresses the 16-bit rep or def levels of one chunk or of a
// constant page (block context). It returns flat(16) with the raw levels,
// or in 2.2+ an RLE block frame (u8 run lengths, W11) when that is smaller.
func EncodeLevels(levels []uint16, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte) {
	return encodeLevels(levels, opts)
}

// EncodeDictionary builds the dictionary buffer of a mini-block page from
// the distinct values b (Variable, or Fixed of 8..128 bits): a variable
// (or flat) block, wrapped in general[lz4] for 2.2+ as Lance 12 does.
func EncodeDictionary(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte, error) {
	return encodeDictionary(b, opts)
}
