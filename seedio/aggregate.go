package seedio

import (
	"fmt"
	"math/bits"
)

// Aggregate folds the statistics of consecutive or unrelated runs of rows of
// one column (zones of a data file, data files of a fragment, fragments of a
// segment) into one summary usable for coarser pruning with PruneStats
// (spec §5.4, last bullet):
//
//   - Rows and the counts add in uint64; an overflow is ErrSummaryOverflow.
//   - Min is the least known min and Max the greatest known max over the
//     parts that have ordinary values; if any such part has an unknown side,
//     that side of the summary is unknown. Parts without ordinary values
//     contribute counts only.
//   - A part with inexact null or NaN counts makes the summary's count
//     inexact; a part whose NaN signs are unknown while it has NaNs (a v0
//     zone with nan_count > 0) makes the summary's sign split unknown.
//
// All parts must describe the same value type. An empty input gives the
// zero summary of no rows (exact, no bounds).
func Aggregate(parts []Stats) (Stats, error) {
	out := Stats{NullCountExact: true, NaNCountExact: true, NaNSignKnown: true}
	minUnknown, maxUnknown := false, false
	for i := range parts {
		p := &parts[i]
		if err := addCount(&out.Rows, p.Rows, i, "rows"); err != nil {
			return Stats{}, err
		}
		if err := addCount(&out.NullCount, p.NullCount, i, "null_count"); err != nil {
			return Stats{}, err
		}
		if err := addCount(&out.NaNCount, p.NaNCount, i, "nan_count"); err != nil {
			return Stats{}, err
		}
		out.NullCountExact = out.NullCountExact && p.NullCountExact
		out.NaNCountExact = out.NaNCountExact && p.NaNCountExact
		if p.NaNSignKnown {
			out.NegativeNaNCount += p.NegativeNaNCount // <= NaNCount, which did not overflow
		} else if p.NaNCount > 0 || !p.NaNCountExact {
			out.NaNSignKnown = false
		}
		if p.Ordinary() == 0 {
			continue
		}
		if p.Min == nil {
			minUnknown = true
		} else if !minUnknown {
			if out.Min == nil {
				out.Min = p.Min
			} else if c, err := CompareValues(p.Min, out.Min); err != nil {
				return Stats{}, fmt.Errorf("seedio: aggregate part %d min: %w", i, err)
			} else if c < 0 {
				out.Min = p.Min
			}
		}
		if p.Max == nil {
			maxUnknown = true
		} else if !maxUnknown {
			if out.Max == nil {
				out.Max = p.Max
			} else if c, err := CompareValues(p.Max, out.Max); err != nil {
				return Stats{}, fmt.Errorf("seedio: aggregate part %d max: %w", i, err)
			} else if c > 0 {
				out.Max = p.Max
			}
		}
	}
	if minUnknown {
		out.Min = nil
	}
	if maxUnknown {
		out.Max = nil
	}
	if !out.NaNSignKnown {
		out.NegativeNaNCount = 0
	}
	if out.NullCount > out.Rows || out.NaNCount > out.Rows-out.NullCount {
		return Stats{}, fmt.Errorf("seedio: aggregate: null_count %d + nan_count %d exceed %d rows (parts violate their invariants)",
			out.NullCount, out.NaNCount, out.Rows)
	}
	if out.Ordinary() == 0 {
		out.Min, out.Max = nil, nil
	}
	return out, nil
}

// AggregateZones folds zones (see Aggregate).
func AggregateZones(zones []Zone) (Stats, error) {
	parts := make([]Stats, len(zones))
	for i := range zones {
		parts[i] = zones[i].Stats
	}
	return Aggregate(parts)
}

// Summary folds all zones of the seed into one summary of the data file's
// column (see Aggregate).
func (s *Seed) Summary() (Stats, error) { return AggregateZones(s.Zones) }

func addCount(dst *uint64, v uint64, part int, what string) error {
	sum, carry := bits.Add64(*dst, v, 0)
	if carry != 0 {
		return fmt.Errorf("%w: part %d %s", ErrSummaryOverflow, part, what)
	}
	*dst = sum
	return nil
}
