package codec

import (
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// maxDepth bounds the nesting of CompressiveEncodings.
const maxDepth = 16

// decoder carries the context name and the remaining byte budget.
type decoder struct {
	ctx  string
	left uint64
}

func (d *decoder) mini(enc *pb21.CompressiveEncoding, bufs [][]byte, n uint64, depth int) (Block, error) {
	return Block{}, errf(ErrUnsupported, name(enc), d.ctx, "not implemented yet")
}

func (d *decoder) block(enc *pb21.CompressiveEncoding, buf []byte, n uint64, depth int) (Block, error) {
	return Block{}, errf(ErrUnsupported, name(enc), d.ctx, "not implemented yet")
}

func encodeMiniBlock(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []Chunk, error) {
	return nil, nil, errf(ErrUnsupported, "", "encode", "not implemented yet")
}

func encodeLevels(levels []uint16, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte) {
	return nil, nil
}

func encodeDictionary(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte, error) {
	return nil, nil, errf(ErrUnsupported, "", "encode", "not implemented yet")
}
