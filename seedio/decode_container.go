package seedio

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ipcMagic opens and closes every Arrow IPC file.
var ipcMagic = []byte("ARROW1")

// Arrow flatbuffer enum values used by the container check.
const (
	fbHeaderSchema          = 1
	fbHeaderDictionaryBatch = 2
	fbHeaderRecordBatch     = 3

	fbCodecLZ4Frame = 0
	fbCodecZSTD     = 1

	fbEndianLittle = 0

	blockSize     = 24 // struct Block { offset: long; metaDataLength: int; pad; bodyLength: long }
	bufferSize    = 16 // struct Buffer { offset: long; length: long }
	fieldNodeSize = 16 // struct FieldNode { length: long; null_count: long }
)

// ipcMessage is one encapsulated message found while walking the file.
type ipcMessage struct {
	offset  uint64 // of the continuation marker / length prefix
	metaLen uint64 // prefix + flatbuffer + padding, as a footer Block counts it
	bodyLen uint64
	kind    uint8
	dictID  int64
}

// ipcLayout is what the container check learned about a seed's IPC file.
type ipcLayout struct {
	schemaMsg     []byte // encapsulated schema message (prefix + metadata)
	recordBatches int
	dictionaries  int
	metaKeys      [][]byte // footer schema custom_metadata, in stored order
	metaVals      [][]byte
	compressed    bool
}

// checkIPCFile verifies that b is exactly one Arrow IPC file and that
// everything arrow-go will later allocate is bounded by budget bytes. It is
// the first step of §5.1 item 3; every failure is E04.
func checkIPCFile(b []byte, budget uint64) (*ipcLayout, error) {
	fail := func(format string, args ...any) error {
		return newErr("E04", ErrSeedNotIPCFile, NoZone, "", format, args...)
	}
	const minLen = 8 + 4 + 6
	if len(b) < minLen {
		return nil, fail("%d bytes is too short for an Arrow IPC file", len(b))
	}
	if !bytes.Equal(b[:6], ipcMagic) {
		return nil, fail("leading magic is %q, want \"ARROW1\" (stream format or leading bytes?)", b[:6])
	}
	if !bytes.Equal(b[len(b)-6:], ipcMagic) {
		return nil, fail("trailing magic is %q, want \"ARROW1\" (truncated file or trailing bytes?)", b[len(b)-6:])
	}
	footerLen := uint64(binary.LittleEndian.Uint32(b[len(b)-10:]))
	if footerLen == 0 || footerLen > uint64(len(b))-minLen {
		return nil, fail("footer length %d does not fit in %d bytes", int32(footerLen), len(b))
	}
	footerStart := uint64(len(b)) - 10 - footerLen
	footer := b[footerStart : uint64(len(b))-10]

	lay := &ipcLayout{}
	ft, err := fbRoot(footer)
	if err != nil {
		return nil, fail("footer at %d: %v", footerStart, err)
	}
	st, ok, err := ft.table(1)
	if err != nil || !ok {
		return nil, fail("footer at %d has no schema (%v)", footerStart, err)
	}
	endian, err := st.i16(0, 0)
	if err != nil {
		return nil, fail("footer schema: %v", err)
	}
	if endian != fbEndianLittle {
		return nil, fail("footer schema is big-endian; seeds are little-endian only (R13)")
	}
	if err := checkSchemaFB(st); err != nil {
		return nil, fail("footer schema: %v", err)
	}
	if lay.metaKeys, lay.metaVals, err = fbKeyValues(st, 2); err != nil {
		return nil, fail("footer schema custom_metadata: %v", err)
	}
	dictBlocks, err := footerBlocks(ft, 2)
	if err != nil {
		return nil, fail("footer dictionaries: %v", err)
	}
	recBlocks, err := footerBlocks(ft, 3)
	if err != nil {
		return nil, fail("footer recordBatches: %v", err)
	}

	// Walk the encapsulated messages between the leading magic and the footer.
	var msgs []ipcMessage
	var decoded uint64
	// The leading magic is followed by zero padding up to the writer's
	// alignment (arrow-rs: 64 bytes by default, arrow-go: 8); the first
	// message must then start with the continuation marker.
	pos := uint64(6)
	for pos < footerStart && b[pos] == 0 {
		pos++
	}
	if pos%8 != 0 || pos > 64 || footerStart-pos < 4 || binary.LittleEndian.Uint32(b[pos:]) != 0xFFFFFFFF {
		return nil, fail("no schema message after the leading magic (first message expected at an aligned offset <= 64 with a continuation marker, found offset %d)", pos)
	}
	sawEOS := false
	for pos < footerStart {
		if footerStart-pos < 4 {
			return nil, fail("%d stray bytes at offset %d before the footer", footerStart-pos, pos)
		}
		prefix := uint64(4)
		l := uint64(binary.LittleEndian.Uint32(b[pos:]))
		if l == 0xFFFFFFFF {
			if footerStart-pos < 8 {
				return nil, fail("truncated message prefix at offset %d", pos)
			}
			prefix = 8
			l = uint64(binary.LittleEndian.Uint32(b[pos+4:]))
		}
		if l == 0 { // end-of-stream marker: the footer must follow at once
			pos += prefix
			sawEOS = true
			break
		}
		if l > footerStart-pos-prefix {
			return nil, fail("message at offset %d: metadata length %d exceeds the %d bytes before the footer", pos, l, footerStart-pos-prefix)
		}
		meta := b[pos+prefix : pos+prefix+l]
		m, err := parseMessage(meta, pos, prefix+l)
		if err != nil {
			return nil, fail("message at offset %d: %v", pos, err)
		}
		if m.kind == fbHeaderSchema {
			mt, _ := fbRoot(meta)
			hs, _, _ := mt.table(2)
			if err := checkSchemaFB(hs); err != nil {
				return nil, fail("schema message at offset %d: %v", pos, err)
			}
		}
		if m.bodyLen > footerStart-pos-m.metaLen {
			return nil, fail("message at offset %d: body length %d exceeds the bytes before the footer", pos, m.bodyLen)
		}
		body := b[pos+m.metaLen : pos+m.metaLen+m.bodyLen]
		switch m.kind {
		case fbHeaderSchema:
			if len(msgs) != 0 {
				return nil, fail("message at offset %d: second schema message", pos)
			}
			lay.schemaMsg = b[pos : pos+m.metaLen]
		case fbHeaderRecordBatch, fbHeaderDictionaryBatch:
			if len(msgs) == 0 {
				return nil, fail("message at offset %d: %s before the schema message", pos, kindName(m.kind))
			}
			n, comp, err := checkBatchBuffers(meta, m.kind, m.bodyLen, body, budget-decoded)
			if err != nil {
				return nil, fail("%s at offset %d: %v", kindName(m.kind), pos, err)
			}
			decoded += n
			lay.compressed = lay.compressed || comp
			if m.kind == fbHeaderRecordBatch {
				lay.recordBatches++
			} else {
				for _, o := range msgs {
					if o.kind == fbHeaderDictionaryBatch && o.dictID == m.dictID {
						return nil, fail("dictionary batch at offset %d replaces dictionary id %d (R13)", pos, m.dictID)
					}
				}
				lay.dictionaries++
			}
		default:
			return nil, fail("message at offset %d has header type %d, not allowed in a seed", pos, m.kind)
		}
		msgs = append(msgs, m)
		pos += m.metaLen + m.bodyLen
	}
	if pos != footerStart {
		if sawEOS {
			return nil, fail("%d bytes between the end-of-stream marker and the footer at %d", footerStart-pos, footerStart)
		}
		return nil, fail("messages overrun the footer start %d (reached %d)", footerStart, pos)
	}
	if lay.schemaMsg == nil {
		return nil, fail("no schema message after the leading magic")
	}
	if err := matchBlocks("record batch", recBlocks, msgs, fbHeaderRecordBatch); err != nil {
		return nil, fail("%v", err)
	}
	if err := matchBlocks("dictionary", dictBlocks, msgs, fbHeaderDictionaryBatch); err != nil {
		return nil, fail("%v", err)
	}
	return lay, nil
}

func kindName(k uint8) string {
	switch k {
	case fbHeaderSchema:
		return "schema message"
	case fbHeaderRecordBatch:
		return "record batch"
	case fbHeaderDictionaryBatch:
		return "dictionary batch"
	}
	return fmt.Sprintf("message type %d", k)
}

type fileBlock struct {
	offset, metaLen, bodyLen int64
}

func footerBlocks(ft fbTable, field int) ([]fileBlock, error) {
	start, n, ok, err := ft.vector(field, blockSize)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]fileBlock, 0, n)
	for i := uint64(0); i < n; i++ {
		p := ft.buf[start+i*blockSize:]
		out = append(out, fileBlock{
			offset:  int64(binary.LittleEndian.Uint64(p)),
			metaLen: int64(int32(binary.LittleEndian.Uint32(p[8:]))),
			bodyLen: int64(binary.LittleEndian.Uint64(p[16:])),
		})
	}
	return out, nil
}

// matchBlocks requires the footer's blocks of one kind to be exactly the
// messages of that kind found in the file body, in order.
func matchBlocks(what string, blocks []fileBlock, msgs []ipcMessage, kind uint8) error {
	var found []ipcMessage
	for _, m := range msgs {
		if m.kind == kind {
			found = append(found, m)
		}
	}
	if len(found) != len(blocks) {
		return fmt.Errorf("footer lists %d %s blocks, the file body holds %d", len(blocks), what, len(found))
	}
	for i, blk := range blocks {
		m := found[i]
		if blk.offset < 0 || uint64(blk.offset) != m.offset || blk.metaLen < 0 || uint64(blk.metaLen) != m.metaLen ||
			blk.bodyLen < 0 || uint64(blk.bodyLen) != m.bodyLen {
			return fmt.Errorf("footer %s block %d {offset %d, metadata %d, body %d} does not match the message at offset %d {metadata %d, body %d}",
				what, i, blk.offset, blk.metaLen, blk.bodyLen, m.offset, m.metaLen, m.bodyLen)
		}
	}
	return nil
}

// parseMessage reads the Message table's header type, body length and, for
// dictionary batches, the dictionary id and delta flag.
func parseMessage(meta []byte, offset, metaLen uint64) (ipcMessage, error) {
	mt, err := fbRoot(meta)
	if err != nil {
		return ipcMessage{}, err
	}
	kind, err := mt.u8(1, 0)
	if err != nil {
		return ipcMessage{}, err
	}
	bl, err := mt.i64(3, 0)
	if err != nil {
		return ipcMessage{}, err
	}
	if bl < 0 {
		return ipcMessage{}, fmt.Errorf("negative body length %d", bl)
	}
	m := ipcMessage{offset: offset, metaLen: metaLen, bodyLen: uint64(bl), kind: kind}
	if _, ok, err := mt.table(2); err != nil || !ok {
		return ipcMessage{}, fmt.Errorf("message header missing (%v)", err)
	}
	if _, _, err := fbKeyValues(mt, 4); err != nil {
		return ipcMessage{}, fmt.Errorf("message custom_metadata: %v", err)
	}
	if kind == fbHeaderDictionaryBatch {
		db, _, _ := mt.table(2)
		if m.dictID, err = db.i64(0, 0); err != nil {
			return ipcMessage{}, err
		}
		delta, err := db.u8(2, 0)
		if err != nil {
			return ipcMessage{}, err
		}
		if delta != 0 {
			return ipcMessage{}, fmt.Errorf("dictionary delta for id %d (R13 forbids deltas)", m.dictID)
		}
	}
	return m, nil
}

// checkBatchBuffers checks a record batch's (or dictionary batch's data)
// buffer table against its body and bounds the bytes decompression will
// allocate. It returns the decompressed bytes claimed and whether the body
// is compressed.
func checkBatchBuffers(meta []byte, kind uint8, bodyLen uint64, body []byte, budget uint64) (uint64, bool, error) {
	mt, err := fbRoot(meta)
	if err != nil {
		return 0, false, err
	}
	hdr, _, err := mt.table(2)
	if err != nil {
		return 0, false, err
	}
	rb := hdr
	if kind == fbHeaderDictionaryBatch {
		var ok bool
		rb, ok, err = hdr.table(1)
		if err != nil || !ok {
			return 0, false, fmt.Errorf("dictionary batch without data (%v)", err)
		}
	}
	length, err := rb.i64(0, 0)
	if err != nil {
		return 0, false, err
	}
	if length < 0 {
		return 0, false, fmt.Errorf("negative row count %d", length)
	}
	if _, _, _, err := rb.vector(1, fieldNodeSize); err != nil {
		return 0, false, err
	}
	bstart, bn, _, err := rb.vector(2, bufferSize)
	if err != nil {
		return 0, false, err
	}
	comp, hasComp, err := rb.table(3)
	if err != nil {
		return 0, false, err
	}
	if hasComp {
		codec, err := comp.u8(0, 0)
		if err != nil {
			return 0, false, err
		}
		method, err := comp.u8(1, 0)
		if err != nil {
			return 0, false, err
		}
		if codec != fbCodecLZ4Frame && codec != fbCodecZSTD {
			return 0, false, fmt.Errorf("unknown compression codec %d", codec)
		}
		if method != 0 {
			return 0, false, fmt.Errorf("unknown compression method %d", method)
		}
	}
	var total uint64
	for i := uint64(0); i < bn; i++ {
		p := rb.buf[bstart+i*bufferSize:]
		off := int64(binary.LittleEndian.Uint64(p))
		l := int64(binary.LittleEndian.Uint64(p[8:]))
		if off < 0 || l < 0 || uint64(off) > bodyLen || uint64(l) > bodyLen-uint64(off) {
			return 0, false, fmt.Errorf("buffer %d {offset %d, length %d} outside the %d-byte body", i, off, l, bodyLen)
		}
		if !hasComp || l == 0 {
			continue
		}
		if l < 8 {
			return 0, false, fmt.Errorf("compressed buffer %d has %d bytes, less than its 8-byte length prefix", i, l)
		}
		raw := int64(binary.LittleEndian.Uint64(body[off:]))
		if raw == -1 { // stored uncompressed
			continue
		}
		if raw < 0 || uint64(raw) > budget-total {
			return 0, false, fmt.Errorf("compressed buffer %d claims %d decompressed bytes, over the remaining budget of %d", i, raw, budget-total)
		}
		total += uint64(raw)
	}
	return total, hasComp, nil
}

// Schema flatbuffer limits. arrow-go trusts vector lengths when it
// allocates and recurses into children without a depth limit, so the
// reader checks the whole field tree first.
const (
	maxSchemaDepth  = 64
	maxSchemaFields = 4096
)

// Field table slots (Schema.fbs).
const (
	fbFieldName       = 0
	fbFieldTypeType   = 2
	fbFieldType       = 3
	fbFieldDictionary = 4
	fbFieldChildren   = 5
	fbFieldMetadata   = 6
)

// checkSchemaFB validates a Schema table: every vector and string of the
// schema and of its field tree lies inside the buffer, the tree is at most
// maxSchemaDepth deep (which also rejects reference cycles) and holds at
// most maxSchemaFields fields.
func checkSchemaFB(st fbTable) error {
	if _, _, err := fbKeyValues(st, 2); err != nil {
		return err
	}
	if _, _, _, err := st.vector(3, 8); err != nil {
		return err
	}
	fields, err := st.tableVector(1)
	if err != nil {
		return err
	}
	count := 0
	for _, f := range fields {
		if err := checkFieldFB(f, 1, &count); err != nil {
			return err
		}
	}
	return nil
}

func checkFieldFB(f fbTable, depth int, count *int) error {
	*count++
	if depth > maxSchemaDepth {
		return fmt.Errorf("%w: field tree deeper than %d", errFB, maxSchemaDepth)
	}
	if *count > maxSchemaFields {
		return fmt.Errorf("%w: more than %d fields", errFB, maxSchemaFields)
	}
	if _, _, err := f.str(fbFieldName); err != nil {
		return err
	}
	if _, err := f.u8(fbFieldTypeType, 0); err != nil {
		return err
	}
	if tt, ok, err := f.table(fbFieldType); err != nil {
		return err
	} else if ok {
		// Type tables hold scalars, except Union.typeIds ([int], slot 1)
		// and Timestamp.timezone (string, slot 1): check slot 1 as a vector
		// of 4-byte elements when present and a reference.
		if tag, _ := f.u8(fbFieldTypeType, 0); tag == fbTypeUnion {
			if _, _, _, err := tt.vector(1, 4); err != nil {
				return err
			}
		} else if tag == fbTypeTimestamp {
			if _, _, err := tt.str(1); err != nil {
				return err
			}
		}
	}
	if dt, ok, err := f.table(fbFieldDictionary); err != nil {
		return err
	} else if ok {
		if _, _, err := dt.table(1); err != nil {
			return err
		}
	}
	if _, _, err := fbKeyValues(f, fbFieldMetadata); err != nil {
		return err
	}
	children, err := f.tableVector(fbFieldChildren)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := checkFieldFB(c, depth+1, count); err != nil {
			return err
		}
	}
	return nil
}

// Type union tags (Schema.fbs) the schema check looks into.
const (
	fbTypeTimestamp = 10
	fbTypeUnion     = 14
)
