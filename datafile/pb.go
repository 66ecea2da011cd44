package datafile

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// This file holds a minimal protobuf reader and writer. The messages of a
// Lance file are small and few; hand-rolling them keeps the wire bytes under
// our control (field order, presence of empty sub-messages, packed repeated
// fields) so the writer can match Lance byte for byte.

// pbField is one decoded field of a protobuf message.
type pbField struct {
	num protowire.Number
	typ protowire.Type
	val uint64 // varint, fixed32 or fixed64 payload
	buf []byte // length-delimited payload
	off int    // offset of the field's key within the message
	pay int    // offset of a length-delimited payload within the message
}

// payloadAt is the absolute file offset of f's length-delimited payload,
// given the absolute offset of the enclosing message.
func (f pbField) payloadAt(base int64) int64 { return base + int64(f.pay) }

// pbWalk calls fn for every field of msg in wire order. base is the absolute
// file offset of msg[0] (used only for error messages); what names the message.
// Unknown fields are handed to fn like any other and fn ignores them.
func pbWalk(msg []byte, base int64, what string, fn func(f pbField) error) error {
	pos := 0
	for pos < len(msg) {
		num, typ, n := protowire.ConsumeTag(msg[pos:])
		if n < 0 {
			return pbError(base+int64(pos), what, "bad field key", protowire.ParseError(n))
		}
		f := pbField{num: num, typ: typ, off: pos}
		rest := msg[pos+n:]
		var m int
		switch typ {
		case protowire.VarintType:
			f.val, m = protowire.ConsumeVarint(rest)
		case protowire.Fixed32Type:
			var v uint32
			v, m = protowire.ConsumeFixed32(rest)
			f.val = uint64(v)
		case protowire.Fixed64Type:
			f.val, m = protowire.ConsumeFixed64(rest)
		case protowire.BytesType:
			f.buf, m = protowire.ConsumeBytes(rest)
			if m >= 0 {
				f.pay = pos + n + m - len(f.buf)
			}
		case protowire.StartGroupType:
			_, m = protowire.ConsumeGroup(num, rest)
		default:
			return pbError(base+int64(pos), what, fmt.Sprintf("field %d has unsupported wire type %d", num, typ), nil)
		}
		if m < 0 {
			return pbError(base+int64(pos), what, fmt.Sprintf("field %d (wire type %d) is truncated or malformed", num, typ), protowire.ParseError(m))
		}
		if err := fn(f); err != nil {
			return err
		}
		pos += n + m
	}
	return nil
}

func pbError(off int64, what, msg string, cause error) error {
	reason := msg
	if cause != nil {
		reason = fmt.Sprintf("%s: %v", msg, cause)
	}
	return &FormatError{Section: what, Offset: off, Reason: reason, Err: ErrMalformed}
}

// expect checks the wire type of f.
func (f pbField) expect(base int64, what string, typ protowire.Type) error {
	if f.typ != typ {
		return pbError(base+int64(f.off), what, fmt.Sprintf("field %d has wire type %d, want %d", f.num, f.typ, typ), nil)
	}
	return nil
}

// pbAppendUint64s decodes a repeated uint64 field in packed or unpacked form
// and appends the values to dst.
func pbAppendUint64s(dst []uint64, f pbField, base int64, what string) ([]uint64, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, f.val), nil
	case protowire.BytesType:
		b := f.buf
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return dst, pbError(base+int64(f.off), what, fmt.Sprintf("packed field %d is malformed", f.num), protowire.ParseError(n))
			}
			dst = append(dst, v)
			b = b[n:]
		}
		return dst, nil
	default:
		return dst, pbError(base+int64(f.off), what, fmt.Sprintf("repeated field %d has wire type %d", f.num, f.typ), nil)
	}
}

// pbMapEntry decodes a map<string, bytes> entry.
func pbMapEntry(b []byte, base int64, what string) (key, val string, err error) {
	err = pbWalk(b, base, what, func(f pbField) error {
		switch f.num {
		case 1:
			if e := f.expect(base, what, protowire.BytesType); e != nil {
				return e
			}
			key = string(f.buf)
		case 2:
			if e := f.expect(base, what, protowire.BytesType); e != nil {
				return e
			}
			val = string(f.buf)
		}
		return nil
	})
	return key, val, err
}

// --- encoding helpers -------------------------------------------------------

func pbAppendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// pbAppendVarintFieldNZ appends the field only when v is not the proto3 default.
func pbAppendVarintFieldNZ(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return pbAppendVarintField(b, num, v)
}

func pbAppendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func pbAppendStringField(b []byte, num protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// pbAppendPackedUint64s appends a packed repeated uint64 field; an empty list
// is omitted as proto3 encoders do.
func pbAppendPackedUint64s(b []byte, num protowire.Number, vs []uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// pbAppendMap appends a map<string, bytes> field with entries sorted by key
// (Lance's order is arbitrary; sorting makes our output deterministic).
func pbAppendMap(b []byte, num protowire.Number, keys []string, m map[string]string) []byte {
	for _, k := range keys {
		// prost omits a map entry's key or value when it is the default "".
		var e []byte
		if k != "" {
			e = pbAppendStringField(e, 1, k)
		}
		if v := m[k]; v != "" {
			e = pbAppendStringField(e, 2, v)
		}
		b = pbAppendBytesField(b, num, e)
	}
	return b
}
