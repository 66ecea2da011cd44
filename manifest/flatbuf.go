package manifest

import (
	"encoding/binary"
	"fmt"
)

// A minimal bounds-checked FlatBuffers reader, enough to walk the Arrow IPC
// footer, schema and record-batch messages of a deletion file without
// trusting any offset or length in them. Every accessor returns an error
// instead of panicking, and no vector length is used before its elements
// are known to lie inside the buffer.

type fbBuf []byte

func (b fbBuf) u8(off uint64) (uint8, error) {
	if off >= uint64(len(b)) {
		return 0, fmt.Errorf("flatbuffer: byte at %d is outside %d bytes", off, len(b))
	}
	return b[off], nil
}

func (b fbBuf) u16(off uint64) (uint16, error) {
	if off+2 > uint64(len(b)) {
		return 0, fmt.Errorf("flatbuffer: u16 at %d is outside %d bytes", off, len(b))
	}
	return binary.LittleEndian.Uint16(b[off:]), nil
}

func (b fbBuf) u32(off uint64) (uint32, error) {
	if off+4 > uint64(len(b)) {
		return 0, fmt.Errorf("flatbuffer: u32 at %d is outside %d bytes", off, len(b))
	}
	return binary.LittleEndian.Uint32(b[off:]), nil
}

func (b fbBuf) u64(off uint64) (uint64, error) {
	if off+8 > uint64(len(b)) {
		return 0, fmt.Errorf("flatbuffer: u64 at %d is outside %d bytes", off, len(b))
	}
	return binary.LittleEndian.Uint64(b[off:]), nil
}

// fbTable is a table inside a flatbuffer.
type fbTable struct {
	b     fbBuf
	pos   uint64
	vt    uint64
	vtLen uint64
}

// root returns the root table of b.
func (b fbBuf) root() (fbTable, error) {
	off, err := b.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return b.table(uint64(off))
}

func (b fbBuf) table(pos uint64) (fbTable, error) {
	so, err := b.u32(pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := int64(pos) - int64(int32(so))
	if vt < 0 || uint64(vt) >= uint64(len(b)) {
		return fbTable{}, fmt.Errorf("flatbuffer: vtable of table at %d is outside the buffer", pos)
	}
	vtLen, err := b.u16(uint64(vt))
	if err != nil {
		return fbTable{}, err
	}
	if vtLen < 4 || vtLen%2 != 0 || uint64(vt)+uint64(vtLen) > uint64(len(b)) {
		return fbTable{}, fmt.Errorf("flatbuffer: vtable at %d has invalid size %d", vt, vtLen)
	}
	return fbTable{b: b, pos: pos, vt: uint64(vt), vtLen: uint64(vtLen)}, nil
}

// field returns the absolute offset of field i, or 0 when it is absent.
func (t fbTable) field(i int) (uint64, error) {
	slot := 4 + 2*uint64(i)
	if slot+2 > t.vtLen {
		return 0, nil
	}
	off, err := t.b.u16(t.vt + slot)
	if err != nil || off == 0 {
		return 0, err
	}
	return t.pos + uint64(off), nil
}

func (t fbTable) u8(i int, def uint8) (uint8, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return def, err
	}
	return t.b.u8(p)
}

func (t fbTable) u16(i int, def uint16) (uint16, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return def, err
	}
	return t.b.u16(p)
}

func (t fbTable) i32(i int, def int32) (int32, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return def, err
	}
	v, err := t.b.u32(p)
	return int32(v), err
}

func (t fbTable) i64(i int, def int64) (int64, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return def, err
	}
	v, err := t.b.u64(p)
	return int64(v), err
}

// indirect follows the uoffset stored at p.
func (b fbBuf) indirect(p uint64) (uint64, error) {
	off, err := b.u32(p)
	if err != nil {
		return 0, err
	}
	return p + uint64(off), nil
}

// sub returns the table referenced by field i (ok false when absent).
func (t fbTable) sub(i int) (fbTable, bool, error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return fbTable{}, false, err
	}
	q, err := t.b.indirect(p)
	if err != nil {
		return fbTable{}, false, err
	}
	st, err := t.b.table(q)
	return st, err == nil, err
}

// vector returns the start and length of the vector in field i whose
// elements are elemSize bytes; the whole vector is checked to lie inside
// the buffer.
func (t fbTable) vector(i int, elemSize uint64) (start, n uint64, err error) {
	p, err := t.field(i)
	if err != nil || p == 0 {
		return 0, 0, err
	}
	q, err := t.b.indirect(p)
	if err != nil {
		return 0, 0, err
	}
	cnt, err := t.b.u32(q)
	if err != nil {
		return 0, 0, err
	}
	start, n = q+4, uint64(cnt)
	if start > uint64(len(t.b)) || n*elemSize > uint64(len(t.b))-start {
		return 0, 0, fmt.Errorf("flatbuffer: vector of %d × %d bytes at %d runs past %d bytes", n, elemSize, start, len(t.b))
	}
	return start, n, nil
}

// str returns the string in field i ("" when absent).
func (t fbTable) str(i int) (string, error) {
	start, n, err := t.vector(i, 1)
	if err != nil || n == 0 {
		return "", err
	}
	return string(t.b[start : start+n]), nil
}

// tableAt returns element j of a vector of tables starting at start.
func (b fbBuf) tableAt(start, j uint64) (fbTable, error) {
	q, err := b.indirect(start + 4*j)
	if err != nil {
		return fbTable{}, err
	}
	return b.table(q)
}
