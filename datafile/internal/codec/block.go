package codec

import (
	"encoding/binary"
	"math"
)

// Kind is the shape of a decoded Block.
type Kind uint8

// The kinds of Block (see the package doc).
const (
	Fixed Kind = iota + 1
	Variable
	Struct
	List
)

func (k Kind) String() string {
	switch k {
	case Fixed:
		return "fixed"
	case Variable:
		return "variable"
	case Struct:
		return "struct"
	case List:
		return "list"
	}
	return "invalid"
}

// Block is decoded data: Num values of one Kind (see the package doc).
type Block struct {
	Kind Kind
	Num  uint64

	// Fixed: bits per value and the values.
	Bits uint64
	// Fixed: the values. Variable: the bytes the offsets point into.
	Data []byte

	// Variable: Num+1 offsets of OffsetBits (32 or 64) bits, little-endian.
	Offsets    []byte
	OffsetBits uint64

	// List: items per value, the validity bitmap of the Num·Dim items
	// (nil = all valid) and Children[0] = the items.
	Dim      uint64
	Validity []byte

	// Struct: one per field. List: exactly one, the items.
	Children []Block
}

// Offset returns offset i (0 ≤ i ≤ Num) of a Variable block.
func (b *Block) Offset(i uint64) uint64 {
	if b.OffsetBits == 64 {
		return binary.LittleEndian.Uint64(b.Offsets[i*8:])
	}
	return uint64(binary.LittleEndian.Uint32(b.Offsets[i*4:]))
}

// Value returns value i of a Variable block.
func (b *Block) Value(i uint64) []byte {
	return b.Data[b.Offset(i):b.Offset(i+1)]
}

// Uint returns value i of a Fixed block of 1, 8, 16, 32 or 64 bits as an
// unsigned integer (other widths: 0).
func (b *Block) Uint(i uint64) uint64 {
	switch b.Bits {
	case 1:
		return uint64(b.Data[i>>3]>>(i&7)) & 1
	case 8:
		return uint64(b.Data[i])
	case 16:
		return uint64(binary.LittleEndian.Uint16(b.Data[i*2:]))
	case 32:
		return uint64(binary.LittleEndian.Uint32(b.Data[i*4:]))
	case 64:
		return binary.LittleEndian.Uint64(b.Data[i*8:])
	}
	return 0
}

// Limits bounds what a decoder may allocate.
type Limits struct {
	// MaxBytes is the largest number of decoded bytes (Data, Offsets and
	// Validity of the result and its children together) a call may produce.
	// 0 means DefaultMaxBytes.
	MaxBytes uint64
}

// DefaultMaxBytes is the decoded-size limit when Limits.MaxBytes is 0 (1 GiB).
const DefaultMaxBytes = 1 << 30

func (l Limits) max() uint64 {
	if l.MaxBytes == 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

// mulOK returns a*b and whether it did not overflow.
func mulOK(a, b uint64) (uint64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxUint64/b {
		return 0, false
	}
	return a * b, true
}

// fixedBytes is the size of n values of bits bits (bits 1 = bitmap), and
// whether it fits in a uint64.
func fixedBytes(n, bits uint64) (uint64, bool) {
	if bits == 1 {
		return (n + 7) / 8, true
	}
	t, ok := mulOK(n, bits)
	if !ok {
		return 0, false
	}
	return (t + 7) / 8, true
}
