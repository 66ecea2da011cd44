package seedio

// Columns without supported bounds (§4.1 "N"): Null, intervals (Q5),
// run-end-encoded (Q1), nested types (List, LargeList, ListView,
// LargeListView, FixedSizeList, Struct, Map: outer nulls only, R24, R47),
// dictionaries of such types, and extension types (Q4, on their storage).
// Bounds are null (R35); counts are exact logical counts.

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

type noBoundsAcc struct {
	countNaN bool // the seed's value type counts NaNs (CountsNaN)
}

func newNoBoundsAcc(dt arrow.DataType) *noBoundsAcc {
	return &noBoundsAcc{countNaN: CountsNaN(dt)}
}

func (a *noBoundsAcc) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	switch t := arr.(type) {
	case *array.Null:
		// Every row of the Null type is null (R24, T17), although arrow-go
		// reports IsNull(i) == false.
		nr.addRun(base+uint64(lo), base+uint64(hi))
		z.nulls += uint64(hi - lo)
		return
	case *array.RunEndEncoded:
		a.observeREE(t, lo, hi, z, nr, base)
		return
	case *array.Dictionary:
		a.observeRows(arr, lo, hi, z, nr, base)
		return
	}
	vb, off := validity(arr)
	if vb != nil && arr.NullN() > 0 {
		z.nulls += recordValidityNulls(vb, off, lo, hi, base, nr)
	} else {
		vb = nil
	}
	if a.countNaN {
		for i := lo; i < hi; i++ {
			if vb != nil && vb[(off+i)>>3]>>uint((off+i)&7)&1 == 0 {
				continue
			}
			if nan, neg := nanAt(arr, i); nan {
				z.nans++
				if neg {
					z.negNaNs++
				}
			}
		}
	}
}

// observeRows handles arrays whose logical nulls need a per-row look
// (dictionaries).
func (a *noBoundsAcc) observeRows(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	runStart := -1
	for i := lo; i < hi; i++ {
		if isLogicalNull(arr, i) {
			if runStart < 0 {
				runStart = i
			}
			continue
		}
		if runStart >= 0 {
			nr.addRun(base+uint64(runStart), base+uint64(i))
			z.nulls += uint64(i - runStart)
			runStart = -1
		}
		if a.countNaN {
			if nan, neg := nanAt(arr, i); nan {
				z.nans++
				if neg {
					z.negNaNs++
				}
			}
		}
	}
	if runStart >= 0 {
		nr.addRun(base+uint64(runStart), base+uint64(hi))
		z.nulls += uint64(hi - runStart)
	}
}

// runEnd returns run end p of a run-ends array (int16, int32 or int64).
func runEnd(ends arrow.Array, p int) int64 {
	switch e := ends.(type) {
	case *array.Int16:
		return int64(e.Value(p))
	case *array.Int32:
		return int64(e.Value(p))
	case *array.Int64:
		return e.Value(p)
	}
	return 0
}

// observeREE walks the runs overlapping rows [lo, hi): a row is null when
// its run value is null (R24, T19); NaNs are counted by value (Q2).
func (a *noBoundsAcc) observeREE(r *array.RunEndEncoded, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	ends, values := r.RunEndsArr(), r.Values()
	offset := int64(r.Data().Offset())
	p := r.GetPhysicalIndex(lo)
	pos := lo
	for pos < hi && p < ends.Len() {
		end := runEnd(ends, p) - offset
		e := hi
		if end < int64(hi) {
			e = int(end)
		}
		if e > pos {
			n := uint64(e - pos)
			if isLogicalNull(values, p) {
				nr.addRun(base+uint64(pos), base+uint64(e))
				z.nulls += n
			} else if a.countNaN {
				if nan, neg := nanAt(values, p); nan {
					z.nans += n
					if neg {
						z.negNaNs += n
					}
				}
			}
			pos = e
		}
		p++
	}
}

func (a *noBoundsAcc) closeZone(bool)            {}
func (a *noBoundsAcc) zoneBounds(int) (any, any) { return nil, nil }
func (a *noBoundsAcc) reset()                    {}
