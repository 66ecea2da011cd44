package zonemap

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// Stats returns what the zone proves about its rows, in seedio's terms, for
// pruning with seedio's predicate semantics (zone-seeds.md §5.4). It is
// conservative for every writer's conventions: the index carries no NaN
// sign split (both signs are assumed when nan_count > 0), a NaN bound
// (Lance's max marker) is unknown, the bounds of a zone without ordinary
// values are ignored (the markers zoneFrom writes there), and a null bound
// beside ordinary values (Lance's own files for some types) is unknown.
// With deletions a Lance-built zone counts live rows over an offset span,
// so Rows - NullCount - NaNCount over-counts ordinary values: still safe.
func (z Zone) Stats() seedio.Stats {
	st := seedio.Stats{
		Rows: z.Length, NullCount: uint64(z.NullCount), NaNCount: uint64(z.NaNCount),
		NullCountExact: true, NaNCountExact: true, NaNSignKnown: z.NaNCount == 0,
	}
	if st.Ordinary() == 0 {
		return st
	}
	if z.Min != nil && !isNaN(z.Min) {
		st.Min = z.Min
	}
	if z.Max != nil && !isNaN(z.Max) {
		st.Max = z.Max
	}
	return st
}

// Prune evaluates p against every zone of the segment and returns, per
// zone, whether it may hold a matching row (an inexact filter: a pruned
// zone never holds a match, R65).
func (s *Segment) Prune(p seedio.Predicate) ([]bool, error) {
	zs := make([]seedio.Zone, len(s.Zones))
	for i, z := range s.Zones {
		zs[i] = seedio.Zone{Index: i, Start: z.Start, Stats: z.Stats()}
	}
	return seedio.PruneZones(s.ValueType, zs, p)
}

// Candidates returns, for every fragment the segment has zones for, the
// local row ranges that may hold a row matching p: the kept zones, merged
// where adjacent, sorted. A fragment with no candidate rows maps to an
// empty slice; fragments the segment does not cover are absent (they must
// be scanned). For x IS NULL with a null bitmap the ranges are the exact
// null rows.
func (s *Segment) Candidates(p seedio.Predicate) (map[uint64][]datafile.RowRange, error) {
	out := map[uint64][]datafile.RowRange{}
	for _, z := range s.Zones {
		if _, ok := out[z.FragmentID]; !ok {
			out[z.FragmentID] = []datafile.RowRange{}
		}
	}
	if p.Op == seedio.OpIsNull && s.NullRows != nil {
		for id, bm := range s.NullRows {
			if _, ok := out[uint64(id)]; !ok {
				return nil, fmt.Errorf("%w: null rows for fragment %d without zones", ErrInvalidIndex, id)
			}
			var rs []datafile.RowRange
			it := bm.Iterator()
			for it.HasNext() {
				v := uint64(it.Next())
				if n := len(rs); n > 0 && rs[n-1].End == v {
					rs[n-1].End++
				} else {
					rs = append(rs, datafile.RowRange{Start: v, End: v + 1})
				}
			}
			out[uint64(id)] = rs
		}
		return out, nil
	}
	keep, err := s.Prune(p)
	if err != nil {
		return nil, err
	}
	for i, z := range s.Zones {
		if !keep[i] {
			continue
		}
		rs := out[z.FragmentID]
		if n := len(rs); n > 0 && rs[n-1].End == z.Start {
			rs[n-1].End = z.End()
		} else {
			rs = append(rs, datafile.RowRange{Start: z.Start, End: z.End()})
		}
		out[z.FragmentID] = rs
	}
	return out, nil
}
