package codec

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// Hostile length fields and counts give typed errors — ErrLimit before any
// allocation over the caller's maximum, ErrCorrupt for contradictions —
// never a panic.
func TestHostileLengthsAreBounded(t *testing.T) {
	lz4 := pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4
	zstdS := pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD
	gen := func(s pb21.CompressionScheme) *pb21.CompressiveEncoding {
		return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{Compression: &pb21.BufferCompression{Scheme: s}, Values: flatEnc(8)}}}
	}
	rle := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flatEnc(64), RunLengths: flatEnc(8)}}}
	bss := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_ByteStreamSplit{ByteStreamSplit: &pb21.ByteStreamSplit{Values: flatEnc(64)}}}
	constant := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Constant{Constant: &pb21.Constant{Value: []byte{1, 2, 3, 4}}}}
	fsst := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Fsst{Fsst: &pb21.Fsst{SymbolTable: make([]byte, 8), Values: variableEnc(32)}}}
	huge32 := binary.LittleEndian.AppendUint32(nil, 0xffffffff)
	huge64 := binary.LittleEndian.AppendUint64(nil, 1<<62)
	lim := Limits{MaxBytes: 1 << 20}
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"§7.10 lz4 length prefix 4 GiB", func() error { _, err := DecodeBlock(gen(lz4), append(huge32, 0), 10, lim); return err }, ErrLimit},
		{"§7.10 zstd length prefix 2^62", func() error { _, err := DecodeBlock(gen(zstdS), append(huge64, zstdMagic[:]...), 10, lim); return err }, ErrLimit},
		{"§7.10 zstd garbage frame", func() error {
			_, err := DecodeBlock(gen(zstdS), append(binary.LittleEndian.AppendUint64(nil, 5), 1, 2, 3), 5, lim)
			return err
		}, ErrCorrupt},
		{"§7.10 scheme 0", func() error { _, err := DecodeBlock(gen(0), []byte{0, 0, 0, 0}, 0, lim); return err }, ErrUnsupported},
		{"§7.3 inline count 2^40", func() error { _, err := DecodeMiniBlock(inlineEnc(64), [][]byte{{0}}, 1<<40, lim); return err }, ErrLimit},
		{"§7.3 inline width over T", func() error { _, err := DecodeMiniBlock(inlineEnc(8), [][]byte{{9}}, 5, lim); return err }, ErrCorrupt},
		{"§7.3 inline short data", func() error { _, err := DecodeMiniBlock(inlineEnc(32), [][]byte{{3, 0, 0, 0, 1}}, 5, lim); return err }, ErrCorrupt},
		{"§7.4 ool count 2^40", func() error { _, err := DecodeBlock(oolEnc(16, 1), nil, 1<<40, lim); return err }, ErrCorrupt},
		{"§7.5 rle count 2^40", func() error { _, err := DecodeMiniBlock(rle, [][]byte{make([]byte, 8), {255}}, 1<<40, lim); return err }, ErrLimit},
		{"§7.6 rle frame size past the end", func() error { _, err := DecodeBlock(rle, huge64, 1, lim); return err }, ErrCorrupt},
		{"§7.9 bss count past the buffer", func() error { _, err := DecodeMiniBlock(bss, [][]byte{make([]byte, 16)}, 3, lim); return err }, ErrCorrupt},
		{"§7.14 constant count 2^40", func() error { _, err := DecodeBlock(constant, nil, 1<<40, lim); return err }, ErrLimit},
		{"§7.1 flat count overflow", func() error { _, err := DecodeMiniBlock(flatEnc(64), [][]byte{{1}}, 1<<62, lim); return err }, ErrCorrupt},
		{"§7.1 flat of 7 bits", func() error { _, err := DecodeMiniBlock(flatEnc(7), [][]byte{{1}}, 1, lim); return err }, ErrUnsupported},
		{"§7.2 variable offsets count 2^63", func() error {
			_, err := DecodeMiniBlock(variableEnc(32), [][]byte{make([]byte, 8)}, 1<<63, lim)
			return err
		}, ErrCorrupt},
		{"§7.2 variable block data_start past the end", func() error {
			b := []byte{32, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
			_, err := DecodeBlock(variableEnc(32), b, 1, lim)
			return err
		}, ErrCorrupt},
		{"§7.7 fsst table without magic", func() error { _, err := DecodeMiniBlock(fsst, [][]byte{make([]byte, 8)}, 1, lim); return err }, ErrCorrupt},
		{"missing compression variant", func() error {
			_, err := DecodeMiniBlock(&pb21.CompressiveEncoding{}, [][]byte{{1}}, 1, lim)
			return err
		}, ErrCorrupt},
		{"levels of 32 bits", func() error { _, err := DecodeLevels(flatEnc(32), make([]byte, 8), 2, lim); return err }, ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			var ce *Error
			if !errors.Is(err, c.want) || !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *codec.Error wrapping %v", err, c.want)
			}
		})
	}
}
