package manifest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// A self-contained reader for the one Arrow IPC file shape a .arrow
// deletion file has (lance-table-format.md §4.7): a schema whose first
// field is a non-dictionary 32-bit integer column, and record batches whose
// buffers may be ZSTD- or LZ4-frame-compressed. It is written against the
// Arrow IPC file layout (leading "ARROW1", encapsulated messages, footer
// flatbuffer, footer length, trailing "ARROW1") and trusts no offset or
// length in the file: everything is checked before it is used, and the
// memory it allocates is bounded by the file size plus
// MaxArrowDeletionAlloc.

const (
	arrowMagic          = "ARROW1"
	arrowTypeInt        = 2 // Type union tag of Int
	arrowHeaderRecBatch = 3 // MessageHeader union tag of RecordBatch
	arrowCodecLZ4Frame  = 0
	arrowCodecZSTD      = 1
	arrowBlockSize      = 24 // struct Block { offset i64; metaDataLength i32; pad; bodyLength i64 }
	arrowBufferSize     = 16 // struct Buffer { offset i64; length i64 }
	arrowFieldNodeSize  = 16 // struct FieldNode { length i64; null_count i64 }
)

// DecodeDeletionArrow decodes a .arrow deletion file: an Arrow IPC file
// whose first column (named "row_id" by Lance) is UInt32, or Int32 with no
// negative value, without nulls. All record batches are read. The decoder
// is bounds-checked throughout and never allocates more than
// MaxArrowDeletionAlloc bytes for decompressed buffers; every failure is a
// *FormatError naming the byte offset.
func DecodeDeletionArrow(name string, data []byte) (*roaring.Bitmap, error) {
	fail := func(off uint64, format string, args ...any) error {
		return formatErr(name, int64(off), "arrow deletion file: "+format, args...)
	}
	n := uint64(len(data))
	if n < 8+4+6 || string(data[:6]) != arrowMagic {
		return nil, fail(0, "missing the leading ARROW1 magic of an Arrow IPC file")
	}
	if string(data[n-6:]) != arrowMagic {
		return nil, fail(n-6, "missing the trailing ARROW1 magic")
	}
	footLen := uint64(binary.LittleEndian.Uint32(data[n-10:]))
	if footLen > n-10-8 {
		return nil, fail(n-10, "footer length %d does not fit in the file", footLen)
	}
	footStart := n - 10 - footLen
	foot := fbBuf(data[footStart : n-10])
	wrap := func(off uint64, what string, err error) error {
		if err == nil {
			return nil
		}
		return &FormatError{File: name, Offset: int64(off), Reason: "arrow deletion file: " + what, Err: err}
	}

	ft, err := foot.root()
	if err != nil {
		return nil, wrap(footStart, "footer", err)
	}
	schema, ok, err := ft.sub(1)
	if err != nil || !ok {
		return nil, wrap(footStart, "footer schema", orMissing(err, "no schema"))
	}
	fstart, nfields, err := schema.vector(1, 4)
	if err != nil {
		return nil, wrap(footStart, "schema fields", err)
	}
	if nfields < 1 {
		return nil, fail(footStart, "schema has no columns")
	}
	field, err := foot.tableAt(fstart, 0)
	if err != nil {
		return nil, wrap(footStart, "schema field 0", err)
	}
	colName, err := field.str(0)
	if err != nil {
		return nil, wrap(footStart, "field name", err)
	}
	typeTag, err := field.u8(2, 0)
	if err != nil {
		return nil, wrap(footStart, "field type", err)
	}
	if _, isDict, err := field.sub(4); err != nil || isDict {
		return nil, wrap(footStart, "field dictionary", orMissing(err, fmt.Sprintf("column %q is dictionary-encoded", colName)))
	}
	if typeTag != arrowTypeInt {
		return nil, fail(footStart, "column %q has Arrow type tag %d, want Int (uint32 or int32)", colName, typeTag)
	}
	intType, ok, err := field.sub(3)
	if err != nil || !ok {
		return nil, wrap(footStart, "field Int type", orMissing(err, "missing"))
	}
	bitWidth, err := intType.i32(0, 0)
	if err != nil {
		return nil, wrap(footStart, "Int bitWidth", err)
	}
	signed, err := intType.u8(1, 0)
	if err != nil {
		return nil, wrap(footStart, "Int is_signed", err)
	}
	if bitWidth != 32 {
		return nil, fail(footStart, "column %q is a %d-bit integer, want 32-bit", colName, bitWidth)
	}

	bstart, nbatches, err := ft.vector(3, arrowBlockSize)
	if err != nil {
		return nil, wrap(footStart, "record batch blocks", err)
	}
	out := roaring.New()
	budget := uint64(MaxArrowDeletionAlloc)
	for i := uint64(0); i < nbatches; i++ {
		blk := bstart + i*arrowBlockSize
		off, _ := foot.u64(blk)
		metaLen32, _ := foot.u32(blk + 8)
		bodyLen, _ := foot.u64(blk + 16)
		metaLen := uint64(metaLen32)
		if off < 8 || off > footStart || metaLen > footStart-off || bodyLen > footStart-off-metaLen {
			return nil, fail(footStart+blk, "record batch %d block (offset %d, metadata %d, body %d) is outside the file", i, off, metaLen, bodyLen)
		}
		vals, used, err := readIntBatch(data[off:off+metaLen], data[off+metaLen:off+metaLen+bodyLen], signed != 0, budget)
		if err != nil {
			return nil, wrap(off, fmt.Sprintf("record batch %d", i), err)
		}
		budget -= used
		out.AddMany(vals)
	}
	return out, nil
}

func orMissing(err error, what string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s", what)
}

// readIntBatch decodes one record batch message (meta: continuation and
// length prefix plus flatbuffer; body: its body) and returns column 0 as
// u32 values, and the bytes it allocated for decompression.
func readIntBatch(meta, body []byte, signed bool, budget uint64) ([]uint32, uint64, error) {
	if len(meta) < 4 {
		return nil, 0, fmt.Errorf("message prefix missing")
	}
	p := uint64(4)
	size := uint64(binary.LittleEndian.Uint32(meta))
	if size == 0xFFFFFFFF { // continuation marker, then the length
		if len(meta) < 8 {
			return nil, 0, fmt.Errorf("message length missing")
		}
		size = uint64(binary.LittleEndian.Uint32(meta[4:]))
		p = 8
	}
	if size > uint64(len(meta))-p {
		return nil, 0, fmt.Errorf("message metadata of %d bytes exceeds its block (%d)", size, uint64(len(meta))-p)
	}
	msg, err := fbBuf(meta[p : p+size]).root()
	if err != nil {
		return nil, 0, err
	}
	ht, err := msg.u8(1, 0)
	if err != nil {
		return nil, 0, err
	}
	if ht != arrowHeaderRecBatch {
		return nil, 0, fmt.Errorf("message header type %d is not a RecordBatch", ht)
	}
	rb, ok, err := msg.sub(2)
	if err != nil || !ok {
		return nil, 0, orMissing(err, "RecordBatch header missing")
	}
	length, err := rb.i64(0, 0)
	if err != nil {
		return nil, 0, err
	}
	nstart, nnodes, err := rb.vector(1, arrowFieldNodeSize)
	if err != nil {
		return nil, 0, err
	}
	bstart, nbufs, err := rb.vector(2, arrowBufferSize)
	if err != nil {
		return nil, 0, err
	}
	if nnodes < 1 || nbufs < 2 {
		return nil, 0, fmt.Errorf("%d field nodes and %d buffers, need at least 1 and 2", nnodes, nbufs)
	}
	nodeLen, _ := rb.b.u64(nstart)
	nullCount, _ := rb.b.u64(nstart + 8)
	if int64(nodeLen) != length || length < 0 {
		return nil, 0, fmt.Errorf("column length %d differs from batch length %d", int64(nodeLen), length)
	}
	if nullCount != 0 {
		return nil, 0, fmt.Errorf("row_id has %d nulls", int64(nullCount))
	}
	codec := -1
	if comp, ok, err := rb.sub(3); err != nil {
		return nil, 0, err
	} else if ok {
		c, err := comp.u8(0, 0)
		if err != nil {
			return nil, 0, err
		}
		if c != arrowCodecLZ4Frame && c != arrowCodecZSTD {
			return nil, 0, fmt.Errorf("unknown compression codec %d", c)
		}
		codec = int(c)
	}
	want := uint64(length) * 4
	if want > budget {
		return nil, 0, fmt.Errorf("%d rows would need %d bytes, more than the %d-byte limit", length, want, budget)
	}
	// Buffer 1 holds the values (buffer 0 is the validity bitmap).
	boff, _ := rb.b.u64(bstart + arrowBufferSize)
	blen, _ := rb.b.u64(bstart + arrowBufferSize + 8)
	if boff > uint64(len(body)) || blen > uint64(len(body))-boff {
		return nil, 0, fmt.Errorf("values buffer [%d, +%d) is outside the %d-byte body", boff, blen, len(body))
	}
	raw := body[boff : boff+blen]
	var used uint64
	if codec >= 0 && len(raw) > 0 {
		if len(raw) < 8 {
			return nil, 0, fmt.Errorf("compressed values buffer lacks its 8-byte length")
		}
		ulen := int64(binary.LittleEndian.Uint64(raw))
		raw = raw[8:]
		if ulen != -1 { // -1: stored uncompressed
			if ulen < 0 || uint64(ulen) < want || uint64(ulen) > budget {
				return nil, 0, fmt.Errorf("values buffer declares %d uncompressed bytes, want at least %d and at most %d", ulen, want, budget)
			}
			dec, err := decompress(codec, raw, uint64(ulen))
			if err != nil {
				return nil, 0, err
			}
			raw, used = dec, uint64(ulen)
		}
	}
	if uint64(len(raw)) < want {
		return nil, 0, fmt.Errorf("values buffer holds %d bytes, %d rows need %d", len(raw), length, want)
	}
	vals := make([]uint32, length)
	for j := range vals {
		v := binary.LittleEndian.Uint32(raw[4*j:])
		if signed && int32(v) < 0 {
			return nil, 0, fmt.Errorf("row_id[%d] = %d is negative", j, int32(v))
		}
		vals[j] = v
	}
	return vals, used + want, nil
}

// decompress inflates src (one compressed Arrow buffer) to exactly n bytes.
func decompress(codec int, src []byte, n uint64) ([]byte, error) {
	var r io.Reader
	switch codec {
	case arrowCodecZSTD:
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxArrowDeletionAlloc), zstd.WithDecoderMaxWindow(1<<23))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer d.Close()
		r = d
	case arrowCodecLZ4Frame:
		r = lz4.NewReader(bytes.NewReader(src))
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("decompress %d bytes: %w", n, err)
	}
	return out, nil
}
