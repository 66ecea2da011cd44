package seedio

import (
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

type float16Num = float16.Num

// v0NullsInexact reports the value types whose v0 null counts and bitmap
// Lance took from the physical validity buffer, which undercounts logical
// nulls (§3.2, §3.5, D8/D9).
func v0NullsInexact(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DICTIONARY, arrow.RUN_END_ENCODED, arrow.NULL, arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return true
	}
	return false
}

// v0NaNsInexact reports the value types whose v0 NaN counts Lance wrote as 0
// although values may be NaN (dictionary / run-end-encoded floats, Q2).
func v0NaNsInexact(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DICTIONARY, arrow.RUN_END_ENCODED:
		return CountsNaN(dt)
	}
	return false
}

// validateZones implements spec §5.1 items 7 (geometry), 8 (counts) and 9
// (bounds). Each item runs over all zones before the next one starts.
func validateZones(c *seedColumns, k int, seed *Seed, opts DecodeOptions) ([]Zone, error) {
	n, rpz := opts.NumRows, opts.RowsPerZone
	if c == nil {
		k = 0
	}

	// Item 7a: zone lengths (E10).
	for i := 0; i < k; i++ {
		l := c.zoneLength.Value(i)
		switch {
		case l == 0:
			return nil, newErr("E10", ErrSeedZoneLength, i, fieldZoneLength, "zone_length is 0 (R20)")
		case i < k-1 && l != rpz:
			return nil, newErr("E10", ErrSeedZoneLength, i, fieldZoneLength,
				"non-final zone has zone_length %d, want rows_per_zone %d (R19, R20)", l, rpz)
		case i == k-1 && l > rpz:
			return nil, newErr("E10", ErrSeedZoneLength, i, fieldZoneLength,
				"final zone has zone_length %d > rows_per_zone %d (R20)", l, rpz)
		}
	}

	// Item 7b: coverage (E11), overflow-safe (§5.3).
	expected := n / rpz
	if n%rpz != 0 {
		expected++
	}
	if uint64(k) != expected {
		return nil, newErr("E11", ErrSeedCoverage, NoZone, "",
			"%d zones, want ceil(%d rows / %d rows_per_zone) = %d (R20)", k, n, rpz, expected)
	}
	zones := make([]Zone, k)
	var sum uint64
	for i := 0; i < k; i++ {
		l := c.zoneLength.Value(i)
		hi, start := bits.Mul64(uint64(i), rpz)
		if hi != 0 || start >= n {
			return nil, newErr("E11", ErrSeedCoverage, i, "",
				"zone start %d*%d overflows or is not below the %d rows of the data file", i, rpz, n)
		}
		end, carry := bits.Add64(start, l, 0)
		if carry != 0 || end > n {
			return nil, newErr("E11", ErrSeedCoverage, i, fieldZoneLength,
				"zone [%d, %d+%d) ends beyond the %d rows of the data file", start, start, l, n)
		}
		var c2 uint64
		sum, c2 = bits.Add64(sum, l, 0)
		if c2 != 0 {
			return nil, newErr("E11", ErrSeedCoverage, i, fieldZoneLength, "sum of zone_length overflows uint64")
		}
		zones[i] = Zone{Index: i, Start: start, Stats: Stats{Rows: l}}
	}
	if sum != n {
		return nil, newErr("E11", ErrSeedCoverage, NoZone, fieldZoneLength,
			"zone lengths sum to %d, the data file has %d rows (R20)", sum, n)
	}

	// Item 8: counts (E12, E13, E14).
	vt := seed.ValueType
	floatCounts := CountsNaN(vt)
	v1 := seed.Version == 1
	nullsExact := v1 || !v0NullsInexact(vt)
	nansExact := v1 || !v0NaNsInexact(vt)
	for i := range zones {
		z := &zones[i]
		nulls, nans := c.nullCount.Value(i), c.nanCount.Value(i)
		var neg uint32
		if v1 {
			neg = c.negNaNCount.Value(i)
		}
		// Widen before adding: a uint32 sum could wrap (T40).
		if uint64(nulls)+uint64(nans) > z.Rows {
			return nil, newErr("E12", ErrSeedCountExceedsLength, i, "",
				"null_count %d + nan_count %d > zone_length %d (R28)", nulls, nans, z.Rows)
		}
		if v1 && neg > nans {
			return nil, newErr("E13", ErrSeedNegativeNaN, i, fieldNegativeNaNCount,
				"negative_nan_count %d > nan_count %d (R28)", neg, nans)
		}
		if !floatCounts && (nans != 0 || neg != 0) {
			return nil, newErr("E14", ErrSeedNaNOnNonFloat, i, fieldNaNCount,
				"nan_count %d, negative_nan_count %d on non-float type %s (R27)", nans, neg, vt)
		}
		z.NullCount, z.NaNCount, z.NegativeNaNCount = uint64(nulls), uint64(nans), uint64(neg)
		z.NullCountExact, z.NaNCountExact, z.NaNSignKnown = nullsExact, nansExact, v1
	}

	// Item 9: bounds (E15–E19).
	supported := SupportsBounds(vt)
	for i := range zones {
		z := &zones[i]
		minV, minSet, err := boundAt(c.min, i, supported)
		if err != nil {
			return nil, err
		}
		maxV, maxSet, err := boundAt(c.max, i, supported)
		if err != nil {
			return nil, err
		}
		// E15 (v1) / unknown side (v0, §3.5): any NaN, either sign, any payload.
		minNaN, maxNaN := minSet && isNaNValue(minV), maxSet && isNaNValue(maxV)
		if v1 && (minNaN || maxNaN) {
			side, v := fieldMin, minV
			if !minNaN {
				side, v = fieldMax, maxV
			}
			return nil, newErr("E15", ErrSeedBoundNaN, i, side, "bound is NaN %s (R31)", describeFloat(v))
		}
		// E16: both set, non-NaN, min > max.
		if minSet && maxSet && !minNaN && !maxNaN && supported {
			c, err := CompareValues(minV, maxV)
			if err != nil {
				return nil, newErr("E19", ErrSeedBoundEncoding, i, "", "bounds not comparable: %v", err)
			}
			if c > 0 {
				return nil, newErr("E16", ErrSeedBoundOrder, i, "", "min %s > max %s (R34)", describeValue(minV), describeValue(maxV))
			}
		}
		// E17: a bound on a type without supported bounds.
		if !supported && (minSet || maxSet) {
			side := fieldMin
			if !minSet {
				side = fieldMax
			}
			return nil, newErr("E17", ErrSeedBoundUnsupported, i, side, "non-null bound on type %s, which has no bounds (R35)", vt)
		}
		// E18: a bound while no ordinary value exists (v1); v0 ignores it.
		if (minSet || maxSet) && z.Ordinary() == 0 {
			if v1 {
				side := fieldMin
				if !minSet {
					side = fieldMax
				}
				return nil, newErr("E18", ErrSeedBoundWithoutValues, i, side,
					"non-null bound while zone_length %d = null_count %d + nan_count %d (R33)", z.Rows, z.NullCount, z.NaNCount)
			}
		}
		// E19: encoding of each set bound.
		for _, side := range []struct {
			name string
			v    any
			set  bool
		}{{fieldMin, minV, minSet}, {fieldMax, maxV, maxSet}} {
			if !side.set {
				continue
			}
			if msg := boundEncodingProblem(side.v, vt); msg != "" {
				return nil, newErr("E19", ErrSeedBoundEncoding, i, side.name, "%s (R38)", msg)
			}
		}
		if z.Ordinary() == 0 {
			continue // nothing to bound: both sides stay nil (v0 ignores any bound)
		}
		if minSet && !minNaN {
			z.Min = minV
		}
		if maxSet && !maxNaN {
			z.Max = maxV
		}
	}
	return zones, nil
}

// boundAt returns row i of a bound column: its value (nil for types without
// bounds) and whether it is set (not a logical null).
func boundAt(arr arrow.Array, i int, supported bool) (any, bool, error) {
	if isLogicalNull(arr, i) {
		return nil, false, nil
	}
	if !supported {
		return nil, true, nil
	}
	v, err := ValueAt(arr, i)
	if err != nil {
		return nil, false, newErr("E19", ErrSeedBoundEncoding, i, "", "bound unreadable: %v", err)
	}
	return v, v != nil, nil
}

// boundEncodingProblem returns why v is not a valid value of dt (E19), or "".
func boundEncodingProblem(v any, dt arrow.DataType) string {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return fmt.Sprintf("string bound %q is not valid UTF-8", shorten(x))
		}
	case decimal.Decimal32:
		if p := precisionOf(dt); !x.FitsInPrecision(p) {
			return fmt.Sprintf("decimal32 bound %d does not fit precision %d", x, p)
		}
	case decimal.Decimal64:
		if p := precisionOf(dt); !x.FitsInPrecision(p) {
			return fmt.Sprintf("decimal64 bound %d does not fit precision %d", x, p)
		}
	case decimal128.Num:
		if p := precisionOf(dt); !x.FitsInPrecision(p) {
			return fmt.Sprintf("decimal128 bound %s does not fit precision %d", x.BigInt(), p)
		}
	case decimal256.Num:
		if p := precisionOf(dt); !x.FitsInPrecision(p) {
			return fmt.Sprintf("decimal256 bound %s does not fit precision %d", x.BigInt(), p)
		}
	}
	return ""
}

func precisionOf(dt arrow.DataType) int32 {
	if d, ok := dt.(arrow.DecimalType); ok {
		return d.GetPrecision()
	}
	return 0
}

// validateBitmap implements spec §5.1 item 10: hex (E20) and Roaring (E21)
// decoding, offsets below N (E22), per-zone cardinality = null_count (E23).
func validateBitmap(hexStr string, zones []Zone, n uint64) (*roaring.Bitmap, error) {
	bm, err := decodeNullBitmapHex(hexStr)
	if err != nil {
		return nil, err
	}
	if !bm.IsEmpty() && uint64(bm.Maximum()) >= n {
		return nil, newErr("E22", ErrSeedBitmapRange, NoZone, metaNullBitmap,
			"null offset %d is not below the %d rows of the data file (R45)", bm.Maximum(), n)
	}
	for _, z := range zones {
		if got := bm.CardinalityInRange(z.Start, z.End()); got != z.NullCount {
			return nil, newErr("E23", ErrSeedBitmapMismatch, z.Index, metaNullBitmap,
				"bitmap has %d nulls in rows [%d, %d), null_count is %d (R45)", got, z.Start, z.End(), z.NullCount)
		}
	}
	return bm, nil
}

// describeValue formats a bound for error messages: floats with their bit
// pattern, strings and bytes shortened.
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", shorten(x))
	case []byte:
		if len(x) > 32 {
			return fmt.Sprintf("0x%x…", x[:32])
		}
		return fmt.Sprintf("0x%x", x)
	case float32, float64, float16Num:
		return describeFloat(v)
	case decimal128.Num:
		return x.BigInt().String()
	case decimal256.Num:
		return x.BigInt().String()
	}
	return fmt.Sprintf("%v", v)
}

// describeFloat formats a float bound with its bit pattern.
func describeFloat(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%v (bits 0x%016x)", x, math.Float64bits(x))
	case float32:
		return fmt.Sprintf("%v (bits 0x%08x)", x, math.Float32bits(x))
	case float16Num:
		return fmt.Sprintf("%v (bits 0x%04x)", x.Float32(), x.Uint16())
	}
	return fmt.Sprintf("%v", v)
}
