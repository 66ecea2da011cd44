package zonemap

import (
	"errors"
	"fmt"
	"math"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/internal/floatorder"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// ErrSeedUnusable: a valid seed that still cannot give a ZoneMap segment's
// zones (a bound Lance would need is unknown, counts are not exact); the
// fragment's column is read instead.
var ErrSeedUnusable = errors.New("zonemap: seed cannot give exact ZoneMap statistics")

// fragmentZones are the zones of one fragment and its null rows (nil:
// positions unknown).
type fragmentZones struct {
	zones []Zone
	nulls *roaring.Bitmap
}

// floatMarkers returns the canonical positive quiet NaN of a float type
// (the value Lance stores as max of a zone holding NaNs) and its infinities.
func floatMarkers(dt arrow.DataType) (nan, negInf, posInf any) {
	switch dt.ID() {
	case arrow.FLOAT16:
		return float16.FromBits(0x7E00), float16.FromBits(0xFC00), float16.FromBits(0x7C00)
	case arrow.FLOAT32:
		return math.Float32frombits(0x7FC00000), float32(math.Inf(-1)), float32(math.Inf(1))
	case arrow.FLOAT64:
		return math.Float64frombits(0x7FF8000000000000), math.Inf(-1), math.Inf(1)
	}
	return nil, nil, nil
}

// zoneFrom turns the statistics of one zone (of a seed, or collected from
// the data) into a ZoneMap zone that Lance 12 evaluates soundly. The
// mapping is the same for v0 and v1 statistics; their differences are in
// the Stats flags: v1 bounds already exclude NaN and carry the NaN sign
// split, v0 NaN bounds were made unknown by seedio and v0 NaN signs are
// unknown (so any NaN may be positive or negative). Counts carry over
// unchanged.
//
// Lance orders NaN as Arrow does (x > c holds for a positive NaN, x < c for
// a negative one) but prunes every zone whose min is null or NaN from
// range and equality queries, and keeps a zone whose max is NaN for every
// lower bound. So, for float columns (see docs/index.md):
//   - a zone that may hold a positive NaN gets max = +NaN (Lance's own
//     marker);
//   - a zone that may hold a negative NaN gets min = -Inf, so x < c keeps
//     it for every number c (only x < -Inf, which a negative NaN also
//     satisfies in Arrow order, is still pruned: a Lance 12 limit);
//   - a zone without ordinary values but with NaNs gets bounds that keep
//     it exactly for the comparisons its NaNs satisfy: min = +Inf (or -Inf
//     with negative NaNs) and max = +NaN, or max = -Inf when every NaN is
//     negative.
//
// It fails with ErrSeedUnusable when the statistics cannot be stated
// exactly in Lance's format: inexact counts (v0 seeds of some types), or a
// zone with ordinary values and an unknown bound — a null bound in Lance's
// ZoneMap means "no values" and would prune rows.
func zoneFrom(vt arrow.DataType, frag, start uint64, st seedio.Stats) (Zone, error) {
	z := Zone{FragmentID: frag, Start: start, Length: st.Rows}
	if !st.NullCountExact || !st.NaNCountExact {
		return z, fmt.Errorf("%w: zone at row %d has inexact null or NaN counts", ErrSeedUnusable, start)
	}
	if st.NullCount > math.MaxUint32 || st.NaNCount > math.MaxUint32 {
		return z, fmt.Errorf("%w: zone at row %d: counts exceed uint32", ErrSeedUnusable, start)
	}
	z.NullCount, z.NaNCount = uint32(st.NullCount), uint32(st.NaNCount)
	ordinary := st.Ordinary() > 0
	if ordinary {
		z.Min, z.Max = st.Min, st.Max
	}
	if isFloat(vt) && st.NaNCount > 0 {
		positive := !st.NaNSignKnown || st.NaNCount > st.NegativeNaNCount
		negative := !st.NaNSignKnown || st.NegativeNaNCount > 0
		nan, negInf, posInf := floatMarkers(vt)
		switch {
		case ordinary:
			// v0 seeds make the side hidden by a NaN marker unknown; the
			// marker restores it.
			if positive {
				z.Max = nan
			}
			if negative {
				z.Min = negInf
			}
		case positive:
			z.Min, z.Max = posInf, nan
			if negative {
				z.Min = negInf
			}
		default: // only negative NaNs
			z.Min, z.Max = negInf, negInf
		}
	}
	if ordinary && (z.Min == nil || z.Max == nil) {
		return z, fmt.Errorf("%w: zone at row %d has ordinary values but an unknown bound", ErrSeedUnusable, start)
	}
	return z, nil
}

// fromSeed converts a decoded, validated seed of one data file of fragment
// frag into zones.
func fromSeed(vt arrow.DataType, frag uint64, s *seedio.Seed) (*fragmentZones, error) {
	out := &fragmentZones{zones: make([]Zone, 0, len(s.Zones))}
	for _, sz := range s.Zones {
		z, err := zoneFrom(vt, frag, sz.Start, sz.Stats)
		if err != nil {
			return nil, err
		}
		out.zones = append(out.zones, z)
	}
	if s.NullBitmap != nil {
		if !s.NullPositionsExact {
			return nil, fmt.Errorf("%w: its null bitmap is not exact", ErrSeedUnusable)
		}
		out.nulls = s.NullBitmap.Clone()
	}
	return out, nil
}

// isNaN reports whether v (a value as seedio.ValueAt returns it) is a
// float NaN of either sign and any payload.
func isNaN(v any) bool {
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

// allNull gives the zones of a fragment that does not store the column
// (its rows read as null).
func allNull(frag, rows, rpz uint64) *fragmentZones {
	out := &fragmentZones{nulls: roaring.New()}
	for s := uint64(0); s < rows; s += rpz {
		n := min(rpz, rows-s)
		out.zones = append(out.zones, Zone{FragmentID: frag, Start: s, Length: n, NullCount: uint32(n)})
	}
	out.nulls.AddRange(0, rows)
	return out
}
