package seedio

// FuzzCollectorMatchesReference drives the collector's fast paths (SIMD
// min/max kernels, the masked kernels over validity words, the utf8 prefix
// candidate filter, the null recorder and the direct IPC writer) against the
// naive reference of the property test (collector_property_test.go): the
// fuzzer picks the generator (type), row count, rows_per_zone, bound length
// and the seed of every random choice (values with nulls, NaNs of both signs,
// ±0, ±Inf, empty and non-ASCII strings, batch splits and slice offsets).
//
//	go test -run '^$' -fuzz FuzzCollectorMatchesReference ./seedio/

import (
	"math/rand/v2"
	"testing"
)

func FuzzCollectorMatchesReference(f *testing.F) {
	gens := wPropGenerators()
	for i := range gens {
		f.Add(uint64(i)*7919, uint16(300), uint16(16), uint8(i), uint8(0))
	}
	f.Add(uint64(1), uint16(600), uint16(8192), uint8(0), uint8(5))
	f.Add(uint64(2), uint16(2), uint16(1), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, rpz uint16, gen uint8, maxBound uint8) {
		g := gens[int(gen)%len(gens)]
		rng := rand.New(rand.NewPCG(seed, uint64(n)<<16|uint64(rpz)))
		rows := int(n % 2048)
		pc := g.gen(rng, rows)
		if !wPropRunOne(t, rng, g.name, pc, uint64(rpz%8192)+1, int(maxBound%40)) {
			t.Fatalf("%s, n=%d, rpz=%d, L=%d: collector differs from the reference", g.name, rows, rpz%8192+1, maxBound%40)
		}
	})
}
