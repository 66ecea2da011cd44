package seedio

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestR42_R45_NullRecorderMatchesRoaring: the null recorder (sorted array
// of offsets up to 4096 nulls per 2^16-row chunk, dense bits beyond, whole
// null chunks as runs) serializes exactly what roaring's RunOptimize +
// ToBytes gives for the same null rows, whatever the density (around the
// 4096 threshold included), the batch splits, the validity bit offsets and
// the mix of validity words and runs of nulls.
func TestR42_R45_NullRecorderMatchesRoaring(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 45))
	densities := []float64{0, 0.0005, 0.01, 4000.0 / 65536, 4096.0 / 65536, 4200.0 / 65536, 0.3, 0.97, 1}
	for iter := 0; iter < 60; iter++ {
		rows := 1 + rng.IntN(5*chunkRows)
		p := densities[iter%len(densities)]
		null := make([]bool, rows)
		for i := range null {
			null[i] = rng.Float64() < p
		}
		if iter%4 == 3 { // a long run of nulls across a chunk boundary
			s := rng.IntN(rows)
			for i := s; i < min(rows, s+chunkRows+rng.IntN(3*chunkRows)); i++ {
				null[i] = true
			}
		}
		nr := newNullRecorder()
		want := roaring.New()
		for pos := 0; pos < rows; {
			n := min(rows-pos, 1+rng.IntN(3*chunkRows/2))
			if rng.IntN(5) == 0 && null[pos] {
				// a run of nulls as addRun records it (all-null batches)
				e := pos
				for e < pos+n && null[e] {
					e++
				}
				nr.addRun(uint64(pos), uint64(e))
				want.AddRange(uint64(pos), uint64(e))
				pos = e
				continue
			}
			off := rng.IntN(64) // bit offset of row 0 in the validity bitmap
			vb := make([]byte, (off+n+7)/8+rng.IntN(9))
			for i := range vb {
				vb[i] = byte(rng.Uint32()) // bits outside the batch are noise
			}
			for i := 0; i < n; i++ {
				b := off + i
				if null[pos+i] {
					vb[b>>3] &^= 1 << (b & 7)
					want.Add(uint32(pos + i))
				} else {
					vb[b>>3] |= 1 << (b & 7)
				}
			}
			lo := rng.IntN(n + 1)
			// rows [0, lo) and [lo, n) of the batch in two calls
			c := recordValidityNulls(vb, off, 0, lo, uint64(pos), nr)
			c += recordValidityNulls(vb, off, lo, n, uint64(pos), nr)
			var exp uint64
			for i := 0; i < n; i++ {
				if null[pos+i] {
					exp++
				}
			}
			if c != exp {
				t.Fatalf("iter %d: counted %d nulls in batch at %d, want %d", iter, c, pos, exp)
			}
			pos += n
		}
		got := nr.serialize()
		want.RunOptimize()
		wb, err := want.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		if want.IsEmpty() {
			continue // the collector writes the empty bitmap's constant (TestR44_EmptyStringIsEmptyBitmap)
		}
		if !bytes.Equal(got, wb) {
			t.Fatalf("iter %d (rows %d, density %g): serialized bitmap differs from roaring's (%d vs %d bytes)", iter, rows, p, len(got), len(wb))
		}
	}
}
