package filter

import "github.com/lancekeeper/lancekeeper/seedio"

// Range is the half-open range [Start, End) of row offsets.
type Range struct{ Start, End uint64 }

// KeepRanges combines per-term pruning results over rows [0, rows) with
// the inexact semantics of zone-seeds.md (R65): AND intersects, OR unites,
// NOT was pushed into the terms (De Morgan, complementary comparisons
// under the total order). term(i) returns the sorted, non-overlapping row
// ranges that may hold a row matching term i, or ok=false when nothing
// is known about the term there (the term then keeps every row). The
// result keeps every row the filter can select.
func (f *Filter) KeepRanges(rows uint64, term func(i int) (ranges []Range, ok bool)) []Range {
	return f.keepRanges(rows, term, false)
}

// KeepRangesAsLance12Index is KeepRanges as Lance 12 uses a scalar index:
// an OR prunes only when both sides are decided by the terms alone (a
// side with a part no term decides, such as arithmetic, makes Lance 12
// evaluate the whole OR on every row); AND prunes by its decided parts.
// A scan of a filter that can fail (MayFail) must skip no zone Lance 12
// evaluates.
func (f *Filter) KeepRangesAsLance12Index(rows uint64, term func(i int) (ranges []Range, ok bool)) []Range {
	return f.keepRanges(rows, term, true)
}

// partial reports whether p holds a part no term decides.
func partial(p pnode) bool {
	switch p := p.(type) {
	case *pAll, *pPartial:
		return true
	case *pLogic:
		return partial(p.l) || partial(p.r)
	}
	return false
}

func (f *Filter) keepRanges(rows uint64, term func(i int) (ranges []Range, ok bool), lanceOr bool) []Range {
	all := []Range{{0, rows}}
	if rows == 0 {
		return nil
	}
	var walk func(p pnode) []Range
	walk = func(p pnode) []Range {
		switch p := p.(type) {
		case *pNone:
			return nil
		case *pTerm:
			rs, ok := term(p.i)
			if !ok {
				return all
			}
			return intersect(rs, all)
		case *pPartial:
			return walk(p.x)
		case *pLogic:
			if lanceOr && !p.and && (partial(p.l) || partial(p.r)) {
				return all
			}
			l := walk(p.l)
			if p.and && len(l) == 0 {
				return nil
			}
			r := walk(p.r)
			if p.and {
				return intersect(l, r)
			}
			return union(l, r)
		}
		return all
	}
	return walk(f.prune)
}

// Unknown reports whether the filter's pruning can never skip a row (no
// usable term: e.g. only != and NOT LIKE).
func (f *Filter) Unknown() bool { return isAll(f.prune) }

func intersect(a, b []Range) []Range {
	var out []Range
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		s, e := max(a[i].Start, b[j].Start), min(a[i].End, b[j].End)
		if s < e {
			out = append(out, Range{s, e})
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return out
}

func union(a, b []Range) []Range {
	out := make([]Range, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var r Range
		if j >= len(b) || (i < len(a) && a[i].Start <= b[j].Start) {
			r = a[i]
			i++
		} else {
			r = b[j]
			j++
		}
		if n := len(out); n > 0 && r.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// ZoneRanges turns per-zone keep flags into row ranges; rows no zone
// covers are kept (nothing is known about them).
func ZoneRanges(zones []seedio.Zone, keep []bool, rows uint64) []Range {
	var out []Range
	add := func(s, e uint64) {
		if s >= e {
			return
		}
		if n := len(out); n > 0 && out[n-1].End >= s {
			out[n-1].End = max(out[n-1].End, e)
			return
		}
		out = append(out, Range{Start: s, End: e})
	}
	next := uint64(0)
	for i, z := range zones {
		if z.Start > next {
			add(next, min(z.Start, rows))
		}
		if keep[i] {
			add(z.Start, min(z.End(), rows))
		}
		next = max(next, z.End())
	}
	if next < rows {
		add(next, rows)
	}
	return out
}
