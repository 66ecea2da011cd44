package seedio

// Dictionary columns with a value type that has bounds (Q1, R40): nulls are
// logical (a null key or a key pointing at a null entry, R24, T18), NaNs are
// counted by value (Q2), bounds come from the values that valid keys
// reference (T49), never truncated (T-R1).

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

type dictAcc struct {
	inner valueAccumulator
	idx   []int // scratch: dictionary positions of the non-null rows of a segment
}

func (a *dictAcc) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	d := arr.(*array.Dictionary)
	dict := d.Dictionary()
	idx := a.idx[:0]
	runStart := -1
	for i := lo; i < hi; i++ {
		null := d.IsNull(i)
		k := 0
		if !null {
			k = d.GetValueIndex(i)
			null = isLogicalNull(dict, k)
		}
		if null {
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
		idx = append(idx, k)
	}
	if runStart >= 0 {
		nr.addRun(base+uint64(runStart), base+uint64(hi))
		z.nulls += uint64(hi - runStart)
	}
	if len(idx) > 0 {
		a.inner.observeAt(dict, idx, z)
	}
	a.idx = idx[:0]
}

func (a *dictAcc) closeZone(ordinary bool)     { a.inner.closeZone(ordinary) }
func (a *dictAcc) zoneBounds(i int) (any, any) { return a.inner.zoneBounds(i) }
func (a *dictAcc) reset()                      { a.inner.reset() }
