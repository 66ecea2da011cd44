// Package codec implements the compression algorithms of Lance 2.1, 2.2 and
// 2.3 data files (shared/spec/lance-file-format-2.1.md §7): the decoders for
// every CompressiveEncoding Lance 12 writes, and the encoders the writer
// uses. It knows nothing of pages, chunks, levels or Arrow: the structural
// layer (mini-block chunks, full-zip items, rep/def levels, Arrow assembly)
// lives in package datafile and calls this package with the buffers it has
// cut out of a page.
//
// # Decoded data
//
// Every decoder produces a [Block]:
//
//   - [Fixed]: Num values of Bits bits each, little-endian, back to back in
//     Data (Bits 1 = an LSB-first bitmap of ceil(Num/8) bytes; otherwise
//     Num·Bits/8 bytes). Integers, floats, levels (Bits 16), dictionary
//     indices, decimals and fixed-size binary all come out this way; a
//     bit-packed integer is widened back to its uncompressed width (raw
//     unsigned words, T12: reinterpret for signed types).
//   - [Variable]: Num values; value i is Data[Offset(i):Offset(i+1)].
//     Offsets holds Num+1 little-endian words of OffsetBits (32 or 64) bits;
//     Offsets[0] need not be 0 (a mini-block chunk's offsets are relative to
//     its buffer, and Data is that buffer), which is also what Arrow allows.
//   - [Struct]: a packed struct (§7.12, §7.13): one child Block per field,
//     each with Num values.
//   - [List]: a fixed-size list (§7.11): Dim items per value, an optional
//     validity bitmap of Num·Dim bits (nil = all valid) and one child Block
//     of Num·Dim items (itself a Fixed or another List).
//
// Decoded Data may alias the input buffers (no copy when the bytes are
// already in their final form); callers must not modify the input while
// the Block is in use.
//
// # Three decoding contexts (§7)
//
// A CompressiveEncoding means different bytes depending on where it appears:
//
//   - [DecodeMiniBlock]: the value_compression of a mini-block page, given
//     the value buffers of one chunk and the chunk's value count.
//   - [DecodeBlock]: rep/def levels, the dictionary of a mini-block page,
//     the levels of a constant page: one buffer and a count. [DecodeLevels]
//     is the same for 16-bit levels, returned as []uint16.
//   - [ValueDecoder]: the value_compression of a full-zip page, fed one
//     item (one value's bytes) at a time; [ValueDecoder.FixedBytes] is the
//     size of a fixed-width item, zero for variable-width items.
//
// Every decoder takes [Limits]: the caller's maximum number of decoded bytes,
// which bounds every allocation made from a length field of the input.
// Hostile bytes give an *[Error] wrapping [ErrCorrupt], [ErrUnsupported] or
// [ErrLimit], never a panic.
//
// # Encoders
//
//   - [EncodeMiniBlock] chooses a value compression for a page's values
//     (inline bit-packing for integers when it saves space, FSST for text,
//     flat or variable otherwise), splits the values into chunks with the
//     value counts Lance uses (powers of two, ≤ 4096) and returns the
//     CompressiveEncoding with each chunk's value buffers.
//   - [EncodeLevels] compresses 16-bit rep/def levels for a chunk or a
//     constant page (flat(16), or an RLE block frame in 2.2+).
//   - [EncodeDictionary] builds a dictionary buffer (variable or flat block,
//     LZ4-framed in 2.2+).
//   - Building blocks: [AppendBitpacked] (one FastLanes block, §7.3),
//     [TrainFSST] and [SymbolTable] (§7.7), [CompressGeneral] (§7.10),
//     [AppendRLEBlock] (§7.6).
//
// All encoder output round-trips through the decoders of this package.
package codec
