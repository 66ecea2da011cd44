// Package arrowipc walks the Arrow IPC file layout (leading "ARROW1",
// encapsulated messages, footer flatbuffer, footer length, trailing
// "ARROW1") on top of the bounds-checked reader of internal/flatbuf. It is
// the one implementation that manifest (.arrow deletion files) and seedio
// (seeds, before they reach arrow-go) share: it trusts no offset or length,
// checks every one before use, and returns errors instead of panicking.
// What each caller accepts beyond the layout (column types, exactly-one-file
// rules, allocation budgets) stays with the caller.
package arrowipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
)

// Magic opens and closes every Arrow IPC file.
const Magic = "ARROW1"

// MessageHeader union tags (Message.fbs).
const (
	HeaderSchema          uint8 = 1
	HeaderDictionaryBatch uint8 = 2
	HeaderRecordBatch     uint8 = 3
)

// CompressionType values (Message.fbs).
const (
	CodecLZ4Frame uint8 = 0
	CodecZSTD     uint8 = 1
)

// Type union tags (Schema.fbs) the callers look into.
const (
	TypeInt       uint8 = 2
	TypeTimestamp uint8 = 10
	TypeUnion     uint8 = 14
)

// Field table slots (Schema.fbs).
const (
	FieldName       = 0
	FieldTypeType   = 2
	FieldType       = 3
	FieldDictionary = 4
	FieldChildren   = 5
	FieldMetadata   = 6
)

// Sizes of the structs stored inline in vectors.
const (
	blockSize     = 24 // struct Block { offset: long; metaDataLength: int; pad; bodyLength: long }
	bufferSize    = 16 // struct Buffer { offset: long; length: long }
	fieldNodeSize = 16 // struct FieldNode { length: long; null_count: long }
)

// MinFileSize is the size of the smallest byte string that can hold an
// Arrow IPC file's framing: two magics (with padding) and a footer length.
const MinFileSize = 8 + 4 + 6

// FramingError says where an Arrow IPC file's framing is wrong; Offset is
// the byte offset in the file.
type FramingError struct {
	Offset uint64
	Reason string
	Err    error // underlying flatbuffer error, if any
}

func (e *FramingError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Unwrap returns the underlying flatbuffer error, if any.
func (e *FramingError) Unwrap() error { return e.Err }

// File is an Arrow IPC file whose framing has been checked: both magics,
// the footer length and the footer's root table.
type File struct {
	FooterStart uint64        // offset of the footer flatbuffer
	Footer      flatbuf.Table // root Footer table
}

// ParseFile checks the framing of the Arrow IPC file b; every failure is a
// *FramingError.
func ParseFile(b []byte) (File, error) {
	fail := func(off uint64, format string, args ...any) error {
		return &FramingError{Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	n := uint64(len(b))
	if n < MinFileSize {
		return File{}, fail(0, "%d bytes is too short for an Arrow IPC file", len(b))
	}
	if string(b[:6]) != Magic {
		return File{}, fail(0, "leading magic is %q, want \"ARROW1\" (stream format or leading bytes?)", b[:6])
	}
	if string(b[n-6:]) != Magic {
		return File{}, fail(n-6, "trailing magic is %q, want \"ARROW1\" (truncated file or trailing bytes?)", b[n-6:])
	}
	footerLen := uint64(binary.LittleEndian.Uint32(b[n-10:]))
	if footerLen == 0 || footerLen > n-MinFileSize {
		return File{}, fail(n-10, "footer length %d does not fit in %d bytes", int32(footerLen), len(b))
	}
	start := n - 10 - footerLen
	ft, err := flatbuf.Root(b[start : n-10])
	if err != nil {
		return File{}, &FramingError{Offset: start, Reason: fmt.Sprintf("footer at %d", start), Err: err}
	}
	return File{FooterStart: start, Footer: ft}, nil
}

// Schema returns the footer's Schema table (ok false when absent).
func (f File) Schema() (flatbuf.Table, bool, error) { return f.Footer.Table(1) }

// Block is one footer entry locating an encapsulated message. The values
// are as stored (signed); callers check them against the file.
type Block struct {
	Offset  int64 // of the message's prefix
	MetaLen int64 // prefix + flatbuffer + padding
	BodyLen int64
	Pos     uint64 // where this entry lies in the footer flatbuffer
}

// DictionaryBlocks returns the footer's dictionary blocks.
func (f File) DictionaryBlocks() ([]Block, error) { return f.blocks(2) }

// RecordBatchBlocks returns the footer's record batch blocks.
func (f File) RecordBatchBlocks() ([]Block, error) { return f.blocks(3) }

func (f File) blocks(field int) ([]Block, error) {
	start, n, ok, err := f.Footer.Vector(field, blockSize)
	if err != nil || !ok {
		return nil, err
	}
	buf := f.Footer.Bytes()
	out := make([]Block, 0, n)
	for i := uint64(0); i < n; i++ {
		p := buf[start+i*blockSize:]
		out = append(out, Block{
			Offset:  int64(binary.LittleEndian.Uint64(p)),
			MetaLen: int64(int32(binary.LittleEndian.Uint32(p[8:]))),
			BodyLen: int64(binary.LittleEndian.Uint64(p[16:])),
			Pos:     start + i*blockSize,
		})
	}
	return out, nil
}

// MessagePrefix reads the prefix of the encapsulated message at the start
// of b: the continuation marker 0xFFFFFFFF and the metadata length (or,
// in the legacy form, the length alone). prefix is the number of prefix
// bytes; a length of 0 is the end-of-stream marker. The length is not
// checked against b.
func MessagePrefix(b []byte) (prefix, length uint64, err error) {
	if len(b) < 4 {
		return 0, 0, fmt.Errorf("message prefix missing")
	}
	l := uint64(binary.LittleEndian.Uint32(b))
	if l != 0xFFFFFFFF {
		return 4, l, nil
	}
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("message length missing")
	}
	return 8, uint64(binary.LittleEndian.Uint32(b[4:])), nil
}

// Message is the Message table of one encapsulated message.
type Message struct {
	Table      flatbuf.Table // the Message table (custom_metadata in slot 4)
	HeaderType uint8         // HeaderSchema, HeaderDictionaryBatch, HeaderRecordBatch, …
	Header     flatbuf.Table // the header table
	BodyLength int64         // never negative
}

// ParseMessage reads a Message flatbuffer: header type, header table
// (required) and body length (never negative).
func ParseMessage(meta []byte) (Message, error) {
	mt, err := flatbuf.Root(meta)
	if err != nil {
		return Message{}, err
	}
	kind, err := mt.U8(1, 0)
	if err != nil {
		return Message{}, err
	}
	bl, err := mt.I64(3, 0)
	if err != nil {
		return Message{}, err
	}
	if bl < 0 {
		return Message{}, fmt.Errorf("negative body length %d", bl)
	}
	hdr, ok, err := mt.Table(2)
	if err != nil || !ok {
		return Message{}, fmt.Errorf("message header missing (%v)", err)
	}
	return Message{Table: mt, HeaderType: kind, Header: hdr, BodyLength: bl}, nil
}

// FieldNode is one entry of a record batch's nodes vector.
type FieldNode struct {
	Length, NullCount int64
}

// Buffer is one entry of a record batch's buffers vector, relative to the
// message body. The values are as stored; CheckBuffers checks them.
type Buffer struct {
	Offset, Length int64
}

// RecordBatch is a RecordBatch header table.
type RecordBatch struct {
	Length     int64 // rows, never negative
	Nodes      []FieldNode
	Buffers    []Buffer
	Compressed bool  // a BodyCompression table is present
	Codec      uint8 // CodecLZ4Frame or CodecZSTD when Compressed
	Method     uint8 // BodyCompressionMethod (0 = BUFFER) when Compressed
}

// ParseRecordBatch reads a RecordBatch table: its row count (never
// negative), nodes, buffers and compression (a known codec).
func ParseRecordBatch(t flatbuf.Table) (RecordBatch, error) {
	length, err := t.I64(0, 0)
	if err != nil {
		return RecordBatch{}, err
	}
	if length < 0 {
		return RecordBatch{}, fmt.Errorf("negative row count %d", length)
	}
	rb := RecordBatch{Length: length}
	buf := t.Bytes()
	nstart, nn, _, err := t.Vector(1, fieldNodeSize)
	if err != nil {
		return RecordBatch{}, err
	}
	bstart, bn, _, err := t.Vector(2, bufferSize)
	if err != nil {
		return RecordBatch{}, err
	}
	rb.Nodes = make([]FieldNode, nn)
	for i := range rb.Nodes {
		p := buf[nstart+uint64(i)*fieldNodeSize:]
		rb.Nodes[i] = FieldNode{Length: int64(binary.LittleEndian.Uint64(p)), NullCount: int64(binary.LittleEndian.Uint64(p[8:]))}
	}
	rb.Buffers = make([]Buffer, bn)
	for i := range rb.Buffers {
		p := buf[bstart+uint64(i)*bufferSize:]
		rb.Buffers[i] = Buffer{Offset: int64(binary.LittleEndian.Uint64(p)), Length: int64(binary.LittleEndian.Uint64(p[8:]))}
	}
	comp, hasComp, err := t.Table(3)
	if err != nil {
		return RecordBatch{}, err
	}
	if hasComp {
		if rb.Codec, err = comp.U8(0, 0); err != nil {
			return RecordBatch{}, err
		}
		if rb.Method, err = comp.U8(1, 0); err != nil {
			return RecordBatch{}, err
		}
		if rb.Codec != CodecLZ4Frame && rb.Codec != CodecZSTD {
			return RecordBatch{}, fmt.Errorf("unknown compression codec %d", rb.Codec)
		}
		rb.Compressed = true
	}
	return rb, nil
}

// Slice returns buffer i of the record batch as bytes of body, after
// checking it lies inside the body.
func (rb RecordBatch) Slice(i int, body []byte) ([]byte, error) {
	if i >= len(rb.Buffers) {
		return nil, fmt.Errorf("buffer %d of %d", i, len(rb.Buffers))
	}
	b := rb.Buffers[i]
	n := uint64(len(body))
	if b.Offset < 0 || b.Length < 0 || uint64(b.Offset) > n || uint64(b.Length) > n-uint64(b.Offset) {
		return nil, fmt.Errorf("buffer %d {offset %d, length %d} outside the %d-byte body", i, b.Offset, b.Length, n)
	}
	return body[b.Offset : b.Offset+b.Length], nil
}

// DictionaryBatch reads a DictionaryBatch header table: its id, its data
// (a RecordBatch) and its delta flag.
func DictionaryBatch(t flatbuf.Table) (id int64, data flatbuf.Table, isDelta bool, err error) {
	if id, err = t.I64(0, 0); err != nil {
		return 0, flatbuf.Table{}, false, err
	}
	delta, err := t.U8(2, 0)
	if err != nil {
		return 0, flatbuf.Table{}, false, err
	}
	data, ok, err := t.Table(1)
	if err != nil || !ok {
		return id, flatbuf.Table{}, delta != 0, fmt.Errorf("dictionary batch without data (%v)", err)
	}
	return id, data, delta != 0, nil
}

// UncompressedLength reads the 8-byte little-endian length that prefixes
// every buffer of a compressed body; -1 means the rest is stored
// uncompressed.
func UncompressedLength(buf []byte) (int64, error) {
	if len(buf) < 8 {
		return 0, fmt.Errorf("compressed buffer has %d bytes, less than its 8-byte length prefix", len(buf))
	}
	return int64(binary.LittleEndian.Uint64(buf)), nil
}

// Decompress inflates src (one compressed buffer, without its length
// prefix) to exactly n bytes; the ZSTD decoder may use at most maxMemory
// bytes.
func Decompress(codec uint8, src []byte, n, maxMemory uint64) ([]byte, error) {
	var r io.Reader
	switch codec {
	case CodecZSTD:
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxMemory), zstd.WithDecoderMaxWindow(1<<23))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer d.Close()
		r = d
	case CodecLZ4Frame:
		r = lz4.NewReader(bytes.NewReader(src))
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("decompress %d bytes: %w", n, err)
	}
	return out, nil
}
