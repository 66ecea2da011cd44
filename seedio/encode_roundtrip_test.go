package seedio

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// checkRoundTrip is Pebble's checkRoundTrip for seeds: a decoded v1 seed
// re-encodes (Encode) to bytes that decode, with the same options, to an
// equal seed. It returns the re-encoded bytes.
func checkRoundTrip(t testing.TB, what string, s *Seed, o DecodeOptions) []byte {
	t.Helper()
	enc, err := Encode(s)
	if err != nil {
		t.Fatalf("%s: a decoded v1 seed does not re-encode: %v", what, err)
	}
	again, err := Decode(enc, o)
	if err != nil {
		t.Fatalf("%s: the re-encoded seed does not decode: %v", what, err)
	}
	if msg := seedDiff(s, again); msg != "" {
		t.Fatalf("%s: decode → encode → decode changed the seed: %s", what, msg)
	}
	return enc
}

// seedDiff describes the first difference between two seeds ("" if none).
func seedDiff(a, b *Seed) string {
	switch {
	case a.Version != b.Version:
		return fmt.Sprintf("version %d vs %d", a.Version, b.Version)
	case !arrow.TypeEqual(a.ValueType, b.ValueType):
		return fmt.Sprintf("value type %s vs %s", a.ValueType, b.ValueType)
	case a.RowsPerZone != b.RowsPerZone || a.NumRows != b.NumRows:
		return fmt.Sprintf("geometry %d/%d vs %d/%d", a.RowsPerZone, a.NumRows, b.RowsPerZone, b.NumRows)
	case a.NullPositionsExact != b.NullPositionsExact:
		return "null positions exactness"
	case (a.NullBitmap == nil) != (b.NullBitmap == nil):
		return fmt.Sprintf("null bitmap presence %v vs %v", a.NullBitmap != nil, b.NullBitmap != nil)
	case a.NullBitmap != nil && !a.NullBitmap.Equals(b.NullBitmap):
		return "null bitmap"
	case len(a.Zones) != len(b.Zones):
		return fmt.Sprintf("%d vs %d zones", len(a.Zones), len(b.Zones))
	}
	for i := range a.Zones {
		x, y := a.Zones[i], b.Zones[i]
		if x.Index != y.Index || x.Start != y.Start || x.Rows != y.Rows || x.NullCount != y.NullCount ||
			x.NaNCount != y.NaNCount || x.NegativeNaNCount != y.NegativeNaNCount ||
			x.NullCountExact != y.NullCountExact || x.NaNCountExact != y.NaNCountExact || x.NaNSignKnown != y.NaNSignKnown ||
			!wSameValue(x.Min, y.Min) || !wSameValue(x.Max, y.Max) {
			return fmt.Sprintf("zone %d: %+v vs %+v", i, x, y)
		}
	}
	return ""
}

// TestRoundTrip_CollectorSeedsEncodeByteForByte: for random columns of
// every property type, the collector's seed decodes, and Encode of the
// decoded seed gives back the collector's bytes exactly (one encoder for
// both), which decode to the same seed.
func TestRoundTrip_CollectorSeedsEncodeByteForByte(t *testing.T) {
	r := rand.New(rand.NewSource(20261201))
	mem := memory.NewGoAllocator()
	types := propTypes()
	n := 400
	if testing.Short() {
		n = 60
	}
	for c := 0; c < n; c++ {
		pt := types[c%len(types)]
		rows := make([]refRow, 1+r.Intn(150))
		nullP := []float64{0, 0.1, 0.5, 1}[r.Intn(4)]
		for i := range rows {
			if r.Float64() < nullP {
				rows[i] = refRow{null: true}
			} else {
				rows[i] = refRow{v: pt.gen(r)}
			}
		}
		rpz := uint64(1 + r.Intn(40))
		arr := pt.build(mem, rows, r)
		enc := collectInBatches(t, pt, arr, rpz, r)
		arr.Release()
		what := fmt.Sprintf("case %d (%s, %d rows, rpz %d)", c, pt.name, len(rows), rpz)
		o := DecodeOptions{RowsPerZone: rpz, NumRows: uint64(len(rows)), ColumnType: pt.dt, TableFlagged: true}
		s, err := Decode(enc.IPC, o)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if msg := seedDiff(&enc.Seed, s); msg != "" {
			t.Fatalf("%s: the EncodedSeed differs from what its bytes decode to: %s", what, msg)
		}
		if again := checkRoundTrip(t, what, s, o); !bytes.Equal(again, enc.IPC) {
			t.Fatalf("%s: Encode(Decode(b)) differs from b (%d vs %d bytes)", what, len(again), len(enc.IPC))
		}
	}
}

// TestRoundTrip_HandBuiltV1Seeds: v1 seeds built by other means (compressed
// bodies, dictionary bounds, no null bitmap) survive decode → encode →
// decode.
func TestRoundTrip_HandBuiltV1Seeds(t *testing.T) {
	for i, spec := range fuzzSeedSpecs() {
		if spec.version != 1 {
			continue
		}
		o := DecodeOptions{RowsPerZone: 4, NumRows: spec.totalRows(), TableFlagged: true}
		s, err := Decode(spec.bytes(t), o)
		if err != nil {
			t.Fatalf("spec %d: %v", i, err)
		}
		checkRoundTrip(t, fmt.Sprintf("spec %d (%s)", i, spec.valueType), s, o)
	}
	// Without seed_null_bitmap (R46): the re-encoded seed has none either.
	spec := int64Spec(1, 4, 6, [2]any{int64(1), int64(2)}, [2]any{int64(3), int64(3)})
	spec.meta = [][2]string{{metaVersion, "1"}}
	o := DecodeOptions{RowsPerZone: 4, NumRows: 6, TableFlagged: true}
	s, err := Decode(spec.bytes(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if s.NullBitmap != nil {
		t.Fatal("absent bitmap decoded as present")
	}
	checkRoundTrip(t, "no bitmap", s, o)
}
