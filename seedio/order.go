package seedio

// Arrow Rust ordering (spec §4, R29, R50), shared by the writer (collector)
// and the reader (validation, pruning).
//
// Floats are ordered by IEEE 754 totalOrder on their bit patterns:
//   -NaN < -Inf < … < -0.0 < +0.0 < … < +Inf < +NaN
// never by Go's <, cmp.Compare or float16.Num.Cmp (all IEEE-style, R50).
// Everything else follows the §4.1 table.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/lancekeeper/lancekeeper/internal/floatorder"
)

// ErrNotComparable is returned by [CompareValues], [compareAt] and [ValueAt]
// when a value has no v1 bound ordering (types marked N in spec §4.1) or when
// two values of different Go types are compared.
var ErrNotComparable = errors.New("seedio: values have no supported ordering")

// unwrapExtension returns the storage type of an extension type (repeatedly),
// or dt itself.
func unwrapExtension(dt arrow.DataType) arrow.DataType {
	for {
		ext, ok := dt.(arrow.ExtensionType)
		if !ok {
			return dt
		}
		dt = ext.StorageType()
	}
}

// isFloatID reports whether id is one of the three float types.
func isFloatID(id arrow.Type) bool {
	return id == arrow.FLOAT16 || id == arrow.FLOAT32 || id == arrow.FLOAT64
}

// CountsNaN reports whether seeds for a column of stored type dt count NaNs
// (R25–R27): true for Float16/32/64, for dictionary and run-end-encoded
// columns whose values are floats (decision Q2), and for extension columns
// whose storage is one of those (the seed's value_type is the storage type,
// Q4, so it is a float seed and its NaN counts must be exact). False for every
// other type, including lists of floats (R27).
func CountsNaN(dt arrow.DataType) bool {
	dt = unwrapExtension(dt)
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return isFloatID(unwrapExtension(t.ValueType).ID())
	case *arrow.RunEndEncodedType:
		return CountsNaN(t.Encoded())
	}
	return isFloatID(dt.ID())
}

// SupportsBounds reports whether v1 seeds carry real bounds for a column of
// stored type dt (column "v1" = Y in spec §4.1): booleans, integers, floats,
// decimals, dates, times, timestamps, durations, string and binary types
// (including views and fixed-size binary), and dictionaries whose value type
// is one of those (decision Q1). Intervals (Q5), run-end-encoded (Q1), nested,
// union, null and extension (Q4) types have null bounds.
func SupportsBounds(dt arrow.DataType) bool {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		return scalarBounds(d.ValueType)
	}
	return scalarBounds(dt)
}

func scalarBounds(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL,
		arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIME32, arrow.TIME64,
		arrow.TIMESTAMP, arrow.DURATION,
		arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW,
		arrow.FIXED_SIZE_BINARY:
		// Extension types report EXTENSION as their ID, so they never match.
		return true
	}
	return false
}

// ValueAt returns row i of arr as a plain Go value, or nil when the row is a
// logical null (for dictionaries also a valid key that points at a null
// dictionary entry). The Go type per Arrow type is:
//
//	Boolean → bool; Int8…Int64 → int8…int64; UInt8…UInt64 → uint8…uint64;
//	Float16 → float16.Num; Float32 → float32; Float64 → float64;
//	Decimal32/64 → decimal.Decimal32/64; Decimal128/256 → decimal128.Num / decimal256.Num;
//	Date32/64, Time32/64, Timestamp, Duration → arrow.Date32 … arrow.Duration;
//	Utf8, LargeUtf8, Utf8View → string (a copy);
//	Binary, LargeBinary, BinaryView, FixedSizeBinary → []byte (a copy);
//	Dictionary → the decoded value, per its value type.
//
// Types without a v1 ordering (see [SupportsBounds]) return ErrNotComparable.
// The values are the ones [CompareValues] accepts and the ones [ZoneStats]
// holds.
func ValueAt(arr arrow.Array, i int) (any, error) {
	if i < 0 || i >= arr.Len() {
		return nil, fmt.Errorf("seedio: row %d out of range [0,%d)", i, arr.Len())
	}
	if d, ok := arr.(*array.Dictionary); ok {
		if d.IsNull(i) {
			return nil, nil
		}
		return ValueAt(d.Dictionary(), d.GetValueIndex(i))
	}
	if !scalarBounds(arr.DataType()) {
		return nil, fmt.Errorf("%w: %s", ErrNotComparable, arr.DataType())
	}
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return a.Value(i), nil
	case *array.Int16:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return a.Value(i), nil
	case *array.Uint16:
		return a.Value(i), nil
	case *array.Uint32:
		return a.Value(i), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float16:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Decimal32:
		return a.Value(i), nil
	case *array.Decimal64:
		return a.Value(i), nil
	case *array.Decimal128:
		return a.Value(i), nil
	case *array.Decimal256:
		return a.Value(i), nil
	case *array.Date32:
		return a.Value(i), nil
	case *array.Date64:
		return a.Value(i), nil
	case *array.Time32:
		return a.Value(i), nil
	case *array.Time64:
		return a.Value(i), nil
	case *array.Timestamp:
		return a.Value(i), nil
	case *array.Duration:
		return a.Value(i), nil
	case *array.String:
		return strings.Clone(a.Value(i)), nil
	case *array.LargeString:
		return strings.Clone(a.Value(i)), nil
	case *array.StringView:
		return strings.Clone(a.Value(i)), nil
	case *array.Binary:
		return bytes.Clone(a.Value(i)), nil
	case *array.LargeBinary:
		return bytes.Clone(a.Value(i)), nil
	case *array.BinaryView:
		return bytes.Clone(a.Value(i)), nil
	case *array.FixedSizeBinary:
		return bytes.Clone(a.Value(i)), nil
	}
	return nil, fmt.Errorf("%w: unexpected array %T for %s", ErrNotComparable, arr, arr.DataType())
}

// compareAt compares row i of a with row j of b in Arrow Rust order
// (§4): it returns -1, 0 or +1. Both rows must be non-null (logical nulls
// give an error) and both arrays must hold the same value type.
func compareAt(a arrow.Array, i int, b arrow.Array, j int) (int, error) {
	va, err := ValueAt(a, i)
	if err != nil {
		return 0, err
	}
	vb, err := ValueAt(b, j)
	if err != nil {
		return 0, err
	}
	if va == nil || vb == nil {
		return 0, fmt.Errorf("%w: null row", ErrNotComparable)
	}
	return CompareValues(va, vb)
}

// isNaNValue reports whether v (a value as returned by [ValueAt]) is a float
// NaN of either sign and any payload.
func isNaNValue(v any) bool {
	switch x := v.(type) {
	case float16.Num:
		return floatorder.IsNaN16(x.Uint16())
	case float32:
		return floatorder.IsNaN32(math.Float32bits(x))
	case float64:
		return floatorder.IsNaN64(math.Float64bits(x))
	}
	return false
}

// CompareValues compares two values of the same Go type (as returned by
// [ValueAt]) in Arrow Rust order and returns -1, 0 or +1. Floats use IEEE
// totalOrder (so -0.0 < +0.0 and NaNs order by sign and payload); strings and
// byte slices compare as unsigned bytes; false < true; everything else
// compares as the signed or unsigned integer it stores.
func CompareValues(a, b any) (int, error) {
	switch x := a.(type) {
	case bool:
		if y, ok := b.(bool); ok {
			return cmpBool(x, y), nil
		}
	case int8:
		return cmpSame(x, b)
	case int16:
		return cmpSame(x, b)
	case int32:
		return cmpSame(x, b)
	case int64:
		return cmpSame(x, b)
	case uint8:
		return cmpSame(x, b)
	case uint16:
		return cmpSame(x, b)
	case uint32:
		return cmpSame(x, b)
	case uint64:
		return cmpSame(x, b)
	case decimal.Decimal32:
		return cmpSame(x, b)
	case decimal.Decimal64:
		return cmpSame(x, b)
	case arrow.Date32:
		return cmpSame(x, b)
	case arrow.Date64:
		return cmpSame(x, b)
	case arrow.Time32:
		return cmpSame(x, b)
	case arrow.Time64:
		return cmpSame(x, b)
	case arrow.Timestamp:
		return cmpSame(x, b)
	case arrow.Duration:
		return cmpSame(x, b)
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case float16.Num:
		if y, ok := b.(float16.Num); ok {
			return cmp.Compare(floatorder.Key16(x.Uint16()), floatorder.Key16(y.Uint16())), nil
		}
	case float32:
		if y, ok := b.(float32); ok {
			return cmp.Compare(floatorder.Key32(math.Float32bits(x)), floatorder.Key32(math.Float32bits(y))), nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(floatorder.Key64(math.Float64bits(x)), floatorder.Key64(math.Float64bits(y))), nil
		}
	case decimal128.Num:
		if y, ok := b.(decimal128.Num); ok {
			return x.Cmp(y), nil
		}
	case decimal256.Num:
		if y, ok := b.(decimal256.Num); ok {
			return x.Cmp(y), nil
		}
	default:
		return 0, fmt.Errorf("%w: Go type %T", ErrNotComparable, a)
	}
	return 0, fmt.Errorf("%w: cannot compare %T with %T", ErrNotComparable, a, b)
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// cmpSame compares x with b when b has exactly x's type T.
func cmpSame[T cmp.Ordered](x T, b any) (int, error) {
	y, ok := b.(T)
	if !ok {
		return 0, fmt.Errorf("%w: cannot compare %T with %T", ErrNotComparable, x, b)
	}
	return cmp.Compare(x, y), nil
}
