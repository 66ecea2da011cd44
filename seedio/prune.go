package seedio

import (
	"fmt"
	"math"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/lancekeeper/lancekeeper/internal/floatorder"
)

// Op is a predicate operator Prune understands.
type Op int

// Predicate operators (spec §5.4).
const (
	OpEq        Op = iota + 1 // x = v
	OpLt                      // x < v
	OpLe                      // x <= v
	OpGt                      // x > v
	OpGe                      // x >= v
	OpBetween                 // x BETWEEN v0 AND v1 (inclusive)
	OpIn                      // x IN (v...)
	OpIsNull                  // x IS NULL
	OpIsNotNull               // x IS NOT NULL
	OpIsNaN                   // isnan(x)
	OpNotIsNaN                // NOT isnan(x)
)

var opNames = map[Op]string{
	OpEq: "=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=", OpBetween: "BETWEEN", OpIn: "IN",
	OpIsNull: "IS NULL", OpIsNotNull: "IS NOT NULL", OpIsNaN: "isnan", OpNotIsNaN: "NOT isnan",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Predicate is a single-column predicate "x Op Values". Literals are Go
// values of the type ValueAt returns for the column's value type (for a
// dictionary column: for its value type), e.g. int64 for Int64, float64 for
// Float64, float16.Num for Float16, string for Utf8/LargeUtf8/Utf8View,
// []byte for the binary types, arrow.Timestamp for timestamps. Literals are
// never nil (SQL comparisons with NULL select nothing; use OpIsNull). For
// types without bounds (nested, interval, run-end-encoded, …) any non-nil
// literal is accepted and only the counts are used.
//
// Comparison semantics are Arrow Rust's (IEEE totalOrder for floats, R29).
// To stay sound for engines with IEEE semantics as well (and Lance 12's,
// which compares floats in totalOrder with −0.0 = +0.0), a zero literal is
// treated as the interval [−0.0, +0.0] (§5.4), NaN literals never prune
// ordinary rows away, and float zero bounds are read widened
// (WidenZeroBound: a min of ±0.0 as −0.0, a max of ±0.0 as +0.0; R39 on
// read, Q16), so a writer's choice of zero never excludes the other one.
type Predicate struct {
	Op     Op
	Values []any
}

func (p Predicate) String() string { return fmt.Sprintf("x %s %v", p.Op, p.Values) }

// Prune evaluates p against each zone of the seed and returns, per zone,
// whether it must be kept (may contain a matching row). It is an inexact
// filter (R65): a kept zone may match nothing, a pruned zone never holds a
// match. v0 and v1 seeds go through the same code; their different
// guarantees are carried by the Stats flags (unknown NaN signs, inexact null
// counts, unknown bounds).
func (s *Seed) Prune(p Predicate) ([]bool, error) {
	return PruneZones(s.ValueType, s.Zones, p)
}

// PruneZones is Seed.Prune over any zones of a column of value type vt.
func PruneZones(vt arrow.DataType, zones []Zone, p Predicate) ([]bool, error) {
	ev, err := newEvaluator(vt, p)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(zones))
	for i := range zones {
		out[i] = ev.keep(&zones[i].Stats)
	}
	return out, nil
}

// PruneStats evaluates p against summaries (e.g. one per data file or
// fragment, see Aggregate) and returns which to keep.
func PruneStats(vt arrow.DataType, stats []Stats, p Predicate) ([]bool, error) {
	ev, err := newEvaluator(vt, p)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(stats))
	for i := range stats {
		out[i] = ev.keep(&stats[i])
	}
	return out, nil
}

// Keep reports whether a run with statistics st may hold a row matching p.
func (p Predicate) Keep(vt arrow.DataType, st Stats) (bool, error) {
	ev, err := newEvaluator(vt, p)
	if err != nil {
		return false, err
	}
	return ev.keep(&st), nil
}

// evaluator is a checked predicate bound to a value type.
type evaluator struct {
	p         Predicate
	supported bool // value type has bounds (SupportsBounds)
	lits      []literal
}

// literal is a checked predicate value v, with the interval [lo, hi] it
// stands for in equality tests: lo == hi == v except for float zeros, which
// stand for [−0, +0] (an IEEE engine's ±0 literal equals both zeros). Strict
// comparisons x < ±0 / x > ±0 match a subset of the total-order rows under
// IEEE semantics, so they use v itself.
type literal struct {
	v      any // the literal itself
	lo, hi any
	nan    bool
	negNaN bool
}

func newEvaluator(vt arrow.DataType, p Predicate) (*evaluator, error) {
	if vt == nil {
		return nil, fmt.Errorf("%w: no value type", ErrPredicate)
	}
	want := 0
	switch p.Op {
	case OpEq, OpLt, OpLe, OpGt, OpGe:
		want = 1
	case OpBetween:
		want = 2
	case OpIn:
		want = -1
	case OpIsNull, OpIsNotNull, OpIsNaN, OpNotIsNaN:
		want = 0
	default:
		return nil, fmt.Errorf("%w: unknown operator %v", ErrPredicate, p.Op)
	}
	if want >= 0 && len(p.Values) != want {
		return nil, fmt.Errorf("%w: %v takes %d literal(s), got %d", ErrPredicate, p.Op, want, len(p.Values))
	}
	ev := &evaluator{p: p, supported: SupportsBounds(vt)}
	for i, v := range p.Values {
		if v == nil {
			return nil, fmt.Errorf("%w: literal %d of %v is null; comparisons with NULL select nothing, use IS NULL", ErrPredicate, i, p.Op)
		}
		if !ev.supported {
			ev.lits = append(ev.lits, literal{v: v, lo: v, hi: v})
			continue
		}
		lit, err := checkLiteral(vt, v)
		if err != nil {
			return nil, fmt.Errorf("%w: literal %d of %v: %v", ErrPredicate, i, p.Op, err)
		}
		ev.lits = append(ev.lits, lit)
	}
	return ev, nil
}

// literalSample returns a value of the Go type ValueAt yields for dt.
func literalSample(dt arrow.DataType) any {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	switch dt.ID() {
	case arrow.BOOL:
		return false
	case arrow.INT8:
		return int8(0)
	case arrow.INT16:
		return int16(0)
	case arrow.INT32:
		return int32(0)
	case arrow.INT64:
		return int64(0)
	case arrow.UINT8:
		return uint8(0)
	case arrow.UINT16:
		return uint16(0)
	case arrow.UINT32:
		return uint32(0)
	case arrow.UINT64:
		return uint64(0)
	case arrow.FLOAT16:
		return float16.Num{}
	case arrow.FLOAT32:
		return float32(0)
	case arrow.FLOAT64:
		return float64(0)
	case arrow.DECIMAL32:
		return decimal.Decimal32(0)
	case arrow.DECIMAL64:
		return decimal.Decimal64(0)
	case arrow.DECIMAL128:
		return decimal128.Num{}
	case arrow.DECIMAL256:
		return decimal256.Num{}
	case arrow.DATE32:
		return arrow.Date32(0)
	case arrow.DATE64:
		return arrow.Date64(0)
	case arrow.TIME32:
		return arrow.Time32(0)
	case arrow.TIME64:
		return arrow.Time64(0)
	case arrow.TIMESTAMP:
		return arrow.Timestamp(0)
	case arrow.DURATION:
		return arrow.Duration(0)
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return ""
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return []byte(nil)
	}
	return nil
}

func checkLiteral(vt arrow.DataType, v any) (literal, error) {
	sample := literalSample(vt)
	if reflect.TypeOf(v) != reflect.TypeOf(sample) {
		return literal{}, fmt.Errorf("literal of Go type %T for value type %s, want %T", v, vt, sample)
	}
	lit := literal{v: v, lo: v, hi: v}
	switch x := v.(type) {
	case float64:
		b := math.Float64bits(x)
		lit.nan, lit.negNaN = floatorder.IsNaN64(b), b>>63 != 0
		if b&^(1<<63) == 0 {
			lit.lo, lit.hi = math.Copysign(0, -1), float64(0)
		}
	case float32:
		b := math.Float32bits(x)
		lit.nan, lit.negNaN = floatorder.IsNaN32(b), b>>31 != 0
		if b&^(1<<31) == 0 {
			lit.lo, lit.hi = math.Float32frombits(1<<31), float32(0)
		}
	case float16.Num:
		b := x.Uint16()
		lit.nan, lit.negNaN = floatorder.IsNaN16(b), b>>15 != 0
		if b&^(1<<15) == 0 {
			lit.lo, lit.hi = float16.FromBits(1<<15), float16.FromBits(0)
		}
	}
	return lit, nil
}

// cmpOK compares two values of the same checked type; the types were
// checked when the evaluator was built, so an error cannot occur for bounds
// Decode produced. On error the caller keeps the zone.
func cmpOK(a, b any) (int, bool) {
	c, err := CompareValues(a, b)
	return c, err == nil
}

// keep is the §5.4 table.
func (ev *evaluator) keep(st *Stats) bool {
	switch ev.p.Op {
	case OpIsNull:
		return st.mayHaveNull()
	case OpIsNotNull:
		return st.Rows > st.NullCount
	case OpIsNaN:
		return st.mayHaveNaN()
	case OpNotIsNaN:
		return st.Ordinary() > 0
	}
	if !ev.supported {
		// Nested / unsupported types with a non-null literal (§5.4, last row).
		return st.Rows > st.NullCount
	}
	switch ev.p.Op {
	case OpEq:
		return ev.keepEq(st, ev.lits[0])
	case OpIn:
		for _, l := range ev.lits {
			if ev.keepEq(st, l) {
				return true
			}
		}
		return false
	case OpLt, OpLe:
		l := ev.lits[0]
		if l.nan {
			return st.Ordinary() > 0 || st.mayHaveNaN()
		}
		if st.mayHaveNegativeNaN() {
			return true
		}
		// x < v: the same rows under IEEE and total order for v = ±0;
		// x <= ±0 under IEEE also matches +0, hence hi.
		if ev.p.Op == OpLe {
			return st.Ordinary() > 0 && ev.minBelow(st, l.hi, true)
		}
		return st.Ordinary() > 0 && ev.minBelow(st, l.v, false)
	case OpGt, OpGe:
		l := ev.lits[0]
		if l.nan {
			return st.Ordinary() > 0 || st.mayHaveNaN()
		}
		if st.mayHavePositiveNaN() {
			return true
		}
		if ev.p.Op == OpGe {
			return st.Ordinary() > 0 && ev.maxAbove(st, l.lo, true)
		}
		return st.Ordinary() > 0 && ev.maxAbove(st, l.v, false)
	case OpBetween:
		lo, hi := ev.lits[0], ev.lits[1]
		if lo.nan || hi.nan {
			return st.Ordinary() > 0 || st.mayHaveNaN()
		}
		// Both ends ordinary: only ordinary rows can match.
		return st.Ordinary() > 0 && ev.maxAbove(st, lo.lo, true) && ev.minBelow(st, hi.hi, true)
	}
	return true
}

// keepEq: x = literal.
func (ev *evaluator) keepEq(st *Stats, l literal) bool {
	if l.nan {
		if l.negNaN {
			return st.mayHaveNegativeNaN()
		}
		return st.mayHavePositiveNaN()
	}
	return st.Ordinary() > 0 && ev.minBelow(st, l.hi, true) && ev.maxAbove(st, l.lo, true)
}

// WidenZeroBound returns a bound as every reader of this module uses it
// (R39 applied on read, Q16): a float min of ±0.0 reads −0.0 and a float
// max of ±0.0 reads +0.0 (isMax); widened says whether that changed the
// value. Other values are returned unchanged.
//
// R39 makes our writers widen; Lance 12's v0 seeds hold the exact
// totalOrder extrema (a zone of +0.0 and 1 has min +0.0), and another
// writer comparing with IEEE equality may keep either zero when a zone
// holds both. Read widened, a zero bound never excludes the other zero,
// so pruning stays sound under totalOrder, IEEE and Lance 12's comparison
// (zeros equal) whichever zero a writer picked.
func WidenZeroBound(v any, isMax bool) (w any, widened bool) {
	switch x := v.(type) {
	case float64:
		b := math.Float64bits(x)
		if b&^(1<<63) == 0 && (b != 0) == isMax {
			return math.Float64frombits(b ^ 1<<63), true
		}
	case float32:
		b := math.Float32bits(x)
		if b&^(1<<31) == 0 && (b != 0) == isMax {
			return math.Float32frombits(b ^ 1<<31), true
		}
	case float16.Num:
		b := x.Uint16()
		if b&^(1<<15) == 0 && (b != 0) == isMax {
			return float16.FromBits(b ^ 1<<15), true
		}
	}
	return v, false
}

// minBelow reports whether min (unknown = yes; a zero read as −0.0,
// WidenZeroBound) < v, or <= v when orEqual.
func (ev *evaluator) minBelow(st *Stats, v any, orEqual bool) bool {
	if st.Min == nil {
		return true
	}
	mn, _ := WidenZeroBound(st.Min, false)
	c, ok := cmpOK(mn, v)
	if !ok {
		return true
	}
	return c < 0 || (orEqual && c == 0)
}

// maxAbove reports whether max (unknown = yes; a zero read as +0.0) > v,
// or >= v when orEqual.
func (ev *evaluator) maxAbove(st *Stats, v any, orEqual bool) bool {
	if st.Max == nil {
		return true
	}
	mx, _ := WidenZeroBound(st.Max, true)
	c, ok := cmpOK(mx, v)
	if !ok {
		return true
	}
	return c > 0 || (orEqual && c == 0)
}
