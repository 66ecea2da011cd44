package seedio

// The Arrow schema of a version-1 seed IPC file (R14–R18).

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Field names of the seed record batch, in schema order (R14, §3.2).
const (
	fieldMin              = "min"
	fieldMax              = "max"
	fieldNullCount        = "null_count"
	fieldNaNCount         = "nan_count"
	fieldNegativeNaNCount = "negative_nan_count" // v1 only
	fieldZoneLength       = "zone_length"
)

// Schema-metadata keys and values of a seed (R17, R18, R41).
const (
	metaVersion    = "version"
	metaNullBitmap = "seed_null_bitmap"
	seedVersion1   = "1"
)

// seedValueType returns the value_type of the min/max fields for a column of
// stored type dt (R15): the type itself, except for extension types, whose
// seed uses the storage type without extension metadata (Q4). Nested types
// keep their full child structure.
func seedValueType(dt arrow.DataType) arrow.DataType {
	return unwrapExtension(dt)
}

// seedSchema returns the version-1 seed schema for min/max of type valueType
// (R14): min and max nullable; null_count, nan_count, negative_nan_count
// UInt32 and zone_length UInt64, non-nullable (R16). The schema metadata holds
// exactly version = "1" (R17) and seed_null_bitmap = *nullBitmapHex (R18,
// R44; absent when nil, R46), in that order; no other keys. valueType must
// already be the seed value type (see [seedValueType]).
func seedSchema(valueType arrow.DataType, nullBitmapHex *string) *arrow.Schema {
	keys, vals := []string{metaVersion}, []string{seedVersion1}
	if nullBitmapHex != nil {
		keys, vals = append(keys, metaNullBitmap), append(vals, *nullBitmapHex)
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema([]arrow.Field{
		{Name: fieldMin, Type: valueType, Nullable: true},
		{Name: fieldMax, Type: valueType, Nullable: true},
		{Name: fieldNullCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: fieldNaNCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: fieldNegativeNaNCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: fieldZoneLength, Type: arrow.PrimitiveTypes.Uint64, Nullable: false},
	}, &md)
}
