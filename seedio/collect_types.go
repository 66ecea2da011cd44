package seedio

// Dispatch from the column type to its accumulator (§4.1 table, §11.1).

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/lancekeeper/lancekeeper/internal/floatorder"
)

// newAccumulator returns the accumulator for a column of stored type dt.
func newAccumulator(dt arrow.DataType, maxBound int) (accumulator, error) {
	if _, ok := dt.(arrow.ExtensionType); ok {
		// Q4: value_type is the storage type, bounds are null; counts are
		// logical nulls of the storage, NaNs counted when it is a float seed.
		return newNoBoundsAcc(unwrapExtension(dt)), nil
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		if !scalarBounds(d.ValueType) {
			return newNoBoundsAcc(dt), nil
		}
		inner, err := newValueAccumulator(d.ValueType, maxBound)
		if err != nil {
			return nil, err
		}
		// T-R1: dictionary values are never truncated.
		if b, ok := inner.(*bytesAcc); ok {
			b.truncate = false
		}
		return &dictAcc{inner: inner}, nil
	}
	if scalarBounds(dt) {
		return newValueAccumulator(dt, maxBound)
	}
	return newNoBoundsAcc(dt), nil
}

// newValueAccumulator returns the bounds accumulator of a type with
// supported bounds.
func newValueAccumulator(dt arrow.DataType, maxBound int) (valueAccumulator, error) {
	switch dt.ID() {
	case arrow.BOOL:
		return &boolAcc{}, nil
	case arrow.INT8:
		return newIntAcc(func(a arrow.Array) []int8 { return a.(*array.Int8).Int8Values() }), nil
	case arrow.INT16:
		return newIntAcc(func(a arrow.Array) []int16 { return a.(*array.Int16).Int16Values() }), nil
	case arrow.INT32:
		return newIntAcc(func(a arrow.Array) []int32 { return a.(*array.Int32).Int32Values() }), nil
	case arrow.INT64:
		return newIntAcc(func(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }), nil
	case arrow.UINT8:
		return newIntAcc(func(a arrow.Array) []uint8 { return a.(*array.Uint8).Uint8Values() }), nil
	case arrow.UINT16:
		return newIntAcc(func(a arrow.Array) []uint16 { return a.(*array.Uint16).Uint16Values() }), nil
	case arrow.UINT32:
		return newIntAcc(func(a arrow.Array) []uint32 { return a.(*array.Uint32).Uint32Values() }), nil
	case arrow.UINT64:
		return newIntAcc(func(a arrow.Array) []uint64 { return a.(*array.Uint64).Uint64Values() }), nil
	case arrow.DATE32:
		return newIntAcc(func(a arrow.Array) []arrow.Date32 { return a.(*array.Date32).Date32Values() }), nil
	case arrow.DATE64:
		return newIntAcc(func(a arrow.Array) []arrow.Date64 { return a.(*array.Date64).Date64Values() }), nil
	case arrow.TIME32:
		return newIntAcc(func(a arrow.Array) []arrow.Time32 { return a.(*array.Time32).Time32Values() }), nil
	case arrow.TIME64:
		return newIntAcc(func(a arrow.Array) []arrow.Time64 { return a.(*array.Time64).Time64Values() }), nil
	case arrow.TIMESTAMP:
		return newIntAcc(func(a arrow.Array) []arrow.Timestamp { return a.(*array.Timestamp).TimestampValues() }), nil
	case arrow.DURATION:
		return newIntAcc(func(a arrow.Array) []arrow.Duration { return a.(*array.Duration).DurationValues() }), nil
	case arrow.DECIMAL32:
		// Bounds must fit the precision (R38, E19); values of an invalid
		// column that do not give an unknown bound instead.
		prec := dt.(*arrow.Decimal32Type).Precision
		acc := newIntAcc(func(a arrow.Array) []decimal.Decimal32 { return a.(*array.Decimal32).Values() })
		acc.fits = func(v decimal.Decimal32) bool { return v.FitsInPrecision(prec) }
		return acc, nil
	case arrow.DECIMAL64:
		prec := dt.(*arrow.Decimal64Type).Precision
		acc := newIntAcc(func(a arrow.Array) []decimal.Decimal64 { return a.(*array.Decimal64).Values() })
		acc.fits = func(v decimal.Decimal64) bool { return v.FitsInPrecision(prec) }
		return acc, nil
	case arrow.DECIMAL128:
		prec := dt.(*arrow.Decimal128Type).Precision
		return &cmpAcc[decimal128.Num]{
			values: func(a arrow.Array) []decimal128.Num { return a.(*array.Decimal128).Values() },
			less:   func(x, y decimal128.Num) bool { return x.Less(y) },
			fits:   func(v decimal128.Num) bool { return v.FitsInPrecision(prec) },
		}, nil
	case arrow.DECIMAL256:
		prec := dt.(*arrow.Decimal256Type).Precision
		return &cmpAcc[decimal256.Num]{
			values: func(a arrow.Array) []decimal256.Num { return a.(*array.Decimal256).Values() },
			less:   func(x, y decimal256.Num) bool { return x.Less(y) },
			fits:   func(v decimal256.Num) bool { return v.FitsInPrecision(prec) },
		}, nil
	case arrow.FLOAT16:
		return newFloatAcc(func(a arrow.Array) []uint16 { return rawFixed[uint16](a) }, 15,
			func(b uint16) any { return float16.FromBits(b) }), nil
	case arrow.FLOAT32:
		return newFloatAcc(func(a arrow.Array) []uint32 { return rawFixed[uint32](a) }, 31,
			func(b uint32) any { return math.Float32frombits(b) }), nil
	case arrow.FLOAT64:
		return newFloatAcc(func(a arrow.Array) []uint64 { return rawFixed[uint64](a) }, 63,
			func(b uint64) any { return math.Float64frombits(b) }), nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return &bytesAcc{isString: true, truncate: true, maxBound: maxBound}, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return &bytesAcc{truncate: true, maxBound: maxBound}, nil
	case arrow.FIXED_SIZE_BINARY:
		return &bytesAcc{}, nil // T-R1: never truncated (R38)
	}
	return nil, fmt.Errorf("%w: no bounds accumulator for %s", ErrNotComparable, dt)
}

// rawFixed returns the values buffer of a fixed-width array reinterpreted as
// []T (T of the same width as the array's values), offset applied.
func rawFixed[T uint16 | uint32 | uint64](a arrow.Array) []T {
	data := a.Data()
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil || a.Len() == 0 {
		return nil
	}
	b := bufs[1].Bytes()
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return nil
	}
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
	return all[data.Offset() : data.Offset()+data.Len()]
}

// nanAt reports whether non-null element i of arr is a float NaN, and its
// sign, looking through dictionaries and extension storage.
func nanAt(arr arrow.Array, i int) (nan, negative bool) {
	switch a := arr.(type) {
	case *array.Float16:
		b := a.Value(i).Uint16()
		return floatorder.IsNaN16(b), b>>15 != 0
	case *array.Float32:
		b := math.Float32bits(a.Value(i))
		return floatorder.IsNaN32(b), b>>31 != 0
	case *array.Float64:
		b := math.Float64bits(a.Value(i))
		return floatorder.IsNaN64(b), b>>63 != 0
	case *array.Dictionary:
		return nanAt(a.Dictionary(), a.GetValueIndex(i))
	case *array.RunEndEncoded:
		return nanAt(a.Values(), a.GetPhysicalIndex(i))
	case array.ExtensionArray:
		return nanAt(a.Storage(), i)
	}
	return false, false
}
