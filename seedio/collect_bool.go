package seedio

// Bounds of Boolean columns: false < true (§4.1).

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

type boolAcc struct {
	sawFalse, sawTrue bool
	mins, maxs        []bool
	known             []bool
}

func (a *boolAcc) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	b := arr.(*array.Boolean)
	vb, off := validity(arr)
	if vb != nil && arr.NullN() > 0 {
		z.nulls += recordValidityNulls(vb, off, lo, hi, base, nr)
	} else {
		vb = nil
	}
	for i := lo; i < hi && !(a.sawFalse && a.sawTrue); i++ {
		if vb != nil && vb[(off+i)>>3]>>uint((off+i)&7)&1 == 0 {
			continue
		}
		if b.Value(i) {
			a.sawTrue = true
		} else {
			a.sawFalse = true
		}
	}
}

func (a *boolAcc) observeAt(values arrow.Array, idx []int, _ *zoneCounts) {
	b := values.(*array.Boolean)
	for _, i := range idx {
		if b.Value(i) {
			a.sawTrue = true
		} else {
			a.sawFalse = true
		}
	}
}

func (a *boolAcc) closeZone(ordinary bool) {
	a.mins = append(a.mins, !a.sawFalse) // min is false if any false was seen
	a.maxs = append(a.maxs, a.sawTrue)
	a.known = append(a.known, ordinary && (a.sawFalse || a.sawTrue))
	a.sawFalse, a.sawTrue = false, false
}

func (a *boolAcc) zoneBounds(i int) (any, any) {
	if !a.known[i] {
		return nil, nil
	}
	return a.mins[i], a.maxs[i]
}

func (a *boolAcc) reset() {
	a.mins, a.maxs, a.known = a.mins[:0], a.maxs[:0], a.known[:0]
	a.sawFalse, a.sawTrue = false, false
}
