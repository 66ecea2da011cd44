package filter

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Date and time arithmetic as Lance 12 accepts it in a filter (measured
// through the peer; INTERVAL literals are not SQL Lance 12 takes):
//
//	timestamp - timestamp   → duration of the unit   (same zone, or UTC
//	                          with none; different units: both truncated
//	                          to the coarser unit first)
//	timestamp ± duration    → timestamp              (same unit, or a
//	                          coarser duration scaled to the timestamp's)
//	duration + timestamp    → timestamp
//	duration ± duration     → duration               (same unit)
//	date32 ± n, n + date32  → date32, n days         (n an integer constant)
//	date32 - date32         → Int64 days
//	date64 ± n, n + date64  → date64, n days (n × 86,400,000 ms)
//	date64 - date64         → Int64 days (the difference in ms / 86,400,000)
//
// A TIMESTAMP or DATE literal takes the column's type; a 'string' compared
// with a date or time expression is parsed as that type. Overflow of the
// 64-bit (dates: 32-bit) result fails the evaluation (ErrArithmetic).
// Timestamps of different units compare in the coarser unit (truncated).
// Other mixes (other zones, a duration finer than the timestamp, durations
// of different units, date32 with date64, Time32/64, arithmetic of a
// duration with a number, unary minus) are refused with a *TypeError.

func isTemporal(dt arrow.DataType) bool {
	if dt == nil {
		return false
	}
	switch dt.ID() {
	case arrow.TIMESTAMP, arrow.DATE32, arrow.DATE64, arrow.DURATION:
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
	case arrow.Date64:
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
	if lt.ID() == arrow.TIMESTAMP && rt.ID() == arrow.TIMESTAMP && op == '-' && !arrow.TypeEqual(lt, rt) {
		// different units: both to the coarser one (truncating)
		if nl, nr, ok := coarserTimestamps(l, r); ok {
			l, r, lt, rt = nl, nr, nl.typ(), nr.typ()
		}
	}
	if lt.ID() == arrow.TIMESTAMP && rt.ID() == arrow.DURATION && unit(rt) < unit(lt) {
		r = convertUnit(r, unit(lt)) // a coarser duration scales to the timestamp's unit
		rt = r.typ()
	}
	if lt.ID() == arrow.DURATION && rt.ID() == arrow.TIMESTAMP && unit(lt) < unit(rt) {
		l = convertUnit(l, unit(rt))
		lt = l.typ()
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
	case isDate(lt) && arrow.TypeEqual(lt, rt) && op == '-':
		return l, r, arrow.PrimitiveTypes.Int64, nil
	case isDate(lt) && isInt(rt) && constant(r):
		return l, r, lt, nil
	case isDate(rt) && isInt(lt) && constant(l) && op == '+':
		return l, r, rt, nil
	}
	return bad()
}

func isDate(t arrow.DataType) bool { return t.ID() == arrow.DATE32 || t.ID() == arrow.DATE64 }

// msPerDay is a day in Date64's milliseconds.
const msPerDay = 86400000

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
		if t.ID() == arrow.DATE64 { // n days are n × 86,400,000 ms
			if isInt(r.t) {
				if y > math.MaxInt64/msPerDay || y < math.MinInt64/msPerDay {
					return nil, fmt.Errorf("%w: overflow in %d days (%s)", ErrArithmetic, y, t)
				}
				y *= msPerDay
			} else if isInt(l.t) {
				if x > math.MaxInt64/msPerDay || x < math.MinInt64/msPerDay {
					return nil, fmt.Errorf("%w: overflow in %d days (%s)", ErrArithmetic, x, t)
				}
				x *= msPerDay
			}
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
		if isInt(t) && l.t != nil && l.t.ID() == arrow.DATE64 { // date64 - date64: days
			z /= msPerDay
		}
		out.i[k] = z
	}
	return out, nil
}

// aCast converts a timestamp or duration to another unit of the same
// kind: to a coarser unit by truncating division (as arrow-rs casts), to
// a finer one by multiplication (overflow fails).
type aCast struct {
	x        aexpr
	t        arrow.DataType
	div, mul int64
}

func (a *aCast) typ() arrow.DataType { return a.t }

// unitScale is the number of unit ticks in a second.
func unitScale(u arrow.TimeUnit) int64 {
	return [...]int64{1, 1e3, 1e6, 1e9}[u]
}

func tsUnit(t arrow.DataType) arrow.TimeUnit {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return t.Unit
	case *arrow.DurationType:
		return t.Unit
	}
	return arrow.Second
}

// withUnit returns t (a timestamp or duration type) in unit u.
func withUnit(t arrow.DataType, u arrow.TimeUnit) arrow.DataType {
	if ts, ok := t.(*arrow.TimestampType); ok {
		return &arrow.TimestampType{Unit: u, TimeZone: ts.TimeZone}
	}
	return &arrow.DurationType{Unit: u}
}

// convertUnit wraps a in an aCast to unit u (nil: no change needed).
func convertUnit(a aexpr, u arrow.TimeUnit) aexpr {
	from := tsUnit(a.typ())
	if from == u {
		return a
	}
	c := &aCast{x: a, t: withUnit(a.typ(), u)}
	if unitScale(from) > unitScale(u) {
		c.div = unitScale(from) / unitScale(u)
	} else {
		c.mul = unitScale(u) / unitScale(from)
	}
	return c
}

// utcLike reports whether a time zone names UTC.
func utcLike(tz string) bool { return tz == "UTC" || tz == "+00:00" || tz == "Z" || tz == "Etc/UTC" }

// sameInstantZones reports whether timestamps of zones a and b compare
// by their stored values: the same zone, or UTC with a zone-less one
// (arrow-rs reads a zone-less value as UTC local time when it casts).
func sameInstantZones(a, b arrow.DataType) bool {
	x, y := a.(*arrow.TimestampType).TimeZone, b.(*arrow.TimestampType).TimeZone
	return x == y || (x == "" && utcLike(y)) || (y == "" && utcLike(x))
}

// coarserTimestamps brings two timestamps of different units (zones
// compatible) to the coarser unit, as DataFusion coerces them.
func coarserTimestamps(l, r aexpr) (aexpr, aexpr, bool) {
	lt, rt := l.typ(), r.typ()
	if lt.ID() != arrow.TIMESTAMP || rt.ID() != arrow.TIMESTAMP || !sameInstantZones(lt, rt) {
		return l, r, false
	}
	u := min(tsUnit(lt), tsUnit(rt))
	l, r = convertUnit(l, u), convertUnit(r, u)
	if ltz := lt.(*arrow.TimestampType).TimeZone; ltz != "" {
		if c, ok := r.(*aCast); ok {
			c.t = &arrow.TimestampType{Unit: u, TimeZone: ltz}
		} else if !arrow.TypeEqual(r.typ(), withUnit(lt, u)) {
			r = &aCast{x: r, t: withUnit(lt, u), div: 1}
		}
	}
	if !arrow.TypeEqual(l.typ(), r.typ()) {
		l = &aCast{x: l, t: r.typ(), div: 1}
	}
	return l, r, true
}

func (f *Filter) evalCast(rec arrow.RecordBatch, a *aCast, rows int, live []bool) (*nvec, error) {
	x, err := f.evalArith(rec, a.x, rows, live)
	if err != nil {
		return nil, err
	}
	out := &nvec{t: a.t, null: x.null, i: make([]int64, rows)}
	for k, v := range x.i {
		if a.mul != 0 {
			z := v * a.mul
			if v != 0 && (z/a.mul != v) && !out.isNull(k) && (live == nil || live[k]) {
				return nil, fmt.Errorf("%w: overflow converting %d to %s", ErrArithmetic, v, a.t)
			}
			out.i[k] = z
			continue
		}
		out.i[k] = v / max(a.div, 1)
	}
	return out, nil
}
