package filter

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The record of testRecord: i = [1, 2, NULL, -5, 10], f = [0, -0, NaN,
// -NaN, NULL], g (Float32) = [0.1, 1, NULL, -1, 2.5], p.x (Int32) = [7,
// NULL, 3, 1, struct NULL], s = ['abc', '', 'abd', NULL, 'zz'].

func checkRows(t *testing.T, rec arrow.RecordBatch, cases []struct{ pred, want string }) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.pred, func(t *testing.T) {
			f, err := Compile(c.pred, rec.Schema())
			if err != nil {
				t.Fatal(err)
			}
			sel, err := f.Eval(rec)
			if c.want == "error" { // Lance 12 fails the query
				if !errors.Is(err, ErrArithmetic) {
					t.Fatalf("%s: %v, want ErrArithmetic", c.pred, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsOf(sel); got != c.want {
				t.Fatalf("%s: rows %q, want %q", c.pred, got, c.want)
			}
		})
	}
}

// TestArith_PrecedenceAndParentheses: unary minus > * / % > + - >
// comparisons > NOT > AND > OR; operators of one level associate left.
func TestArith_PrecedenceAndParentheses(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{
		{"i + 1 * 2 = 3", "0"},
		{"(i + 1) * 2 = 6", "1"},
		{"i - 1 - 1 = -1", "0"},
		{"-i * 2 = -4", "1"},
		{"- i = 5", "3"},
		{"-i > 0", "3"},
		{"--i = 2", "1"},
		{"i % 3 * 2 = 2", "04"},
		{"i * 2 > i + 5", "4"},
		{"NOT i % 3 = 1", "13"},
		{"i % 3 = 1 OR i = 2 AND i + 0 = 2", "014"},
		{"(i) = 1", "0"},
		{"((i + 1)) = 2", "0"},
		{"(i = 1) OR (i + 1 = 3)", "01"},
		{"(i + 1) = 2 AND (i > 0)", "0"},
		{"1 + 1 = 2", "01234"},
		{"2 < i-1", "4"},
		{"i-1 = 0", "0"},
		{"i = -5", "3"},
		{"-5 = i", "3"},
	})
}

// TestArith_IntegerSemantics: integer division truncates, % takes the
// dividend's sign, +, - and * wrap at the result type's width (Int32 ×
// Int32 stays Int32; Int32 with an Int64 literal is Int64), as Lance 12
// computes them (probed through the peer).
func TestArith_IntegerSemantics(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{
		{"i % 3 = 1", "04"},
		{"i % 3 = -2", "3"},
		{"i % -3 = -2", "3"},
		{"i / 3 = -1", "3"},
		{"i / 2 = 5", "4"},
		{"i * 9223372036854775807 < 0", "134"},
		{"p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x * p.x < 0", "0"}, // 7^13 wraps in Int32
		{"p.x * 1000000000 > 1000000000", "02"},                                                  // Int64: no wrap
		{"p.x + i >= 8", "0"},
		{"i = `Mixed Case`", "0134"},
		{"i < \"Mixed Case\" + 1", "0134"},
		{"p.x < i", ""}, // row 4: the struct is null
		{"p.x > i", "03"},
	})
}

// TestArith_FloatSemantics: int/float mixing computes in the float type
// (Float32 stays Float32 unless a Float64 joins), IEEE results, and
// comparisons in the total order with -0.0 equal to +0.0.
func TestArith_FloatSemantics(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{
		{"i + 0.5 > 2", "14"},
		{"g + 1 = 2", "1"},
		{"g + 16777216 > 16777216", "4"}, // Float32: 1 + 2^24 rounds to 2^24
		{"g + 16777216.0 > 16777216", "014"},
		{"f * 0 = 0", "01"},
		{"-f = f", ""},              // two non-constant sides: -0.0 < +0.0 (Lance 12: "f64 = -f64" selects no ±0 row)
		{"f * 1 = f", "0123"},       // NaN payloads kept: equal to themselves
		{"f - f = 0", "01"},         // against a constant: -0.0 equals +0.0
		{"i / 0.0 % 2 < 0", "0134"}, // fmod(±Inf, 2) is the hardware's negative default NaN, as in Lance 12
		{"f / 2 = f / 2", "0123"},   // NaN equals itself in the total order
		{"f + g > 0", "01"},
		{"g * 2 = g + g", "0134"},
	})
}

// TestArith_NullPropagates: a null operand makes the result null, so the
// row is not selected (and NOT of it is not selected either).
func TestArith_NullPropagates(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{
		{"i + NULL = 1", ""},
		{"NOT (i + NULL = 1)", ""},
		{"NULL + NULL = 1", ""},
		{"i + g > -100", "0134"},
		{"NOT (i + g > 100)", "0134"},
		{"p.x + 0 >= 0", "023"},
	})
}

// TestArith_ColumnComparisons: two columns compare in their common type;
// strings bytewise across Utf8 kinds.
func TestArith_ColumnComparisons(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{
		{"s = s", "0124"},
		{"s < s", ""},
		{"i >= i", "0134"},
		{"f = f", "0123"},
		{"g < i", "014"},
		{"i <> `Mixed Case`", ""},
	})
}

// TestArith_DivideByZeroFailsLikeLance12: integer division or remainder
// by zero fails the evaluation (Lance 12: "Divide by zero error"); a
// null operand does not; floats give Inf / NaN.
func TestArith_DivideByZeroFailsLikeLance12(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	for _, p := range []string{"i / 0 = 1", "i % 0 = 1", "i / (i - 1) > 0", "p.x % (p.x - p.x) = 0"} {
		f, err := Compile(p, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Eval(rec); !errors.Is(err, ErrArithmetic) {
			t.Errorf("%s: error %v, want ErrArithmetic", p, err)
		}
	}
	checkRows(t, rec, []struct{ pred, want string }{
		{"i / 0.0 > 0", "014"},
		{"i / (i + NULL) = 1", ""},
	})
}

// TestArith_MINDivMinusOneFails: MIN / -1 overflows (checked, as arrow's
// division kernel).
func TestArith_MINDivMinusOneFails(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "u", Type: arrow.PrimitiveTypes.Uint64}, {Name: "m", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{-2147483648, 5}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{1, 1 << 63}, nil)
	b.Field(2).(*array.Int32Builder).AppendValues([]int32{-1, -1}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := Compile("a / m > 0", rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Eval(rec); !errors.Is(err, ErrArithmetic) {
		t.Fatalf("error %v, want ErrArithmetic", err)
	}
	checkRows(t, rec, []struct{ pred, want string }{
		{"u + u = u - u", "1"}, // UInt64 wraps
		{"u + u < u", "1"},
		{"a - 1 > 0", "1"},  // Int64 literal: Int64 arithmetic
		{"u - u = 0", "01"}, // UInt64 against an Int64 literal: compared exactly
		{"u > a", "01"},
		{"a - 6 < u", "01"},
	})
	// UInt64 mixed with a signed integer (an integer literal is Int64)
	// computes in Decimal128(20, 0) as in Lance 12 (decimal.go); unary
	// minus on UInt64 is refused as Lance 12 refuses it.
	checkRows(t, rec, []struct{ pred, want string }{
		{"u - a > 0", "01"}, // exact: 1 + 2^31, 2^63 - 5
		{"u - 1 < 0", ""},   // exact, no wrap
	})
	if _, err := Compile("-u < 0", rec.Schema()); !errors.Is(err, ErrType) {
		t.Errorf("-u < 0: error %v, want ErrType", err)
	}
}

// TestArith_ErrorsNameOffset: syntax and type errors of arithmetic name
// the offset.
func TestArith_ErrorsNameOffset(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	cases := []struct {
		pred   string
		target error
		off    int
	}{
		{"i + ", ErrSyntax, 4},
		{"i * * 2 = 1", ErrSyntax, 4},
		{"i + 1", ErrSyntax, 5},
		{"(i + 1", ErrSyntax, 6},
		{"s + 1 = 2", ErrType, 0},
		{"i + 'a' = 1", ErrType, 4},
		{"isnan(f) + 1 = 2", ErrType, 0},
		{"s = i", ErrType, 2},
		{"-s > 1", ErrType, 1},
		{"i + nope > 1", ErrType, 4},
	}
	for _, c := range cases {
		_, err := Compile(c.pred, rec.Schema())
		if !errors.Is(err, c.target) {
			t.Errorf("%q: error %v, want %v", c.pred, err, c.target)
			continue
		}
		var off int
		var se *SyntaxError
		var te *TypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		if off != c.off {
			t.Errorf("%q: offset %d, want %d (%v)", c.pred, off, c.off, err)
		}
	}
}

// TestR65_ArithmeticTermsKeepEveryZone: a comparison with arithmetic or
// two columns is unknown to pruning (every row kept); the other terms of
// an AND still prune.
func TestR65_ArithmeticTermsKeepEveryZone(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	known := map[string][]Range{"i >= 2": {{0, 10}}}
	for _, c := range []struct {
		pred string
		want []Range
	}{
		{"i + 1 > 5", []Range{{0, 100}}},
		{"NOT (i < `Mixed Case`)", []Range{{0, 100}}},
		{"i % 3 = 1 AND i >= 2", []Range{{0, 10}}},
		{"i % 3 = 1 OR i >= 2", []Range{{0, 100}}},
	} {
		f, err := Compile(c.pred, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		terms := f.Terms()
		got := f.KeepRanges(100, func(i int) ([]Range, bool) {
			rs, ok := known[terms[i].Text]
			return rs, ok
		})
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%s: %v, want %v", c.pred, got, c.want)
		}
	}
}
