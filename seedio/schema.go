package seedio

// The Arrow schema of a version-1 seed IPC file (R14–R18).

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Field names of the seed record batch, in schema order (R14, §3.2).
const (
	FieldMin              = "min"
	FieldMax              = "max"
	FieldNullCount        = "null_count"
	FieldNaNCount         = "nan_count"
	FieldNegativeNaNCount = "negative_nan_count" // v1 only
	FieldZoneLength       = "zone_length"
)

// Schema-metadata keys and values of a seed (R17, R18, R41).
const (
	MetaVersion    = "version"
	MetaNullBitmap = "seed_null_bitmap"
	SeedVersion1   = "1"
)

// SeedValueType returns the value_type of the min/max fields for a column of
// stored type dt (R15): the type itself, except for extension types, whose
// seed uses the storage type without extension metadata (Q4). Nested types
// keep their full child structure.
func SeedValueType(dt arrow.DataType) arrow.DataType {
	return unwrapExtension(dt)
}

// SeedSchema returns the version-1 seed schema for min/max of type valueType
// (R14): min and max nullable; null_count, nan_count, negative_nan_count
// UInt32 and zone_length UInt64, non-nullable (R16). The schema metadata holds
// exactly version = "1" (R17) and seed_null_bitmap = nullBitmapHex (R18, R44),
// in that order; no other keys. valueType must already be the seed value type
// (see [SeedValueType]).
func SeedSchema(valueType arrow.DataType, nullBitmapHex string) *arrow.Schema {
	md := arrow.NewMetadata(
		[]string{MetaVersion, MetaNullBitmap},
		[]string{SeedVersion1, nullBitmapHex},
	)
	return arrow.NewSchema([]arrow.Field{
		{Name: FieldMin, Type: valueType, Nullable: true},
		{Name: FieldMax, Type: valueType, Nullable: true},
		{Name: FieldNullCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: FieldNaNCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: FieldNegativeNaNCount, Type: arrow.PrimitiveTypes.Uint32, Nullable: false},
		{Name: FieldZoneLength, Type: arrow.PrimitiveTypes.Uint64, Nullable: false},
	}, &md)
}
