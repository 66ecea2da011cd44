package seedio

// A direct writer of the version-1 seed IPC file for the common value types
// (integers, floats, dates, timestamps, utf8/binary and their large
// variants). arrow-go's ipc.FileWriter builds the schema flatbuffer twice
// (message and footer) in builders that start at 1 KiB and double, copies
// each into a fresh buffer and copies the record batch through builders;
// with the seed_null_bitmap hex in the schema metadata (tens of KiB for a
// 1 Mi-row column with 1 % nulls) that was most of Collector.Finish. This
// writer sizes everything once and writes the same Arrow IPC file
// structure (R9–R18): magic, schema message, one record batch message (no
// compression), end-of-stream marker, footer, footer length, magic. The
// flatbuffer tables are built in the same order and with the same fields
// as arrow-go builds them; the record batch body is laid out with every
// buffer at an 8-byte aligned offset and zero padding, each buffer's
// recorded length being its exact length, and an absent validity buffer
// (length 0) for a column without nulls.
//
// The output is byte-identical to arrow-go's for these types
// (TestEncodeFast_MatchesArrowWriter). encodeZones falls back to arrow-go's
// writer for every other value type (Float16, whose builder pads its
// validity buffer differently; booleans, decimals, times, durations, views, fixed-size binary,
// dictionaries, nested types) and whenever a bound has an unexpected Go type
// (so the error stays the one buildValues reports).

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Arrow flatbuffer enum values (Schema.fbs / Message.fbs / File.fbs).
const (
	fbTypeInt           = 2
	fbTypeFloatingPoint = 3
	fbTypeBinary        = 4
	fbTypeUtf8          = 5
	fbTypeDate          = 8
	fbTypeTimestamp     = 10
	fbTypeLargeBinary   = 19
	fbTypeLargeUtf8     = 20

	fbMetadataV5          = 4
	fbHeaderSchema        = 1
	fbHeaderRecordBatch   = 3
	ipcContinuation       = 0xFFFFFFFF
	ipcAlign              = 8
	fbDateUnitDefault     = 1 // MILLISECOND is the flatbuffer default of Date.unit
	fbPrecisionSingle     = 1
	fbPrecisionDouble     = 2
	fastBoundKindFixed    = 1
	fastBoundKindBytes32  = 2
	fastBoundKindBytes64  = 3
	fastBoundMaxFixedSize = 8
)

// fastBoundLayout describes how the fast writer stores a bound column.
type fastBoundLayout struct {
	kind  int // fastBoundKind*
	width int // bytes per value (fixed)
}

// fastLayout returns the layout of min/max columns of type dt, or ok=false
// when the fast writer does not handle dt.
func fastLayout(dt arrow.DataType) (fastBoundLayout, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return fastBoundLayout{fastBoundKindFixed, 1}, true
	case arrow.INT16, arrow.UINT16:
		return fastBoundLayout{fastBoundKindFixed, 2}, true
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return fastBoundLayout{fastBoundKindFixed, 4}, true
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.DATE64, arrow.TIMESTAMP:
		return fastBoundLayout{fastBoundKindFixed, 8}, true
	case arrow.STRING, arrow.BINARY:
		return fastBoundLayout{fastBoundKindBytes32, 0}, true
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return fastBoundLayout{fastBoundKindBytes64, 0}, true
	}
	return fastBoundLayout{}, false
}

// fixedBits returns the little-endian bits of bound v for fixed-width type
// id, or ok=false when v has another Go type than buildValues expects.
func fixedBits(id arrow.Type, v any) (uint64, bool) {
	switch id {
	case arrow.INT8:
		x, ok := v.(int8)
		return uint64(uint8(x)), ok
	case arrow.UINT8:
		x, ok := v.(uint8)
		return uint64(x), ok
	case arrow.INT16:
		x, ok := v.(int16)
		return uint64(uint16(x)), ok
	case arrow.UINT16:
		x, ok := v.(uint16)
		return uint64(x), ok
	case arrow.INT32:
		x, ok := v.(int32)
		return uint64(uint32(x)), ok
	case arrow.UINT32:
		x, ok := v.(uint32)
		return uint64(x), ok
	case arrow.FLOAT32:
		x, ok := v.(float32)
		return uint64(math.Float32bits(x)), ok
	case arrow.DATE32:
		x, ok := v.(arrow.Date32)
		return uint64(uint32(x)), ok
	case arrow.INT64:
		x, ok := v.(int64)
		return uint64(x), ok
	case arrow.UINT64:
		x, ok := v.(uint64)
		return x, ok
	case arrow.FLOAT64:
		x, ok := v.(float64)
		return math.Float64bits(x), ok
	case arrow.DATE64:
		x, ok := v.(arrow.Date64)
		return uint64(x), ok
	case arrow.TIMESTAMP:
		x, ok := v.(arrow.Timestamp)
		return uint64(x), ok
	}
	return 0, false
}

// bytesBound returns the bytes of bound v for a utf8 (isString) or binary
// column, or ok=false when v has another Go type.
func bytesBound(isString bool, v any) ([]byte, bool) {
	if isString {
		s, ok := v.(string)
		return stringBytes(s), ok
	}
	b, ok := v.([]byte)
	return b, ok
}

func pad8(n int) int  { return (n + ipcAlign - 1) &^ (ipcAlign - 1) }
func pad64(n int) int { return (n + 63) &^ 63 }

func bitmapBytes(n int) int { return (n + 7) / 8 }

// builderBitmapBytes is the length of the validity buffer arrow-go writes
// for n values built with Reserve(n) (encodeZonesArrow): the builder's
// bitmap covers its capacity, the smallest power of two above n (arrow-go's
// bitutil.NextPowerOf2) and at least 32, and the IPC writer truncates it to
// n bits padded to 64 bytes.
// Binary and string builders skip the minimum of 32 (binaryBuilder
// initialises the bitmap directly).
func builderBitmapBytes(n int, fixed bool) int {
	capacity := 1 << bits.Len(uint(n))
	if fixed {
		capacity = max(32, capacity)
	}
	return min(bitmapBytes(capacity), pad64(bitmapBytes(n)))
}

// fastBody is the record batch body under construction.
type fastBody struct {
	buf     []byte
	nodes   [][2]int64 // length, null count per column
	buffers [][2]int64 // offset, length per buffer
}

// add appends one buffer of length n (zero-filled, then padded to 8 bytes)
// and returns its bytes for the caller to fill.
func (b *fastBody) add(n int) []byte {
	off := len(b.buf)
	b.buffers = append(b.buffers, [2]int64{int64(off), int64(n)})
	b.buf = append(b.buf, make([]byte, pad8(n))...)
	return b.buf[off : off+n]
}

// addEmpty records an absent buffer (a validity bitmap of a column without
// nulls).
func (b *fastBody) addEmpty() {
	b.buffers = append(b.buffers, [2]int64{int64(len(b.buf)), 0})
}

// boundColumn writes the min (or max) column; ok=false: a bound of an
// unexpected Go type (the caller falls back to arrow-go).
func (b *fastBody) boundColumn(dt arrow.DataType, lay fastBoundLayout, zones []Zone, isMax bool) bool {
	n := len(zones)
	nulls := 0
	for _, z := range zones {
		if boundOf(z, isMax) == nil {
			nulls++
		}
	}
	b.nodes = append(b.nodes, [2]int64{int64(n), int64(nulls)})
	switch {
	case nulls == 0:
		b.addEmpty()
	case nulls == n:
		b.add(pad64(bitmapBytes(n))) // all null: arrow-go writes a zeroed, 64-byte padded bitmap
	default:
		valid := b.add(builderBitmapBytes(n, lay.kind == fastBoundKindFixed))
		for i, z := range zones {
			if boundOf(z, isMax) != nil {
				valid[i/8] |= 1 << (i % 8)
			}
		}
	}
	id := dt.ID()
	isString := id == arrow.STRING || id == arrow.LARGE_STRING
	switch lay.kind {
	case fastBoundKindFixed:
		vals := b.add(n * lay.width)
		for i, z := range zones {
			v := boundOf(z, isMax)
			if v == nil {
				continue
			}
			bits, ok := fixedBits(id, v)
			if !ok {
				return false
			}
			var tmp [fastBoundMaxFixedSize]byte
			binary.LittleEndian.PutUint64(tmp[:], bits)
			copy(vals[i*lay.width:], tmp[:lay.width])
		}
	default:
		total := 0
		for _, z := range zones {
			v := boundOf(z, isMax)
			if v == nil {
				continue
			}
			bv, ok := bytesBound(isString, v)
			if !ok {
				return false
			}
			total += len(bv)
		}
		if lay.kind == fastBoundKindBytes32 && total > math.MaxInt32 {
			return false
		}
		ow := 4
		if lay.kind == fastBoundKindBytes64 {
			ow = 8
		}
		b.add((n + 1) * ow)
		offIdx := len(b.buffers) - 1
		data := b.add(total)
		// taken after the data buffer was added, which may move b.buf
		offs := b.buf[b.buffers[offIdx][0] : b.buffers[offIdx][0]+int64((n+1)*ow)]
		pos := 0
		for i, z := range zones {
			if v := boundOf(z, isMax); v != nil {
				bv, _ := bytesBound(isString, v)
				copy(data[pos:], bv)
				pos += len(bv)
			}
			if ow == 4 {
				binary.LittleEndian.PutUint32(offs[(i+1)*4:], uint32(pos))
			} else {
				binary.LittleEndian.PutUint64(offs[(i+1)*8:], uint64(pos))
			}
		}
	}
	return true
}

// countColumn writes a non-nullable UInt32 (width 4) or UInt64 (width 8)
// column.
func (b *fastBody) countColumn(zones []Zone, width int, get func(Zone) uint64) {
	n := len(zones)
	b.nodes = append(b.nodes, [2]int64{int64(n), 0})
	b.addEmpty()
	vals := b.add(n * width)
	for i, z := range zones {
		if width == 4 {
			binary.LittleEndian.PutUint32(vals[i*4:], uint32(get(z)))
		} else {
			binary.LittleEndian.PutUint64(vals[i*8:], get(z))
		}
	}
}

// fbValueType builds the flatbuffer type table of dt (one fastLayout
// accepts) and returns its Type union tag and offset.
func fbValueType(b *flatbuffers.Builder, dt arrow.DataType) (byte, flatbuffers.UOffsetT) {
	intType := func(bw int32, signed bool) (byte, flatbuffers.UOffsetT) {
		b.StartObject(2)
		b.PrependInt32Slot(0, bw, 0)
		b.PrependBoolSlot(1, signed, false)
		return fbTypeInt, b.EndObject()
	}
	floatType := func(prec int16) (byte, flatbuffers.UOffsetT) {
		b.StartObject(1)
		b.PrependInt16Slot(0, prec, 0)
		return fbTypeFloatingPoint, b.EndObject()
	}
	empty := func(tag byte) (byte, flatbuffers.UOffsetT) {
		b.StartObject(0)
		return tag, b.EndObject()
	}
	switch t := dt.(type) {
	case *arrow.Int8Type:
		return intType(8, true)
	case *arrow.Int16Type:
		return intType(16, true)
	case *arrow.Int32Type:
		return intType(32, true)
	case *arrow.Int64Type:
		return intType(64, true)
	case *arrow.Uint8Type:
		return intType(8, false)
	case *arrow.Uint16Type:
		return intType(16, false)
	case *arrow.Uint32Type:
		return intType(32, false)
	case *arrow.Uint64Type:
		return intType(64, false)
	case *arrow.Float32Type:
		return floatType(fbPrecisionSingle)
	case *arrow.Float64Type:
		return floatType(fbPrecisionDouble)
	case *arrow.StringType:
		return empty(fbTypeUtf8)
	case *arrow.BinaryType:
		return empty(fbTypeBinary)
	case *arrow.LargeStringType:
		return empty(fbTypeLargeUtf8)
	case *arrow.LargeBinaryType:
		return empty(fbTypeLargeBinary)
	case *arrow.Date32Type:
		b.StartObject(1)
		b.PrependInt16Slot(0, 0, fbDateUnitDefault) // DAY
		return fbTypeDate, b.EndObject()
	case *arrow.Date64Type:
		b.StartObject(1)
		b.PrependInt16Slot(0, 1, fbDateUnitDefault) // MILLISECOND
		return fbTypeDate, b.EndObject()
	case *arrow.TimestampType:
		var tz flatbuffers.UOffsetT
		if t.TimeZone != "" {
			tz = b.CreateString(t.TimeZone)
		}
		b.StartObject(2)
		b.PrependInt16Slot(0, int16(t.Unit), 0)
		b.PrependUOffsetTSlot(1, tz, 0)
		return fbTypeTimestamp, b.EndObject()
	}
	panic("seedio: fbValueType: unsupported type " + dt.String()) // fastLayout guards every call
}

// fbSchema builds the seed schema table (R14, R17, R18) in b.
func fbSchema(b *flatbuffers.Builder, dt arrow.DataType, nullBitmapHex *string) flatbuffers.UOffsetT {
	off, _ := fbSchemaHex(b, dt, nullBitmapHex, -1)
	return off
}

// fbSchemaHex is fbSchema; with hexLen >= 0 (and nullBitmapHex nil) the
// seed_null_bitmap value is a placeholder of hexLen bytes that the caller
// overwrites with the hex digits once the flatbuffer is finished (see
// encodeZonesFastRaw): hexEnd is its start as an offset from the end of the
// builder's buffer, which stays valid when the buffer grows.
func fbSchemaHex(b *flatbuffers.Builder, dt arrow.DataType, nullBitmapHex *string, hexLen int) (_ flatbuffers.UOffsetT, hexEnd int) {
	type fieldDef struct {
		name     string
		nullable bool
		intWidth int32 // 0: the value type
	}
	defs := [...]fieldDef{
		{fieldMin, true, 0}, {fieldMax, true, 0},
		{fieldNullCount, false, 32}, {fieldNaNCount, false, 32},
		{fieldNegativeNaNCount, false, 32}, {fieldZoneLength, false, 64},
	}
	var fields [len(defs)]flatbuffers.UOffsetT
	for i, d := range defs {
		name := b.CreateString(d.name)
		var tag byte
		var typ flatbuffers.UOffsetT
		if d.intWidth == 0 {
			tag, typ = fbValueType(b, dt)
		} else {
			b.StartObject(2)
			b.PrependInt32Slot(0, d.intWidth, 0)
			b.PrependBoolSlot(1, false, false)
			tag, typ = fbTypeInt, b.EndObject()
		}
		b.StartVector(4, 0, 4)
		kids := b.EndVector(0)
		b.StartObject(7)
		b.PrependUOffsetTSlot(0, name, 0)
		b.PrependBoolSlot(1, d.nullable, false)
		b.PrependByteSlot(2, tag, 0)
		b.PrependUOffsetTSlot(3, typ, 0)
		b.PrependUOffsetTSlot(5, kids, 0)
		fields[i] = b.EndObject()
	}
	b.StartVector(4, len(fields), 4)
	for i := len(fields) - 1; i >= 0; i-- {
		b.PrependUOffsetT(fields[i])
	}
	fieldsVec := b.EndVector(len(fields))

	keys, vals := [2]string{metaVersion}, [2]string{seedVersion1}
	nkv := 1
	if nullBitmapHex != nil || hexLen >= 0 {
		keys[1] = metaNullBitmap
		if nullBitmapHex != nil {
			vals[1] = *nullBitmapHex
		}
		nkv = 2
	}
	var kvs [2]flatbuffers.UOffsetT
	for i := range nkv {
		k := b.CreateString(keys[i])
		var v flatbuffers.UOffsetT
		if i == 1 && nullBitmapHex == nil {
			// The placeholder's bytes are copied from the builder's own
			// buffer (any bytes do: every one is overwritten).
			src := b.Bytes
			if len(src) < hexLen {
				src = make([]byte, hexLen)
			}
			v = b.CreateByteString(src[:hexLen])
			hexEnd = int(v) - flatbuffers.SizeUOffsetT
		} else {
			v = b.CreateString(vals[i])
		}
		b.StartObject(2)
		b.PrependUOffsetTSlot(0, k, 0)
		b.PrependUOffsetTSlot(1, v, 0)
		kvs[i] = b.EndObject()
	}
	b.StartVector(4, nkv, 4)
	for i := nkv - 1; i >= 0; i-- {
		b.PrependUOffsetT(kvs[i])
	}
	meta := b.EndVector(nkv)

	b.StartObject(4)
	b.PrependInt16Slot(0, 0, 0) // little endian
	b.PrependUOffsetTSlot(1, fieldsVec, 0)
	b.PrependUOffsetTSlot(2, meta, 0)
	return b.EndObject(), hexEnd
}

// fbMessage finishes a Message table around header hdr in b and returns the
// flatbuffer bytes.
func fbMessage(b *flatbuffers.Builder, headerType byte, hdr flatbuffers.UOffsetT, bodyLen int64) []byte {
	b.StartObject(5)
	b.PrependInt16Slot(0, fbMetadataV5, 0)
	b.PrependByteSlot(1, headerType, 0)
	b.PrependUOffsetTSlot(2, hdr, 0)
	b.PrependInt64Slot(3, bodyLen, 0)
	msg := b.EndObject()
	b.Finish(msg)
	return b.FinishedBytes()
}

// appendMessage appends one encapsulated message (continuation marker,
// length, flatbuffer, padding to 8) and returns the new slice and the
// number of bytes the message metadata took.
func appendMessage(out, fb []byte) ([]byte, int) {
	padded := pad8(len(fb) + 8)
	out = binary.LittleEndian.AppendUint32(out, ipcContinuation)
	out = binary.LittleEndian.AppendUint32(out, uint32(padded-8))
	out = append(out, fb...)
	out = append(out, make([]byte, padded-8-len(fb))...)
	return out, padded
}

// encodeZonesFast is encodeZones for the value types fastLayout accepts
// (the caller checked the zones' counts). ok=false: not handled, use
// arrow-go's writer.
func encodeZonesFast(valueType arrow.DataType, zones []Zone, nullBitmapHex *string) ([]byte, bool) {
	hexLen := -1
	if nullBitmapHex != nil {
		hexLen = len(*nullBitmapHex)
	}
	out, _, ok := encodeZonesFastTo(nil, nil, nil, valueType, zones, nullBitmapHex, nil, hexLen)
	return out, ok
}

// encodeZonesFastRaw is encodeZonesFast with the seed_null_bitmap value given
// as the serialized bitmap raw: its hex digits are written once, straight
// into the schema message of the output, and copied into the footer's
// schema. The file is appended to dst (nil: a new slice); hexAt is where
// the digits start in the returned slice. b (may be nil) is a builder to
// reuse; it is reset first. body (may be nil) is scratch space for the
// record batch body, reused across calls (its slices are truncated first).
func encodeZonesFastRaw(b *flatbuffers.Builder, body *fastBody, dst []byte, valueType arrow.DataType, zones []Zone, raw []byte) (out []byte, hexAt int, ok bool) {
	return encodeZonesFastTo(b, body, dst, valueType, zones, nil, raw, 2*len(raw))
}

// encodeZonesFastTo appends the IPC file to dst; the bitmap hex is
// *nullBitmapHex, or the hex of raw when hexLen >= 0 and nullBitmapHex is
// nil, or absent. On ok=false dst is returned unchanged.
func encodeZonesFastTo(b *flatbuffers.Builder, body *fastBody, dst []byte, valueType arrow.DataType, zones []Zone, nullBitmapHex *string, raw []byte, hexLen int) (_ []byte, hexAt int, _ bool) {
	lay, ok := fastLayout(valueType)
	if !ok {
		return dst, -1, false
	}
	if body == nil {
		body = new(fastBody)
	}
	n := len(zones)
	est := 2*(pad8(n*fastBoundMaxFixedSize)+pad8((n+7)/8)+pad8((n+1)*8)) + 3*pad8(4*n) + pad8(8*n)
	body.buf = slices.Grow(body.buf[:0], est)
	body.nodes = slices.Grow(body.nodes[:0], 6)
	body.buffers = slices.Grow(body.buffers[:0], 14)
	if !body.boundColumn(valueType, lay, zones, false) || !body.boundColumn(valueType, lay, zones, true) {
		return dst, -1, false
	}
	body.countColumn(zones, 4, func(z Zone) uint64 { return z.NullCount })
	body.countColumn(zones, 4, func(z Zone) uint64 { return z.NaNCount })
	body.countColumn(zones, 4, func(z Zone) uint64 { return z.NegativeNaNCount })
	body.countColumn(zones, 8, func(z Zone) uint64 { return z.Rows })

	// One builder, reset between the three flatbuffers, big enough for the
	// schema with the bitmap hex so that it never grows.
	need := max(hexLen, 0) + 1024 + 32*len(body.buffers)
	if b == nil {
		b = flatbuffers.NewBuilder(need)
	} else if len(b.Bytes) < need {
		b.Bytes = make([]byte, need)
	}
	b.Reset()
	placeholder := -1
	if nullBitmapHex == nil {
		placeholder = hexLen
	}
	schemaOff, hexEnd := fbSchemaHex(b, valueType, nullBitmapHex, placeholder)
	schemaMsg := fbMessage(b, fbHeaderSchema, schemaOff, 0)
	start := len(dst)
	out := slices.Grow(dst, 2*(max(hexLen, 0)+1024)+len(body.buf)+64*len(body.buffers)+64)
	out = append(out, "ARROW1\x00\x00"...)
	hexAt = -1
	if placeholder >= 0 {
		hexAt = len(out) + 8 + len(schemaMsg) - hexEnd
	}
	out, _ = appendMessage(out, schemaMsg)
	if hexAt >= 0 {
		hexEncode(out[hexAt:hexAt+hexLen], raw)
	}

	b.Reset()
	b.StartVector(16, len(body.nodes), 8)
	for i := len(body.nodes) - 1; i >= 0; i-- {
		b.Prep(8, 16)
		b.PrependInt64(body.nodes[i][1])
		b.PrependInt64(body.nodes[i][0])
	}
	nodes := b.EndVector(len(body.nodes))
	b.StartVector(16, len(body.buffers), 8)
	for i := len(body.buffers) - 1; i >= 0; i-- {
		b.Prep(8, 16)
		b.PrependInt64(body.buffers[i][1])
		b.PrependInt64(body.buffers[i][0])
	}
	buffers := b.EndVector(len(body.buffers))
	b.StartObject(5)
	b.PrependInt64Slot(0, int64(n), 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	rec := b.EndObject()
	recMsg := fbMessage(b, fbHeaderRecordBatch, rec, int64(len(body.buf)))
	blockOffset := len(out) - start
	out, metaLen := appendMessage(out, recMsg)
	out = append(out, body.buf...)
	out = binary.LittleEndian.AppendUint32(out, ipcContinuation) // end of stream
	out = binary.LittleEndian.AppendUint32(out, 0)

	b.Reset()
	schema, hexEnd2 := fbSchemaHex(b, valueType, nullBitmapHex, placeholder)
	b.StartVector(24, 0, 8)
	dicts := b.EndVector(0)
	b.StartVector(24, 1, 8)
	b.Prep(8, 24)
	b.PrependInt64(int64(len(body.buf)))
	b.Pad(4)
	b.PrependInt32(int32(metaLen))
	b.PrependInt64(int64(blockOffset))
	recs := b.EndVector(1)
	b.StartObject(5)
	b.PrependInt16Slot(0, fbMetadataV5, 0)
	b.PrependUOffsetTSlot(1, schema, 0)
	b.PrependUOffsetTSlot(2, dicts, 0)
	b.PrependUOffsetTSlot(3, recs, 0)
	b.Finish(b.EndObject())
	footer := b.FinishedBytes()
	footerAt := len(out)
	out = append(out, footer...)
	if hexAt >= 0 {
		at := footerAt + len(footer) - hexEnd2
		copy(out[at:at+hexLen], out[hexAt:hexAt+hexLen])
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	out = append(out, "ARROW1"...)
	return out, hexAt, true
}
