package filter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// TestR65_PruningIsSoundWithLooseAndUnusableStats: for random tables and
// predicates, every row the exact evaluation selects lies in a row range
// KeepRanges keeps — with exact zone statistics, with deliberately loose
// bounds (wider than the data, unknown sides), v0-style NaN counts without
// signs, undercounted nulls/NaNs marked inexact, and terms for which no
// statistics are usable. Columns use different zone sizes, so ranges of
// different terms intersect and unite unaligned.
func TestR65_PruningIsSoundWithLooseAndUnusableStats(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "g", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}, nil)
	zoneSize := map[string]int{"i": 16, "f": 32, "s": 8, "g": 24}
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.Float64frombits(0x7ff8000000000000), math.Float64frombits(0xfff8000000000000), 1.5, -2.25}
	checked, prunedRows, rowsTotal := 0, 0, 0
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 65))
		n := 64 + rng.IntN(200)
		b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
		mode := rng.IntN(4) // 0 random, 1 clustered, 2 constant zones, 3 mostly null
		for r := 0; r < n; r++ {
			if (mode == 3 && rng.IntN(4) > 0) || rng.IntN(8) == 0 {
				b.Field(0).AppendNull()
			} else {
				v := int64(rng.IntN(100)) - 50
				if mode == 1 {
					v = int64(r) + int64(rng.IntN(5))
				} else if mode == 2 {
					v = int64(r / 16)
				}
				b.Field(0).(*array.Int64Builder).Append(v)
			}
			if rng.IntN(7) == 0 {
				b.Field(1).AppendNull()
				b.Field(3).AppendNull()
			} else {
				v := specials[rng.IntN(len(specials))]
				if rng.IntN(2) == 0 {
					v = float64(rng.IntN(40)) - 20
				}
				b.Field(1).(*array.Float64Builder).Append(v)
				b.Field(3).(*array.Float32Builder).Append(float32(v) + float32(rng.IntN(2))*0.1)
			}
			if rng.IntN(6) == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append([]string{"", "a", "ab", "abc", "b", "zz", "é", "a\x00"}[rng.IntN(8)])
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		stats := map[string][]seedio.Zone{}
		for ci, fld := range sch.Fields() {
			stats[fld.Name] = zoneStats(t, rng, rec.Column(ci), zoneSize[fld.Name])
		}
		for k := 0; k < 60; k++ {
			pred := randomPredicate(rng, rec)
			f, err := Compile(pred, sch)
			if err != nil {
				t.Fatalf("%q: %v", pred, err)
			}
			sel, err := f.Eval(rec)
			if err != nil {
				t.Fatal(err)
			}
			terms := f.Terms()
			unusable := rng.IntN(len(terms) + 1)
			termRanges := func(i int) ([]Range, bool) {
				if i == unusable {
					return nil, false
				}
				zs := stats[terms[i].Column]
				keep, err := seedio.PruneZones(terms[i].Type, zs, terms[i].Pred)
				if err != nil {
					t.Fatalf("%q term %s: %v", pred, terms[i].Text, err)
				}
				return ZoneRanges(zs, keep, uint64(n)), true
			}
			kept := f.KeepRanges(uint64(n), termRanges)
			keptIdx := f.KeepRangesAsLance12Index(uint64(n), termRanges)
			for r, s := range sel {
				rowsTotal++
				if !overlapsRow(kept, uint64(r)) {
					prunedRows++
				}
				if s && !overlapsRow(kept, uint64(r)) {
					t.Fatalf("seed %d: %q selects row %d but pruning keeps only %v (terms %v)", seed, pred, r, kept, terms)
				}
				if s && !overlapsRow(keptIdx, uint64(r)) {
					t.Fatalf("seed %d: %q selects row %d but index-style pruning keeps only %v (terms %v)", seed, pred, r, keptIdx, terms)
				}
			}
			checked++
		}
		rec.Release()
	}
	t.Logf("%d predicates checked; pruning skipped %d of %d rows", checked, prunedRows, rowsTotal)
	if prunedRows < rowsTotal/50 {
		t.Fatalf("pruning skipped only %d of %d rows: the property is not exercised", prunedRows, rowsTotal)
	}
}

func overlapsRow(rs []Range, r uint64) bool {
	for _, x := range rs {
		if x.Start <= r && r < x.End {
			return true
		}
	}
	return false
}

// zoneStats computes each zone's statistics from the values, then loosens
// some of them the ways the spec allows.
func zoneStats(t *testing.T, rng *rand.Rand, a arrow.Array, size int) []seedio.Zone {
	var out []seedio.Zone
	for start := 0; start < a.Len(); start += size {
		end := min(a.Len(), start+size)
		st := seedio.Stats{Rows: uint64(end - start), NullCountExact: true, NaNCountExact: true, NaNSignKnown: true}
		for r := start; r < end; r++ {
			v, err := seedio.ValueAt(a, r)
			if err != nil {
				t.Fatal(err)
			}
			switch x := v.(type) {
			case nil:
				st.NullCount++
				continue
			case float64:
				if math.IsNaN(x) {
					st.NaNCount++
					if math.Signbit(x) {
						st.NegativeNaNCount++
					}
					continue
				}
			case float32:
				if x != x {
					st.NaNCount++
					if math.Signbit(float64(x)) {
						st.NegativeNaNCount++
					}
					continue
				}
			}
			if st.Min == nil {
				st.Min, st.Max = v, v
				continue
			}
			if c, _ := seedio.CompareValues(v, st.Min); c < 0 {
				st.Min = v
			}
			if c, _ := seedio.CompareValues(v, st.Max); c > 0 {
				st.Max = v
			}
		}
		switch rng.IntN(8) {
		case 0: // loose bounds
			st.Min, st.Max = loosen(st.Min, -1), loosen(st.Max, 1)
		case 1:
			st.Min = nil
		case 2:
			st.Max = nil
		case 3: // v0: no NaN signs
			st.NaNSignKnown, st.NegativeNaNCount = false, 0
		case 4: // inexact counts
			if st.NullCount > 0 {
				st.NullCount--
				st.NullCountExact = false
			}
			if st.NaNCount > 0 {
				st.NaNCount, st.NegativeNaNCount, st.NaNSignKnown = st.NaNCount-1, 0, false
				st.NaNCountExact = false
			}
		}
		if st.Ordinary() == 0 {
			st.Min, st.Max = nil, nil
		}
		out = append(out, seedio.Zone{Index: len(out), Start: uint64(start), Stats: st})
	}
	return out
}

func loosen(v any, dir int) any {
	switch x := v.(type) {
	case int64:
		return x + int64(dir*3)
	case float64:
		return x + float64(dir)*2.5
	case float32:
		return x + float32(dir)*2.5
	case string:
		if dir < 0 {
			return ""
		}
		return x + "~"
	}
	return v
}

func randomPredicate(rng *rand.Rand, rec arrow.RecordBatch) string {
	lit := func(col string) string {
		switch col {
		case "i":
			return fmt.Sprint(rng.IntN(120) - 60)
		case "f", "g":
			return []string{"0.0", "-0.0", "1.5", "-2.25", "inf", "-inf", "nan", "-nan", "3", "-7.1", "0.1"}[rng.IntN(11)]
		}
		return []string{"''", "'a'", "'ab'", "'abc'", "'b'", "'zz'", "'é'", "'aa'"}[rng.IntN(8)]
	}
	var term func(depth int) string
	term = func(depth int) string {
		col := []string{"i", "f", "s", "g"}[rng.IntN(4)]
		if depth < 3 && rng.IntN(3) == 0 {
			op := []string{"AND", "OR"}[rng.IntN(2)]
			return "(" + term(depth+1) + " " + op + " " + term(depth+1) + ")"
		}
		if depth < 3 && rng.IntN(6) == 0 {
			return "NOT " + term(depth+1)
		}
		switch rng.IntN(11) {
		case 9, 10: // arithmetic (session 23): never a term, keeps rows; an AND prunes by its other side
			return []string{"i * 2 + 1 > " + lit("i"), "(i - 3) IS NULL", "i % 7 IN (1, 2, -3)", "f * 2 BETWEEN -1 AND 3",
				"i IN (i + 1, 3)", "g + f < 1.5", "i / 3 NOT BETWEEN -2 AND 2", "-i < i"}[rng.IntN(8)]
		case 0:
			return col + " IS NULL"
		case 1:
			return col + " IS NOT NULL"
		case 2:
			return col + " BETWEEN " + lit(col) + " AND " + lit(col)
		case 3:
			return col + " IN (" + lit(col) + ", " + lit(col) + ")"
		case 4:
			if col == "f" || col == "g" {
				return "isnan(" + col + ")"
			}
			if col == "s" {
				return "s LIKE " + []string{"'a%'", "'%b'", "'ab%'", "'_'"}[rng.IntN(4)]
			}
		}
		return col + " " + []string{"=", "!=", "<", "<=", ">", ">="}[rng.IntN(6)] + " " + lit(col)
	}
	return term(0)
}
