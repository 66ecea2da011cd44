package datafile

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// aeKind is the variant of a v2.0 lance.encodings.ArrayEncoding (spec §4.4);
// the values are the oneof field numbers.
type aeKind uint8

const (
	aeFlat               aeKind = 1
	aeNullable           aeKind = 2
	aeFixedSizeList      aeKind = 3
	aeList               aeKind = 4
	aeStruct             aeKind = 5
	aeBinary             aeKind = 6
	aeDictionary         aeKind = 7
	aeFsst               aeKind = 8
	aePackedStruct       aeKind = 9
	aeBitpacked          aeKind = 10
	aeFixedSizeBinary    aeKind = 11
	aeBitpackedForNonNeg aeKind = 12
	aeMaxKnown           aeKind = 21
)

var aeKindNames = [...]string{"", "flat", "nullable", "fixed_size_list", "list", "struct", "binary",
	"dictionary", "fsst", "packed_struct", "bitpacked", "fixed_size_binary", "bitpacked_for_non_neg",
	"constant", "inline_bitpacking", "out_of_line_bitpacking", "variable", "packed_struct_fixed_width_mini_block",
	"block", "rle", "general_mini_block", "byte_stream_split"}

func (k aeKind) String() string {
	if int(k) < len(aeKindNames) && k != 0 {
		return aeKindNames[k]
	}
	return fmt.Sprintf("ArrayEncoding#%d", uint8(k))
}

// Nullable variants.
const (
	nullNone = 1 // no_nulls
	nullSome = 2 // some_nulls
	nullAll  = 3 // all_nulls
)

// Buffer types of lance.encodings.Buffer.
const (
	bufferTypePage   = 0
	bufferTypeColumn = 1
	bufferTypeFile   = 2
)

type bufferRef struct {
	index uint32
	typ   uint32
}

// arrayEncoding is a decoded v2.0 ArrayEncoding tree.
type arrayEncoding struct {
	kind aeKind

	// flat, bitpacked, bitpacked_for_non_neg
	bits        uint64 // flat bits_per_value / compressed bits
	uncompBits  uint64
	signed      bool
	buf         bufferRef
	hasBuf      bool
	compression string

	// nullable
	nullKind int
	validity *arrayEncoding
	values   *arrayEncoding

	// binary: indices, bytes; dictionary: indices, items; fsb: bytes
	indices *arrayEncoding
	bytes   *arrayEncoding
	nullAdj uint64

	// fixed_size_list
	dim         uint32
	items       *arrayEncoding
	hasValidity bool

	// list
	offsets  *arrayEncoding
	numItems uint64

	// dictionary
	numDictItems uint32

	// fixed_size_binary
	byteWidth uint32
}

const maxEncodingDepth = 64

// decodeArrayEncoding parses a v2.0 ArrayEncoding message.
func decodeArrayEncoding(b []byte, base int64, sec string) (*arrayEncoding, error) {
	return decodeAE(b, base, sec, 0)
}

func decodeAE(b []byte, base int64, sec string, depth int) (*arrayEncoding, error) {
	if depth > maxEncodingDepth {
		return nil, formatErr(ErrMalformed, sec, base, "array encoding nested deeper than %d levels", maxEncodingDepth)
	}
	var ae *arrayEncoding
	err := pbWalk(b, base, sec, func(f pbField) error {
		if f.num < 1 || f.num > protowire.Number(aeMaxKnown) {
			return nil
		}
		if err := f.expect(base, sec, protowire.BytesType); err != nil {
			return err
		}
		// oneof: the last member wins
		e, err := decodeAEVariant(aeKind(f.num), f.buf, f.payloadAt(base), sec, depth)
		if err != nil {
			return err
		}
		ae = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ae == nil {
		return nil, formatErr(ErrMalformed, sec, base, "array encoding is empty")
	}
	return ae, nil
}

// sub decodes a nested ArrayEncoding field.
func subAE(f pbField, base int64, sec string, depth int) (*arrayEncoding, error) {
	if err := f.expect(base, sec, protowire.BytesType); err != nil {
		return nil, err
	}
	return decodeAE(f.buf, f.payloadAt(base), sec, depth+1)
}

func decodeBufferRef(f pbField, base int64, sec string) (bufferRef, error) {
	var r bufferRef
	if err := f.expect(base, sec, protowire.BytesType); err != nil {
		return r, err
	}
	pb := f.payloadAt(base)
	err := pbWalk(f.buf, pb, sec+" buffer", func(g pbField) error {
		switch g.num {
		case 1, 2:
			if err := g.expect(pb, sec+" buffer", protowire.VarintType); err != nil {
				return err
			}
			if g.val > 1<<32-1 {
				return formatErr(ErrMalformed, sec+" buffer", pb+int64(g.off), "value %d does not fit uint32", g.val)
			}
			if g.num == 1 {
				r.index = uint32(g.val)
			} else {
				r.typ = uint32(g.val)
			}
		}
		return nil
	})
	return r, err
}

func decodeAEVariant(kind aeKind, b []byte, base int64, sec string, depth int) (*arrayEncoding, error) {
	ae := &arrayEncoding{kind: kind}
	vsec := sec + " " + kind.String()
	varint := func(f pbField, dst *uint64) error {
		if err := f.expect(base, vsec, protowire.VarintType); err != nil {
			return err
		}
		*dst = f.val
		return nil
	}
	var err error
	switch kind {
	case aeFlat:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			switch f.num {
			case 1:
				return varint(f, &ae.bits)
			case 2:
				r, err := decodeBufferRef(f, base, vsec)
				ae.buf, ae.hasBuf = r, true
				return err
			case 3:
				if err := f.expect(base, vsec, protowire.BytesType); err != nil {
					return err
				}
				cb := f.payloadAt(base)
				return pbWalk(f.buf, cb, vsec+" compression", func(g pbField) error {
					if g.num == 1 {
						if err := g.expect(cb, vsec+" compression", protowire.BytesType); err != nil {
							return err
						}
						ae.compression = string(g.buf)
					}
					return nil
				})
			}
			return nil
		})
	case aeNullable:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			if f.num < 1 || f.num > 3 {
				return nil
			}
			if err := f.expect(base, vsec, protowire.BytesType); err != nil {
				return err
			}
			ae.nullKind = int(f.num)
			ae.validity, ae.values = nil, nil
			nb := f.payloadAt(base)
			return pbWalk(f.buf, nb, vsec, func(g pbField) error {
				var err error
				switch {
				case f.num == nullNone && g.num == 1, f.num == nullSome && g.num == 2:
					ae.values, err = subAE(g, nb, vsec, depth)
				case f.num == nullSome && g.num == 1:
					ae.validity, err = subAE(g, nb, vsec, depth)
				}
				return err
			})
		})
	case aeFixedSizeList:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			var err error
			switch f.num {
			case 1:
				var v uint64
				if err = varint(f, &v); err == nil {
					if v > 1<<31-1 {
						return formatErr(ErrMalformed, vsec, base+int64(f.off), "dimension %d is too large", v)
					}
					ae.dim = uint32(v)
				}
			case 2:
				ae.items, err = subAE(f, base, vsec, depth)
			case 3:
				var v uint64
				err = varint(f, &v)
				ae.hasValidity = v != 0
			}
			return err
		})
	case aeList:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			var err error
			switch f.num {
			case 1:
				ae.offsets, err = subAE(f, base, vsec, depth)
			case 2:
				err = varint(f, &ae.nullAdj)
			case 3:
				err = varint(f, &ae.numItems)
			}
			return err
		})
	case aeStruct:
		// SimpleStruct has no fields.
	case aeBinary:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			var err error
			switch f.num {
			case 1:
				ae.indices, err = subAE(f, base, vsec, depth)
			case 2:
				ae.bytes, err = subAE(f, base, vsec, depth)
			case 3:
				err = varint(f, &ae.nullAdj)
			}
			return err
		})
	case aeDictionary:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			var err error
			switch f.num {
			case 1:
				ae.indices, err = subAE(f, base, vsec, depth)
			case 2:
				ae.items, err = subAE(f, base, vsec, depth)
			case 3:
				var v uint64
				if err = varint(f, &v); err == nil {
					if v > 1<<32-1 {
						return formatErr(ErrMalformed, vsec, base+int64(f.off), "num_dictionary_items %d does not fit uint32", v)
					}
					ae.numDictItems = uint32(v)
				}
			}
			return err
		})
	case aeFixedSizeBinary:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			var err error
			switch f.num {
			case 1:
				ae.bytes, err = subAE(f, base, vsec, depth)
			case 2:
				var v uint64
				if err = varint(f, &v); err == nil {
					if v > 1<<31-1 {
						return formatErr(ErrMalformed, vsec, base+int64(f.off), "byte_width %d is too large", v)
					}
					ae.byteWidth = uint32(v)
				}
			}
			return err
		})
	case aeBitpacked, aeBitpackedForNonNeg:
		err = pbWalk(b, base, vsec, func(f pbField) error {
			switch f.num {
			case 1:
				return varint(f, &ae.bits)
			case 2:
				return varint(f, &ae.uncompBits)
			case 3:
				r, err := decodeBufferRef(f, base, vsec)
				ae.buf, ae.hasBuf = r, true
				return err
			case 4:
				if kind == aeBitpacked {
					var v uint64
					err := varint(f, &v)
					ae.signed = v != 0
					return err
				}
			}
			return nil
		})
	default:
		// Other variants are recognised (so a file opens) but not decoded.
	}
	if err != nil {
		return nil, err
	}
	return ae, nil
}

// String renders the tree compactly, for error messages and debugging.
func (ae *arrayEncoding) String() string {
	var sb strings.Builder
	ae.describe(&sb)
	return sb.String()
}

func (ae *arrayEncoding) describe(sb *strings.Builder) {
	if ae == nil {
		sb.WriteString("<nil>")
		return
	}
	sb.WriteString(ae.kind.String())
	sb.WriteByte('{')
	switch ae.kind {
	case aeFlat:
		fmt.Fprintf(sb, "%d, B%d", ae.bits, ae.buf.index)
		if ae.buf.typ != 0 {
			fmt.Fprintf(sb, "/t%d", ae.buf.typ)
		}
		if ae.compression != "" {
			fmt.Fprintf(sb, ", %s", ae.compression)
		}
	case aeNullable:
		switch ae.nullKind {
		case nullNone:
			sb.WriteString("no_nulls ")
			ae.values.describe(sb)
		case nullSome:
			sb.WriteString("some_nulls ")
			ae.validity.describe(sb)
			sb.WriteString(", ")
			ae.values.describe(sb)
		case nullAll:
			sb.WriteString("all_nulls")
		}
	case aeBinary:
		ae.indices.describe(sb)
		sb.WriteString(", ")
		ae.bytes.describe(sb)
		fmt.Fprintf(sb, ", adj %d", ae.nullAdj)
	case aeFixedSizeList:
		fmt.Fprintf(sb, "dim %d, validity %v, ", ae.dim, ae.hasValidity)
		ae.items.describe(sb)
	case aeList:
		ae.offsets.describe(sb)
		fmt.Fprintf(sb, ", adj %d, items %d", ae.nullAdj, ae.numItems)
	case aeDictionary:
		ae.indices.describe(sb)
		sb.WriteString(", ")
		ae.items.describe(sb)
		fmt.Fprintf(sb, ", n %d", ae.numDictItems)
	case aeFixedSizeBinary:
		ae.bytes.describe(sb)
		fmt.Fprintf(sb, ", width %d", ae.byteWidth)
	case aeBitpacked, aeBitpackedForNonNeg:
		fmt.Fprintf(sb, "%d/%d, B%d, signed %v", ae.bits, ae.uncompBits, ae.buf.index, ae.signed)
	}
	sb.WriteByte('}')
}

// --- writer side: the encodings of spec §4.5 ------------------------------------

func encBuffer(index uint32) []byte {
	return pbAppendVarintFieldNZ(nil, 1, uint64(index)) // buffer_type page = 0 is omitted
}

// encFlat is ArrayEncoding{flat{bits, buffer{index}}}.
func encFlat(bits uint64, index uint32) []byte {
	var f []byte
	f = pbAppendVarintFieldNZ(f, 1, bits)
	f = pbAppendBytesField(f, 2, encBuffer(index)) // required even when empty
	return pbAppendBytesField(nil, protowire.Number(aeFlat), f)
}

// encNoNulls is ArrayEncoding{nullable{no_nulls{values}}}.
func encNoNulls(values []byte) []byte {
	nn := pbAppendBytesField(nil, 1, values)
	n := pbAppendBytesField(nil, nullNone, nn)
	return pbAppendBytesField(nil, protowire.Number(aeNullable), n)
}

// encSomeNulls is ArrayEncoding{nullable{some_nulls{validity, values}}}.
func encSomeNulls(validity, values []byte) []byte {
	var sn []byte
	sn = pbAppendBytesField(sn, 1, validity)
	sn = pbAppendBytesField(sn, 2, values)
	n := pbAppendBytesField(nil, nullSome, sn)
	return pbAppendBytesField(nil, protowire.Number(aeNullable), n)
}

// encAllNulls is ArrayEncoding{nullable{all_nulls{}}}.
func encAllNulls() []byte {
	n := pbAppendBytesField(nil, nullAll, nil)
	return pbAppendBytesField(nil, protowire.Number(aeNullable), n)
}

// encBinary is ArrayEncoding{binary{indices, bytes, null_adjustment}}.
func encBinary(indices, bytes []byte, nullAdj uint64) []byte {
	var b []byte
	b = pbAppendBytesField(b, 1, indices)
	b = pbAppendBytesField(b, 2, bytes)
	b = pbAppendVarintFieldNZ(b, 3, nullAdj)
	return pbAppendBytesField(nil, protowire.Number(aeBinary), b)
}

// encFixedSizeList is ArrayEncoding{fixed_size_list{dimension, items, has_validity}}.
func encFixedSizeList(dim uint32, items []byte) []byte {
	var b []byte
	b = pbAppendVarintFieldNZ(b, 1, uint64(dim))
	b = pbAppendBytesField(b, 2, items)
	return pbAppendBytesField(nil, protowire.Number(aeFixedSizeList), b)
}

// encStruct is ArrayEncoding{struct{}}.
func encStruct() []byte {
	return pbAppendBytesField(nil, protowire.Number(aeStruct), nil)
}
