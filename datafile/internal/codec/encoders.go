package codec

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

func flatEnc(bits uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Flat{Flat: &pb21.Flat{BitsPerValue: bits}}}
}

func variableEnc(offsetBits uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Variable{Variable: &pb21.Variable{Offsets: flatEnc(offsetBits)}}}
}

// maxWidth is the number of bits needed for the largest of n words of T.
func maxWidth[T word](vals []T) uint {
	var or T
	for _, v := range vals {
		or |= v
	}
	return uint(bits.Len64(uint64(or)))
}

// appendPacked packs up to 1024 values (zero-padded) as one inline chunk.
func appendPacked[T word](dst []byte, vals []T) []byte {
	var blk []T
	if len(vals) == 1024 {
		blk = vals
	} else {
		blk = make([]T, 1024)
		copy(blk, vals)
	}
	w := maxWidth(blk)
	tb := bitsOf[T]()
	nw := w * (1024 / tb)
	start := len(dst)
	dst = append(dst, make([]byte, int(tb/8)+int(nw*tb/8))...)
	chunk := dst[start:]
	switch tb {
	case 8:
		chunk[0] = byte(w)
	case 16:
		binary.LittleEndian.PutUint16(chunk, uint16(w))
	case 32:
		binary.LittleEndian.PutUint32(chunk, uint32(w))
	default:
		binary.LittleEndian.PutUint64(chunk, uint64(w))
	}
	if nw == 0 {
		return dst
	}
	packed := chunk[tb/8:]
	if littleEndianHost() && uintptr(unsafe.Pointer(&packed[0]))%uintptr(tb/8) == 0 {
		packBlock(blk, unsafe.Slice((*T)(unsafe.Pointer(&packed[0])), nw), w)
		return dst
	}
	out := make([]T, nw)
	packBlock(blk, out, w)
	return storeWords(dst[:start+int(tb/8)], out)
}

// AppendBitpacked appends one inline-bitpacking chunk (§7.3) to dst: the
// width word (T bits) and the FastLanes-packed block of vals, n ≤ 1024
// values of t bits (8, 16, 32 or 64) given as raw little-endian words in
// vals; the block is padded with zeros to 1024 values. The width is the
// smallest that holds every value.
func AppendBitpacked(dst []byte, t uint64, vals []byte, n int) []byte {
	if n > 1024 {
		n = 1024
	}
	switch t {
	case 8:
		return appendPacked(dst, fromBytes[uint8](vals, n)[:n])
	case 16:
		return appendPacked(dst, fromBytes[uint16](vals, n)[:n])
	case 32:
		return appendPacked(dst, fromBytes[uint32](vals, n)[:n])
	default:
		return appendPacked(dst, fromBytes[uint64](vals, n)[:n])
	}
}

// pageWords returns the n little-endian words of T at the start of data:
// the bytes themselves when the host is little-endian and data is aligned
// for T (no copy of the page), else a decoded copy.
func pageWords[T word](data []byte, n int) []T {
	tb := int(bitsOf[T]() / 8)
	if n > 0 && len(data) >= n*tb && littleEndianHost() && uintptr(unsafe.Pointer(&data[0]))%uintptr(tb) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&data[0])), n)
	}
	return fromBytes[T](data, n)[:n]
}

// packedSize is the size of the inline-bitpacked form of the values, chunk
// by chunk (1024 each).
func packedSize[T word](vals []T) uint64 {
	tb := uint64(bitsOf[T]())
	var size uint64
	for i := 0; i < len(vals); i += 1024 {
		j := min(i+1024, len(vals))
		size += tb/8 + 128*uint64(maxWidth(vals[i:j]))
	}
	return size
}

// bitpackChunks bit-packs n values of T when their packed size is at most
// limit bytes; otherwise (nothing packed) it returns a nil encoding.
func bitpackChunks[T word](data []byte, n int, limit uint64) (*pb21.CompressiveEncoding, []Chunk, uint64) {
	vals := pageWords[T](data, n)
	tb := uint64(bitsOf[T]())
	size := packedSize(vals)
	if size > limit {
		return nil, nil, size
	}
	chunks := make([]Chunk, 0, (n+1023)/1024)
	for i := 0; i < n; i += 1024 {
		j := min(i+1024, n)
		w := uint64(maxWidth(vals[i:j]))
		chunk := appendPacked(make([]byte, 0, tb/8+128*w), vals[i:j])
		chunks = append(chunks, Chunk{N: uint64(j - i), Buffers: [][]byte{chunk}})
	}
	enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: tb}}}
	return enc, chunks, size
}

// flatChunkValues is the number of values per non-last flat chunk: the
// largest 2^k ≤ 4096 with 2^k·W/8 ≤ 4096 bytes (§4.4).
func flatChunkValues(bits uint64) uint64 {
	if bits == 1 {
		return 4096
	}
	per := uint64(4096)
	for per > 1 && per*bits/8 > 4096 {
		per /= 2
	}
	return per
}

func encodeMiniBlock(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []Chunk, error) {
	switch b.Kind {
	case Fixed:
		return encodeFixed(b, opts)
	case Variable:
		return encodeVariable(b, opts)
	}
	return nil, nil, errf(ErrUnsupported, b.Kind.String(), "encode", "mini-block values must be fixed or variable")
}

func encodeFixed(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []Chunk, error) {
	if b.Bits == 0 || (b.Bits != 1 && b.Bits%8 != 0) {
		return nil, nil, errf(ErrUnsupported, "flat", "encode", "values of %d bits", b.Bits)
	}
	size, ok := fixedBytes(b.Num, b.Bits)
	if !ok || size > uint64(len(b.Data)) {
		return nil, nil, errf(ErrCorrupt, "flat", "encode", "%d values of %d bits in %d bytes", b.Num, b.Bits, len(b.Data))
	}
	n := int(b.Num)
	// Lance 12's choice for fixed-width mini-block values (its size
	// model): RLE when its estimated size — (runs + n/255) value/u8 pairs,
	// the n/255 bounding the split of long runs — is below the flat size
	// and the inline bit-packing estimate is not smaller still; else
	// inline bit-packing when its size (per 1024 values one word plus
	// 1024·width bits) is below the flat size; else flat.
	packed, havePacked := uint64(0), false
	if !opts.NoBitpacking && n > 0 {
		switch b.Bits {
		case 8:
			packed, havePacked = packedSize(pageWords[uint8](b.Data, n)), true
		case 16:
			packed, havePacked = packedSize(pageWords[uint16](b.Data, n)), true
		case 32:
			packed, havePacked = packedSize(pageWords[uint32](b.Data, n)), true
		case 64:
			packed, havePacked = packedSize(pageWords[uint64](b.Data, n)), true
		}
		havePacked = havePacked && packed < size
	}
	if !opts.NoRLE && n > 0 && (b.Bits == 8 || b.Bits == 16 || b.Bits == 32 || b.Bits == 64) {
		w := int(b.Bits / 8)
		// Runs of equal values, counted only up to what could still win.
		pairs := uint64(valueRuns(b.Data[:size], w, n*w/(w+1)+1) + n/255)
		pairs = min(pairs, uint64(n))
		rle := pairs * uint64(w+1)
		if rle < size && !(havePacked && packed < rle) {
			return rleChunks(b.Data[:size], w, n), rleChunksOf(b.Data[:size], w, n), nil
		}
	}
	if havePacked {
		var enc *pb21.CompressiveEncoding
		var chunks []Chunk
		switch b.Bits {
		case 8:
			enc, chunks, _ = bitpackChunks[uint8](b.Data, n, packed)
		case 16:
			enc, chunks, _ = bitpackChunks[uint16](b.Data, n, packed)
		case 32:
			enc, chunks, _ = bitpackChunks[uint32](b.Data, n, packed)
		case 64:
			enc, chunks, _ = bitpackChunks[uint64](b.Data, n, packed)
		}
		if enc != nil {
			return enc, chunks, nil
		}
	}
	per := flatChunkValues(b.Bits)
	var chunks []Chunk
	for i := uint64(0); i < b.Num; i += per {
		j := min(i+per, b.Num)
		var buf []byte
		if b.Bits == 1 {
			buf = b.Data[i/8 : (j+7)/8]
		} else {
			buf = b.Data[i*b.Bits/8 : j*b.Bits/8]
		}
		chunks = append(chunks, Chunk{N: j - i, Buffers: [][]byte{buf}})
	}
	return flatEnc(b.Bits), chunks, nil
}

// maxChunkBytes is the target size of a variable chunk's value buffer.
const maxChunkBytes = 4096

func encodeVariable(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []Chunk, error) {
	ob := b.OffsetBits
	if ob != 32 && ob != 64 {
		return nil, nil, errf(ErrUnsupported, "variable", "encode", "offsets of %d bits", ob)
	}
	vals := make([][]byte, b.Num)
	var total, maxLen int
	for i := range vals {
		vals[i] = b.Value(uint64(i))
		total += len(vals[i])
		maxLen = max(maxLen, len(vals[i]))
	}
	enc := variableEnc(ob)
	if !opts.NoFSST && total >= 32<<10 && maxLen >= 5 {
		t := TrainFSST(vals)
		comp := make([][]byte, len(vals))
		var ctotal int
		arena := make([]byte, 0, total+total/4+16)
		for i, v := range vals {
			start := len(arena)
			arena = t.Encode(arena, v)
			comp[i] = arena[start:len(arena):len(arena)]
			ctotal += len(comp[i])
		}
		// Re-slice: the arena may have moved while growing.
		pos := 0
		for i := range comp {
			l := len(comp[i])
			comp[i] = arena[pos : pos+l : pos+l]
			pos += l
		}
		if ctotal+SymbolTableSize < total-total/8 {
			vals = comp
			enc = &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Fsst{Fsst: &pb21.Fsst{SymbolTable: t.Bytes(), Values: variableEnc(ob)}}}
		}
	}
	ow := int(ob / 8)
	var chunks []Chunk
	for p := 0; p < len(vals); {
		// Double the count while the chunk stays ≤ 4 KiB (§4.4).
		cnt := 1
		bytes := ow*2 + len(vals[p])
		for cnt < 4096 && p+2*cnt <= len(vals) {
			add := ow * cnt
			for _, v := range vals[p+cnt : p+2*cnt] {
				add += len(v)
			}
			if bytes+add > maxChunkBytes {
				break
			}
			bytes += add
			cnt *= 2
		}
		// The rest fits in one last chunk?
		if rest := len(vals) - p; rest > cnt && rest <= 4096 {
			rb := ow * (rest + 1)
			for _, v := range vals[p:] {
				rb += len(v)
			}
			if rb <= maxChunkBytes {
				cnt = rest
			}
		}
		chunks = append(chunks, Chunk{N: uint64(cnt), Buffers: [][]byte{variableBuffer(vals[p:p+cnt], ow)}})
		p += cnt
	}
	if opts.Minor == 1 {
		for i, c := range chunks {
			if len(c.Buffers[0]) > 32<<10-64 {
				return nil, nil, errf(ErrLimit, "variable", "encode", "chunk %d of %d bytes is over the 2.1 chunk limit (write such values full-zip)", i, len(c.Buffers[0]))
			}
		}
	}
	return enc, chunks, nil
}

// variableBuffer: (n+1) offsets relative to the buffer start, the bytes,
// padding to the offset width (§7.2, W10).
func variableBuffer(vals [][]byte, ow int) []byte {
	size := ow * (len(vals) + 1)
	for _, v := range vals {
		size += len(v)
	}
	pad := (ow - size%ow) % ow
	buf := make([]byte, 0, size+pad)
	off := uint64(ow * (len(vals) + 1))
	put := func(o uint64) {
		if ow == 4 {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(o))
		} else {
			buf = binary.LittleEndian.AppendUint64(buf, o)
		}
	}
	put(off)
	for _, v := range vals {
		off += uint64(len(v))
		put(off)
	}
	for _, v := range vals {
		buf = append(buf, v...)
	}
	for i := 0; i < pad; i++ {
		buf = append(buf, 0x48)
	}
	return buf
}

func encodeLevels(levels []uint16, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte) {
	raw := make([]byte, 2*len(levels))
	for i, l := range levels {
		binary.LittleEndian.PutUint16(raw[2*i:], l)
	}
	if opts.Minor < 2 || len(levels) == 0 {
		return flatEnc(16), raw
	}
	var vals, runs []byte
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] && j-i < 255 {
			j++
		}
		vals = binary.LittleEndian.AppendUint16(vals, levels[i])
		runs = append(runs, byte(j-i))
		i = j
	}
	if 8+len(vals)+len(runs) >= len(raw) {
		return flatEnc(16), raw
	}
	frame := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(vals)+len(runs)), uint64(len(vals)))
	frame = append(frame, vals...)
	frame = append(frame, runs...)
	enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flatEnc(16), RunLengths: flatEnc(8)}}}
	return enc, frame
}

func encodeDictionary(b Block, opts EncodeOptions) (*pb21.CompressiveEncoding, []byte, error) {
	var enc *pb21.CompressiveEncoding
	var buf []byte
	switch b.Kind {
	case Variable:
		ob := b.OffsetBits
		if ob != 32 && ob != 64 {
			return nil, nil, errf(ErrUnsupported, "variable", "encode", "offsets of %d bits", ob)
		}
		ow := ob / 8
		start := 2*ow + (b.Num+1)*ow
		put := func(x uint64) {
			if ow == 4 {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
			} else {
				buf = binary.LittleEndian.AppendUint64(buf, x)
			}
		}
		put(ob)
		put(start)
		base := b.Offset(0)
		for i := uint64(0); i <= b.Num; i++ {
			put(b.Offset(i) - base)
		}
		buf = append(buf, b.Data[base:b.Offset(b.Num)]...)
		enc = variableEnc(ob)
	case Fixed:
		// 2.1: plain flat values; 2.2+: general(lz4) over flat (as Lance 12
		// writes an Arrow dictionary of integers or floats).
		size, ok := fixedBytes(b.Num, b.Bits)
		if !ok || (b.Bits%8 != 0 && b.Bits != 1) || size > uint64(len(b.Data)) {
			return nil, nil, errf(ErrCorrupt, "flat", "encode", "%d values of %d bits in %d bytes", b.Num, b.Bits, len(b.Data))
		}
		buf = b.Data[:size]
		enc = flatEnc(b.Bits)
	default:
		return nil, nil, errf(ErrUnsupported, b.Kind.String(), "encode", "dictionary values must be fixed or variable")
	}
	if opts.Minor < 2 {
		return enc, buf, nil
	}
	lz4 := pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4
	framed, err := CompressGeneral(nil, lz4, 0, buf)
	if err != nil {
		return nil, nil, err
	}
	genc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{
		Compression: &pb21.BufferCompression{Scheme: lz4}, Values: enc}}}
	return genc, framed, nil
}

// valueRuns counts the runs of equal w-byte values in data (a change of
// value starts a run; runs are not split at 255), stopping past limit.
func valueRuns(data []byte, w, limit int) int {
	runs := 0
	var prev uint64
	for i := 0; i+w <= len(data); i += w {
		var v uint64
		switch w {
		case 1:
			v = uint64(data[i])
		case 2:
			v = uint64(binary.LittleEndian.Uint16(data[i:]))
		case 4:
			v = uint64(binary.LittleEndian.Uint32(data[i:]))
		default:
			v = binary.LittleEndian.Uint64(data[i:])
		}
		if i > 0 && v == prev {
			continue
		}
		runs++
		if runs > limit {
			return runs
		}
		prev = v
	}
	return runs
}

func rleChunks(data []byte, w, n int) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{
		Values: flatEnc(uint64(8 * w)), RunLengths: flatEnc(8)}}}
}

// rleRuns encodes values [from, to) as run values and u8 run lengths.
func rleRuns(data []byte, w, from, to int) (vals, runs []byte) {
	for i := from; i < to; {
		j := i + 1
		for j < to && j-i < 255 && string(data[j*w:(j+1)*w]) == string(data[i*w:(i+1)*w]) {
			j++
		}
		vals = append(vals, data[i*w:(i+1)*w]...)
		runs = append(runs, byte(j-i))
		i = j
	}
	return vals, runs
}

// rleChunksOf cuts RLE chunks: 4096 values, halved while the chunk's runs
// take more than 8 KiB (§4.4); the last chunk takes the rest.
func rleChunksOf(data []byte, w, n int) []Chunk {
	var chunks []Chunk
	for p := 0; p < n; {
		cnt := 4096
		for {
			end := min(p+cnt, n)
			vals, runs := rleRuns(data, w, p, end)
			if len(vals)+len(runs) <= 8192 || cnt == 1 {
				chunks = append(chunks, Chunk{N: uint64(end - p), Buffers: [][]byte{vals, runs}})
				p = end
				break
			}
			cnt /= 2
		}
	}
	return chunks
}

// AppendOutOfLine16 appends u16 levels out-of-line bit-packed at width w
// (§7.4, the block form Lance 12 uses for mini-block rep/def levels):
// ⌊n/1024⌋ FastLanes blocks of 64·w u16 words without a width word, then
// the r = n mod 1024 remaining levels packed as one zero-padded block when
// r > 1024·w/16 (Lance's rule), else as r raw u16 words. Every level must
// fit in w bits (w ≤ 16).
func AppendOutOfLine16(dst []byte, levels []uint16, w uint) []byte {
	n := len(levels)
	nw := int(w) * 64
	out := make([]uint16, nw)
	pack := func(blk []uint16) {
		if len(blk) < 1024 {
			full := make([]uint16, 1024)
			copy(full, blk)
			blk = full
		}
		clear(out)
		if nw > 0 {
			packBlock(blk, out, w)
		}
		dst = storeWords(dst, out)
	}
	i := 0
	for ; i+1024 <= n; i += 1024 {
		pack(levels[i : i+1024])
	}
	if r := n - i; r > 0 {
		if r > 1024*int(w)/16 {
			pack(levels[i:])
		} else {
			dst = storeWords(dst, levels[i:])
		}
	}
	return dst
}

// OutOfLine16Encoding is the encoding of AppendOutOfLine16's output.
func OutOfLine16Encoding(w uint) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{
		UncompressedBitsPerValue: 16, Values: flatEnc(uint64(w))}}}
}
