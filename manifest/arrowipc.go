package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/internal/arrowipc"
	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
)

// The reader for the one Arrow IPC file shape a .arrow deletion file has
// (lance-table-format.md §4.7): a schema whose first field is a
// non-dictionary 32-bit integer column, and record batches whose buffers
// may be ZSTD- or LZ4-frame-compressed. The layout is walked by
// internal/arrowipc, which trusts no offset or length in the file; the
// memory this reader allocates is bounded by the file size plus
// MaxArrowDeletionAlloc.

// decodeDeletionArrow decodes a .arrow deletion file: an Arrow IPC file
// whose first column (named "row_id" by Lance) is UInt32, or Int32 with no
// negative value, without nulls. All record batches are read. The decoder
// is bounds-checked throughout and never allocates more than
// MaxArrowDeletionAlloc bytes for decompressed buffers; every failure is a
// *FormatError naming the byte offset.
func decodeDeletionArrow(name string, data []byte) (*roaring.Bitmap, error) {
	fail := func(off uint64, format string, args ...any) error {
		return formatErr(name, int64(off), "arrow deletion file: "+format, args...)
	}
	file, err := arrowipc.ParseFile(data)
	if err != nil {
		var fe *arrowipc.FramingError
		if errors.As(err, &fe) {
			return nil, &FormatError{File: name, Offset: int64(fe.Offset), Reason: "arrow deletion file: " + fe.Reason, Err: fe.Err}
		}
		return nil, &FormatError{File: name, Reason: "arrow deletion file", Err: err}
	}
	footStart := file.FooterStart
	wrap := func(off uint64, what string, err error) error {
		if err == nil {
			return nil
		}
		return &FormatError{File: name, Offset: int64(off), Reason: "arrow deletion file: " + what, Err: err}
	}

	schema, ok, err := file.Schema()
	if err != nil || !ok {
		return nil, wrap(footStart, "footer schema", orMissing(err, "no schema"))
	}
	fstart, nfields, _, err := schema.Vector(1, 4)
	if err != nil {
		return nil, wrap(footStart, "schema fields", err)
	}
	if nfields < 1 {
		return nil, fail(footStart, "schema has no columns")
	}
	field, err := schema.TableIn(fstart, 0)
	if err != nil {
		return nil, wrap(footStart, "schema field 0", err)
	}
	colNameB, _, err := field.Str(arrowipc.FieldName)
	if err != nil {
		return nil, wrap(footStart, "field name", err)
	}
	colName := string(colNameB)
	typeTag, err := field.U8(arrowipc.FieldTypeType, 0)
	if err != nil {
		return nil, wrap(footStart, "field type", err)
	}
	if _, isDict, err := field.Table(arrowipc.FieldDictionary); err != nil || isDict {
		return nil, wrap(footStart, "field dictionary", orMissing(err, fmt.Sprintf("column %q is dictionary-encoded", colName)))
	}
	if typeTag != arrowipc.TypeInt {
		return nil, fail(footStart, "column %q has Arrow type tag %d, want Int (uint32 or int32)", colName, typeTag)
	}
	intType, ok, err := field.Table(arrowipc.FieldType)
	if err != nil || !ok {
		return nil, wrap(footStart, "field Int type", orMissing(err, "missing"))
	}
	bitWidth, err := intType.I32(0, 0)
	if err != nil {
		return nil, wrap(footStart, "Int bitWidth", err)
	}
	signed, err := intType.U8(1, 0)
	if err != nil {
		return nil, wrap(footStart, "Int is_signed", err)
	}
	if bitWidth != 32 {
		return nil, fail(footStart, "column %q is a %d-bit integer, want 32-bit", colName, bitWidth)
	}

	blocks, err := file.RecordBatchBlocks()
	if err != nil {
		return nil, wrap(footStart, "record batch blocks", err)
	}
	out := roaring.New()
	budget := uint64(MaxArrowDeletionAlloc)
	for i, blk := range blocks {
		off, metaLen, bodyLen := uint64(blk.Offset), uint64(uint32(blk.MetaLen)), uint64(blk.BodyLen)
		if off < 8 || off > footStart || metaLen > footStart-off || bodyLen > footStart-off-metaLen {
			return nil, fail(footStart+blk.Pos, "record batch %d block (offset %d, metadata %d, body %d) is outside the file", i, off, metaLen, bodyLen)
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
	p, size, err := arrowipc.MessagePrefix(meta)
	if err != nil {
		return nil, 0, err
	}
	if size > uint64(len(meta))-p {
		return nil, 0, fmt.Errorf("message metadata of %d bytes exceeds its block (%d)", size, uint64(len(meta))-p)
	}
	msg, err := flatbuf.Root(meta[p : p+size])
	if err != nil {
		return nil, 0, err
	}
	ht, err := msg.U8(1, 0)
	if err != nil {
		return nil, 0, err
	}
	if ht != arrowipc.HeaderRecordBatch {
		return nil, 0, fmt.Errorf("message header type %d is not a RecordBatch", ht)
	}
	rbt, ok, err := msg.Table(2)
	if err != nil || !ok {
		return nil, 0, orMissing(err, "RecordBatch header missing")
	}
	rb, err := arrowipc.ParseRecordBatch(rbt)
	if err != nil {
		return nil, 0, err
	}
	length := rb.Length
	if len(rb.Nodes) < 1 || len(rb.Buffers) < 2 {
		return nil, 0, fmt.Errorf("%d field nodes and %d buffers, need at least 1 and 2", len(rb.Nodes), len(rb.Buffers))
	}
	if rb.Nodes[0].Length != length {
		return nil, 0, fmt.Errorf("column length %d differs from batch length %d", rb.Nodes[0].Length, length)
	}
	if rb.Nodes[0].NullCount != 0 {
		return nil, 0, fmt.Errorf("row_id has %d nulls", rb.Nodes[0].NullCount)
	}
	want := uint64(length) * 4
	if want > budget {
		return nil, 0, fmt.Errorf("%d rows would need %d bytes, more than the %d-byte limit", length, want, budget)
	}
	// Buffer 1 holds the values (buffer 0 is the validity bitmap).
	raw, err := rb.Slice(1, body)
	if err != nil {
		return nil, 0, fmt.Errorf("values %w", err)
	}
	var used uint64
	if rb.Compressed && len(raw) > 0 {
		ulen, err := arrowipc.UncompressedLength(raw)
		if err != nil {
			return nil, 0, fmt.Errorf("values buffer: %w", err)
		}
		raw = raw[8:]
		if ulen != -1 { // -1: stored uncompressed
			if ulen < 0 || uint64(ulen) < want || uint64(ulen) > budget {
				return nil, 0, fmt.Errorf("values buffer declares %d uncompressed bytes, want at least %d and at most %d", ulen, want, budget)
			}
			dec, err := arrowipc.Decompress(rb.Codec, raw, uint64(ulen), MaxArrowDeletionAlloc)
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
