package arrowipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// StreamError says what is wrong with an Arrow IPC stream: Message is the
// index of the encapsulated message (0 is the schema), Offset the byte
// offset of its prefix in the stream.
type StreamError struct {
	Message int
	Offset  int64
	Reason  string
	Err     error // underlying error (flatbuf.ErrMalformed, a read error), if any
}

func (e *StreamError) Error() string {
	s := fmt.Sprintf("arrow ipc stream: message %d at byte %d: %s", e.Message, e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *StreamError) Unwrap() error { return e.Err }

// GuardStream returns a reader that yields the bytes of the Arrow IPC
// stream r unchanged, one encapsulated message at a time, after checking
// the message with the bounds-checked reader of this package. arrow-go's
// stream reader trusts what the bytes claim when it allocates: the
// metadata and body lengths of a message, and the vector lengths of its
// flatbuffers (a schema's field count of 2^31 made it allocate 63 GB and
// die with "runtime: out of memory", which no recover catches). So before
// arrow-go sees a message:
//   - its metadata and body are read into memory as the bytes arrive, so
//     a length field that claims more than the stream holds is an error
//     instead of an allocation;
//   - its Message flatbuffer, the schema's field tree (CheckSchema), and a
//     record or dictionary batch's nodes, buffers and compression are
//     checked against the metadata, and every buffer must lie inside the
//     body;
//   - a compressed buffer may claim at most maxDecompressed uncompressed
//     bytes (arrow-go allocates that much before it decompresses);
//   - only schema, dictionary batch and record batch messages may occur.
//
// A failed check is returned by Read as a *StreamError naming the message
// and what is wrong; arrow-go wraps it in its own error. Memory held is
// one message (metadata and body) at a time. The stream ends at the
// end-of-stream marker; bytes after it are not read.
func GuardStream(r io.Reader, maxDecompressed int64) io.Reader {
	return &streamGuard{r: r, maxDecompressed: maxDecompressed}
}

type streamGuard struct {
	r               io.Reader
	maxDecompressed int64
	pending         []byte // checked bytes not yet returned
	msg             int    // index of the next message
	off             int64  // stream offset of the next message
	done            bool   // end-of-stream marker passed on
	err             error  // sticky
}

func (g *streamGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		if g.done {
			return 0, io.EOF
		}
		g.pending, g.err = g.next()
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// next reads and checks one encapsulated message and returns its bytes.
func (g *streamGuard) next() ([]byte, error) {
	fail := func(err error, format string, args ...any) error {
		return &StreamError{Message: g.msg, Offset: g.off, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	var out bytes.Buffer
	// readN appends exactly n bytes of the stream to out; the buffer grows
	// with the bytes that arrive, never by n up front.
	readN := func(n int64, what string) error {
		got, err := io.CopyN(&out, g.r, n)
		if err == io.EOF {
			return fail(nil, "%s of %d bytes, but the stream ends after %d", what, n, got)
		}
		if err != nil {
			return fail(err, "reading %s", what)
		}
		return nil
	}
	if err := readN(4, "message prefix"); err != nil {
		if g.msg > 0 && out.Len() == 0 {
			// A stream may end without an end-of-stream marker.
			g.done = true
			return nil, nil
		}
		return nil, err
	}
	metaLen := uint64(binary.LittleEndian.Uint32(out.Bytes()))
	if metaLen == 0xFFFFFFFF {
		if err := readN(4, "message length"); err != nil {
			return nil, err
		}
		metaLen = uint64(binary.LittleEndian.Uint32(out.Bytes()[4:]))
	}
	if metaLen == 0 {
		g.done = true
		return out.Bytes(), nil
	}
	if metaLen > math.MaxInt32 {
		return nil, fail(nil, "metadata length %d is negative as a signed 32-bit length", int32(metaLen))
	}
	prefix := out.Len()
	if err := readN(int64(metaLen), "metadata"); err != nil {
		return nil, err
	}
	m, rb, err := checkMessage(out.Bytes()[prefix:], g.msg == 0)
	if err != nil {
		return nil, fail(err, "message")
	}
	if m.BodyLength > 0 {
		if err := readN(m.BodyLength, "body"); err != nil {
			return nil, err
		}
	}
	if rb != nil {
		body := out.Bytes()[prefix+int(metaLen):]
		err := checkBuffers(&rb.RecordBatch, int64(len(body)), func(off int64, b []byte) error {
			copy(b, body[off:])
			return nil
		}, g.maxDecompressed)
		if err != nil {
			return nil, fail(err, "%s body", kindName(rb.kind))
		}
	}
	g.msg++
	g.off += int64(out.Len())
	return out.Bytes(), nil
}

// batch is a record batch header, or the data of a dictionary batch.
type batch struct {
	RecordBatch
	kind uint8 // HeaderRecordBatch or HeaderDictionaryBatch
}

// checkMessage checks a Message flatbuffer (without its prefix): its
// custom metadata, and by header type the schema's field tree (only as the
// first message of a stream) or the batch header, returned.
func checkMessage(meta []byte, first bool) (Message, *batch, error) {
	m, err := ParseMessage(meta)
	if err != nil {
		return m, nil, err
	}
	if _, _, err := m.Table.KeyValues(4); err != nil {
		return m, nil, fmt.Errorf("custom_metadata: %w", err)
	}
	switch m.HeaderType {
	case HeaderSchema:
		if !first {
			return m, nil, fmt.Errorf("a schema message after the first message")
		}
		if err := CheckSchema(m.Header); err != nil {
			return m, nil, fmt.Errorf("schema: %w", err)
		}
		return m, nil, nil
	case HeaderRecordBatch, HeaderDictionaryBatch:
		if first {
			return m, nil, fmt.Errorf("the stream does not start with a schema message")
		}
		t := m.Header
		if m.HeaderType == HeaderDictionaryBatch {
			if _, t, _, err = DictionaryBatch(t); err != nil {
				return m, nil, fmt.Errorf("dictionary batch: %w", err)
			}
		}
		rb, err := ParseRecordBatch(t)
		if err != nil {
			return m, nil, fmt.Errorf("%s header: %w", kindName(m.HeaderType), err)
		}
		if _, _, _, err := t.Vector(4, 8); err != nil {
			return m, nil, fmt.Errorf("%s variadic buffer counts: %w", kindName(m.HeaderType), err)
		}
		return m, &batch{RecordBatch: rb, kind: m.HeaderType}, nil
	}
	return m, nil, fmt.Errorf("header type %d is not a schema, dictionary batch or record batch", m.HeaderType)
}

// checkBuffers checks that every buffer of rb lies inside a body of
// bodyLen bytes and that no compressed buffer claims more than
// maxDecompressed uncompressed bytes; read fills b from the body at off.
func checkBuffers(rb *RecordBatch, bodyLen int64, read func(off int64, b []byte) error, maxDecompressed int64) error {
	var prefix [8]byte
	for i, b := range rb.Buffers {
		if b.Offset < 0 || b.Length < 0 || b.Offset > bodyLen || b.Length > bodyLen-b.Offset {
			return fmt.Errorf("buffer %d {offset %d, length %d} outside the %d-byte body", i, b.Offset, b.Length, bodyLen)
		}
		if !rb.Compressed || b.Length == 0 {
			continue
		}
		if b.Length < 8 {
			return fmt.Errorf("compressed buffer %d has %d bytes, less than its 8-byte length prefix", i, b.Length)
		}
		if err := read(b.Offset, prefix[:]); err != nil {
			return err
		}
		if ulen := int64(binary.LittleEndian.Uint64(prefix[:])); ulen < -1 || ulen > maxDecompressed {
			return fmt.Errorf("compressed buffer %d claims %d uncompressed bytes (limit %d)", i, ulen, maxDecompressed)
		}
	}
	return nil
}

func kindName(kind uint8) string {
	if kind == HeaderDictionaryBatch {
		return "dictionary batch"
	}
	return "record batch"
}

// MaxDecompressedBuffer is the largest uncompressed size NewStreamReader
// lets one compressed buffer of an input claim.
const MaxDecompressedBuffer = 1 << 30

// NewStreamReader opens the Arrow IPC stream r with arrow-go's reader,
// behind GuardStream (limit MaxDecompressedBuffer). A refused message
// makes NewReader or the reader's Err return an error that errors.As
// finds as a *StreamError.
func NewStreamReader(r io.Reader, opts ...ipc.Option) (*ipc.Reader, error) {
	return ipc.NewReader(GuardStream(r, MaxDecompressedBuffer), opts...)
}
