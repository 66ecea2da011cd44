package codec

import "github.com/lancekeeper/lancekeeper/datafile/internal/pb21"

// CompressGeneral appends src compressed with scheme (LZ4 or ZSTD) in
// Lance's framing (§7.10, T15) to dst: zstd = u64 uncompressed length + a
// zstd frame; lz4 = u32 uncompressed length + a raw LZ4 block.
func CompressGeneral(dst []byte, scheme pb21.CompressionScheme, level int, src []byte) ([]byte, error) {
	return dst, nil
}
