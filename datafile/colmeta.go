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

// appendDirectAny wraps an encoding message as Encoding{direct{Any{url, msg}}}
// (field 2 of Encoding), appending in one pass: the nested lengths are
// computed first instead of marshalling each level into its own buffer
// (same bytes, no temporary buffers: TestAppendDirectAny_SameBytesAsNested).
func appendDirectAny(b []byte, typeName string, msg []byte) []byte {
	anyLen := anySize(typeName, msg)
	dLen := 1 + protowire.SizeVarint(uint64(anyLen)) + anyLen
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(dLen))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(anyLen))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(1+len(typeName)))
	b = append(b, '/')
	b = append(b, typeName...)
	return pbAppendBytesField(b, 2, msg)
}

// anySize is the size of Any{"/"+typeName, msg}.
func anySize(typeName string, msg []byte) int {
	return 2 + protowire.SizeVarint(uint64(1+len(typeName))) + 1 + len(typeName) +
		protowire.SizeVarint(uint64(len(msg))) + len(msg)
}

// directAnySize is len(appendDirectAny(nil, typeName, msg)).
func directAnySize(typeName string, msg []byte) int {
	anyLen := anySize(typeName, msg)
	dLen := 1 + protowire.SizeVarint(uint64(anyLen)) + anyLen
	return 1 + protowire.SizeVarint(uint64(dLen)) + dLen
}

// pbAppendDirectAnyField is pbAppendBytesField(b, num, appendDirectAny(nil,
// typeName, msg)) without the temporary buffer.
func pbAppendDirectAnyField(b []byte, num protowire.Number, typeName string, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(directAnySize(typeName, msg)))
	return appendDirectAny(b, typeName, msg)
}

// columnEncodingValues is the ColumnEncoding "values" (an empty message).
func columnEncodingValues() []byte {
	return pbAppendBytesField(nil, 1, nil)
}

// columnEncodingValuesField is field 1 of ColumnMetadata holding the
// column encoding "values": pbAppendBytesField(b, 1, appendDirectAny(nil,
// typeColumnEncoding, columnEncodingValues())).
func columnEncodingValuesField(b []byte) []byte {
	values := [2]byte{0x0a, 0x00} // field 1, length 0
	return pbAppendDirectAnyField(b, 1, typeColumnEncoding, values[:])
}

// packedRangesLen is the payload length of the packed field of the
// positions (pos) or lengths of bufs.
func packedRangesLen(bufs []BufferRange, pos bool) int {
	n := 0
	for _, r := range bufs {
		if pos {
			n += protowire.SizeVarint(r.Pos)
		} else {
			n += protowire.SizeVarint(r.Len)
		}
	}
	return n
}

// packedRangesSize is the size of that field as pbAppendPackedUint64s
// writes it (an empty list is omitted).
func packedRangesSize(bufs []BufferRange, pos bool) int {
	if len(bufs) == 0 {
		return 0
	}
	n := packedRangesLen(bufs, pos)
	return 1 + protowire.SizeVarint(uint64(n)) + n
}

// appendPackedRanges appends that field.
func appendPackedRanges(b []byte, num protowire.Number, bufs []BufferRange, pos bool) []byte {
	if len(bufs) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(packedRangesLen(bufs, pos)))
	for _, r := range bufs {
		if pos {
			b = protowire.AppendVarint(b, r.Pos)
		} else {
			b = protowire.AppendVarint(b, r.Len)
		}
	}
	return b
}

// varintFieldNZSize is the size of pbAppendVarintFieldNZ's field (1-byte tag).
func varintFieldNZSize(v uint64) int {
	if v == 0 {
		return 0
	}
	return 1 + protowire.SizeVarint(v)
}

// pbAppendPageField appends field num holding the Page message of p whose
// encoding (field 4) is the direct Any of typeName and enc, in one pass
// (same bytes as marshalling the page into its own buffer first).
func pbAppendPageField(b []byte, num protowire.Number, p *Page, typeName string, enc []byte) []byte {
	encLen := directAnySize(typeName, enc)
	size := packedRangesSize(p.Buffers, true) + packedRangesSize(p.Buffers, false) +
		varintFieldNZSize(p.Length) + 1 + protowire.SizeVarint(uint64(encLen)) + encLen +
		varintFieldNZSize(p.Priority)
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	b = appendPackedRanges(b, 1, p.Buffers, true)
	b = appendPackedRanges(b, 2, p.Buffers, false)
	b = pbAppendVarintFieldNZ(b, 3, p.Length)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(encLen))
	b = appendDirectAny(b, typeName, enc)
	return pbAppendVarintFieldNZ(b, 5, p.Priority)
}

// encodeColumnMetadata serializes a 2.0 column: encoding "values", then pages.
func encodeColumnMetadata(pages []Page, pageEncodings [][]byte) []byte {
	b := columnEncodingValuesField(nil)
	for i := range pages {
		b = pbAppendPageField(b, 2, &pages[i], typeArrayEncoding, pageEncodings[i])
	}
	return b
}
