package arrowipc

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
)

// CheckFileAt checks the Arrow IPC file in r (size bytes) with the
// bounds-checked reader of this package before arrow-go's file reader
// opens it: arrow-go allocates by the footer's and messages' vector
// lengths (a schema field count of 2^31 is 63 GB) and by compressed
// buffers' uncompressed-length claims. Checked: the framing (ParseFile),
// the footer schema's field tree (CheckSchema), every dictionary and
// record batch block (inside the file before the footer, its message a
// batch of the right kind whose buffers lie inside the block's body), and
// every compressed buffer's claim (at most maxDecompressed bytes). Memory
// used is the footer plus one message's metadata at a time, all backed by
// bytes of the file. Errors are *FramingError.
func CheckFileAt(r io.ReaderAt, size, maxDecompressed int64) error {
	fail := func(off uint64, err error, format string, args ...any) error {
		return &FramingError{Offset: off, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if size < MinFileSize {
		return fail(0, nil, "%d bytes is too short for an Arrow IPC file", size)
	}
	n := uint64(size)
	var head [6]byte
	var tail [10]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return fail(0, err, "reading the leading magic")
	}
	if _, err := r.ReadAt(tail[:], size-10); err != nil {
		return fail(n-10, err, "reading the footer length")
	}
	if string(head[:]) != Magic {
		return fail(0, nil, "leading magic is %q, want \"ARROW1\"", head[:])
	}
	if string(tail[4:]) != Magic {
		return fail(n-6, nil, "trailing magic is %q, want \"ARROW1\" (truncated file or trailing bytes?)", tail[4:])
	}
	footerLen := uint64(binary.LittleEndian.Uint32(tail[:]))
	if footerLen == 0 || footerLen > n-MinFileSize {
		return fail(n-10, nil, "footer length %d does not fit in %d bytes", int32(footerLen), size)
	}
	start := n - 10 - footerLen
	footer := make([]byte, footerLen) // backed by the file: footerLen < size
	if _, err := r.ReadAt(footer, int64(start)); err != nil {
		return fail(start, err, "reading the footer")
	}
	ft, err := flatbuf.Root(footer)
	if err != nil {
		return fail(start, err, "footer at %d", start)
	}
	f := File{FooterStart: start, Footer: ft}
	st, ok, err := f.Schema()
	if err != nil || !ok {
		return fail(start, err, "footer schema missing or malformed")
	}
	if err := CheckSchema(st); err != nil {
		return fail(start, err, "footer schema")
	}
	for _, kind := range []uint8{HeaderDictionaryBatch, HeaderRecordBatch} {
		var blocks []Block
		if kind == HeaderDictionaryBatch {
			blocks, err = f.DictionaryBlocks()
		} else {
			blocks, err = f.RecordBatchBlocks()
		}
		if err != nil {
			return fail(start, err, "footer blocks")
		}
		for i, blk := range blocks {
			if err := checkBlock(r, f, blk, kind, maxDecompressed); err != nil {
				return fail(start+blk.Pos, err, "block %d (%s)", i, kindName(kind))
			}
		}
	}
	return nil
}

// checkBlock checks one footer block and the message it points at.
func checkBlock(r io.ReaderAt, f File, blk Block, kind uint8, maxDecompressed int64) error {
	end := f.FooterStart
	if blk.Offset < 0 || blk.MetaLen < 8 || blk.BodyLen < 0 || uint64(blk.Offset) > end ||
		uint64(blk.MetaLen) > end-uint64(blk.Offset) || uint64(blk.BodyLen) > end-uint64(blk.Offset)-uint64(blk.MetaLen) {
		return fmt.Errorf("offset %d, metadata %d and body %d bytes do not fit before the footer at %d", blk.Offset, blk.MetaLen, blk.BodyLen, end)
	}
	meta := make([]byte, blk.MetaLen) // backed by the file (checked above)
	if _, err := r.ReadAt(meta, blk.Offset); err != nil {
		return err
	}
	p, l, err := MessagePrefix(meta)
	if err != nil {
		return err
	}
	if l > uint64(len(meta))-p {
		return fmt.Errorf("message length %d beyond the block's %d metadata bytes", l, len(meta))
	}
	m, rb, err := checkMessage(meta[p:p+l], false)
	if err != nil {
		return err
	}
	if rb == nil || rb.kind != kind {
		return fmt.Errorf("the message is not a %s", kindName(kind))
	}
	bodyLen := min(m.BodyLength, blk.BodyLen) // arrow-go reads the block's, sizes buffers by the message's
	return checkBuffers(&rb.RecordBatch, bodyLen, func(off int64, b []byte) error {
		_, err := r.ReadAt(b, blk.Offset+blk.MetaLen+off)
		return err
	}, maxDecompressed)
}

// NewFileReader opens the Arrow IPC file r (size bytes) with arrow-go's
// file reader after CheckFileAt (limit MaxDecompressedBuffer) passed.
func NewFileReader(r ipc.ReadAtSeeker, size int64, opts ...ipc.Option) (*ipc.FileReader, error) {
	if err := CheckFileAt(r, size, MaxDecompressedBuffer); err != nil {
		return nil, err
	}
	return ipc.NewFileReader(r, opts...)
}
