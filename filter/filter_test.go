package filter

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testRecord(t testing.TB) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	pt := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "p", Type: pt, Nullable: true},
		{Name: "Mixed Case", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "g", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	negNaN := math.Float64frombits(0xfff8000000000000)
	is := []any{int64(1), int64(2), nil, int64(-5), int64(10)}
	fs := []any{0.0, math.Copysign(0, -1), math.Float64frombits(0x7ff8000000000000), negNaN, nil}
	ss := []any{"abc", "", "abd", nil, "zz"}
	bs := []any{true, false, nil, true, false}
	px := []any{int64(7), nil, int64(3), int64(1), int64(0)} // row 4: struct null
	gs := []any{float32(0.1), float32(1), nil, float32(-1), float32(2.5)}
	for r := 0; r < 5; r++ {
		if v := is[r]; v == nil {
			b.Field(0).AppendNull()
			b.Field(5).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(v.(int64))
			b.Field(5).(*array.Int64Builder).Append(v.(int64))
		}
		if v := fs[r]; v == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(v.(float64))
		}
		if v := ss[r]; v == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(v.(string))
		}
		if v := bs[r]; v == nil {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.BooleanBuilder).Append(v.(bool))
		}
		sb := b.Field(4).(*array.StructBuilder)
		if r == 4 {
			sb.AppendNull()
		} else {
			sb.Append(true)
			if v := px[r]; v == nil {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(v.(int64)))
			}
		}
		if v := gs[r]; v == nil {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.Float32Builder).Append(v.(float32))
		}
	}
	return b.NewRecordBatch()
}

func rowsOf(sel []bool) string {
	var sb strings.Builder
	for i, s := range sel {
		if s {
			sb.WriteByte(byte('0' + i))
		}
	}
	return sb.String()
}

// TestEvalThreeValuedLogic checks SQL three-valued logic and Lance 12's
// comparison semantics (total order for floats) row by row.
func TestEvalThreeValuedLogic(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	cases := []struct{ pred, want string }{
		{"i = 1", "0"},
		{"i != 1", "134"},
		{"i <> 1", "134"},
		{"1 < i", "14"},
		{"i >= 2", "14"},
		{"i IS NULL", "2"},
		{"i IS NOT NULL", "0134"},
		{"NOT i = 1", "134"},
		{"NOT (i = 1 OR i = 2)", "34"},
		{"i = 1 OR i IS NULL", "02"},
		{"i > 100 OR s = 'abc'", "0"},
		{"NOT (i > 100 OR s = 'x')", "014"}, // row 3: s null → NOT(F OR NULL) = NULL
		{"i IN (1, 10)", "04"},
		{"i NOT IN (1, 10)", "13"},
		{"i NOT IN (1, NULL)", ""},
		{"i IN (1, NULL)", "0"},
		{"i BETWEEN 1 AND 2", "01"},
		{"i NOT BETWEEN 1 AND 2", "34"},
		{"i = NULL", ""},
		{"NOT (i = NULL)", ""},
		{"f = 0", "01"},    // Lance 12: -0.0 equals +0.0
		{"f = -0.0", "01"}, // both ways
		{"f < 0", "3"},     // -NaN is below every number
		{"f <= -0.0", "013"},
		{"f = nan", "2"},
		{"f = -nan", "3"},
		{"f = CAST('NaN' AS DOUBLE)", "2"},
		{"f > 0", "2"}, // NaN above everything
		{"f > inf", "2"},
		{"f < -inf", "3"},
		{"isnan(f)", "23"},
		{"NOT isnan(f)", "01"},
		{"f IS NULL", "4"},
		{"s LIKE 'ab%'", "02"},
		{"s LIKE 'a_c'", "0"},
		{"s NOT LIKE 'ab%'", "14"},
		{"s LIKE '%'", "0124"},
		{"s = ''", "1"},
		{"s > 'abc'", "24"},
		{"b", "03"},
		{"NOT b", "14"},
		{"b = true", "03"},
		{"b IS TRUE", "03"},
		{"b IS NOT TRUE", "124"},
		{"b IS FALSE", "14"},
		{"b IS NOT FALSE", "023"},
		{"p.x > 2", "02"},
		{"p.x IS NULL", "14"}, // row 4: the struct is null
		{"\"Mixed Case\" = 2", "1"},
		{"`Mixed Case` > 1", "14"},
		{"g = 1", "1"},
		{"g = 0.1", ""},    // Float32 0.1 is not Float64 0.1
		{"g > 0.1", "014"}, // Float32 0.1 widened is above Float64 0.1
		{"g >= 0.1", "014"},
		{"TRUE", "01234"},
		{"FALSE OR NULL", ""},
		{"I = 1", "0"}, // case-insensitive when unique
	}
	for _, c := range cases {
		t.Run(c.pred, func(t *testing.T) {
			f, err := Compile(c.pred, rec.Schema())
			if err != nil {
				t.Fatal(err)
			}
			sel, err := f.Eval(rec)
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsOf(sel); got != c.want {
				t.Fatalf("%s: rows %q, want %q", c.pred, got, c.want)
			}
		})
	}
}

// TestErrorsNameOffsetAndToken: parse errors name the offset and the
// token; type errors name the offset and the column.
func TestErrorsNameOffsetAndToken(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	cases := []struct {
		pred   string
		target error
		off    int
	}{
		{"i = ", ErrSyntax, 4},
		{"i == 1 AND", ErrSyntax, 10},
		{"(i = 1", ErrSyntax, 6},
		{"i = 'abc", ErrSyntax, 4},
		{"i ! 3", ErrSyntax, 2},
		{"i = 1 j", ErrSyntax, 6},
		{"i IN (1 2)", ErrSyntax, 8},
		{"missing = 1", ErrType, 0},
		{"i = 1 AND nope > 2", ErrType, 10},
		{"i = 'abc'", ErrType, 4},
		{"i = 1.5", ErrType, 4},
		{"p.x = 99999999999", ErrType, 6},
		{"foo(i)", ErrType, 0},
		{"isnan(i)", ErrType, 6},
		{"s LIKE 3", ErrSyntax, 7},
		{"i LIKE 'a%'", ErrType, 2},
		{"p = 1", ErrType, 0},
		{"p.y = 1", ErrType, 0},
		{"", ErrSyntax, 0},
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
		if !strings.Contains(err.Error(), "offset") {
			t.Errorf("%q: error %q does not name the offset", c.pred, err)
		}
	}
}

// TestR65_KeepRangesInexact: AND intersects, OR unites, unknown terms keep
// everything, never-true predicates keep nothing.
func TestR65_KeepRangesInexact(t *testing.T) {
	rec := testRecord(t)
	defer rec.Release()
	known := map[string][]Range{
		"i >= 2":    {{0, 10}},
		"i <= 5":    {{5, 20}},
		"s = 'abc'": {{30, 40}},
	}
	cases := []struct {
		pred string
		want []Range
	}{
		{"i BETWEEN 2 AND 5", []Range{{5, 10}}},
		{"i BETWEEN 2 AND 5 OR s = 'abc'", []Range{{5, 10}, {30, 40}}},
		{"i != 3", []Range{{0, 100}}},
		{"i = NULL", nil},
		{"i >= 2 AND f > 0", []Range{{0, 10}}},
		{"NOT (i < 2)", []Range{{0, 10}}},
	}
	for _, c := range cases {
		f, err := Compile(c.pred, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		terms := f.Terms()
		got := f.KeepRanges(100, func(i int) ([]Range, bool) {
			rs, ok := known[terms[i].Text]
			return rs, ok
		})
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v, want %v (terms %v)", c.pred, got, c.want, terms)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.pred, got, c.want)
			}
		}
	}
}

func FuzzParseBind(f *testing.F) {
	for _, s := range []string{"i = 1", "NOT (i IN (1,2) OR s LIKE 'a%')", "p.x BETWEEN -1 AND 2", "isnan(f)", "\"Mixed Case\" <> 3", "b IS NOT TRUE", "x'00' = s", "g >= -inf", "i % 3 = 1", "(i + 1) * -p.x >= f / 2 OR g < i", "-(i - `Mixed Case`) <> p.x % 0",
		"(i + 1) IN (1, 2)", "i * 2 NOT BETWEEN 3 AND 9", "(i - p.x) IS NULL", "i IN (i + 1, 3)", "i BETWEEN p.x AND 5", "i + 1 LIKE 'a%'"} {
		f.Add(s)
	}
	rec := testRecord(f)
	defer rec.Release()
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Compile(s, rec.Schema())
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrType) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if _, err := flt.Eval(rec); err != nil && !errors.Is(err, ErrArithmetic) {
			t.Fatalf("%q: eval: %v", s, err)
		}
		terms := flt.Terms()
		flt.KeepRanges(10, func(i int) ([]Range, bool) { return nil, i%2 == 0 && len(terms) > 0 })
	})
}

// TestLikeMatchesAndIsLinear: LIKE with %, _ and escapes; a hostile
// pattern against a long string answers quickly (no exponential
// backtracking).
func TestLikeMatchesAndIsLinear(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"a%", "abc", true}, {"a%", "", false}, {"%c", "abc", true}, {"a_c", "abc", true}, {"a_c", "ac", false},
		{"%b%", "abc", true}, {"%", "", true}, {"_", "é", true}, {"a\\%", "a%", true}, {"a\\%", "ab", false},
		{"%a%b%c", "xaybzc", true}, {"%a%b%c", "xaybz", false}, {"ab", "ab", true}, {"ab", "abc", false},
	} {
		if got := compileLike(c.pat).match(c.s); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
	long := strings.Repeat("a", 20000)
	pat := strings.Repeat("%a", 40) + "%b"
	if compileLike(pat).match(long) {
		t.Fatal("matched")
	}
}
