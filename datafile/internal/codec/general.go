package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
	"github.com/pierrec/lz4/v4"
)

var zstdMagic = [4]byte{0x28, 0xb5, 0x2f, 0xfd}

// general decompresses one buffer in Lance's framing (§7.10, T15).
func (d *decoder) general(enc *pb21.CompressiveEncoding, bc *pb21.BufferCompression, buf []byte) ([]byte, error) {
	switch bc.GetScheme() {
	case pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		var want uint64
		frame := buf
		bare := len(buf) >= 5 && [4]byte(buf[:4]) == zstdMagic && buf[4]&0x10 == 0
		if !bare {
			if len(buf) < 8 {
				return nil, d.errf(ErrCorrupt, enc, "zstd buffer of %d bytes has no length prefix", len(buf))
			}
			want = binary.LittleEndian.Uint64(buf)
			frame = buf[8:]
		} else {
			// The frame header may state the content size; otherwise
			// decode up to the budget.
			var h zstd.Header
			if err := h.Decode(frame); err != nil || !h.HasFCS {
				want = d.left + 1 // unknown: let the limit stop it
			} else {
				want = h.FrameContentSize
			}
		}
		if !bare && want > d.left {
			return nil, d.errf(ErrLimit, enc, "zstd buffer of %d bytes, %d left of the limit", want, d.left)
		}
		zd, err := d.zstdDecoder()
		if err != nil {
			return nil, err
		}
		capHint := want
		if capHint > d.left {
			capHint = 0
		}
		out, err := zd.DecodeAll(frame, make([]byte, 0, capHint))
		if err != nil {
			return nil, &Error{Encoding: name(enc), Context: d.ctx, Msg: "zstd", Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
		}
		if !bare && uint64(len(out)) != want {
			return nil, d.errf(ErrCorrupt, enc, "zstd gave %d bytes, the prefix says %d", len(out), want)
		}
		if err := d.take(uint64(len(out)), "general"); err != nil {
			return nil, err
		}
		return out, nil
	case pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		if len(buf) < 4 {
			return nil, d.errf(ErrCorrupt, enc, "lz4 buffer of %d bytes has no length prefix", len(buf))
		}
		want := uint64(binary.LittleEndian.Uint32(buf))
		if err := d.take(want, "general"); err != nil {
			return nil, err
		}
		if want == 0 {
			return []byte{}, nil
		}
		out := d.alloc(want)
		got, err := lz4.UncompressBlock(buf[4:], out)
		if err != nil {
			return nil, &Error{Encoding: name(enc), Context: d.ctx, Msg: "lz4", Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
		}
		if uint64(got) != want {
			return nil, d.errf(ErrCorrupt, enc, "lz4 gave %d bytes, the prefix says %d", got, want)
		}
		return out, nil
	}
	return nil, d.errf(ErrUnsupported, enc, "compression scheme %v", bc.GetScheme())
}

// zstdDecoder returns the decoder's zstd decoder, made on first use.
func (d *decoder) zstdDecoder() (*zstd.Decoder, error) {
	if d.zstd != nil {
		return d.zstd, nil
	}
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(d.left+1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, &Error{Encoding: "general", Context: d.ctx, Msg: "zstd decoder", Err: fmt.Errorf("%w: %w", ErrUnsupported, err)}
	}
	d.zstd = zd
	return zd, nil
}

// CompressGeneral appends src compressed with scheme (LZ4 or ZSTD) in
// Lance's framing (§7.10, T15) to dst: zstd = u64 uncompressed length + a
// zstd frame; lz4 = u32 uncompressed length + a raw LZ4 block. level is the
// zstd level (0 = default); LZ4 ignores it.
func CompressGeneral(dst []byte, scheme pb21.CompressionScheme, level int, src []byte) ([]byte, error) {
	switch scheme {
	case pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD:
		opts := []zstd.EOption{zstd.WithEncoderConcurrency(1)}
		if level > 0 {
			opts = append(opts, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		}
		ze, err := zstd.NewWriter(nil, opts...)
		if err != nil {
			return dst, &Error{Encoding: "general", Context: "encode", Msg: "zstd encoder", Err: fmt.Errorf("%w: %w", ErrUnsupported, err)}
		}
		defer ze.Close()
		dst = binary.LittleEndian.AppendUint64(dst, uint64(len(src)))
		return ze.EncodeAll(src, dst), nil
	case pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4:
		if uint64(len(src)) > 1<<31 {
			return dst, errf(ErrLimit, "general", "encode", "lz4 block of %d bytes", len(src))
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
		start := len(dst)
		dst = append(dst, make([]byte, lz4.CompressBlockBound(len(src)))...)
		if len(src) == 0 {
			return dst[:start], nil
		}
		var c lz4.Compressor
		n, err := c.CompressBlock(src, dst[start:])
		if err == nil && n == 0 {
			err = fmt.Errorf("lz4 compressed %d bytes to nothing", len(src))
		}
		if err != nil {
			return dst[:start-4], &Error{Encoding: "general", Context: "encode", Msg: "lz4", Err: fmt.Errorf("%w: %w", ErrCorrupt, err)}
		}
		return dst[:start+n], nil
	}
	return dst, errf(ErrUnsupported, "general", "encode", "compression scheme %v", scheme)
}

// ZstdValues compresses values one at a time in Lance's zstd framing (u64
// uncompressed length + one zstd frame at the default level), as Lance 12
// compresses each item of a full-zip page of very large strings/binaries
// (§7.10, per-value context). One encoder serves a whole page.
type ZstdValues struct{ ze *zstd.Encoder }

// NewZstdValues returns a per-value zstd compressor; Close releases it.
func NewZstdValues() (*ZstdValues, error) {
	ze, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, &Error{Encoding: "general", Context: "encode", Msg: "zstd encoder", Err: fmt.Errorf("%w: %w", ErrUnsupported, err)}
	}
	return &ZstdValues{ze: ze}, nil
}

// Append appends src compressed (length prefix + frame) to dst.
func (z *ZstdValues) Append(dst, src []byte) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, uint64(len(src)))
	return z.ze.EncodeAll(src, dst)
}

// Close releases the encoder.
func (z *ZstdValues) Close() { z.ze.Close() }
