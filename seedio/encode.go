package seedio

// Encoding of zone statistics as a version-1 seed: a complete Arrow IPC file
// (R9) with exactly one record batch (R10), no body compression (R12), the
// schema of R14–R18.

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrEncode reports zone statistics that cannot be encoded as given (a
// bound of the wrong Go type, a bound on a type without bounds, a dictionary
// bound whose index type cannot address it, no zones).
var ErrEncode = errors.New("seedio: cannot encode seed")

// Encode writes s as a version-1 seed IPC file (R9–R18), the inverse of
// Decode: min/max of type s.ValueType (the seed value type of the column,
// R15), one record per zone of s.Zones (Rows is zone_length; the counts must
// fit uint32, R28; bounds are Go values as described at [ValueAt], nil for
// null), and s.NullBitmap as seed_null_bitmap (the hex of its standard
// serialization after run optimisation, R44, R48; nil omits the key: null
// positions unknown, R46). Only version 1 is written (s.Version must be 1:
// v0 seeds are never relabelled). Encode checks what it needs to encode
// (bound Go types, counts representable, no bound on a type without
// bounds); it does not validate the seed semantically — Decode does. Zone
// Index and Start, and the exactness flags, are not encoded (R23).
func Encode(s *Seed) ([]byte, error) {
	if s == nil || s.Version != 1 {
		v := -1
		if s != nil {
			v = s.Version
		}
		return nil, fmt.Errorf("%w: seed version %d; only version 1 seeds are written (v0 seeds are never relabelled)", ErrEncode, v)
	}
	var hexStr *string
	if s.NullBitmap != nil {
		h, err := encodeNullBitmapHex(s.NullBitmap)
		if err != nil {
			return nil, fmt.Errorf("%w: null bitmap: %v", ErrEncode, err)
		}
		hexStr = &h
	}
	return encodeZones(s.ValueType, s.Zones, hexStr)
}

// encodeZones writes zones as a version-1 seed IPC file for a column whose
// seed value type is valueType (see [seedValueType]); *nullBitmapHex becomes
// the seed_null_bitmap metadata value (nil: no such key). It checks only
// what it needs to encode, so tests use it to build invalid seeds (a
// malformed bitmap hex, inconsistent counts) on purpose.
func encodeZones(valueType arrow.DataType, zones []Zone, nullBitmapHex *string) ([]byte, error) {
	if err := checkZoneCounts(zones); err != nil {
		return nil, err
	}
	if out, ok := encodeZonesFast(valueType, zones, nullBitmapHex); ok {
		return out, nil
	}
	return encodeZonesArrow(valueType, zones, nullBitmapHex)
}

// checkZoneCounts checks what encodeZones needs of zones: at least one, and
// counts that fit uint32 (R28).
func checkZoneCounts(zones []Zone) error {
	if len(zones) == 0 {
		return fmt.Errorf("%w: no zones (R11: an empty data file gets no seed)", ErrEncode)
	}
	if len(zones) > math.MaxInt32 {
		return fmt.Errorf("%w: %d zones", ErrEncode, len(zones))
	}
	for i, z := range zones {
		if z.NullCount > math.MaxUint32 || z.NaNCount > math.MaxUint32 || z.NegativeNaNCount > math.MaxUint32 {
			return fmt.Errorf("%w: zone %d: counts %d/%d/%d do not fit uint32 (R28)", ErrEncode, i, z.NullCount, z.NaNCount, z.NegativeNaNCount)
		}
	}
	return nil
}

// encodeZonesArrow is encodeZones through arrow-go's IPC writer: the
// reference encodeZonesFast is tested against, and the writer of every
// value type encodeZonesFast does not handle.
func encodeZonesArrow(valueType arrow.DataType, zones []Zone, nullBitmapHex *string) ([]byte, error) {
	mem := memory.NewGoAllocator()
	minArr, err := buildBoundArray(mem, valueType, zones, false)
	if err != nil {
		return nil, fmt.Errorf("%w: min: %v", ErrEncode, err)
	}
	defer minArr.Release()
	maxArr, err := buildBoundArray(mem, valueType, zones, true)
	if err != nil {
		return nil, fmt.Errorf("%w: max: %v", ErrEncode, err)
	}
	defer maxArr.Release()

	nb := array.NewUint32Builder(mem)
	defer nb.Release()
	nb.Reserve(len(zones))
	for _, z := range zones {
		nb.UnsafeAppend(uint32(z.NullCount))
	}
	nullCounts := nb.NewArray()
	defer nullCounts.Release()
	nb.Reserve(len(zones))
	for _, z := range zones {
		nb.UnsafeAppend(uint32(z.NaNCount))
	}
	nanCounts := nb.NewArray()
	defer nanCounts.Release()
	nb.Reserve(len(zones))
	for _, z := range zones {
		nb.UnsafeAppend(uint32(z.NegativeNaNCount))
	}
	negCounts := nb.NewArray()
	defer negCounts.Release()
	lb := array.NewUint64Builder(mem)
	defer lb.Release()
	lb.Reserve(len(zones))
	for _, z := range zones {
		lb.UnsafeAppend(z.Rows)
	}
	lengths := lb.NewArray()
	defer lengths.Release()

	schema := seedSchema(valueType, nullBitmapHex)
	rec := array.NewRecordBatch(schema, []arrow.Array{minArr, maxArr, nullCounts, nanCounts, negCounts, lengths}, int64(len(zones)))
	defer rec.Release()

	var buf bytes.Buffer
	// The metadata (with the bitmap hex) is written twice: in the schema
	// message and in the footer.
	hexLen := 0
	if nullBitmapHex != nil {
		hexLen = len(*nullBitmapHex)
	}
	buf.Grow(2*hexLen + 64*len(zones) + 8192)
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem)) // no compression (R12)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEncode, err)
	}
	if err := w.Write(rec); err != nil { // exactly one batch (R10)
		_ = w.Close()
		return nil, fmt.Errorf("%w: writing record batch: %v", ErrEncode, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%w: closing IPC file: %v", ErrEncode, err)
	}
	return buf.Bytes(), nil
}

func boundOf(z Zone, isMax bool) any {
	if isMax {
		return z.Max
	}
	return z.Min
}

// buildBoundArray builds the min (or max) column.
func buildBoundArray(mem memory.Allocator, dt arrow.DataType, zones []Zone, isMax bool) (arrow.Array, error) {
	if !SupportsBounds(dt) {
		for i, z := range zones {
			if boundOf(z, isMax) != nil {
				return nil, fmt.Errorf("zone %d: non-null bound for %s, which has no bounds (R35)", i, dt)
			}
		}
		return array.MakeArrayOfNull(mem, dt, len(zones)), nil
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return buildDictBounds(mem, d, zones, isMax)
	}
	vals := make([]any, len(zones))
	for i, z := range zones {
		vals[i] = boundOf(z, isMax)
	}
	return buildValues(mem, dt, vals)
}

// BuildValues builds an array of type dt (a type [SupportsBounds] accepts,
// not a dictionary) from Go values as [ValueAt] returns them (nil = null).
// A value of another Go type is an error wrapping ErrEncode. It is how
// other formats that store bounds (e.g. a zone-map index file) build their
// min/max columns.
func BuildValues(mem memory.Allocator, dt arrow.DataType, vals []any) (arrow.Array, error) {
	a, err := buildValues(mem, dt, vals)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEncode, err)
	}
	return a, nil
}

// buildValues builds an array of type dt from Go values (nil = null).
func buildValues(mem memory.Allocator, dt arrow.DataType, vals []any) (arrow.Array, error) {
	bldr := array.NewBuilder(mem, dt)
	defer bldr.Release()
	bldr.Reserve(len(vals))
	var err error
	switch b := bldr.(type) {
	case *array.BooleanBuilder:
		err = appendAll(b, vals)
	case *array.Int8Builder:
		err = appendAll(b, vals)
	case *array.Int16Builder:
		err = appendAll(b, vals)
	case *array.Int32Builder:
		err = appendAll(b, vals)
	case *array.Int64Builder:
		err = appendAll(b, vals)
	case *array.Uint8Builder:
		err = appendAll(b, vals)
	case *array.Uint16Builder:
		err = appendAll(b, vals)
	case *array.Uint32Builder:
		err = appendAll(b, vals)
	case *array.Uint64Builder:
		err = appendAll(b, vals)
	case *array.Float16Builder:
		err = appendAll[float16.Num](b, vals)
	case *array.Float32Builder:
		err = appendAll(b, vals)
	case *array.Float64Builder:
		err = appendAll(b, vals)
	case *array.Decimal32Builder:
		err = appendAll[decimal.Decimal32](b, vals)
	case *array.Decimal64Builder:
		err = appendAll[decimal.Decimal64](b, vals)
	case *array.Decimal128Builder:
		err = appendAll[decimal128.Num](b, vals)
	case *array.Decimal256Builder:
		err = appendAll[decimal256.Num](b, vals)
	case *array.Date32Builder:
		err = appendAll(b, vals)
	case *array.Date64Builder:
		err = appendAll(b, vals)
	case *array.Time32Builder:
		err = appendAll(b, vals)
	case *array.Time64Builder:
		err = appendAll(b, vals)
	case *array.TimestampBuilder:
		err = appendAll(b, vals)
	case *array.DurationBuilder:
		err = appendAll(b, vals)
	case *array.StringBuilder:
		err = appendAll(b, vals)
	case *array.LargeStringBuilder:
		err = appendAll(b, vals)
	case *array.StringViewBuilder:
		err = appendAll(b, vals)
	case *array.BinaryBuilder: // Binary and LargeBinary
		err = appendAll(b, vals)
	case *array.BinaryViewBuilder:
		err = appendAll(b, vals)
	case *array.FixedSizeBinaryBuilder:
		width := dt.(*arrow.FixedSizeBinaryType).ByteWidth
		for i, v := range vals {
			if bv, ok := v.([]byte); ok && len(bv) != width {
				return nil, fmt.Errorf("zone %d: %d-byte bound for %s (R38)", i, len(bv), dt)
			}
		}
		err = appendAll(b, vals)
	default:
		return nil, fmt.Errorf("no builder for bounds of %s", dt)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dt, err)
	}
	return bldr.NewArray(), nil
}

type typedAppender[T any] interface {
	Append(T)
	AppendNull()
}

func appendAll[T any](b typedAppender[T], vals []any) error {
	for i, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		t, ok := v.(T)
		if !ok {
			var want T
			return fmt.Errorf("zone %d: bound has Go type %T, want %T", i, v, want)
		}
		b.Append(t)
	}
	return nil
}

// buildDictBounds encodes dictionary bounds (R40): the dictionary holds the
// distinct bound values in first-appearance order, each zone's row is an
// index into it. A bound that the index type cannot address (more distinct
// values than the largest index + 1) is written null, which is always sound
// (R32: unknown).
func buildDictBounds(mem memory.Allocator, d *arrow.DictionaryType, zones []Zone, isMax bool) (arrow.Array, error) {
	maxIndex, err := dictIndexLimit(d.IndexType)
	if err != nil {
		return nil, err
	}
	seen := make(map[any]int64)
	var distinct []any
	idx := make([]int64, len(zones))
	valid := make([]bool, len(zones))
	for i, z := range zones {
		v := boundOf(z, isMax)
		if v == nil {
			continue
		}
		k := dedupeKey(v)
		pos, ok := seen[k]
		if !ok {
			if int64(len(distinct)) > maxIndex {
				continue // cannot be addressed: null bound
			}
			pos = int64(len(distinct))
			seen[k] = pos
			distinct = append(distinct, v)
		}
		idx[i], valid[i] = pos, true
	}
	dict, err := buildValues(mem, d.ValueType, distinct)
	if err != nil {
		return nil, err
	}
	defer dict.Release()
	ib := array.NewBuilder(mem, d.IndexType)
	defer ib.Release()
	for i := range zones {
		if !valid[i] {
			ib.AppendNull()
			continue
		}
		switch b := ib.(type) {
		case *array.Int8Builder:
			b.Append(int8(idx[i]))
		case *array.Int16Builder:
			b.Append(int16(idx[i]))
		case *array.Int32Builder:
			b.Append(int32(idx[i]))
		case *array.Int64Builder:
			b.Append(idx[i])
		case *array.Uint8Builder:
			b.Append(uint8(idx[i]))
		case *array.Uint16Builder:
			b.Append(uint16(idx[i]))
		case *array.Uint32Builder:
			b.Append(uint32(idx[i]))
		case *array.Uint64Builder:
			b.Append(uint64(idx[i]))
		}
	}
	indices := ib.NewArray()
	defer indices.Release()
	return array.NewDictionaryArray(d, indices, dict), nil
}

// dictIndexLimit returns the largest index a dictionary index type holds.
func dictIndexLimit(dt arrow.DataType) (int64, error) {
	switch dt.ID() {
	case arrow.INT8:
		return math.MaxInt8, nil
	case arrow.UINT8:
		return math.MaxUint8, nil
	case arrow.INT16:
		return math.MaxInt16, nil
	case arrow.UINT16:
		return math.MaxUint16, nil
	case arrow.INT32:
		return math.MaxInt32, nil
	case arrow.UINT32:
		return math.MaxUint32, nil
	case arrow.INT64, arrow.UINT64:
		return math.MaxInt64, nil
	}
	return 0, fmt.Errorf("dictionary index type %s is not an integer type", dt)
}

// dedupeKey maps a bound value to a comparable map key that distinguishes
// values Arrow Rust ordering distinguishes (floats by bit pattern).
func dedupeKey(v any) any {
	switch x := v.(type) {
	case float32:
		return math.Float32bits(x)
	case float64:
		return math.Float64bits(x)
	case []byte:
		return string(x)
	}
	return v
}

// EncodeV0 writes the statistics of s in the version-0 layout Lance 12
// writes and reads (spec §3.2): fields min, max, null_count, nan_count,
// zone_length (no negative_nan_count), no `version` key, and
// seed_null_bitmap (the hex of s.NullBitmap, "" when it is empty, as
// Lance writes; no key when it is nil). It is for tables without
// FLAG_ZONE_WRITE_SEEDS, whose readers know only version 0 (R61, R62),
// and takes the statistics a v1 Collector computed (s.Version is
// ignored): the v0 conventions are applied on the way — the max of a
// float zone with a NaN becomes the canonical positive NaN (Lance 12's
// marker, §3.6) and the sign split is dropped. Bounds stay what v1
// computed (exact, or widened where v1 widens), which v0 allows. This
// writes a new seed; it never relabels an existing one (R52).
func EncodeV0(s *Seed) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: no seed", ErrEncode)
	}
	zones := s.Zones
	if len(zones) == 0 {
		return nil, fmt.Errorf("%w: no zones (R11: an empty data file gets no seed)", ErrEncode)
	}
	if len(zones) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d zones", ErrEncode, len(zones))
	}
	valueType := s.ValueType
	float := CountsNaN(valueType)
	v0 := make([]Zone, len(zones))
	for i, z := range zones {
		if z.NullCount > math.MaxUint32 || z.NaNCount > math.MaxUint32 {
			return nil, fmt.Errorf("%w: zone %d: counts %d/%d do not fit uint32 (R28)", ErrEncode, i, z.NullCount, z.NaNCount)
		}
		v0[i] = z
		v0[i].NegativeNaNCount = 0
		if float && z.NaNCount > 0 {
			v0[i].Max = canonicalNaN(valueType)
		}
	}
	mem := memory.NewGoAllocator()
	minArr, err := buildBoundArray(mem, valueType, v0, false)
	if err != nil {
		return nil, fmt.Errorf("%w: min: %v", ErrEncode, err)
	}
	defer minArr.Release()
	maxArr, err := buildBoundArray(mem, valueType, v0, true)
	if err != nil {
		return nil, fmt.Errorf("%w: max: %v", ErrEncode, err)
	}
	defer maxArr.Release()
	nb := array.NewUint32Builder(mem)
	defer nb.Release()
	for _, z := range v0 {
		nb.Append(uint32(z.NullCount))
	}
	nullCounts := nb.NewArray()
	defer nullCounts.Release()
	for _, z := range v0 {
		nb.Append(uint32(z.NaNCount))
	}
	nanCounts := nb.NewArray()
	defer nanCounts.Release()
	lb := array.NewUint64Builder(mem)
	defer lb.Release()
	for _, z := range v0 {
		lb.Append(z.Rows)
	}
	lengths := lb.NewArray()
	defer lengths.Release()

	var keys, vals []string
	if s.NullBitmap != nil {
		h := "" // Lance's v0 writer writes "" for no nulls (§3.2)
		if !s.NullBitmap.IsEmpty() {
			if h, err = encodeNullBitmapHex(s.NullBitmap); err != nil {
				return nil, fmt.Errorf("%w: null bitmap: %v", ErrEncode, err)
			}
		}
		keys, vals = []string{metaNullBitmap}, []string{h}
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: fieldMin, Type: valueType, Nullable: true},
		{Name: fieldMax, Type: valueType, Nullable: true},
		{Name: fieldNullCount, Type: arrow.PrimitiveTypes.Uint32},
		{Name: fieldNaNCount, Type: arrow.PrimitiveTypes.Uint32},
		{Name: fieldZoneLength, Type: arrow.PrimitiveTypes.Uint64},
	}, &md)
	rec := array.NewRecordBatch(schema, []arrow.Array{minArr, maxArr, nullCounts, nanCounts, lengths}, int64(len(v0)))
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEncode, err)
	}
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("%w: writing record batch: %v", ErrEncode, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("%w: closing IPC file: %v", ErrEncode, err)
	}
	return buf.Bytes(), nil
}

// canonicalNaN is the positive quiet NaN Lance writes as the v0 max marker
// (f64 0x7FF8000000000000, f32 0x7FC00000, f16 0x7E00).
func canonicalNaN(dt arrow.DataType) any {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	switch dt.ID() {
	case arrow.FLOAT16:
		return float16.FromBits(0x7E00)
	case arrow.FLOAT32:
		return math.Float32frombits(0x7FC00000)
	}
	return math.Float64frombits(0x7FF8000000000000)
}
