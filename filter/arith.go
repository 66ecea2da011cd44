package filter

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/internal/floatorder"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// Arithmetic (+ - * / %, unary minus) and comparisons that are not
// "column op literal" (two columns, arithmetic on either side), with
// DataFusion's rules as Lance 12 applies them: the operands are coerced
// to a common numeric type (any Float64 → Float64, else Float32, else
// Float16; integers to the wider integer type); integer +, -, * and unary
// minus wrap at the type's width; integer division truncates and % takes
// the dividend's sign; integer division or remainder by zero (and MIN /
// -1) fails the evaluation; float arithmetic is IEEE (x/0 is ±Inf or
// NaN); a null operand makes the result null. Such comparisons are never
// used for pruning (unknown: every zone is kept).

// aexpr is a bound numeric expression.
type aexpr interface{ typ() arrow.DataType }

type (
	aCol struct {
		col *colRef
		t   arrow.DataType
	}
	aLit struct {
		null bool
		i    int64
		u    uint64
		f    float64
		t    arrow.DataType // Int64, UInt64, Float64, a date or time; nil for NULL until coerced
		src  *litNode       // a DATE/TIMESTAMP literal, retyped by the other side (temporal.go)
	}
	aBin struct {
		op       byte
		l, r     aexpr
		t        arrow.DataType
		temporal bool // a date or time operand (temporal.go)
	}
	aNeg struct {
		x aexpr
		t arrow.DataType
	}
)

func (a *aCol) typ() arrow.DataType { return a.t }
func (a *aLit) typ() arrow.DataType { return a.t }
func (a *aBin) typ() arrow.DataType { return a.t }
func (a *aNeg) typ() arrow.DataType { return a.t }

// bExprCmp compares two numeric expressions in type t.
type bExprCmp struct {
	op   cmpOp
	l, r aexpr
	t    arrow.DataType // nil: UInt64 against a signed integer, compared exactly
	// strict: no side is a constant, so floats compare in plain IEEE
	// totalOrder (-0.0 below +0.0, as Lance 12 compares two columns);
	// against a constant -0.0 equals +0.0 (as for "column op literal").
	strict bool
}

// constant reports whether the expression has no column.
func constant(a aexpr) bool {
	switch a := a.(type) {
	case *aCast:
		return constant(a.x)
	case *aLit:
		return true
	case *aBin:
		return constant(a.l) && constant(a.r)
	case *aNeg:
		return constant(a.x)
	}
	return false
}

// bColCmp compares two non-numeric columns of compatible types.
type bColCmp struct {
	op   cmpOp
	l, r *colRef
}

func isSignedInt(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isUnsignedInt(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func isNumeric(dt arrow.DataType) bool {
	return isSignedInt(dt) || isUnsignedInt(dt) || isFloat(dt) || isDecimal(dt)
}

func isInt(dt arrow.DataType) bool { return isSignedInt(dt) || isUnsignedInt(dt) }

// arithType is the type l op r is computed in: numCoerce's, or Decimal128
// (decimal.go) when a decimal is involved or a UInt64 meets a signed
// integer.
func arithType(op byte, a, b arrow.DataType) (arrow.DataType, error) {
	if a != nil && b != nil && !isFloat(a) && !isFloat(b) {
		if isDecimal(a) || isDecimal(b) {
			return decArithType(op, a, b)
		}
		if _, err := numCoerce(a, b); err != nil { // UInt64 with a signed integer: both Decimal128(20, 0)
			d20 := &arrow.Decimal128Type{Precision: 20, Scale: 0}
			return decArithType(op, d20, d20)
		}
	}
	return numCoerce(a, b)
}

func intBits(dt arrow.DataType) int { return dt.(arrow.FixedWidthDataType).BitWidth() }

var signedOfBits = map[int]arrow.DataType{8: arrow.PrimitiveTypes.Int8, 16: arrow.PrimitiveTypes.Int16, 32: arrow.PrimitiveTypes.Int32, 64: arrow.PrimitiveTypes.Int64}

// numCoerce is DataFusion's numeric coercion of two operand types (nil:
// an untyped NULL, which takes the other side's type).
func numCoerce(a, b arrow.DataType) (arrow.DataType, error) {
	switch {
	case a == nil && b == nil:
		return arrow.PrimitiveTypes.Int64, nil
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	}
	if (isDecimal(a) && isFloat(b)) || (isDecimal(b) && isFloat(a)) {
		return arrow.PrimitiveTypes.Float64, nil
	}
	for _, f := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Float16} {
		if a.ID() == f.ID() || b.ID() == f.ID() {
			return f, nil
		}
	}
	if isDecimal(a) || isDecimal(b) {
		return decArithType('+', a, b)
	}
	sa, sb := isSignedInt(a), isSignedInt(b)
	wa, wb := intBits(a), intBits(b)
	switch {
	case sa == sb:
		if wa >= wb {
			return a, nil
		}
		return b, nil
	case sa && wa > wb: // the signed side already holds every value
		return a, nil
	case sb && wb > wa:
		return b, nil
	}
	w := max(wa, wb) * 2
	if w > 64 {
		return nil, fmt.Errorf("mixing %s and %s is not supported (no common integer type)", a, b)
	}
	return signedOfBits[w], nil
}

func (b *binder) bindArith(n node) (aexpr, error) {
	switch n := n.(type) {
	case *refNode:
		c, err := b.resolve(n)
		if err != nil {
			return nil, err
		}
		if !isNumeric(c.vt) && !isTemporal(c.vt) {
			return nil, typeErr(n.off, c.name, "arithmetic needs a number, a timestamp, a date or a duration, not %s", c.dt)
		}
		return &aCol{col: c, t: c.vt}, nil
	case *litNode:
		if b.litCol != nil && n.kind != litNull {
			// inside IN (…) / BETWEEN of a column: Lance 12 gives every
			// literal the column's type first
			if err := lanceLit(n, b.litCol); err != nil {
				return nil, typeErr(n.off, "", "%v", err)
			}
			if a, ok := typedLit(n, b.litCol); ok {
				return a, nil
			}
		}
		switch n.kind {
		case litNull:
			return &aLit{null: true}, nil
		case litNumber:
			txt := strings.ReplaceAll(n.text, "_", "")
			if v, err := strconv.ParseInt(txt, 10, 64); err == nil {
				return &aLit{i: v, t: arrow.PrimitiveTypes.Int64}, nil
			}
			if v, err := strconv.ParseUint(strings.TrimPrefix(txt, "+"), 10, 64); err == nil {
				return &aLit{u: v, t: arrow.PrimitiveTypes.Uint64}, nil
			}
			f, err := parseFloatLit(n.text)
			if err != nil {
				return nil, typeErr(n.off, "", "%s is not a number", n.text)
			}
			return &aLit{f: f, t: arrow.PrimitiveTypes.Float64}, nil
		case litDate:
			return litAs(n, arrow.FixedWidthTypes.Date32)
		case litTimestamp:
			return litAs(n, &arrow.TimestampType{Unit: arrow.Nanosecond})
		}
		return nil, typeErr(n.off, "", "arithmetic needs numbers, not %s", showLit(n))
	case *arithNode:
		l, err := b.bindArith(n.l)
		if err != nil {
			return nil, err
		}
		r, err := b.bindArith(n.r)
		if err != nil {
			return nil, err
		}
		if isTemporal(l.typ()) || isTemporal(r.typ()) {
			l, r, t, err := tempArithType(n.op, n.off, l, r)
			if err != nil {
				return nil, err
			}
			return &aBin{op: n.op, l: l, r: r, t: t, temporal: true}, nil
		}
		t, err := arithType(n.op, l.typ(), r.typ())
		if err != nil {
			return nil, typeErr(n.off, "", "%c: %v", n.op, err)
		}
		return &aBin{op: n.op, l: l, r: r, t: t}, nil
	case *negNode:
		x, err := b.bindArith(n.x)
		if err != nil {
			return nil, err
		}
		t := x.typ()
		if t == nil {
			t = arrow.PrimitiveTypes.Int64
		}
		if isUnsignedInt(t) || isTemporal(t) {
			return nil, typeErr(n.off, "", "unary minus on %s is not supported", t)
		}
		return &aNeg{x: x, t: t}, nil
	case *callNode:
		return nil, typeErr(n.off, "", "%s() cannot be used in arithmetic", n.name)
	}
	return nil, typeErr(n.offset(), "", "a number is expected here")
}

func sameFamily(a, b arrow.DataType) bool {
	switch {
	case isString(a) && isString(b):
		return true
	case (a.ID() == arrow.BINARY || a.ID() == arrow.LARGE_BINARY || a.ID() == arrow.BINARY_VIEW) &&
		(b.ID() == arrow.BINARY || b.ID() == arrow.LARGE_BINARY || b.ID() == arrow.BINARY_VIEW):
		return true
	}
	return arrow.TypeEqual(a, b)
}

func (b *binder) bindExprCmp(n *exprCmpNode) (bnode, error) {
	op := cmpOps[n.op]
	lr, lok := n.l.(*refNode)
	rr, rok := n.r.(*refNode)
	if lok && rok {
		lc, err := b.resolve(lr)
		if err != nil {
			return nil, err
		}
		rc, err := b.resolve(rr)
		if err != nil {
			return nil, err
		}
		bothTS := lc.vt.ID() == arrow.TIMESTAMP && rc.vt.ID() == arrow.TIMESTAMP && !arrow.TypeEqual(lc.vt, rc.vt)
		if (!isNumeric(lc.vt) || !isNumeric(rc.vt)) && !bothTS {
			if err := comparable(lc); err != nil {
				return nil, err
			}
			if err := comparable(rc); err != nil {
				return nil, err
			}
			if !sameFamily(lc.vt, rc.vt) {
				return nil, typeErr(n.off, "", "cannot compare %s (%s) with %s (%s)", lc.name, lc.dt, rc.name, rc.dt)
			}
			return &bColCmp{op: op, l: lc, r: rc}, nil
		}
	}
	l, r, err := b.bindCmpSides(n.l, n.r)
	if err != nil {
		return nil, err
	}
	if l.typ() == nil || r.typ() == nil {
		return &bConst{v: tNull}, nil
	}
	if isTemporal(l.typ()) || isTemporal(r.typ()) {
		if l, err = retype(l, r.typ()); err != nil {
			return nil, err
		}
		if r, err = retype(r, l.typ()); err != nil {
			return nil, err
		}
		if !arrow.TypeEqual(l.typ(), r.typ()) {
			l, r, _ = coarserTimestamps(l, r)
		}
		if !arrow.TypeEqual(l.typ(), r.typ()) {
			return nil, typeErr(n.off, "", "cannot compare %s with %s", l.typ(), r.typ())
		}
		return &bExprCmp{op: op, l: l, r: r, t: l.typ()}, nil
	}
	strict := !constant(l) && !constant(r)
	t, err := numCoerce(l.typ(), r.typ())
	if err != nil || isDecimal(t) {
		// UInt64 against a signed integer, or a decimal against an
		// integer or decimal: Lance 12 compares the values exactly (in
		// Decimal128); so do we.
		return &bExprCmp{op: op, l: l, r: r, strict: strict}, nil
	}
	return &bExprCmp{op: op, l: l, r: r, t: t, strict: strict}, nil
}

// bExprIsNull is "x IS [NOT] NULL" for an arithmetic x.
type bExprIsNull struct {
	x   aexpr
	neg bool
}

// bindExprTest binds IN, BETWEEN and IS [NOT] NULL applied to arithmetic
// as DataFusion plans them: x IN (a, b) is x = a OR x = b, x BETWEEN lo
// AND hi is x >= lo AND x <= hi, NOT negates (SQL three-valued logic
// makes these exact, NULLs in the list included). LIKE and IS TRUE/FALSE
// on a number are refused, as Lance 12 refuses them.
func (b *binder) bindExprTest(n *exprTestNode) (bnode, error) {
	cmpWith := func(op string, l node) (bnode, error) {
		r, rok := n.x.(*refNode)
		lit, lok := l.(*litNode)
		if rok && lok { // col IN (col2, 'lit'): the literal binds to the column
			if lit.kind != litNull {
				c, err := b.resolve(r)
				if err != nil {
					return nil, err
				}
				if err := lanceLit(lit, c.vt); err != nil {
					return nil, typeErr(lit.off, c.name, "%v", err)
				}
			}
			return b.bind(&cmpNode{op: op, ref: r, lit: lit, off: lit.off})
		}
		if rok {
			c, err := b.resolve(r)
			if err != nil {
				return nil, err
			}
			b.litCol = c.vt
			defer func() { b.litCol = nil }()
		}
		return b.bindExprCmp(&exprCmpNode{op: op, l: n.x, r: l, off: l.offset()})
	}
	var out bnode
	switch n.kind {
	case testIn:
		for _, l := range n.items {
			c, err := cmpWith("=", l)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = c
			} else {
				out = &bLogic{and: false, l: out, r: c}
			}
		}
	case testBetween:
		lo, err := cmpWith(">=", n.items[0])
		if err != nil {
			return nil, err
		}
		hi, err := cmpWith("<=", n.items[1])
		if err != nil {
			return nil, err
		}
		out = &bLogic{and: true, l: lo, r: hi}
	case testNull:
		x, err := b.bindArith(n.x)
		if err != nil {
			return nil, err
		}
		return &bExprIsNull{x: x, neg: n.neg}, nil
	case testBool:
		return nil, typeErr(n.off, "", "IS TRUE/FALSE needs a boolean column, not an arithmetic expression")
	default:
		if _, err := b.bindArith(n.x); err != nil {
			return nil, err
		}
		return nil, typeErr(n.off, "", "LIKE needs a string column, not a number (Lance 12 refuses it too)")
	}
	if n.neg {
		return &bNot{x: out}, nil
	}
	return out, nil
}

// bindCmpSides binds the two sides of a comparison; a 'string', DATE or
// TIMESTAMP literal facing a date or time expression takes its type.
func (b *binder) bindCmpSides(ln, rn node) (aexpr, aexpr, error) {
	textLit := func(n node) *litNode {
		if l, ok := n.(*litNode); ok && (l.kind == litString || l.kind == litDate || l.kind == litTimestamp) {
			return l
		}
		return nil
	}
	if ll := textLit(ln); ll != nil {
		r, err := b.bindArith(rn)
		if err != nil {
			return nil, nil, err
		}
		if isTemporal(r.typ()) {
			l, err := litAs(ll, r.typ())
			return l, r, err
		}
		l, err := b.bindArith(ln)
		return l, r, err
	}
	l, err := b.bindArith(ln)
	if err != nil {
		return nil, nil, err
	}
	if rl := textLit(rn); rl != nil && isTemporal(l.typ()) {
		r, err := litAs(rl, l.typ())
		return l, r, err
	}
	r, err := b.bindArith(rn)
	return l, r, err
}

// lanceLit refuses a literal Lance 12 cannot give the type of the column
// an IN list or BETWEEN tests (its "could not convert to literal of type"):
// a 'string' for a date or timestamp (a DATE / TIMESTAMP literal is
// fine), a number for a date, time or duration, a non-integer number for
// an integer or decimal column, an integer out of the column's range.
func lanceLit(l *litNode, t arrow.DataType) error {
	bad := func() error {
		return fmt.Errorf("literal %s cannot take the type %s here (Lance 12 refuses it)", showLit(l), t)
	}
	switch {
	case t.ID() == arrow.DATE32 || t.ID() == arrow.DATE64:
		if l.kind != litDate {
			return bad()
		}
	case t.ID() == arrow.TIMESTAMP:
		if l.kind != litTimestamp && l.kind != litDate {
			return bad()
		}
	case t.ID() == arrow.DURATION || t.ID() == arrow.TIME32 || t.ID() == arrow.TIME64:
		return bad()
	case isInt(t) || isDecimal(t):
		if l.kind != litNumber {
			return bad()
		}
		txt := strings.TrimLeft(strings.ReplaceAll(l.text, "_", ""), "+-")
		if txt == "" || strings.Trim(txt, "0123456789") != "" {
			return bad()
		}
	}
	if isInt(t) || isFloat(t) || isString(t) {
		if _, err := bindLiteral(l, t); err != nil {
			return err
		}
	}
	return nil
}

// typedLit is a number literal typed as the integer column type t (Lance
// 12's coercion inside IN / BETWEEN of a column).
func typedLit(l *litNode, t arrow.DataType) (*aLit, bool) {
	if l.kind != litNumber || !isInt(t) {
		return nil, false
	}
	v, err := bindLiteral(l, t)
	if err != nil {
		return nil, false
	}
	out := &aLit{t: t}
	switch v := v.(type) {
	case int8:
		out.i = int64(v)
	case int16:
		out.i = int64(v)
	case int32:
		out.i = int64(v)
	case int64:
		out.i = v
	case uint8:
		out.u = uint64(v)
	case uint16:
		out.u = uint64(v)
	case uint32:
		out.u = uint64(v)
	case uint64:
		out.u = v
	case float64:
		out.f = roundTo(t, v)
	default:
		return nil, false
	}
	return out, true
}

// ---- evaluation ----

// nvec is a numeric vector: signed integers in i, unsigned in u, floats
// in f (Float32 and Float16 values exactly), null rows in null (nil: none).
type nvec struct {
	t     arrow.DataType
	i     []int64
	u     []uint64
	f     []float64
	d     []*big.Int // Decimal128 unscaled values, at scale
	scale int32
	null  []bool
}

func (v *nvec) isNull(k int) bool { return v.null != nil && v.null[k] }

func orNull(a, b []bool) []bool {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := make([]bool, len(a))
	for k := range a {
		out[k] = a[k] || b[k]
	}
	return out
}

func wrapSigned(x int64, bits int) int64 {
	s := 64 - bits
	return x << s >> s
}

func wrapUnsigned(x uint64, bits int) uint64 {
	if bits == 64 {
		return x
	}
	return x & (1<<bits - 1)
}

// roundTo rounds a float64 to the float type t (exactly representable
// afterwards in float64).
func roundTo(t arrow.DataType, x float64) float64 {
	switch t.ID() {
	case arrow.FLOAT32:
		return float64(float32(x))
	case arrow.FLOAT16:
		return floatorder.Float16ToFloat64(floatorder.Float16FromFloat64(x))
	}
	return x
}

// cast converts v to t (a type numCoerce chose: never narrower).
func (v *nvec) cast(t arrow.DataType, rows int) *nvec {
	if arrow.TypeEqual(v.t, t) {
		return v
	}
	out := &nvec{t: t, null: v.null}
	switch {
	case isFloat(t):
		out.f = make([]float64, rows)
		for k := range out.f {
			switch {
			case v.i != nil:
				out.f[k] = roundTo(t, float64(v.i[k]))
			case v.u != nil:
				out.f[k] = roundTo(t, float64(v.u[k]))
			case v.d != nil:
				out.f[k] = roundTo(t, decFloat(v.d[k], v.scale))
			default:
				out.f[k] = roundTo(t, v.f[k])
			}
		}
	case isSignedInt(t):
		out.i = make([]int64, rows)
		for k := range out.i {
			if v.i != nil {
				out.i[k] = v.i[k]
			} else {
				out.i[k] = int64(v.u[k])
			}
		}
	default:
		out.u = make([]uint64, rows)
		for k := range out.u {
			if v.u != nil {
				out.u[k] = v.u[k]
			} else {
				out.u[k] = wrapUnsigned(uint64(v.i[k]), intBits(t))
			}
		}
	}
	return out
}

func (f *Filter) evalArith(rec arrow.RecordBatch, a aexpr, rows int, live []bool) (*nvec, error) {
	switch a := a.(type) {
	case *aLit:
		out := &nvec{t: a.t}
		if a.null {
			out.t = arrow.PrimitiveTypes.Int64
			out.i = make([]int64, rows)
			out.null = make([]bool, rows)
			for k := range out.null {
				out.null[k] = true
			}
			return out, nil
		}
		switch {
		case isFloat(a.t):
			out.f = make([]float64, rows)
			for k := range out.f {
				out.f[k] = a.f
			}
		case usesI(a.t):
			out.i = make([]int64, rows)
			for k := range out.i {
				out.i[k] = a.i
			}
		default:
			out.u = make([]uint64, rows)
			for k := range out.u {
				out.u[k] = a.u
			}
		}
		return out, nil
	case *aCol:
		col, err := lookup(rec, a.col)
		if err != nil {
			return nil, err
		}
		return numColumn(col, a.t, rows)
	case *aCast:
		return f.evalCast(rec, a, rows, live)
	case *aNeg:
		x, err := f.evalArith(rec, a.x, rows, live)
		if err != nil {
			return nil, err
		}
		x = x.cast(a.t, rows)
		out := &nvec{t: a.t, null: x.null}
		if x.d != nil {
			out.d, out.scale = make([]*big.Int, rows), x.scale
			for k, v := range x.d {
				out.d[k] = new(big.Int).Neg(v)
			}
			return out, nil
		}
		if x.f != nil {
			out.f = make([]float64, rows)
			for k, v := range x.f {
				out.f[k] = math.Float64frombits(math.Float64bits(v) ^ 1<<63)
			}
			return out, nil
		}
		out.i = make([]int64, rows)
		bits := intBits(a.t)
		for k, v := range x.i {
			out.i[k] = wrapSigned(-v, bits)
		}
		return out, nil
	case *aBin:
		l, err := f.evalArith(rec, a.l, rows, live)
		if err != nil {
			return nil, err
		}
		r, err := f.evalArith(rec, a.r, rows, live)
		if err != nil {
			return nil, err
		}
		if a.temporal {
			return tempBinOp(a.op, a.t, l, r, rows, live)
		}
		if d, ok := a.t.(*arrow.Decimal128Type); ok {
			return decBinOp(a.op, d, l, r, rows, live)
		}
		l, r = l.cast(a.t, rows), r.cast(a.t, rows)
		return binOp(a.op, a.t, l, r, rows, live)
	}
	return nil, fmt.Errorf("%w: unknown arithmetic node %T", ErrEval, a)
}

func binOp(op byte, t arrow.DataType, l, r *nvec, rows int, live []bool) (*nvec, error) {
	out := &nvec{t: t, null: orNull(l.null, r.null)}
	switch {
	case isFloat(t):
		out.f = make([]float64, rows)
		for k := range out.f {
			x, y := l.f[k], r.f[k]
			var z float64
			switch op {
			case '+':
				z = x + y
			case '-':
				z = x - y
			case '*':
				z = x * y
			case '/':
				z = x / y
			default:
				z = fmod(x, y)
			}
			out.f[k] = roundTo(t, z)
		}
	case isSignedInt(t):
		bits := intBits(t)
		minV := int64(-1) << (bits - 1)
		out.i = make([]int64, rows)
		for k := range out.i {
			x, y := l.i[k], r.i[k]
			var z int64
			switch op {
			case '+':
				z = x + y
			case '-':
				z = x - y
			case '*':
				z = x * y
			default:
				if out.isNull(k) || (live != nil && !live[k]) {
					continue
				}
				if y == 0 {
					return nil, fmt.Errorf("%w: divide by zero", ErrArithmetic)
				}
				if x == minV && y == -1 {
					return nil, fmt.Errorf("%w: overflow in %d %c %d (%s)", ErrArithmetic, x, op, y, t)
				}
				if op == '/' {
					z = x / y
				} else {
					z = x % y
				}
			}
			out.i[k] = wrapSigned(z, bits)
		}
	default:
		bits := intBits(t)
		out.u = make([]uint64, rows)
		for k := range out.u {
			x, y := l.u[k], r.u[k]
			var z uint64
			switch op {
			case '+':
				z = x + y
			case '-':
				z = x - y
			case '*':
				z = x * y
			default:
				if out.isNull(k) || (live != nil && !live[k]) {
					continue
				}
				if y == 0 {
					return nil, fmt.Errorf("%w: divide by zero", ErrArithmetic)
				}
				if op == '/' {
					z = x / y
				} else {
					z = x % y
				}
			}
			out.u[k] = wrapUnsigned(z, bits)
		}
	}
	return out, nil
}

// fmod is the C library's fmod as Lance 12 computes float % (measured
// through the peer): a NaN operand propagates (the dividend's first), and
// an infinite dividend or a zero divisor gives the default NaN of the
// hardware, negative (so it sorts below -Inf), not Go's positive NaN.
func fmod(x, y float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case math.IsNaN(y):
		return y
	case math.IsInf(x, 0) || y == 0:
		return math.Float64frombits(0xfff8000000000000)
	}
	return math.Mod(x, y)
}

// numColumn reads a numeric column (through a dictionary) as an nvec.
func numColumn(col *column, t arrow.DataType, rows int) (*nvec, error) {
	out := &nvec{t: t}
	if !col.noNulls() {
		out.null = make([]bool, rows)
		for k := range out.null {
			out.null[k] = col.null(k)
		}
	}
	arr, idx := col.arr, func(k int) int { return k }
	if d, ok := arr.(*array.Dictionary); ok {
		arr, idx = d.Dictionary(), func(k int) int {
			if d.IsNull(k) {
				return -1
			}
			return d.GetValueIndex(k)
		}
	}
	switch {
	case isDecimal(t):
		out.d, out.scale = make([]*big.Int, rows), t.(*arrow.Decimal128Type).Scale
		for k := range out.d {
			out.d[k] = new(big.Int)
		}
	case isFloat(t):
		out.f = make([]float64, rows)
	case usesI(t):
		out.i = make([]int64, rows)
	default:
		out.u = make([]uint64, rows)
	}
	for k := 0; k < rows; k++ {
		j := idx(k)
		if j < 0 || out.isNull(k) {
			continue
		}
		switch a := arr.(type) {
		case *array.Int8:
			out.i[k] = int64(a.Value(j))
		case *array.Int16:
			out.i[k] = int64(a.Value(j))
		case *array.Int32:
			out.i[k] = int64(a.Value(j))
		case *array.Int64:
			out.i[k] = a.Value(j)
		case *array.Uint8:
			out.u[k] = uint64(a.Value(j))
		case *array.Uint16:
			out.u[k] = uint64(a.Value(j))
		case *array.Uint32:
			out.u[k] = uint64(a.Value(j))
		case *array.Uint64:
			out.u[k] = a.Value(j)
		case *array.Float16:
			out.f[k] = floatorder.Float16ToFloat64(a.Value(j).Uint16())
		case *array.Float32:
			out.f[k] = float64(a.Value(j))
		case *array.Float64:
			out.f[k] = a.Value(j)
		case *array.Decimal128:
			v := a.Value(j)
			out.d[k] = v.BigInt()
		case *array.Timestamp:
			out.i[k] = int64(a.Value(j))
		case *array.Date32:
			out.i[k] = int64(a.Value(j))
		case *array.Date64:
			out.i[k] = int64(a.Value(j))
		case *array.Duration:
			out.i[k] = int64(a.Value(j))
		default:
			return nil, fmt.Errorf("%w: column %q: %s is not numeric", ErrEval, col.arr.DataType(), arr.DataType())
		}
	}
	return out, nil
}

func (f *Filter) evalExprCmp(rec arrow.RecordBatch, n *bExprCmp, rows int, live []bool) ([]uint8, error) {
	l, err := f.evalArith(rec, n.l, rows, live)
	if err != nil {
		return nil, err
	}
	r, err := f.evalArith(rec, n.r, rows, live)
	if err != nil {
		return nil, err
	}
	if n.t != nil {
		l, r = l.cast(n.t, rows), r.cast(n.t, rows)
	}
	key := f64Key
	if n.strict {
		key = func(v float64) uint64 { return floatorder.Key64(math.Float64bits(v)) }
	}
	out := make([]uint8, rows)
	for k := range out {
		if l.isNull(k) || r.isNull(k) {
			out[k] = tNull
			continue
		}
		var c int
		switch {
		case n.t == nil:
			c = cmpExact(l, r, k)
		case l.f != nil:
			c = cmp.Compare(key(l.f[k]), key(r.f[k]))
		case l.i != nil:
			c = cmp.Compare(l.i[k], r.i[k])
		default:
			c = cmp.Compare(l.u[k], r.u[k])
		}
		out[k] = triOf(n.op.holds(c))
	}
	return out, nil
}

// cmpExact compares row k of two integer or decimal vectors exactly.
func cmpExact(l, r *nvec, k int) int {
	if l.d != nil || r.d != nil {
		s := max(l.scale, r.scale)
		x, y := l.row(k).toDec(s, 1)[0], r.row(k).toDec(s, 1)[0]
		return x.Cmp(y)
	}
	return cmpMixed(l, r, k)
}

// row is row k of v alone.
func (v *nvec) row(k int) *nvec {
	out := &nvec{t: v.t, scale: v.scale}
	switch {
	case v.d != nil:
		out.d = v.d[k : k+1]
	case v.i != nil:
		out.i = v.i[k : k+1]
	case v.u != nil:
		out.u = v.u[k : k+1]
	default:
		out.f = v.f[k : k+1]
	}
	return out
}

// cmpMixed compares row k of a signed and an unsigned integer vector
// exactly.
func cmpMixed(l, r *nvec, k int) int {
	if l.i != nil && r.i != nil {
		return cmp.Compare(l.i[k], r.i[k])
	}
	if l.u != nil && r.u != nil {
		return cmp.Compare(l.u[k], r.u[k])
	}
	if l.i != nil {
		if x := l.i[k]; x < 0 {
			return -1
		} else {
			return cmp.Compare(uint64(x), r.u[k])
		}
	}
	if y := r.i[k]; y < 0 {
		return 1
	} else {
		return cmp.Compare(l.u[k], uint64(y))
	}
}

func (f *Filter) evalColCmp(rec arrow.RecordBatch, n *bColCmp, rows int) ([]uint8, error) {
	lc, err := lookup(rec, n.l)
	if err != nil {
		return nil, err
	}
	rc, err := lookup(rec, n.r)
	if err != nil {
		return nil, err
	}
	out := make([]uint8, rows)
	for k := range out {
		if lc.null(k) || rc.null(k) {
			out[k] = tNull
			continue
		}
		a, err := seedio.ValueAt(lc.arr, k)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, n.l.name, err)
		}
		b, err := seedio.ValueAt(rc.arr, k)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrEval, n.r.name, err)
		}
		c, err := seedio.CompareValues(a, b)
		if err != nil {
			return nil, fmt.Errorf("%w: %s vs %s: %v", ErrEval, n.l.name, n.r.name, err)
		}
		out[k] = triOf(n.op.holds(c))
	}
	return out, nil
}

// MayFail reports whether evaluating the filter can fail on some rows
// (ErrArithmetic): it holds an integer division or remainder whose
// divisor is not a literal other than 0 and -1. Lance 12 evaluates such a
// predicate on every row of every batch its short-circuits do not skip,
// so a scan must not prune zones by seeds or indices for it (a zone
// skipped could be the one that fails the query).
func (f *Filter) MayFail() bool { return mayFail(f.root) }

func mayFail(n bnode) bool {
	switch n := n.(type) {
	case *bLogic:
		return mayFail(n.l) || mayFail(n.r)
	case *bNot:
		return mayFail(n.x)
	case *bExprCmp:
		return arithMayFail(n.l) || arithMayFail(n.r)
	case *bExprIsNull:
		return arithMayFail(n.x)
	}
	return false
}

func arithMayFail(a aexpr) bool {
	switch a := a.(type) {
	case *aCast:
		return a.mul != 0 || arithMayFail(a.x)
	case *aNeg:
		return arithMayFail(a.x)
	case *aBin:
		if arithMayFail(a.l) || arithMayFail(a.r) {
			return true
		}
		if a.temporal {
			return !isInt(a.t) // 64-bit (dates: 32-bit) overflow fails; date - date cannot
		}
		if isFloat(a.t) {
			return false
		}
		if isDecimal(a.t) && decMayOverflow(a.op, a.l.typ(), a.r.typ()) {
			return true
		}
		if a.op != '/' && a.op != '%' {
			return false // integers wrap
		}
		lit, ok := a.r.(*aLit)
		if !ok || lit.null {
			return !ok
		}
		if isUnsignedInt(lit.t) {
			return lit.u == 0
		}
		return lit.i == 0 || (lit.i == -1 && !isDecimal(a.t))
	}
	return false
}

// decMayOverflow reports whether l op r in Decimal128 can exceed 128 bits
// for operands within their precision: when the exact result (or, for /,
// the rescaled dividend) may need more than 38 digits.
func decMayOverflow(op byte, a, b arrow.DataType) bool {
	if a == nil || b == nil {
		return false
	}
	l, r := asDecimal(a), asDecimal(b)
	p1, s1, p2, s2 := l.Precision, l.Scale, r.Precision, r.Scale
	var p int32
	switch op {
	case '+', '-':
		p = max(p1-s1, p2-s2) + max(s1, s2) + 1
	case '*':
		p = p1 + p2 + 1
	case '/':
		s := min(s1+4, maxDecDigits)
		p = p1 + max(s-s1+s2, 0)
	default:
		p = max(p1-s1, p2-s2) + max(s1, s2)
	}
	return p > maxDecDigits
}
