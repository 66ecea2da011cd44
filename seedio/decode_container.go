package seedio

import (
	"encoding/binary"
	"fmt"

	"github.com/lancekeeper/lancekeeper/internal/arrowipc"
	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
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
// the first step of §5.1 item 3; every failure is E04. The layout itself
// is walked by internal/arrowipc.
func checkIPCFile(b []byte, budget uint64) (*ipcLayout, error) {
	fail := func(format string, args ...any) error {
		return newErr("E04", ErrSeedNotIPCFile, NoZone, "", format, args...)
	}
	file, err := arrowipc.ParseFile(b)
	if err != nil {
		return nil, fail("%v", err)
	}
	footerStart := file.FooterStart

	lay := &ipcLayout{}
	st, ok, err := file.Schema()
	if err != nil || !ok {
		return nil, fail("footer at %d has no schema (%v)", footerStart, err)
	}
	bigEndian, err := arrowipc.SchemaBigEndian(st)
	if err != nil {
		return nil, fail("footer schema: %v", err)
	}
	if bigEndian {
		return nil, fail("footer schema is big-endian; seeds are little-endian only (R13)")
	}
	if err := arrowipc.CheckSchema(st); err != nil {
		return nil, fail("footer schema: %v", err)
	}
	if lay.metaKeys, lay.metaVals, err = arrowipc.SchemaMetadata(st); err != nil {
		return nil, fail("footer schema custom_metadata: %v", err)
	}
	dictBlocks, err := file.DictionaryBlocks()
	if err != nil {
		return nil, fail("footer dictionaries: %v", err)
	}
	recBlocks, err := file.RecordBatchBlocks()
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
		prefix, l, err := arrowipc.MessagePrefix(b[pos:footerStart])
		if err != nil {
			return nil, fail("truncated message prefix at offset %d", pos)
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
		m, hdr, err := parseMessage(meta, pos, prefix+l)
		if err != nil {
			return nil, fail("message at offset %d: %v", pos, err)
		}
		if m.kind == arrowipc.HeaderSchema {
			if err := arrowipc.CheckSchema(hdr); err != nil {
				return nil, fail("schema message at offset %d: %v", pos, err)
			}
		}
		if m.bodyLen > footerStart-pos-m.metaLen {
			return nil, fail("message at offset %d: body length %d exceeds the bytes before the footer", pos, m.bodyLen)
		}
		body := b[pos+m.metaLen : pos+m.metaLen+m.bodyLen]
		switch m.kind {
		case arrowipc.HeaderSchema:
			if len(msgs) != 0 {
				return nil, fail("message at offset %d: second schema message", pos)
			}
			lay.schemaMsg = b[pos : pos+m.metaLen]
		case arrowipc.HeaderRecordBatch, arrowipc.HeaderDictionaryBatch:
			if len(msgs) == 0 {
				return nil, fail("message at offset %d: %s before the schema message", pos, kindName(m.kind))
			}
			n, comp, err := checkBatchBuffers(hdr, m.kind, body, budget-decoded)
			if err != nil {
				return nil, fail("%s at offset %d: %v", kindName(m.kind), pos, err)
			}
			decoded += n
			lay.compressed = lay.compressed || comp
			if m.kind == arrowipc.HeaderRecordBatch {
				lay.recordBatches++
			} else {
				for _, o := range msgs {
					if o.kind == arrowipc.HeaderDictionaryBatch && o.dictID == m.dictID {
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
	if err := matchBlocks("record batch", recBlocks, msgs, arrowipc.HeaderRecordBatch); err != nil {
		return nil, fail("%v", err)
	}
	if err := matchBlocks("dictionary", dictBlocks, msgs, arrowipc.HeaderDictionaryBatch); err != nil {
		return nil, fail("%v", err)
	}
	return lay, nil
}

func kindName(k uint8) string {
	switch k {
	case arrowipc.HeaderSchema:
		return "schema message"
	case arrowipc.HeaderRecordBatch:
		return "record batch"
	case arrowipc.HeaderDictionaryBatch:
		return "dictionary batch"
	}
	return fmt.Sprintf("message type %d", k)
}

// matchBlocks requires the footer's blocks of one kind to be exactly the
// messages of that kind found in the file body, in order.
func matchBlocks(what string, blocks []arrowipc.Block, msgs []ipcMessage, kind uint8) error {
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
		if blk.Offset < 0 || uint64(blk.Offset) != m.offset || blk.MetaLen < 0 || uint64(blk.MetaLen) != m.metaLen ||
			blk.BodyLen < 0 || uint64(blk.BodyLen) != m.bodyLen {
			return fmt.Errorf("footer %s block %d {offset %d, metadata %d, body %d} does not match the message at offset %d {metadata %d, body %d}",
				what, i, blk.Offset, blk.MetaLen, blk.BodyLen, m.offset, m.metaLen, m.bodyLen)
		}
	}
	return nil
}

// parseMessage reads the Message table's header type, body length and, for
// dictionary batches, the dictionary id and delta flag; it returns the
// header table too.
func parseMessage(meta []byte, offset, metaLen uint64) (ipcMessage, flatbuf.Table, error) {
	msg, err := arrowipc.ParseMessage(meta)
	if err != nil {
		return ipcMessage{}, flatbuf.Table{}, err
	}
	m := ipcMessage{offset: offset, metaLen: metaLen, bodyLen: uint64(msg.BodyLength), kind: msg.HeaderType}
	if _, _, err := msg.Table.KeyValues(4); err != nil {
		return ipcMessage{}, flatbuf.Table{}, fmt.Errorf("message custom_metadata: %v", err)
	}
	if m.kind == arrowipc.HeaderDictionaryBatch {
		id, _, delta, err := arrowipc.DictionaryBatch(msg.Header)
		m.dictID = id
		if err != nil {
			return ipcMessage{}, flatbuf.Table{}, err
		}
		if delta {
			return ipcMessage{}, flatbuf.Table{}, fmt.Errorf("dictionary delta for id %d (R13 forbids deltas)", m.dictID)
		}
	}
	return m, msg.Header, nil
}

// checkBatchBuffers checks a record batch's (or dictionary batch's data)
// buffer table against its body and bounds the bytes decompression will
// allocate. It returns the decompressed bytes claimed and whether the body
// is compressed.
func checkBatchBuffers(hdr flatbuf.Table, kind uint8, body []byte, budget uint64) (uint64, bool, error) {
	rbt := hdr
	if kind == arrowipc.HeaderDictionaryBatch {
		var err error
		if _, rbt, _, err = arrowipc.DictionaryBatch(hdr); err != nil {
			return 0, false, err
		}
	}
	rb, err := arrowipc.ParseRecordBatch(rbt)
	if err != nil {
		return 0, false, err
	}
	if rb.Compressed && rb.Method != 0 {
		return 0, false, fmt.Errorf("unknown compression method %d", rb.Method)
	}
	var total uint64
	for i := range rb.Buffers {
		buf, err := rb.Slice(i, body)
		if err != nil {
			return 0, false, err
		}
		if !rb.Compressed || len(buf) == 0 {
			continue
		}
		raw, err := arrowipc.UncompressedLength(buf)
		if err != nil {
			return 0, false, fmt.Errorf("buffer %d: %v", i, err)
		}
		if raw == -1 { // stored uncompressed
			continue
		}
		if raw < 0 || uint64(raw) > budget-total {
			return 0, false, fmt.Errorf("compressed buffer %d claims %d decompressed bytes, over the remaining budget of %d", i, raw, budget-total)
		}
		total += uint64(raw)
	}
	return total, rb.Compressed, nil
}
