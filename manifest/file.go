package manifest

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Footer constants of a manifest file (lance-table-format.md §2).
const (
	// FooterSize is the size of the fixed footer at the end of every manifest file.
	FooterSize = 16
	// Magic closes every manifest file.
	Magic = "LANC"
	// FooterMajor and FooterMinor are the footer version Encode writes (the
	// values Lance 12 writes). Readers never validate them.
	FooterMajor = 0
	FooterMinor = 2
)

// File is a decoded manifest file.
type File struct {
	// Name is the name the bytes were decoded under (e.g. the object key).
	Name string
	// Manifest is the manifest message; never nil after a successful Decode.
	Manifest *pb.Manifest
	// IndexSection is the index section, or nil when the manifest has none
	// (index_section absent). An empty section decodes to a non-nil message
	// with no indices.
	IndexSection *pb.IndexSection
	// Transaction is the inline transaction, or nil when the manifest has
	// none (transaction_section absent).
	Transaction *pb.Transaction
	// Size is the size of the file in bytes.
	Size int64
	// FooterMajor and FooterMinor are the footer's version numbers, as read
	// (Lance does not validate them and neither does Decode).
	FooterMajor, FooterMinor int16
	// ManifestPos is the offset of the manifest's length prefix (M_pos).
	ManifestPos int64
	// Prelude holds the bytes from offset 0 up to the first section (or the
	// manifest when there is no section). It is empty in files written by
	// current Lance; legacy-storage (data_format 0.1) tables with dictionary
	// fields keep the dictionary values there, and Field.dictionary.offset
	// points into it. EncodePrelude writes it back at offset 0 so those
	// offsets stay valid.
	Prelude []byte

	// enc is set on a File EncodeFile made: where its fragment list lies in
	// its bytes, for the next EncodeFile to copy.
	enc *encodedFragments
}

// encodedFragments records the encoded fragment list of a File EncodeFile
// made: data[start:end] are the field-2 entries (tag, length, message) of
// frags, in order, as a full deterministic marshal writes them.
type encodedFragments struct {
	data       []byte
	frags      []*pb.DataFragment
	start, end int
}

// Indices returns the indices of the index section (nil when there is none).
func (f *File) Indices() []*pb.IndexMetadata {
	if f == nil || f.IndexSection == nil {
		return nil
	}
	return f.IndexSection.GetIndices()
}

// Decode parses a manifest file (lance-table-format.md §2). name is used
// only in error messages. It checks, in order: the file is at least 16
// bytes, the magic, that M_pos and the manifest length prefix lie inside the
// file, that the manifest ends exactly at the footer, and that the index
// and transaction sections (when the manifest points at them) lie inside
// the file before the footer with their lengths in range. The footer
// version is not validated. Every failure is a *FormatError matching
// ErrCorrupt.
func Decode(name string, data []byte) (*File, error) {
	size := int64(len(data))
	if size < FooterSize {
		return nil, formatErr(name, 0, "file size %d is smaller than the %d-byte footer", size, FooterSize)
	}
	footer := size - FooterSize
	if string(data[size-4:]) != Magic {
		return nil, formatErr(name, size-4, "magic number does not match: want %q, got %q", Magic, data[size-4:])
	}
	mpos := int64(binary.LittleEndian.Uint64(data[footer:]))
	f := &File{
		Name:        name,
		Size:        size,
		FooterMajor: int16(binary.LittleEndian.Uint16(data[footer+8:])),
		FooterMinor: int16(binary.LittleEndian.Uint16(data[footer+10:])),
		ManifestPos: mpos,
	}
	if mpos < 0 || mpos > footer-4 {
		return nil, formatErr(name, footer, "manifest position %d is outside the file (must be in [0, %d])", mpos, footer-4)
	}
	n := int64(binary.LittleEndian.Uint32(data[mpos:]))
	if mpos+4+n != footer {
		return nil, formatErr(name, mpos, "manifest length does not match: the manifest must end at the footer (offset %d), but its length prefix %d ends it at %d", footer, n, mpos+4+n)
	}
	m := &pb.Manifest{}
	if err := proto.Unmarshal(data[mpos+4:footer], m); err != nil {
		return nil, &FormatError{File: name, Offset: mpos + 4, Reason: "invalid Manifest protobuf", Err: err}
	}
	f.Manifest = m
	first := mpos
	if m.IndexSection != nil && int64(*m.IndexSection) < first && *m.IndexSection <= uint64(footer) {
		first = int64(*m.IndexSection)
	}
	if m.TransactionSection != nil && int64(*m.TransactionSection) < first && *m.TransactionSection <= uint64(footer) {
		first = int64(*m.TransactionSection)
	}
	if first > 0 {
		f.Prelude = append([]byte(nil), data[:first]...)
	}
	if m.IndexSection != nil {
		raw, err := section(name, data, footer, "index section (field 6)", *m.IndexSection)
		if err != nil {
			return nil, err
		}
		idx := &pb.IndexSection{}
		if err := proto.Unmarshal(raw, idx); err != nil {
			return nil, &FormatError{File: name, Offset: int64(*m.IndexSection) + 4, Reason: "invalid IndexSection protobuf", Err: err}
		}
		f.IndexSection = idx
	}
	if m.TransactionSection != nil {
		raw, err := section(name, data, footer, "transaction section (field 21)", *m.TransactionSection)
		if err != nil {
			return nil, err
		}
		txn := &pb.Transaction{}
		if err := proto.Unmarshal(raw, txn); err != nil {
			return nil, &FormatError{File: name, Offset: int64(*m.TransactionSection) + 4, Reason: "invalid Transaction protobuf", Err: err}
		}
		f.Transaction = txn
	}
	return f, nil
}

// section returns the payload of the length-prefixed section at off, which
// must lie entirely before the footer.
func section(name string, data []byte, footer int64, what string, off uint64) ([]byte, error) {
	if off > uint64(footer) || uint64(footer)-off < 4 {
		return nil, formatErr(name, footer, "%s offset %d is outside the file (must be in [0, %d])", what, off, footer-4)
	}
	start := int64(off)
	n := int64(binary.LittleEndian.Uint32(data[start:]))
	if n > footer-start-4 {
		return nil, formatErr(name, start, "%s length %d runs past the footer at offset %d", what, n, footer)
	}
	return data[start+4 : start+4+n], nil
}

// Encode serializes a manifest file exactly as Lance writes it (§2 writer
// algorithm): the index section (when idx is non-nil) at offset 0, then the
// inline transaction (when txn is non-nil), then the manifest, then the
// 16-byte footer (version 0.2, "LANC"). Encode sets the manifest's
// index_section and transaction_section fields to the offsets it chose (or
// clears them) in the bytes it writes; m itself is not modified. Marshalling
// is deterministic (map entries sorted by key).
func Encode(m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) ([]byte, error) {
	return EncodePrelude(nil, m, idx, txn)
}

// EncodePrelude is Encode with prelude written verbatim at offset 0, before
// the sections (see File.Prelude). Encode(m, idx, txn) equals
// EncodePrelude(nil, m, idx, txn).
func EncodePrelude(prelude []byte, m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) ([]byte, error) {
	return encode(prelude, FooterMajor, FooterMinor, m, idx, txn)
}

// Encode re-encodes a decoded file: its prelude, sections and manifest,
// with the footer version it was read with (Lance ≤ 0.36 wrote 0.1).
// Decoding the result gives messages equal to f's (proto.Equal).
func (f *File) Encode() ([]byte, error) {
	return encode(f.Prelude, f.FooterMajor, f.FooterMinor, f.Manifest, f.IndexSection, f.Transaction)
}

func encode(prelude []byte, major, minor int16, m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("manifest: Encode: nil manifest")
	}
	// Size every part first (the manifest's own size depends on the section
	// offsets), then write everything into one exactly-sized buffer.
	sizer := proto.MarshalOptions{Deterministic: true}
	pos := uint64(len(prelude))
	var idxOff, txnOff *uint64
	var idxSize, txnSize int
	if idx != nil {
		off := pos
		idxOff, idxSize = &off, sizer.Size(idx)
		pos += 4 + uint64(idxSize)
	}
	if txn != nil {
		off := pos
		txnOff, txnSize = &off, sizer.Size(txn)
		pos += 4 + uint64(txnSize)
	}
	mc := shallowCopy(m)
	mc.IndexSection = idxOff
	mc.TransactionSection = txnOff
	mpos := pos
	mSize := sizer.Size(mc)
	for _, part := range []struct {
		what string
		size int
	}{{"index section", idxSize}, {"transaction section", txnSize}, {"manifest", mSize}} {
		if part.size > math.MaxUint32 {
			return nil, fmt.Errorf("manifest: Encode: %s is %d bytes, more than a u32 length prefix can hold", part.what, part.size)
		}
	}
	buf := make([]byte, 0, mpos+4+uint64(mSize)+FooterSize)
	buf = append(buf, prelude...)
	var err error
	if idx != nil {
		if buf, err = appendSection(buf, idx, idxSize, "index section"); err != nil {
			return nil, err
		}
	}
	if txn != nil {
		if buf, err = appendSection(buf, txn, txnSize, "transaction section"); err != nil {
			return nil, err
		}
	}
	if buf, err = appendSection(buf, mc, mSize, "manifest"); err != nil {
		return nil, err
	}
	buf = binary.LittleEndian.AppendUint64(buf, mpos)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(major))
	buf = binary.LittleEndian.AppendUint16(buf, uint16(minor))
	buf = append(buf, Magic...)
	return buf, nil
}

// EncodeFile is EncodePrelude returning, besides the bytes, the File that
// Decode(name, bytes) gives (its messages proto.Equal to the decoded ones),
// made without decoding: its Manifest is a shallow copy of m with the
// section offsets set, sharing m's field values; IndexSection and
// Transaction are idx and txn themselves.
//
// When prev is a File EncodeFile made and m's first fragments are
// prev.Manifest's fragment messages themselves (the same pointers, in the
// same order, not modified since), their encoded bytes are copied from
// prev's instead of marshalled again, so encoding an append costs its new
// fragments, not the whole list (protobuf repeated fields concatenate).
// The bytes are identical to EncodePrelude(prelude, m, idx, txn) either
// way; any other prev (nil, decoded, a different list) only means nothing
// is copied. The caller must not modify m's messages afterwards while the
// File is in use as a prev.
func EncodeFile(name string, prev *File, prelude []byte, m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) (*File, []byte, error) {
	if m == nil {
		return nil, nil, fmt.Errorf("manifest: Encode: nil manifest")
	}
	sizer := proto.MarshalOptions{Deterministic: true}
	pos := uint64(len(prelude))
	var idxOff, txnOff *uint64
	var idxSize, txnSize int
	if idx != nil {
		off := pos
		idxOff, idxSize = &off, sizer.Size(idx)
		pos += 4 + uint64(idxSize)
	}
	if txn != nil {
		off := pos
		txnOff, txnSize = &off, sizer.Size(txn)
		pos += 4 + uint64(txnSize)
	}
	mc := shallowCopy(m)
	mc.IndexSection = idxOff
	mc.TransactionSection = txnOff
	mpos := pos
	frags := mc.Fragments

	// The fragments already encoded in prev, copied verbatim.
	var reuse []byte
	k := 0
	if prev != nil && prev.enc != nil && len(prev.enc.frags) <= len(frags) {
		k = len(prev.enc.frags)
		for i, f := range prev.enc.frags {
			if frags[i] != f {
				k = 0
				break
			}
		}
		if k > 0 {
			reuse = prev.enc.data[prev.enc.start:prev.enc.end]
		}
	}
	// The manifest without its fragments: field 1 (the schema) comes first
	// in a deterministic marshal, then field 2 (the fragments), then the
	// other fields and the unknown ones; the fragments go in right after
	// the field-1 entries.
	mc.Fragments = nil
	head, err := sizer.Marshal(mc)
	mc.Fragments = frags
	if err != nil {
		return nil, nil, fmt.Errorf("manifest: Encode: marshal manifest: %w", err)
	}
	split := sizer.Size(&pb.Manifest{Fields: mc.Fields})
	if split > len(head) {
		return nil, nil, fmt.Errorf("manifest: Encode: the schema (%d bytes) is longer than the manifest without fragments (%d bytes)", split, len(head))
	}
	sizes := make([]int, len(frags)-k)
	fragLen := len(reuse)
	for i, f := range frags[k:] {
		sizes[i] = sizer.Size(f)
		fragLen += protowire.SizeTag(2) + protowire.SizeBytes(sizes[i])
	}
	mSize := len(head) + fragLen
	for _, part := range []struct {
		what string
		size int
	}{{"index section", idxSize}, {"transaction section", txnSize}, {"manifest", mSize}} {
		if part.size > math.MaxUint32 {
			return nil, nil, fmt.Errorf("manifest: Encode: %s is %d bytes, more than a u32 length prefix can hold", part.what, part.size)
		}
	}
	buf := make([]byte, 0, mpos+4+uint64(mSize)+FooterSize)
	buf = append(buf, prelude...)
	if idx != nil {
		if buf, err = appendSection(buf, idx, idxSize, "index section"); err != nil {
			return nil, nil, err
		}
	}
	if txn != nil {
		if buf, err = appendSection(buf, txn, txnSize, "transaction section"); err != nil {
			return nil, nil, err
		}
	}
	buf = binary.LittleEndian.AppendUint32(buf, uint32(mSize))
	buf = append(buf, head[:split]...)
	start := len(buf)
	buf = append(buf, reuse...)
	marshal := proto.MarshalOptions{Deterministic: true, UseCachedSize: true}
	for i, f := range frags[k:] {
		buf = protowire.AppendTag(buf, 2, protowire.BytesType)
		buf = protowire.AppendVarint(buf, uint64(sizes[i]))
		at := len(buf)
		if buf, err = marshal.MarshalAppend(buf, f); err != nil {
			return nil, nil, fmt.Errorf("manifest: Encode: marshal fragment %d: %w", f.GetId(), err)
		}
		if len(buf)-at != sizes[i] {
			return nil, nil, fmt.Errorf("manifest: Encode: fragment %d changed size while being written (%d, then %d bytes); was it modified concurrently?", f.GetId(), sizes[i], len(buf)-at)
		}
	}
	end := len(buf)
	buf = append(buf, head[split:]...)
	buf = binary.LittleEndian.AppendUint64(buf, mpos)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(FooterMajor))
	buf = binary.LittleEndian.AppendUint16(buf, uint16(FooterMinor))
	buf = append(buf, Magic...)
	f := &File{
		Name: name, Manifest: mc, IndexSection: idx, Transaction: txn, Size: int64(len(buf)),
		FooterMajor: FooterMajor, FooterMinor: FooterMinor, ManifestPos: int64(mpos),
		enc: &encodedFragments{data: buf, frags: append([]*pb.DataFragment(nil), frags...), start: start, end: end},
	}
	if len(prelude) > 0 {
		f.Prelude = buf[:len(prelude):len(prelude)]
	}
	return f, buf, nil
}

// appendSection appends a u32 length prefix and msg, whose size (cached
// inside msg by the sizing pass) is size.
func appendSection(buf []byte, msg proto.Message, size int, what string) ([]byte, error) {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(size))
	start := len(buf)
	out, err := proto.MarshalOptions{Deterministic: true, UseCachedSize: true}.MarshalAppend(buf, msg)
	if err != nil {
		return nil, fmt.Errorf("manifest: Encode: marshal %s: %w", what, err)
	}
	if len(out)-start != size {
		return nil, fmt.Errorf("manifest: Encode: %s changed size while being written (%d, then %d bytes); was it modified concurrently?", what, size, len(out)-start)
	}
	return out, nil
}

// shallowCopy returns a new Manifest sharing every field value (and the
// unknown fields) of m, so Encode can set the section offsets without
// touching the caller's message.
func shallowCopy(m *pb.Manifest) *pb.Manifest { return m.ShallowCopy() }
