package seedio

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A minimal, bounds-checked FlatBuffers reader for the few Arrow IPC tables
// the seed reader must inspect before handing bytes to arrow-go (footer
// blocks, message header type and body length, record-batch buffers and
// compression, dictionary-batch delta flag, schema endianness and custom
// metadata). Every accessor checks offsets against the buffer and returns an
// error instead of panicking.

var errFB = errors.New("malformed flatbuffer")

type fbTable struct {
	buf []byte
	pos uint32 // table start
	vt  uint32 // vtable start
	vtn uint32 // vtable size in bytes
}

func fbU32(b []byte, off uint64) (uint32, error) {
	if off+4 > uint64(len(b)) {
		return 0, fmt.Errorf("%w: u32 at %d beyond %d bytes", errFB, off, len(b))
	}
	return binary.LittleEndian.Uint32(b[off:]), nil
}

func fbRoot(b []byte) (fbTable, error) {
	off, err := fbU32(b, 0)
	if err != nil {
		return fbTable{}, err
	}
	return fbTableAt(b, uint64(off))
}

func fbTableAt(b []byte, pos uint64) (fbTable, error) {
	if pos+4 > uint64(len(b)) {
		return fbTable{}, fmt.Errorf("%w: table at %d beyond %d bytes", errFB, pos, len(b))
	}
	soff := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
	vt := int64(pos) - soff
	if vt < 0 || vt+4 > int64(len(b)) {
		return fbTable{}, fmt.Errorf("%w: vtable of table %d at %d out of range", errFB, pos, vt)
	}
	vtn := uint32(binary.LittleEndian.Uint16(b[vt:]))
	tabn := uint64(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtn < 4 || vtn%2 != 0 || uint64(vt)+uint64(vtn) > uint64(len(b)) {
		return fbTable{}, fmt.Errorf("%w: vtable size %d at %d invalid", errFB, vtn, vt)
	}
	if tabn < 4 || pos+tabn > uint64(len(b)) {
		return fbTable{}, fmt.Errorf("%w: table size %d at %d invalid", errFB, tabn, pos)
	}
	return fbTable{buf: b, pos: uint32(pos), vt: uint32(vt), vtn: vtn}, nil
}

// field returns the absolute position of field i, or 0 if absent. The
// caller checks that size bytes are available.
func (t fbTable) field(i int, size uint64) (uint64, bool, error) {
	o := uint64(4 + 2*i)
	if o+2 > uint64(t.vtn) {
		return 0, false, nil
	}
	fo := uint64(binary.LittleEndian.Uint16(t.buf[uint64(t.vt)+o:]))
	if fo == 0 {
		return 0, false, nil
	}
	p := uint64(t.pos) + fo
	if p+size > uint64(len(t.buf)) {
		return 0, false, fmt.Errorf("%w: field %d at %d beyond %d bytes", errFB, i, p, len(t.buf))
	}
	return p, true, nil
}

func (t fbTable) u8(i int, def uint8) (uint8, error) {
	p, ok, err := t.field(i, 1)
	if err != nil || !ok {
		return def, err
	}
	return t.buf[p], nil
}

func (t fbTable) i16(i int, def int16) (int16, error) {
	p, ok, err := t.field(i, 2)
	if err != nil || !ok {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

func (t fbTable) i64(i int, def int64) (int64, error) {
	p, ok, err := t.field(i, 8)
	if err != nil || !ok {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows the uoffset stored in field i.
func (t fbTable) ref(i int) (uint64, bool, error) {
	p, ok, err := t.field(i, 4)
	if err != nil || !ok {
		return 0, ok, err
	}
	rel := uint64(binary.LittleEndian.Uint32(t.buf[p:]))
	tgt := p + rel
	if tgt >= uint64(len(t.buf)) {
		return 0, false, fmt.Errorf("%w: reference of field %d to %d beyond %d bytes", errFB, i, tgt, len(t.buf))
	}
	return tgt, true, nil
}

func (t fbTable) table(i int) (fbTable, bool, error) {
	tgt, ok, err := t.ref(i)
	if err != nil || !ok {
		return fbTable{}, ok, err
	}
	sub, err := fbTableAt(t.buf, tgt)
	return sub, err == nil, err
}

// vector returns the element area of vector field i, each element elem bytes.
func (t fbTable) vector(i int, elem uint64) (start uint64, n uint64, ok bool, err error) {
	tgt, ok, err := t.ref(i)
	if err != nil || !ok {
		return 0, 0, ok, err
	}
	l, err := fbU32(t.buf, tgt)
	if err != nil {
		return 0, 0, false, err
	}
	n = uint64(l)
	start = tgt + 4
	if n*elem > uint64(len(t.buf))-start { // n < 2^32, elem small: no overflow
		return 0, 0, false, fmt.Errorf("%w: vector of field %d with %d elements of %d bytes beyond buffer", errFB, i, n, elem)
	}
	return start, n, true, nil
}

// tableVector returns the tables of a vector-of-tables field.
func (t fbTable) tableVector(i int) ([]fbTable, error) {
	start, n, ok, err := t.vector(i, 4)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]fbTable, 0, n)
	for k := uint64(0); k < n; k++ {
		p := start + 4*k
		tgt := p + uint64(binary.LittleEndian.Uint32(t.buf[p:]))
		sub, err := fbTableAt(t.buf, tgt)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, nil
}

// str returns string field i (raw bytes, not necessarily UTF-8).
func (t fbTable) str(i int) ([]byte, bool, error) {
	start, n, ok, err := t.vector(i, 1)
	if err != nil || !ok {
		return nil, ok, err
	}
	return t.buf[start : start+n], true, nil
}

// fbKeyValues reads a [KeyValue] custom_metadata vector (field i).
func fbKeyValues(t fbTable, i int) (keys, vals [][]byte, err error) {
	kvs, err := t.tableVector(i)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range kvs {
		k, _, err := kv.str(0)
		if err != nil {
			return nil, nil, err
		}
		v, _, err := kv.str(1)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals, nil
}
