package datafile

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Type names of the Any-wrapped encodings (spec §4.2). Lance compares only
// the text after the last '/'.
const (
	typeColumnEncoding = "lance.encodings.ColumnEncoding"
	typeArrayEncoding  = "lance.encodings.ArrayEncoding"
	typePageLayout     = "lance.encodings21.PageLayout"
)

// BufferRange locates a buffer: absolute position and length in bytes.
type BufferRange struct {
	Pos, Len uint64
}

// End is Pos+Len; ok is false when the sum overflows.
func (r BufferRange) End() (end uint64, ok bool) {
	end = r.Pos + r.Len
	return end, end >= r.Pos
}

// AnyEncoding is a direct encoding: the google.protobuf.Any that Lance embeds
// in Encoding.direct (spec §4.2).
type AnyEncoding struct {
	TypeURL string
	Value   []byte
}

// TypeName is the part of TypeURL after the last '/', which is what Lance compares.
func (a AnyEncoding) TypeName() string {
	return a.TypeURL[strings.LastIndexByte(a.TypeURL, '/')+1:]
}

// Page is one page of a column (lance.file.v2.ColumnMetadata.Page).
type Page struct {
	Buffers  []BufferRange
	Length   uint64 // rows in the page (items for a 2.0 list items column)
	Priority uint64
	Encoding AnyEncoding
}

// ColumnMetadata is lance.file.v2.ColumnMetadata (spec §4.1).
type ColumnMetadata struct {
	Encoding AnyEncoding // the column encoding (lance.encodings.ColumnEncoding)
	Pages    []Page
	Buffers  []BufferRange // column-level buffers
}

// NumRows is the sum of the page lengths (saturating at MaxUint64).
func (c *ColumnMetadata) NumRows() uint64 {
	var n uint64
	for _, p := range c.Pages {
		n = addSat(n, p.Length)
	}
	return n
}

// decodeColumnMetadata parses one column metadata block and applies the
// checks of spec §1.6 steps 7–9. col is the column index, base the block's
// file offset, size the file size.
func decodeColumnMetadata(b []byte, base int64, col int, v FileVersion, size uint64) (ColumnMetadata, error) {
	sec := fmt.Sprintf("column %d metadata", col)
	var cm ColumnMetadata
	var offs, sizes []uint64
	haveEnc := false
	err := pbWalk(b, base, sec, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			if err = f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			cm.Encoding, err = decodeEncoding(f.buf, f.payloadAt(base), sec+" encoding")
			haveEnc = true
		case 2:
			if err = f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			var p Page
			psec := fmt.Sprintf("column %d page %d", col, len(cm.Pages))
			p, err = decodePage(f.buf, f.payloadAt(base), psec, size)
			cm.Pages = append(cm.Pages, p)
		case 3:
			offs, err = pbAppendUint64s(offs, f, base, sec)
		case 4:
			sizes, err = pbAppendUint64s(sizes, f, base, sec)
		}
		return err
	})
	if err != nil {
		return cm, err
	}
	if !haveEnc {
		return cm, formatErr(ErrMalformed, sec, base, "column %d is missing its encoding", col)
	}
	if n := cm.Encoding.TypeName(); n != typeColumnEncoding {
		return cm, formatErr(ErrMalformed, sec+" encoding", base, "type %q, want %q", cm.Encoding.TypeURL, typeColumnEncoding)
	}
	cm.Buffers, err = pairBuffers(offs, sizes, base, sec, size)
	if err != nil {
		return cm, err
	}
	want := typeArrayEncoding
	if v != V2_0 {
		want = typePageLayout
	}
	for i, p := range cm.Pages {
		if n := p.Encoding.TypeName(); n != want {
			return cm, formatErr(ErrMalformed, fmt.Sprintf("column %d page %d encoding", col, i), base,
				"type %q, want %q for a %s file", p.Encoding.TypeURL, want, v)
		}
		if v != V2_0 {
			for j, r := range p.Buffers {
				if r.Pos%64 != 0 {
					return cm, formatErr(ErrMalformed, fmt.Sprintf("column %d page %d", col, i), base,
						"buffer %d at position %d is not 64-byte aligned (required in %s files)", j, r.Pos, v)
				}
			}
		}
	}
	return cm, nil
}

func pairBuffers(offs, sizes []uint64, base int64, sec string, size uint64) ([]BufferRange, error) {
	if len(offs) != len(sizes) {
		return nil, formatErr(ErrMalformed, sec, base, "%d buffer offsets but %d buffer sizes", len(offs), len(sizes))
	}
	if len(offs) == 0 {
		return nil, nil
	}
	out := make([]BufferRange, len(offs))
	for i := range offs {
		r := BufferRange{Pos: offs[i], Len: sizes[i]}
		if end, ok := r.End(); !ok || end > size {
			return nil, formatErr(ErrTruncated, sec, base, "buffer %d [%d, +%d) extends past the end of the file (%d bytes)", i, r.Pos, r.Len, size)
		}
		out[i] = r
	}
	return out, nil
}

func decodePage(b []byte, base int64, sec string, size uint64) (Page, error) {
	var p Page
	var offs, sizes []uint64
	haveEnc := false
	err := pbWalk(b, base, sec, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			offs, err = pbAppendUint64s(offs, f, base, sec)
		case 2:
			sizes, err = pbAppendUint64s(sizes, f, base, sec)
		case 3:
			if err = f.expect(base, sec, protowire.VarintType); err == nil {
				p.Length = f.val
			}
		case 4:
			if err = f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			p.Encoding, err = decodeEncoding(f.buf, f.payloadAt(base), sec+" encoding")
			haveEnc = true
		case 5:
			if err = f.expect(base, sec, protowire.VarintType); err == nil {
				p.Priority = f.val
			}
		}
		return err
	})
	if err != nil {
		return p, err
	}
	if !haveEnc {
		return p, formatErr(ErrMalformed, sec, base, "page has no encoding")
	}
	p.Buffers, err = pairBuffers(offs, sizes, base, sec, size)
	return p, err
}

// decodeEncoding parses lance.file.v2.Encoding and requires the direct form
// (spec §1.6 step 7), then unwraps the Any (step 8).
func decodeEncoding(b []byte, base int64, sec string) (AnyEncoding, error) {
	var (
		loc    protowire.Number // last oneof member seen
		direct []byte
		dbase  int64
	)
	err := pbWalk(b, base, sec, func(f pbField) error {
		switch f.num {
		case 1, 2, 3:
			if err := f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			loc = f.num
			direct, dbase = f.buf, f.payloadAt(base)
		}
		return nil
	})
	if err != nil {
		return AnyEncoding{}, err
	}
	switch loc {
	case 0:
		return AnyEncoding{}, formatErr(ErrMalformed, sec, base, "encoding is not set")
	case 1:
		return AnyEncoding{}, formatErr(ErrUnsupported, sec, base, "indirect (deferred) encodings are not supported")
	case 3:
		return AnyEncoding{}, formatErr(ErrMalformed, sec, base, "encoding is \"none\"")
	}
	var anyBytes []byte
	var abase int64
	err = pbWalk(direct, dbase, sec, func(f pbField) error {
		if f.num == 1 {
			if err := f.expect(dbase, sec, protowire.BytesType); err != nil {
				return err
			}
			anyBytes, abase = f.buf, f.payloadAt(dbase)
		}
		return nil
	})
	if err != nil {
		return AnyEncoding{}, err
	}
	var a AnyEncoding
	err = pbWalk(anyBytes, abase, sec+" Any", func(f pbField) error {
		switch f.num {
		case 1:
			if err := f.expect(abase, sec+" Any", protowire.BytesType); err != nil {
				return err
			}
			a.TypeURL = string(f.buf)
		case 2:
			if err := f.expect(abase, sec+" Any", protowire.BytesType); err != nil {
				return err
			}
			a.Value = f.buf
		}
		return nil
	})
	return a, err
}

// --- encoding (writer side) ---------------------------------------------------

// appendDirectAny wraps an encoding message as Encoding{direct{Any{url, msg}}}.
func appendDirectAny(b []byte, typeName string, msg []byte) []byte {
	var a []byte
	a = pbAppendStringField(a, 1, "/"+typeName)
	a = pbAppendBytesField(a, 2, msg)
	var d []byte
	d = pbAppendBytesField(d, 1, a)
	return pbAppendBytesField(b, 2, d)
}

// columnEncodingValues is the ColumnEncoding "values" (an empty message).
func columnEncodingValues() []byte {
	return pbAppendBytesField(nil, 1, nil)
}

func encodePage(p *Page, arrayEncoding []byte) []byte {
	var b []byte
	offs := make([]uint64, len(p.Buffers))
	sizes := make([]uint64, len(p.Buffers))
	for i, r := range p.Buffers {
		offs[i], sizes[i] = r.Pos, r.Len
	}
	b = pbAppendPackedUint64s(b, 1, offs)
	b = pbAppendPackedUint64s(b, 2, sizes)
	b = pbAppendVarintFieldNZ(b, 3, p.Length)
	b = pbAppendBytesField(b, 4, appendDirectAny(nil, typeArrayEncoding, arrayEncoding))
	b = pbAppendVarintFieldNZ(b, 5, p.Priority)
	return b
}

// encodeColumnMetadata serializes a 2.0 column: encoding "values", then pages.
func encodeColumnMetadata(pages []Page, pageEncodings [][]byte) []byte {
	var b []byte
	b = pbAppendBytesField(b, 1, appendDirectAny(nil, typeColumnEncoding, columnEncodingValues()))
	for i := range pages {
		b = pbAppendBytesField(b, 2, encodePage(&pages[i], pageEncodings[i]))
	}
	return b
}
