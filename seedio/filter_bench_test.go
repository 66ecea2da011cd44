package seedio

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// scanOffsetsKeyOnly is scanOffsets with the prefix-key filter only (the
// filter before session 24), kept as the baseline of TestUtf8FilterSpeed.
func scanOffsetsKeyOnly[O int32 | int64](st *extremaScan, data []byte, offs []O, vb []byte, bit int) {
	base := unsafe.Pointer(unsafe.SliceData(data))
	n := uint(len(data))
	for j := 1; j < len(offs); j++ {
		j = nextCandidateKey(base, n, offs, j, st.minK, st.maxK)
		if j >= len(offs) {
			return
		}
		if p := bit + j - 1; vb != nil && vb[p>>3]>>uint(p&7)&1 == 0 {
			continue
		}
		s, e := int(offs[j-1]), int(offs[j])
		v := data[s:e]
		k := prefixKey(data, s, e)
		if k < st.minK || (k == st.minK && bytes.Compare(v, st.minS) < 0) {
			st.minS, st.minK, st.minNew = v, k, true
		}
		if k > st.maxK || (k == st.maxK && bytes.Compare(v, st.maxS) > 0) {
			st.maxS, st.maxK, st.maxNew = v, k, true
		}
	}
}

// BenchmarkUtf8Filter compares the utf8 candidate filters on the two
// benchmark data sets, interleaved, zone by zone (8192 values), and reports
// the best and median time of each per 1 Mi values. Timing only: the
// results are checked equal.
//
//	go test -run '^$' -bench Utf8Filter -benchtime 1x ./seedio/
func BenchmarkUtf8Filter(b *testing.B) {
	sets := map[string][]*array.String{}
	sets["random8-24"] = []*array.String{benchData()["utf8"].arr.(*array.String)}
	for _, a := range writeDataColumns()["utf8"] {
		sets["writedata"] = append(sets["writedata"], a.(*array.String))
	}
	sb := array.NewStringBuilder(memory.NewGoAllocator())
	for i := range 1 << 20 {
		if i%100 == 7 {
			sb.AppendNull()
			continue
		}
		sb.Append(fmt.Sprintf("key-%012d", i)) // ascending: every value a new max
	}
	sets["sorted"] = []*array.String{sb.NewStringArray()}
	for _, name := range []string{"random8-24", "writedata", "sorted"} {
		b.Run(name, func(b *testing.B) { utf8FilterBench(b, sets[name]) })
	}
}

func utf8FilterBench(b *testing.B, arrs []*array.String) {
	{
		run := func(keyOnly bool) (time.Duration, [2]string) {
			var res [2]string
			t0 := time.Now()
			for _, a := range arrs {
				data, offs := dataBuffer(a), a.ValueOffsets()
				vb, off := validity(a)
				for lo := 0; lo < a.Len(); lo += DefaultRowsPerZone {
					hi := min(a.Len(), lo+DefaultRowsPerZone)
					s := lo
					for vb != nil && vb[(off+s)>>3]>>uint((off+s)&7)&1 == 0 {
						s++
					}
					v := data[offs[s]:offs[s+1]]
					st := extremaScan{minS: v, maxS: v, minK: prefixKeyOf(v), maxK: prefixKeyOf(v)}
					if keyOnly {
						scanOffsetsKeyOnly(&st, data, offs[s+1:hi+1], vb, off+s+1)
					} else {
						scanOffsets(&st, data, offs[s+1:hi+1], vb, off+s+1)
					}
					res[0], res[1] = string(st.minS), string(st.maxS)
				}
			}
			return time.Since(t0), res
		}
		var old, nw []time.Duration
		for b.Loop() {
			for range 50 {
				t1, r1 := run(true)
				t2, r2 := run(false)
				if r1 != r2 {
					b.Fatalf("results differ: %q vs %q", r1, r2)
				}
				old, nw = append(old, t1), append(nw, t2)
			}
		}
		slices.Sort(old)
		slices.Sort(nw)
		b.ReportMetric(float64(old[0].Microseconds()), "key-best-µs")
		b.ReportMetric(float64(nw[0].Microseconds()), "byte-best-µs")
		b.ReportMetric(float64(old[len(old)/2].Microseconds()), "key-median-µs")
		b.ReportMetric(float64(nw[len(nw)/2].Microseconds()), "byte-median-µs")
	}
}
