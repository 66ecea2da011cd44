package filter

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arTestRecord: id 0..7, z = 0 at row 0 (else 1), u64 and i32 with the
// extreme values the peer probes used, dec Decimal128(12, 2).
func arTestRecord(t testing.TB) arrow.RecordBatch {
	t.Helper()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "z", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dur", Type: &arrow.DurationType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{0, 1, 2, 3, 4, 5, 6, 7}, nil)
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{0, 1, 1, 1, 1, 1, 1, 1}, nil)
	b.Field(2).(*array.Uint64Builder).AppendValues([]uint64{0, 1, 18446744073709551615, 3, 9223372036854775808, 0, 5, 9223372036854775807},
		[]bool{true, true, true, true, true, false, true, true})
	b.Field(3).(*array.Int32Builder).AppendValues([]int32{0, -1, 2, -3, 0, 2147483647, -2147483648, 7},
		[]bool{true, true, true, true, false, true, true, true})
	b.Field(4).(*array.Int64Builder).AppendValues([]int64{0, -1, -9223372036854775808, 9223372036854775807, 4, 0, -6, 7},
		[]bool{true, true, true, true, true, false, true, true})
	for i, v := range []int64{0, -100, 200, -300, 0, 214748364700, -214748364800, 700} {
		if i == 4 {
			b.Field(5).AppendNull()
			continue
		}
		b.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(v))
	}
	// ts = 2023-11-14 22:13:20 UTC + id seconds, dur = id seconds except
	// row 3 (near the 64-bit limit), d32 = 2022-01-08 + id days
	for i := int64(0); i < 8; i++ {
		b.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1700000000000000 + i*1000000))
		if i == 3 {
			b.Field(7).(*array.DurationBuilder).Append(arrow.Duration(9223372036854000000))
		} else {
			b.Field(7).(*array.DurationBuilder).Append(arrow.Duration(i * 1000000))
		}
		b.Field(8).(*array.Date32Builder).Append(arrow.Date32(19000 + i))
	}
	return b.NewRecordBatch()
}

// TestArith_Lance12Answers: each predicate's rows (or failure) as Lance
// 12 answered it on the same eight rows through the peer (session 23).
func TestArith_Lance12Answers(t *testing.T) {
	rec := arTestRecord(t)
	for _, c := range []struct {
		pred string
		want []int // nil with fail: Lance 12 fails the query
		fail bool
	}{
		// UInt64 with a signed integer: Decimal128(20, 0) arithmetic, exact
		{"u64 + i32 > 5", []int{2, 7}, false},
		{"u64 - 1 < 0", []int{0}, false},
		{"u64 - 1 = 18446744073709551615", []int{}, false},
		{"u64 - 1 > 5", []int{2, 4, 7}, false},
		{"u64 * i64 > 0", []int{3, 4, 7}, false},
		{"u64 / (i32 + 100) > 0", []int{1, 2, 3, 7}, false},
		{"u64 % (i32 + 100) > 0", []int{1, 2, 3, 6, 7}, false},
		{"u64 * i64 * i64 > 0", nil, true}, // 128-bit overflow
		{"(u64 + i32) * u64 * u64 > 0", nil, true},
		{"u64 * u64 * u64 > 0", []int{1, 2, 3, 6, 7}, false}, // UInt64 wraps
		// Decimal128(12, 2)
		{"dec * 2 > 3", []int{2, 5, 7}, false},
		{"dec + 0.5 > 1", []int{2, 5, 7}, false},
		// IN / BETWEEN / IS NULL on arithmetic
		{"id + i32 IN (1, 2)", []int{}, false},
		{"id * 2 BETWEEN 3 AND 9", []int{2, 3, 4}, false},
		{"(id - i32) IS NULL", []int{4}, false},
		{"id - i32 IS NOT NULL", []int{0, 1, 2, 3, 5, 6, 7}, false},
		{"id + 1 NOT IN (1, 3)", []int{1, 3, 4, 5, 6, 7}, false},
		{"id + 1 NOT BETWEEN 2 AND 4", []int{0, 4, 5, 6, 7}, false},
		{"id + 1 IN (1.5, 2)", []int{1}, false},
		{"id IN (i32, 3)", []int{0, 2, 3, 7}, false}, // columns in the list
		{"id + 1 IN (i32, 3)", []int{2}, false},
		{"id BETWEEN i32 AND 5", []int{0, 1, 2, 3}, false},
		// division by zero (z = 0 at row 0) and DataFusion's short-circuits
		{"id / z > 0", nil, true},
		{"id > 100 AND id / z > 1", []int{}, false},                     // left all false
		{"id / z > 1 AND id > 100", nil, true},                          // left evaluated first
		{"id = 2 AND id / z > 1", []int{2}, false},                      // 1 of 8 ≤ one fifth: pre-selection
		{"id >= 2 AND id / z > 1", nil, true},                           // 6 of 8: evaluated on every row
		{"id < 1 OR id / z > 1", nil, true},                             // OR only skips when all true
		{"id >= 0 OR id / z > 1", []int{0, 1, 2, 3, 4, 5, 6, 7}, false}, // left all true
		{"(id > 100 AND id / z > 1) OR id = 3", []int{3}, false},
		{"id > 100 AND id / 0 > 1", []int{}, false},
		{"id / 0 > 1", nil, true},
	} {
		f, err := Compile(c.pred, rec.Schema())
		if err != nil {
			t.Errorf("%q: %v", c.pred, err)
			continue
		}
		m, err := f.Eval(rec)
		if c.fail {
			if !errors.Is(err, ErrArithmetic) {
				t.Errorf("%q: want ErrArithmetic as Lance 12 fails, got %v", c.pred, err)
			}
			if !f.MayFail() {
				t.Errorf("%q: MayFail() = false", c.pred)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.pred, err)
			continue
		}
		got := []int{}
		for i, v := range m {
			if v {
				got = append(got, i)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: rows %v, Lance 12 %v", c.pred, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: rows %v, Lance 12 %v", c.pred, got, c.want)
				break
			}
		}
	}
}

// TestArith_EvalLive_DeletedRowsNeverFail: a zero divisor on a row that
// is not live (deleted) does not fail, as Lance 12 never evaluates
// deleted rows.
func TestArith_EvalLive_DeletedRowsNeverFail(t *testing.T) {
	rec := arTestRecord(t)
	f, err := Compile("id / z > 0", rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	live := []bool{false, true, true, true, true, true, true, true}
	m, err := f.EvalLive(rec, live)
	if err != nil {
		t.Fatal(err)
	}
	if m[0] || !m[1] {
		t.Fatalf("selection %v", m)
	}
}

// TestArith_DecimalTypes: result types of DataFusion's decimal rules, as
// Lance 12 reported them (arrow_typeof through the peer).
func TestArith_DecimalTypes(t *testing.T) {
	d := func(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }
	for _, c := range []struct {
		op   byte
		a, b arrow.DataType
		want string
	}{
		{'+', arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int32, "decimal(21, 0)"},
		{'*', arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int32, "decimal(38, 0)"},
		{'/', arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, "decimal(24, 4)"},
		{'%', arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Int64, "decimal(20, 0)"},
		{'+', d(12, 2), d(5, 3), "decimal(14, 3)"},
		{'*', d(12, 2), d(5, 3), "decimal(18, 5)"},
		{'/', d(12, 2), d(5, 3), "decimal(19, 6)"},
		{'%', d(12, 2), d(5, 3), "decimal(5, 3)"},
		{'+', d(12, 2), arrow.PrimitiveTypes.Int32, "decimal(13, 2)"},
		{'+', d(12, 2), arrow.PrimitiveTypes.Uint64, "decimal(23, 2)"},
	} {
		got, err := arithType(c.op, c.a, c.b)
		if err != nil || got.String() != c.want {
			t.Errorf("%s %c %s = %v (%v), want %s", c.a, c.op, c.b, got, err, c.want)
		}
	}
}

// TestArith_Temporal: date and time arithmetic Lance 12 accepts, with
// the answers its measured rules give on these rows (ts = T0 + id s, dur
// = id s except row 3, d32 = 2022-01-08 + id days; the same forms are
// compared with Lance 12 in tests/compat), and forms it refuses.
func TestArith_Temporal(t *testing.T) {
	rec := arTestRecord(t)
	checkRows(t, rec, []struct{ pred, want string }{
		{"ts - ts = dur", "0"}, // Duration(µs)
		{"ts - TIMESTAMP '2023-11-14 22:13:20' = dur", "0124567"}, // the literal takes ts's type; row 3: dur differs
		{"id = 2 AND ts + dur > '2023-11-14 22:13:22'", "2"},      // one row of eight: only it is evaluated (pre-selection)
		{"id = 1 AND dur + ts BETWEEN '2023-11-14 22:13:22' AND '2023-11-14 22:13:26'", "1"},
		{"ts - dur IN ('2023-11-14 22:13:20')", "0124567"},
		{"d32 + 1 = '2022-01-09'", "0"},
		{"1 + d32 = DATE '2022-01-10'", "1"},
		{"d32 + (2 * 3) = '2022-01-14'", "0"},
		{"d32 - DATE '2022-01-01' = 7", "0"}, // Int64 days
		{"d32 - d32 = 0", "01234567"},
		{"id = 5 AND dur + dur > dur", "5"},
		{"id <> 3 AND dur + dur > dur", "error"}, // 7 of 8 rows: evaluated on all, row 3 overflows
	})
	f, err := Compile("ts + dur > ts", rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Eval(rec); !errors.Is(err, ErrArithmetic) { // row 3 overflows 64 bits
		t.Errorf("ts + dur overflow: %v, want ErrArithmetic", err)
	}
	if !f.MayFail() {
		t.Error("ts + dur: MayFail() = false")
	}
	// refused by Lance 12 too (planning errors), or mixes not supported
	for _, p := range []string{"ts + 1 > ts", "dur * 2 > dur", "-ts < ts", "d32 * 2 > d32", "ts - ts > 5",
		"d32 + i32 > d32", "dur > 3 + dur", "ts - d32 > dur", "d32 + 1 > 5", "ts + dur LIKE 'a%'"} {
		if _, err := Compile(p, rec.Schema()); !errors.Is(err, ErrType) {
			t.Errorf("%q: %v, want ErrType", p, err)
		}
	}
}

func FuzzParseBindArith(f *testing.F) {
	for _, s := range []string{"u64 + i32 > 5", "dec * 2 BETWEEN -1 AND 3", "(id - i32) IS NULL", "id + 1 NOT IN (1, NULL)",
		"id >= 2 AND id / z > 1", "ts - ts = dur", "d32 + 1 IN ('2022-01-09')", "ts - TIMESTAMP '2023-11-14 22:13:20' > dur",
		"dec / z > u64 % (i64 - 1)", "(u64 * i64 * i64) IS NOT NULL OR id < 1", "d32 - DATE '2022-01-01' > 3"} {
		f.Add(s, uint8(0xfe))
	}
	rec := arTestRecord(f)
	f.Fuzz(func(t *testing.T, s string, mask uint8) {
		flt, err := Compile(s, rec.Schema())
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrType) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		live := make([]bool, rec.NumRows())
		for i := range live {
			live[i] = mask&(1<<i) != 0
		}
		if _, err := flt.EvalLive(rec, live); err != nil {
			if !errors.Is(err, ErrArithmetic) {
				t.Fatalf("%q: eval: %v", s, err)
			}
			if !flt.MayFail() {
				t.Fatalf("%q fails (%v) but MayFail() = false", s, err)
			}
		}
		terms := flt.Terms()
		flt.KeepRangesAsLance12Index(10, func(i int) ([]Range, bool) { return nil, i%2 == 0 && len(terms) > 0 })
	})
}

// TestArith_TimestampUnitsTruncateToCoarser: timestamps of different
// units compare and subtract in the coarser unit, truncated toward zero
// (Lance 12 through the peer: -1500 µs is -1 ms there, not -2).
func TestArith_TimestampUnitsTruncateToCoarser(t *testing.T) {
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "tus", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "tms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
		{Name: "dms", Type: &arrow.DurationType{Unit: arrow.Millisecond}},
	}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i, v := range []int64{-1500, 1500, -2500000, 3003, 4004, 5005} {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{-2, 1, 2, 3, 4, 5}[i]))
		b.Field(2).(*array.DurationBuilder).Append(arrow.Duration(i - 2))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	checkRows(t, rec, []struct{ pred, want string }{ // Lance 12's answers on these rows
		{"tus > tms", "0"},
		{"tus = tms", "1345"},
		{"tus < tms", "2"},
		{"tus - tms > dms", "01"},
		{"tus + dms > tus", "345"},
	})
	if _, err := Compile("tus - tms > 5", sch); !errors.Is(err, ErrType) {
		t.Errorf("a duration against a number: %v, want ErrType", err)
	}
}
