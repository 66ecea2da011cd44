package seedio

import (
	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
)

// Seed is a decoded and validated zone write seed (v0 or v1) of one column of
// one data file. Only Decode builds it; every field has passed the checks of
// spec §5.1, so consumers may rely on the invariants documented on Zone and
// Stats.
type Seed struct {
	// Version is 0 (no `version` metadata key, Lance 12 style) or 1.
	Version int
	// ValueType is the type of the min/max columns: the column's stored
	// Arrow type (for extension columns its storage type).
	ValueType arrow.DataType
	// RowsPerZone comes from the locator (R4, R5).
	RowsPerZone uint64
	// NumRows is the data file's physical row count N the seed covers.
	NumRows uint64
	// Zones in row order; zone i starts at local row i*RowsPerZone (R19).
	Zones []Zone
	// NullBitmap holds the exact local row offsets of null rows
	// (seed_null_bitmap, R41–R47). nil means the key is absent: null
	// positions are unknown (R46), which is not the same as "no nulls". An
	// empty bitmap means there are no nulls. For v0 seeds of Dictionary,
	// RunEndEncoded, Null and Union columns Lance recorded physical validity
	// only; Decode then keeps the bitmap (it was validated against the
	// counts) but sets NullPositionsExact to false.
	NullBitmap *roaring.Bitmap
	// NullPositionsExact reports whether NullBitmap (when non-nil) lists the
	// logical null rows exactly.
	NullPositionsExact bool
}

// Stats are the statistics of a run of physical rows: one zone of a seed, or
// a summary folded from zones or from other summaries (Aggregate). Counts are
// widened to uint64 so that summaries of many zones fit.
//
// Invariants after Decode or Aggregate:
//   - NullCount + NaNCount <= Rows; NegativeNaNCount <= NaNCount;
//   - Min and Max are nil ("unknown") or a value of the type ValueAt returns
//     for the seed's value type (for a dictionary type: its value type),
//     never a NaN, and Min <= Max in Arrow Rust order when both are set;
//   - when Ordinary() == 0 both bounds are nil (nothing to bound).
type Stats struct {
	// Rows is the number of physical rows summarised (zone_length, R22).
	Rows uint64
	// NullCount is the number of null rows (R24). When NullCountExact is
	// false it may be too low (v0 physical-validity counts, §3.5) and must
	// not be used to decide that no row is null.
	NullCount uint64
	// NaNCount is the number of NaN rows of either sign (R25). When
	// NaNCountExact is false NaNs may be present beyond it.
	NaNCount uint64
	// NegativeNaNCount is the number of NaNs with the sign bit set (R26);
	// meaningful only when NaNSignKnown is true.
	NegativeNaNCount uint64
	// Min and Max bound every ordinary (non-null, non-NaN) value of the run
	// in Arrow Rust order (R29, R30); nil means that side is unknown (R32,
	// R37), or, when Ordinary() == 0, that there is nothing to bound. Bounds
	// may be wider than the exact extrema (R30, §6): never use them as exact
	// MIN/MAX (T-R7).
	Min, Max any
	// NullCountExact is false when NullCount may undercount nulls (v0 seeds
	// of Dictionary, RunEndEncoded, Null and Union columns, §3.5 / D8).
	NullCountExact bool
	// NaNCountExact is false when NaNs may exist beyond NaNCount (v0 seeds of
	// dictionary or run-end-encoded float columns, which Lance counted as 0).
	NaNCountExact bool
	// NaNSignKnown reports whether NegativeNaNCount is exact. v0 seeds carry
	// no sign information: when NaNCount > 0 both signs remain possible
	// (§3.5, R52).
	NaNSignKnown bool
}

// Zone is one record of a seed.
type Zone struct {
	// Index is the record number i.
	Index int
	// Start is the first local physical row, Index*RowsPerZone (R19, R23).
	Start uint64
	Stats
}

// End returns the exclusive end row of the zone.
func (z Zone) End() uint64 { return z.Start + z.Rows }

// Ordinary returns the number of ordinary (non-null, non-NaN) rows,
// O = Rows − NullCount − NaNCount (spec §1). When the counts are not exact
// it is an upper bound.
func (s Stats) Ordinary() uint64 { return s.Rows - s.NullCount - s.NaNCount }

// PositiveNaNCount returns P = NaNCount − NegativeNaNCount and whether it is
// known (NaNSignKnown and NaNCountExact).
func (s Stats) PositiveNaNCount() (uint64, bool) {
	return s.NaNCount - s.NegativeNaNCount, s.NaNSignKnown && s.NaNCountExact
}

// mayHaveNegativeNaN reports whether a row of the run may be a NaN with the
// sign bit set.
func (s Stats) mayHaveNegativeNaN() bool {
	if !s.NaNCountExact {
		return true
	}
	if !s.NaNSignKnown {
		return s.NaNCount > 0
	}
	return s.NegativeNaNCount > 0
}

// mayHavePositiveNaN reports whether a row of the run may be a NaN with the
// sign bit clear.
func (s Stats) mayHavePositiveNaN() bool {
	if !s.NaNCountExact {
		return true
	}
	if !s.NaNSignKnown {
		return s.NaNCount > 0
	}
	return s.NaNCount > s.NegativeNaNCount
}

// mayHaveNaN reports whether a row of the run may be a NaN.
func (s Stats) mayHaveNaN() bool { return !s.NaNCountExact || s.NaNCount > 0 }

// mayHaveNull reports whether a row of the run may be null.
func (s Stats) mayHaveNull() bool { return !s.NullCountExact || s.NullCount > 0 }
