package filter

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and time arithmetic as Lance 12 accepts it in a filter (measured
// through the peer; INTERVAL literals are not SQL Lance 12 takes):
//
//	timestamp - timestamp   → duration of the unit   (same unit and zone)
//	timestamp ± duration    → timestamp              (same unit)
//	duration + timestamp    → timestamp
//	duration ± duration     → duration               (same unit)
//	date32 ± n, n + date32  → date32, n days         (n an integer constant)
//	date32 - date32         → Int64 days
//
// A TIMESTAMP or DATE literal takes the column's type; a 'string' compared
// with a date or time expression is parsed as that type. Overflow of the
// 64-bit (dates: 32-bit) result fails the evaluation (ErrArithmetic).
// Other mixes (different units or zones, Date64, Time32/64, arithmetic of
// a duration with a number, unary minus) are refused with a *TypeError.

func isTemporal(dt arrow.DataType) bool {
	if dt == nil {
		return false
	}
	switch dt.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DURATION:
		return true
	}
	return false
}

// usesI reports whether an nvec of type t holds its values in i.
func usesI(t arrow.DataType) bool { return isSignedInt(t) || isTemporal(t) }

// retype gives a TIMESTAMP/DATE literal the type t of the other side.
func retype(a aexpr, t arrow.DataType) (aexpr, error) {
	lit, ok := a.(*aLit)
	if !ok || lit.src == nil || arrow.TypeEqual(lit.t, t) {
		return a, nil
	}
	return litAs(lit.src, t)
}

// litAs binds a literal to the date/time type t as an aLit.
func litAs(l *litNode, t arrow.DataType) (*aLit, error) {
	v, err := bindLiteral(l, t)
	if err != nil {
		return nil, typeErr(l.off, "", "%v", err)
	}
	out := &aLit{t: t, src: l}
	switch v := v.(type) {
	case arrow.Timestamp:
		out.i = int64(v)
	case arrow.Date32:
		out.i = int64(v)
	case arrow.Duration:
		out.i = int64(v)
	default:
		return nil, typeErr(l.off, "", "literal %s does not fit %s", showLit(l), t)
	}
	return out, nil
}

// tempArithType types l op r when a side is a date or time.
func tempArithType(op byte, off int, l, r aexpr) (aexpr, aexpr, arrow.DataType, error) {
	lt, rt := l.typ(), r.typ()
	bad := func() (aexpr, aexpr, arrow.DataType, error) {
		return nil, nil, nil, typeErr(off, "", "%s %c %s is not supported", showType(lt), op, showType(rt))
	}
	if op != '+' && op != '-' {
		return bad()
	}
	// a TIMESTAMP/DATE literal takes the column side's type
	if lit, ok := l.(*aLit); ok && lit.src != nil && isTemporal(rt) && rt.ID() == lit.t.ID() {
		nl, err := retype(l, rt)
		if err != nil {
			return nil, nil, nil, err
		}
		l, lt = nl, rt
	}
	if lit, ok := r.(*aLit); ok && lit.src != nil && isTemporal(lt) && lt.ID() == lit.t.ID() {
		nr, err := retype(r, lt)
		if err != nil {
			return nil, nil, nil, err
		}
		r, rt = nr, lt
	}
	if lt == nil || rt == nil {
		t := lt
		if t == nil {
			t = rt
		}
		return l, r, t, nil // NULL
	}
	unit := func(t arrow.DataType) arrow.TimeUnit {
		switch t := t.(type) {
		case *arrow.TimestampType:
			return t.Unit
		case *arrow.DurationType:
			return t.Unit
		}
		return -1
	}
	switch {
	case lt.ID() == arrow.TIMESTAMP && rt.ID() == arrow.TIMESTAMP && op == '-' && arrow.TypeEqual(lt, rt):
		return l, r, &arrow.DurationType{Unit: unit(lt)}, nil
	case lt.ID() == arrow.TIMESTAMP && rt.ID() == arrow.DURATION && unit(lt) == unit(rt):
		return l, r, lt, nil
	case lt.ID() == arrow.DURATION && rt.ID() == arrow.TIMESTAMP && op == '+' && unit(lt) == unit(rt):
		return l, r, rt, nil
	case lt.ID() == arrow.DURATION && rt.ID() == arrow.DURATION && unit(lt) == unit(rt):
		return l, r, lt, nil
	case lt.ID() == arrow.DATE32 && rt.ID() == arrow.DATE32 && op == '-':
		return l, r, arrow.PrimitiveTypes.Int64, nil
	case lt.ID() == arrow.DATE32 && isInt(rt) && constant(r):
		return l, r, lt, nil
	case rt.ID() == arrow.DATE32 && isInt(lt) && constant(l) && op == '+':
		return l, r, rt, nil
	}
	return bad()
}

func showType(t arrow.DataType) string {
	if t == nil {
		return "NULL"
	}
	return t.String()
}

// tempBinOp computes l op r typed by tempArithType.
func tempBinOp(op byte, t arrow.DataType, l, r *nvec, rows int, live []bool) (*nvec, error) {
	out := &nvec{t: t, null: orNull(l.null, r.null), i: make([]int64, rows)}
	val := func(v *nvec, k int) int64 {
		if v.i != nil {
			return v.i[k]
		}
		if v.u != nil {
			return int64(v.u[k]) // a UInt64 constant above 2^63 overflows below
		}
		return 0
	}
	for k := range out.i {
		if out.isNull(k) || (live != nil && !live[k]) {
			continue
		}
		x, y := val(l, k), val(r, k)
		if r.u != nil && r.u[k] > math.MaxInt64 || l.u != nil && l.u[k] > math.MaxInt64 {
			return nil, fmt.Errorf("%w: overflow in %s", ErrArithmetic, t)
		}
		var z int64
		if op == '+' {
			z = x + y
			if (y > 0 && z < x) || (y < 0 && z > x) {
				return nil, fmt.Errorf("%w: overflow in %d + %d (%s)", ErrArithmetic, x, y, t)
			}
		} else {
			z = x - y
			if (y > 0 && z > x) || (y < 0 && z < x) {
				return nil, fmt.Errorf("%w: overflow in %d - %d (%s)", ErrArithmetic, x, y, t)
			}
		}
		if t.ID() == arrow.DATE32 && (z < math.MinInt32 || z > math.MaxInt32) {
			return nil, fmt.Errorf("%w: date out of range (%d days)", ErrArithmetic, z)
		}
		out.i[k] = z
	}
	return out, nil
}
