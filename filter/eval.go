package filter

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/internal/floatorder"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// SQL three-valued logic.
const (
	tFalse uint8 = 0
	tTrue  uint8 = 1
	tNull  uint8 = 2
)

func triOf(b bool) uint8 {
	if b {
		return tTrue
	}
	return tFalse
}

func triNot(v uint8) uint8 {
	switch v {
	case tTrue:
		return tFalse
	case tFalse:
		return tTrue
	}
	return tNull
}

func triAnd(a, b uint8) uint8 {
	if a == tFalse || b == tFalse {
		return tFalse
	}
	if a == tTrue && b == tTrue {
		return tTrue
	}
	return tNull
}

func triOr(a, b uint8) uint8 {
	if a == tTrue || b == tTrue {
		return tTrue
	}
	if a == tFalse && b == tFalse {
		return tFalse
	}
	return tNull
}

// Eval evaluates the filter on every row of rec with SQL three-valued
// logic (Lance 12's semantics: floats compare in Float64 in IEEE
// totalOrder, NaN above +Inf and -NaN below -Inf, except that -0.0 equals
// +0.0) and reports
// which rows it selects (the predicate is TRUE; FALSE and NULL are not
// selected). rec must hold, by name, the top-level columns of Columns()
// with the types the filter was bound to.
func (f *Filter) Eval(rec arrow.RecordBatch) ([]bool, error) {
	return f.EvalLive(rec, nil)
}

// EvalLive is Eval of the rows where live is true (nil: every row), the
// batch Lance 12 would evaluate (it never evaluates deleted rows): rows
// not live are not selected and their arithmetic never fails. AND and OR
// short-circuit as DataFusion's do, decided on the live rows of this
// batch, so that a division by zero fails exactly when Lance 12's
// evaluation of the same batch fails: with no NULL on the left side, AND
// skips its right side when the left is false on every row, evaluates it
// only on the rows where the left is true when those are at most a fifth
// of the batch; OR skips its right side when the left is true on every
// row.
func (f *Filter) EvalLive(rec arrow.RecordBatch, live []bool) ([]bool, error) {
	if live != nil && len(live) != int(rec.NumRows()) {
		return nil, fmt.Errorf("%w: %d live flags for %d rows", ErrEval, len(live), rec.NumRows())
	}
	t, err := f.evalTri(rec, f.root, live)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(t))
	for i, v := range t {
		out[i] = v == tTrue && (live == nil || live[i])
	}
	return out, nil
}

// preSelection is DataFusion's PRE_SELECTION_THRESHOLD.
const preSelection float32 = 0.2

func (f *Filter) evalTri(rec arrow.RecordBatch, n bnode, live []bool) ([]uint8, error) {
	rows := int(rec.NumRows())
	switch n := n.(type) {
	case *bLogic:
		l, err := f.evalTri(rec, n.l, live)
		if err != nil {
			return nil, err
		}
		cnt, trues, nulls := 0, 0, 0
		for i, v := range l {
			if live == nil || live[i] {
				cnt++
				switch v {
				case tTrue:
					trues++
				case tNull:
					nulls++
				}
			}
		}
		rlive := live
		if nulls == 0 && cnt > 0 {
			switch {
			case n.and && trues == 0, !n.and && trues == cnt:
				return l, nil // the left side decides every row
			case n.and && trues < cnt && trues <= int(float32(cnt)*preSelection):
				rlive = make([]bool, rows) // evaluate the right side where the left is true
				for i, v := range l {
					rlive[i] = v == tTrue && (live == nil || live[i])
				}
			}
		}
		r, err := f.evalTri(rec, n.r, rlive)
		if err != nil {
			return nil, err
		}
		for i := range l {
			if n.and {
				l[i] = triAnd(l[i], r[i])
			} else {
				l[i] = triOr(l[i], r[i])
			}
		}
		return l, nil
	case *bNot:
		x, err := f.evalTri(rec, n.x, live)
		if err != nil {
			return nil, err
		}
		for i := range x {
			x[i] = triNot(x[i])
		}
		return x, nil
	case *bConst:
		out := make([]uint8, rows)
		for i := range out {
			out[i] = n.v
		}
		return out, nil
	case *bExprCmp:
		return f.evalExprCmp(rec, n, rows, live)
	case *bExprIsNull:
		x, err := f.evalArith(rec, n.x, rows, live)
		if err != nil {
			return nil, err
		}
		out := make([]uint8, rows)
		for i := range out {
			out[i] = triOf(x.isNull(i) != n.neg)
		}
		return out, nil
	case *bColCmp:
		return f.evalColCmp(rec, n, rows)
	}
	var c *colRef
	switch n := n.(type) {
	case *bCmp:
		c = n.col
	case *bIn:
		c = n.col
	case *bBetween:
		c = n.col
	case *bIsNull:
		c = n.col
	case *bIsBool:
		c = n.col
	case *bIsNaN:
		c = n.col
	case *bLike:
		c = n.col
	case *bBoolCol:
		c = n.col
	default:
		return nil, fmt.Errorf("%w: unknown node %T", ErrEval, n)
	}
	col, err := lookup(rec, c)
	if err != nil {
		return nil, err
	}
	out := make([]uint8, rows)
	switch n := n.(type) {
	case *bIsNull:
		for i := range out {
			out[i] = triOf(col.null(i) != n.neg)
		}
		return out, nil
	case *bCmp:
		if n.v == nil {
			for i := range out {
				out[i] = tNull
			}
			return out, nil
		}
		if fastCmp(col, n, out) {
			return out, nil
		}
		cf, err := comparer(col.arr, n.v)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
		}
		noNulls := col.noNulls()
		for i := range out {
			if !noNulls && col.null(i) {
				out[i] = tNull
			} else {
				out[i] = triOf(n.op.holds(cf(i)))
			}
		}
		return out, nil
	case *bIn:
		cfs := make([]func(int) int, len(n.vals))
		for j, v := range n.vals {
			if cfs[j], err = comparer(col.arr, v); err != nil {
				return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
			}
		}
		for i := range out {
			if col.null(i) {
				out[i] = tNull
				continue
			}
			v := tFalse
			for _, cf := range cfs {
				if cf(i) == 0 {
					v = tTrue
					break
				}
			}
			if v == tFalse && n.hasNull {
				v = tNull
			}
			if n.neg {
				v = triNot(v)
			}
			out[i] = v
		}
		return out, nil
	case *bBetween:
		var lo, hi func(int) int
		if n.lo != nil {
			if lo, err = comparer(col.arr, n.lo); err != nil {
				return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
			}
		}
		if n.hi != nil {
			if hi, err = comparer(col.arr, n.hi); err != nil {
				return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
			}
		}
		for i := range out {
			if col.null(i) {
				out[i] = tNull
				continue
			}
			a, b := tNull, tNull
			if lo != nil {
				a = triOf(lo(i) >= 0)
			}
			if hi != nil {
				b = triOf(hi(i) <= 0)
			}
			v := triAnd(a, b)
			if n.neg {
				v = triNot(v)
			}
			out[i] = v
		}
		return out, nil
	case *bIsNaN:
		nan, err := nanFunc(col.arr)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
		}
		for i := range out {
			if col.null(i) {
				out[i] = tNull
			} else {
				out[i] = triOf(nan(i))
			}
		}
		return out, nil
	case *bBoolCol, *bIsBool:
		bv, err := boolFunc(col.arr)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
		}
		for i := range out {
			if bc, ok := n.(*bIsBool); ok {
				out[i] = triOf((!col.null(i) && bv(i) == bc.val) != bc.neg)
				continue
			}
			if col.null(i) {
				out[i] = tNull
			} else {
				out[i] = triOf(bv(i))
			}
		}
		return out, nil
	case *bLike:
		sv, err := stringFunc(col.arr)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, c.name, err)
		}
		m := compileLike(n.pat)
		for i := range out {
			if col.null(i) {
				out[i] = tNull
			} else {
				out[i] = triOf(m.match(sv(i)) != n.neg)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown node %T", ErrEval, n)
}

// column is a referenced column of a record: the leaf array and the rows
// where an enclosing struct is null.
type column struct {
	arr     arrow.Array
	parents []arrow.Array
}

func (c *column) null(i int) bool {
	for _, p := range c.parents {
		if p.IsNull(i) {
			return true
		}
	}
	if c.arr.IsNull(i) {
		return true
	}
	if d, ok := c.arr.(*array.Dictionary); ok {
		return d.Dictionary().IsNull(d.GetValueIndex(i))
	}
	return false
}

// noNulls reports that no row of the column is null (no null parent, no
// null value, not a dictionary).
func (c *column) noNulls() bool {
	for _, p := range c.parents {
		if p.NullN() > 0 {
			return false
		}
	}
	_, dict := c.arr.(*array.Dictionary)
	return !dict && c.arr.NullN() == 0
}

// fastCmp evaluates an int64 column compared with an int64 literal
// without per-row calls (the common case of clustered keys and
// timestamps' physical values); false when it does not apply.
func fastCmp(col *column, n *bCmp, out []uint8) bool {
	a, ok := col.arr.(*array.Int64)
	x, okv := n.v.(int64)
	if !ok || !okv {
		return false
	}
	vals := a.Int64Values()
	noNulls := col.noNulls()
	for i, v := range vals[:len(out)] {
		var r bool
		switch n.op {
		case opEq:
			r = v == x
		case opNe:
			r = v != x
		case opLt:
			r = v < x
		case opLe:
			r = v <= x
		case opGt:
			r = v > x
		default:
			r = v >= x
		}
		out[i] = triOf(r)
		if !noNulls && col.null(i) {
			out[i] = tNull
		}
	}
	return true
}

func lookup(rec arrow.RecordBatch, c *colRef) (*column, error) {
	sch := rec.Schema()
	idx := sch.FieldIndices(c.path[0])
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: the record has %d columns named %q", ErrEval, len(idx), c.path[0])
	}
	arr := rec.Column(idx[0])
	out := &column{}
	for _, name := range c.path[1:] {
		s, ok := arr.(*array.Struct)
		if !ok {
			return nil, fmt.Errorf("%w: %q is %s in the record, not a struct", ErrEval, c.name, arr.DataType())
		}
		st := s.DataType().(*arrow.StructType)
		fi, ok := st.FieldIdx(name)
		if !ok {
			return nil, fmt.Errorf("%w: the record has no field %q", ErrEval, c.name)
		}
		out.parents = append(out.parents, s)
		arr = s.Field(fi)
	}
	if !arrow.TypeEqual(arr.DataType(), c.dt) {
		return nil, fmt.Errorf("%w: column %q is %s in the record, the filter was bound to %s", ErrEval, c.name, arr.DataType(), c.dt)
	}
	out.arr = arr
	return out, nil
}

// f64Key orders floats as Lance 12 compares them (checked against the
// peer): IEEE totalOrder (NaNs by sign and payload, -NaN below -Inf, NaN
// above +Inf) except that -0.0 equals +0.0.
func f64Key(v float64) uint64 {
	b := math.Float64bits(v)
	if b == 1<<63 {
		b = 0
	}
	return floatorder.Key64(b)
}

// comparer returns a function comparing row i of arr (not null) with v,
// -1, 0 or +1, in Arrow Rust order; float columns compare in Float64.
func comparer(arr arrow.Array, v any) (func(int) int, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		inner, err := comparer(d.Dictionary(), v)
		if err != nil {
			return nil, err
		}
		return func(i int) int { return inner(d.GetValueIndex(i)) }, nil
	}
	switch a := arr.(type) {
	case *array.Int64:
		x, ok := v.(int64)
		if !ok {
			break
		}
		vals := a.Int64Values()
		return func(i int) int { return cmp.Compare(vals[i], x) }, nil
	case *array.Int32:
		x, ok := v.(int32)
		if !ok {
			break
		}
		vals := a.Int32Values()
		return func(i int) int { return cmp.Compare(vals[i], x) }, nil
	case *array.Float64:
		x, ok := v.(float64)
		if !ok {
			break
		}
		k := f64Key(x)
		vals := a.Float64Values()
		return func(i int) int { return cmp.Compare(f64Key(vals[i]), k) }, nil
	case *array.Float32:
		x, ok := v.(float64)
		if !ok {
			break
		}
		k := f64Key(x)
		vals := a.Float32Values()
		return func(i int) int { return cmp.Compare(f64Key(float64(vals[i])), k) }, nil
	case *array.Float16:
		x, ok := v.(float64)
		if !ok {
			break
		}
		k := f64Key(x)
		return func(i int) int { return cmp.Compare(f64Key(floatorder.Float16ToFloat64(a.Value(i).Uint16())), k) }, nil
	case *array.String:
		x, ok := v.(string)
		if !ok {
			break
		}
		return func(i int) int { return strings.Compare(a.Value(i), x) }, nil
	case *array.LargeString:
		x, ok := v.(string)
		if !ok {
			break
		}
		return func(i int) int { return strings.Compare(a.Value(i), x) }, nil
	case *array.StringView:
		x, ok := v.(string)
		if !ok {
			break
		}
		return func(i int) int { return strings.Compare(a.Value(i), x) }, nil
	case *array.Binary:
		x, ok := v.([]byte)
		if !ok {
			break
		}
		return func(i int) int { return bytes.Compare(a.Value(i), x) }, nil
	default:
		if _, err := seedio.CompareValues(v, v); err != nil {
			return nil, err
		}
		var failed error
		return func(i int) int {
			got, err := seedio.ValueAt(arr, i)
			if err == nil && got != nil {
				c, err := seedio.CompareValues(got, v)
				if err == nil {
					return c
				}
			}
			if failed == nil {
				failed = err
			}
			return 0
		}, nil
	}
	return nil, fmt.Errorf("literal of Go type %T for %s", v, arr.DataType())
}

func nanFunc(arr arrow.Array) (func(int) bool, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		inner, err := nanFunc(d.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(i int) bool { return inner(d.GetValueIndex(i)) }, nil
	}
	switch a := arr.(type) {
	case *array.Float64:
		return func(i int) bool { return math.IsNaN(a.Value(i)) }, nil
	case *array.Float32:
		return func(i int) bool { return a.Value(i) != a.Value(i) }, nil
	case *array.Float16:
		return func(i int) bool { return a.Value(i).IsNaN() }, nil
	}
	return nil, fmt.Errorf("isnan() on %s", arr.DataType())
}

func boolFunc(arr arrow.Array) (func(int) bool, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		inner, err := boolFunc(d.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(i int) bool { return inner(d.GetValueIndex(i)) }, nil
	}
	if a, ok := arr.(*array.Boolean); ok {
		return a.Value, nil
	}
	return nil, fmt.Errorf("not a boolean column: %s", arr.DataType())
}

func stringFunc(arr arrow.Array) (func(int) string, error) {
	if d, ok := arr.(*array.Dictionary); ok {
		inner, err := stringFunc(d.Dictionary())
		if err != nil {
			return nil, err
		}
		return func(i int) string { return inner(d.GetValueIndex(i)) }, nil
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value, nil
	case *array.LargeString:
		return a.Value, nil
	case *array.StringView:
		return a.Value, nil
	}
	return nil, fmt.Errorf("not a string column: %s", arr.DataType())
}

// roundFloat returns the column-typed float nearest to v on the side that
// keeps every row of a comparison: the least value >= v when up, else the
// greatest value <= v.
func roundFloat(dt arrow.DataType, v float64, up bool) any {
	if dt.ID() == arrow.FLOAT16 {
		k := floatorder.Key16(floatorder.Float16FromFloat64(v))
		for i := 0; i < 4; i++ {
			got := floatorder.Float16ToFloat64(floatorder.FromKey16(k))
			if up && got < v {
				k++
			} else if !up && got > v {
				k--
			} else {
				break
			}
		}
		return float16.FromBits(floatorder.FromKey16(k))
	}
	f := float32(v)
	k := floatorder.Key32(math.Float32bits(f))
	for i := 0; i < 4; i++ {
		got := float64(math.Float32frombits(floatorder.FromKey32(k)))
		if up && got < v {
			k++
		} else if !up && got > v {
			k--
		} else {
			break
		}
	}
	return math.Float32frombits(floatorder.FromKey32(k))
}

// ---- LIKE ----

// likePrefix returns the literal prefix of a LIKE pattern (before the
// first wildcard) and whether the pattern has no wildcard at all.
func likePrefix(pat string) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '%', '_':
			return sb.String(), false
		case '\\':
			if i+1 < len(pat) {
				i++
				sb.WriteByte(pat[i])
				continue
			}
		}
		sb.WriteByte(c)
	}
	return sb.String(), true
}

type likeElem struct {
	lit string // literal run
	any bool   // %
	one bool   // _
}

type likeMatcher struct{ elems []likeElem }

func compileLike(pat string) *likeMatcher {
	m := &likeMatcher{}
	var sb strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			m.elems = append(m.elems, likeElem{lit: sb.String()})
			sb.Reset()
		}
	}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '%':
			flush()
			m.elems = append(m.elems, likeElem{any: true})
		case '_':
			flush()
			m.elems = append(m.elems, likeElem{one: true})
		case '\\':
			if i+1 < len(pat) {
				i++
				sb.WriteByte(pat[i])
			} else {
				sb.WriteByte(c)
			}
		default:
			sb.WriteByte(c)
		}
	}
	flush()
	return m
}

// match matches s (character-wise for _, as DataFusion does on UTF-8).
func (m *likeMatcher) match(s string) bool { return likeMatch(m.elems, s) }

// likeMatch is the classic wildcard match with backtracking to the last
// %: O(len(s) · len(el)) even for hostile patterns.
func likeMatch(el []likeElem, s string) bool {
	i, p := 0, 0 // position in s, in el
	starP, starI := -1, 0
	for i < len(s) || p < len(el) {
		if p < len(el) {
			e := el[p]
			switch {
			case e.any:
				starP, starI = p, i
				p++
				continue
			case e.one:
				if i < len(s) {
					_, size := decodeRune(s[i:])
					i += size
					p++
					continue
				}
			default:
				if strings.HasPrefix(s[i:], e.lit) {
					i += len(e.lit)
					p++
					continue
				}
			}
		}
		if starP < 0 || starI >= len(s) {
			return false
		}
		_, size := decodeRune(s[starI:])
		starI += size
		p, i = starP+1, starI
	}
	return true
}
