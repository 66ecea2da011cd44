package seedio

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func v1Stats(rows, nulls, nans, negs uint64, mn, mx any) Stats {
	return Stats{Rows: rows, NullCount: nulls, NaNCount: nans, NegativeNaNCount: negs, Min: mn, Max: mx,
		NullCountExact: true, NaNCountExact: true, NaNSignKnown: true}
}

func TestAggregateFoldsCountsAndBounds(t *testing.T) {
	parts := []Stats{
		v1Stats(4, 1, 0, 0, int64(3), int64(9)),
		v1Stats(4, 4, 0, 0, nil, nil), // all null: counts only
		v1Stats(2, 0, 0, 0, int64(-5), int64(4)),
	}
	s, err := Aggregate(parts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows != 10 || s.NullCount != 5 || s.Min != int64(-5) || s.Max != int64(9) || !s.NullCountExact {
		t.Fatalf("%+v", s)
	}
	// Fragment pruning with the summaries (PruneStats).
	other, _ := Aggregate([]Stats{v1Stats(8, 0, 0, 0, int64(100), int64(200))})
	keep, err := PruneStats(arrow.PrimitiveTypes.Int64, []Stats{s, other}, Between(int64(150), int64(160)))
	if err != nil || keep[0] || !keep[1] {
		t.Fatalf("%v %v", keep, err)
	}
}

func TestAggregateUnknownSidePropagates(t *testing.T) {
	// §5.4: a part with O > 0 and an unknown side makes that side unknown.
	s, err := Aggregate([]Stats{
		v1Stats(4, 0, 0, 0, int64(3), int64(9)),
		v1Stats(4, 0, 0, 0, int64(1), nil),
	})
	if err != nil || s.Min != int64(1) || s.Max != nil {
		t.Fatalf("%+v %v", s, err)
	}
	// A part without ordinary values and without bounds does not make a side unknown.
	s, err = Aggregate([]Stats{v1Stats(4, 0, 0, 0, int64(3), int64(9)), v1Stats(4, 2, 2, 1, nil, nil)})
	if err != nil || s.Min != int64(3) || s.Max != int64(9) || s.NaNCount != 2 || s.NegativeNaNCount != 1 || !s.NaNSignKnown {
		t.Fatalf("%+v %v", s, err)
	}
	// Everything null: no bounds.
	s, _ = Aggregate([]Stats{v1Stats(4, 4, 0, 0, nil, nil)})
	if s.Min != nil || s.Ordinary() != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestR52_AggregateV0SignsUnknown(t *testing.T) {
	// One v0 zone with NaNs makes the folded sign split unknown; a v0 zone
	// without NaNs does not.
	v0 := Stats{Rows: 4, NaNCount: 1, Min: 1.0, NullCountExact: true, NaNCountExact: true}
	v0clean := Stats{Rows: 4, Min: 1.0, Max: 2.0, NullCountExact: true, NaNCountExact: true}
	v1 := v1Stats(4, 0, 2, 2, 0.5, 3.0)
	s, err := Aggregate([]Stats{v1, v0clean})
	if err != nil || !s.NaNSignKnown || s.NegativeNaNCount != 2 {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = Aggregate([]Stats{v1, v0})
	if err != nil || s.NaNSignKnown || s.NegativeNaNCount != 0 || s.NaNCount != 3 || s.Max != nil {
		t.Fatalf("%+v %v", s, err)
	}
	// The summary keeps x > 100 (positive NaN possible) and x < -100 (negative NaN possible).
	for _, p := range []Predicate{Gt(100.0), Lt(-100.0)} {
		if k, _ := p.Keep(arrow.PrimitiveTypes.Float64, s); !k {
			t.Fatalf("%v dropped a summary with unknown NaN signs", p)
		}
	}
}

func TestAggregateInexactCountsPropagate(t *testing.T) {
	a := v1Stats(4, 0, 0, 0, "a", "b")
	b := Stats{Rows: 4, Min: "c", Max: "d", NaNCountExact: true, NaNSignKnown: true} // v0 dictionary: nulls inexact
	s, err := Aggregate([]Stats{a, b})
	if err != nil || s.NullCountExact {
		t.Fatalf("%+v %v", s, err)
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	if k, _ := IsNull().Keep(dict, s); !k {
		t.Fatal("IS NULL must keep a summary with inexact null counts")
	}
}

func TestAggregateOverflow(t *testing.T) {
	_, err := Aggregate([]Stats{v1Stats(math.MaxUint64, 0, 0, 0, nil, nil), v1Stats(1, 0, 0, 0, nil, nil)})
	if !errors.Is(err, ErrSummaryOverflow) {
		t.Fatalf("want overflow, got %v", err)
	}
	_, err = Aggregate([]Stats{v1Stats(4, 0, 0, 0, int64(1), int64(2)), v1Stats(4, 0, 0, 0, "x", "y")})
	if !errors.Is(err, ErrNotComparable) {
		t.Fatalf("mixed value types: %v", err)
	}
}

func TestSeedSummary(t *testing.T) {
	spec := int64Spec(1, 4, 10, [2]any{int64(5), int64(7)}, [2]any{int64(1), int64(2)}, [2]any{int64(9), int64(9)})
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 10))
	sum, err := s.Summary()
	if err != nil || sum.Rows != 10 || sum.Min != int64(1) || sum.Max != int64(9) {
		t.Fatalf("%+v %v", sum, err)
	}
}

func TestR22_R66_T77_CountsArePhysical(t *testing.T) {
	// Seed counts describe physical rows; with deletions they are upper
	// bounds for live rows. Pruning on them stays sound (a deleted null row
	// may keep a zone for IS NULL, never the reverse), and the summary keeps
	// the physical count rather than pretending to know live rows.
	spec := seedSpec{version: 1, valueType: arrow.PrimitiveTypes.Int64, lens: []uint64{4}, nulls: []uint32{1},
		mins: []any{int64(1)}, maxs: []any{int64(3)}, meta: [][2]string{{metaVersion, "1"}, {metaNullBitmap, hexOf(t, 2)}}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int64, 4, 4))
	// Row 2 (the null) was deleted after the write: the seed is unchanged
	// (R22) and IS NULL still keeps the zone (inexact, allowed).
	if k, _ := s.Prune(IsNull()); !k[0] {
		t.Fatal("IS NULL")
	}
	sum, _ := s.Summary()
	if sum.NullCount != 1 || sum.Rows != 4 {
		t.Fatalf("%+v", sum)
	}
}
