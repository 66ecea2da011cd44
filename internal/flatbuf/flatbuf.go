// Package flatbuf is a minimal, bounds-checked FlatBuffers table reader:
// enough to walk the Arrow IPC footer, schema and message tables that
// manifest (deletion files) and seedio (seeds) inspect without trusting any
// offset or length in them. Every accessor checks offsets against the
// buffer and returns an error wrapping ErrMalformed instead of panicking,
// and no vector length is used before its elements are known to lie inside
// the buffer.
package flatbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrMalformed is wrapped by every error of this package.
var ErrMalformed = errors.New("malformed flatbuffer")

// Table is a table inside a flatbuffer.
type Table struct {
	buf []byte
	pos uint64 // table start
	vt  uint64 // vtable start
	vtn uint64 // vtable size in bytes
}

// U32 reads the little-endian u32 at off.
func U32(b []byte, off uint64) (uint32, error) {
	if off > uint64(len(b)) || uint64(len(b))-off < 4 {
		return 0, fmt.Errorf("%w: u32 at %d beyond %d bytes", ErrMalformed, off, len(b))
	}
	return binary.LittleEndian.Uint32(b[off:]), nil
}

// Root returns the root table of b.
func Root(b []byte) (Table, error) {
	off, err := U32(b, 0)
	if err != nil {
		return Table{}, err
	}
	return TableAt(b, uint64(off))
}

// TableAt returns the table starting at pos, after checking that its
// vtable and its inline part lie inside b.
func TableAt(b []byte, pos uint64) (Table, error) {
	if pos > uint64(len(b)) || uint64(len(b))-pos < 4 {
		return Table{}, fmt.Errorf("%w: table at %d beyond %d bytes", ErrMalformed, pos, len(b))
	}
	soff := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
	vt := int64(pos) - soff
	if vt < 0 || vt+4 > int64(len(b)) {
		return Table{}, fmt.Errorf("%w: vtable of table %d at %d out of range", ErrMalformed, pos, vt)
	}
	vtn := uint64(binary.LittleEndian.Uint16(b[vt:]))
	tabn := uint64(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtn < 4 || vtn%2 != 0 || uint64(vt)+vtn > uint64(len(b)) {
		return Table{}, fmt.Errorf("%w: vtable size %d at %d invalid", ErrMalformed, vtn, vt)
	}
	if tabn < 4 || pos+tabn > uint64(len(b)) {
		return Table{}, fmt.Errorf("%w: table size %d at %d invalid", ErrMalformed, tabn, pos)
	}
	return Table{buf: b, pos: pos, vt: uint64(vt), vtn: vtn}, nil
}

// Bytes returns the whole buffer the table lives in, for reading the
// elements of a vector of structs at the positions Vector returned.
func (t Table) Bytes() []byte { return t.buf }

// field returns the absolute position of field i (ok false when absent),
// after checking that size bytes are available there.
func (t Table) field(i int, size uint64) (uint64, bool, error) {
	o := uint64(4 + 2*i)
	if o+2 > t.vtn {
		return 0, false, nil
	}
	fo := uint64(binary.LittleEndian.Uint16(t.buf[t.vt+o:]))
	if fo == 0 {
		return 0, false, nil
	}
	p := t.pos + fo
	if p+size > uint64(len(t.buf)) {
		return 0, false, fmt.Errorf("%w: field %d at %d beyond %d bytes", ErrMalformed, i, p, len(t.buf))
	}
	return p, true, nil
}

// Has reports whether field i is present.
func (t Table) Has(i int) bool {
	_, ok, err := t.field(i, 0)
	return ok && err == nil
}

// U8 returns scalar field i (def when absent).
func (t Table) U8(i int, def uint8) (uint8, error) {
	p, ok, err := t.field(i, 1)
	if err != nil || !ok {
		return def, err
	}
	return t.buf[p], nil
}

// I16 returns scalar field i (def when absent).
func (t Table) I16(i int, def int16) (int16, error) {
	p, ok, err := t.field(i, 2)
	if err != nil || !ok {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

// I32 returns scalar field i (def when absent).
func (t Table) I32(i int, def int32) (int32, error) {
	p, ok, err := t.field(i, 4)
	if err != nil || !ok {
		return def, err
	}
	return int32(binary.LittleEndian.Uint32(t.buf[p:])), nil
}

// I64 returns scalar field i (def when absent).
func (t Table) I64(i int, def int64) (int64, error) {
	p, ok, err := t.field(i, 8)
	if err != nil || !ok {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows the uoffset stored in field i.
func (t Table) ref(i int) (uint64, bool, error) {
	p, ok, err := t.field(i, 4)
	if err != nil || !ok {
		return 0, ok, err
	}
	tgt := p + uint64(binary.LittleEndian.Uint32(t.buf[p:]))
	if tgt >= uint64(len(t.buf)) {
		return 0, false, fmt.Errorf("%w: reference of field %d to %d beyond %d bytes", ErrMalformed, i, tgt, len(t.buf))
	}
	return tgt, true, nil
}

// Table returns the table referenced by field i (ok false when absent).
func (t Table) Table(i int) (Table, bool, error) {
	tgt, ok, err := t.ref(i)
	if err != nil || !ok {
		return Table{}, ok, err
	}
	sub, err := TableAt(t.buf, tgt)
	return sub, err == nil, err
}

// Vector returns the element area of vector field i, each element elem
// bytes: the whole vector is checked to lie inside the buffer (ok false
// when absent).
func (t Table) Vector(i int, elem uint64) (start, n uint64, ok bool, err error) {
	tgt, ok, err := t.ref(i)
	if err != nil || !ok {
		return 0, 0, ok, err
	}
	l, err := U32(t.buf, tgt)
	if err != nil {
		return 0, 0, false, err
	}
	n = uint64(l)
	start = tgt + 4
	if n*elem > uint64(len(t.buf))-start { // n < 2^32, elem small: no overflow
		return 0, 0, false, fmt.Errorf("%w: vector of field %d with %d elements of %d bytes at %d beyond %d bytes", ErrMalformed, i, n, elem, start, len(t.buf))
	}
	return start, n, true, nil
}

// TableIn returns element j of a vector of tables whose elements start at
// start (as Vector returned it with elem 4); j must be below its length.
func (t Table) TableIn(start, j uint64) (Table, error) {
	p := start + 4*j
	off, err := U32(t.buf, p)
	if err != nil {
		return Table{}, err
	}
	return TableAt(t.buf, p+uint64(off))
}

// Tables returns the tables of the vector-of-tables field i.
func (t Table) Tables(i int) ([]Table, error) {
	start, n, ok, err := t.Vector(i, 4)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]Table, 0, n)
	for k := uint64(0); k < n; k++ {
		sub, err := t.TableIn(start, k)
		if err != nil {
			return nil, err
		}
		out = append(out, sub)
	}
	return out, nil
}

// Str returns string field i as raw bytes (not necessarily UTF-8; ok false
// when absent). The bytes alias the buffer.
func (t Table) Str(i int) ([]byte, bool, error) {
	start, n, ok, err := t.Vector(i, 1)
	if err != nil || !ok {
		return nil, ok, err
	}
	return t.buf[start : start+n], true, nil
}

// KeyValues reads a vector of KeyValue tables (field i), as Arrow's
// custom_metadata stores them: key in slot 0, value in slot 1.
func (t Table) KeyValues(i int) (keys, vals [][]byte, err error) {
	kvs, err := t.Tables(i)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range kvs {
		k, _, err := kv.Str(0)
		if err != nil {
			return nil, nil, err
		}
		v, _, err := kv.Str(1)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals, nil
}
