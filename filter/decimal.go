package filter

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
)

// Decimal arithmetic as Lance 12 (DataFusion over arrow-rs) computes it,
// measured through the peer: a UInt64 mixed with a signed integer, and
// any integer mixed with a Decimal128, is computed in Decimal128; integers
// become Decimal128(3|5|10|20, 0) by width (UInt64 with a signed integer:
// both Decimal128(20, 0)); the result type of l op r, for l =
// Decimal128(p1, s1) and r = Decimal128(p2, s2), is
//
//	+ -  scale max(s1, s2),  precision max(p1-s1, p2-s2) + scale + 1
//	*    scale s1 + s2,      precision p1 + p2 + 1
//	/    scale s1 + 4,       precision p1 + (scale - s1 + s2)
//	%    scale max(s1, s2),  precision min(p1-s1, p2-s2) + scale
//
// with precision and scale capped at 38. Values are exact 128-bit
// integers: + - % rescale both sides to the result scale, / multiplies
// the dividend by 10^(scale-s1+s2) and truncates toward zero; an overflow
// of 128 bits or a zero divisor fails the evaluation (ErrArithmetic).
// Float arithmetic with a decimal is Float64. Comparisons involving a
// decimal compare the exact values (a float side: in Float64).

const maxDecDigits = 38

func decOf(p, s int32) arrow.DataType {
	return &arrow.Decimal128Type{Precision: min(p, maxDecDigits), Scale: min(s, maxDecDigits)}
}

func isDecimal(dt arrow.DataType) bool { return dt != nil && dt.ID() == arrow.DECIMAL128 }

// asDecimal is the Decimal128 an integer or decimal type coerces to.
func asDecimal(dt arrow.DataType) *arrow.Decimal128Type {
	if d, ok := dt.(*arrow.Decimal128Type); ok {
		return d
	}
	p := map[int]int32{8: 3, 16: 5, 32: 10, 64: 20}[intBits(dt)]
	return &arrow.Decimal128Type{Precision: p, Scale: 0}
}

// decArithType is the result type of l op r when decimals are involved
// (the operands are integers or Decimal128, at least one a decimal or a
// UInt64/signed mix).
func decArithType(op byte, a, b arrow.DataType) (arrow.DataType, error) {
	l, r := asDecimal(a), asDecimal(b)
	p1, s1, p2, s2 := l.Precision, l.Scale, r.Precision, r.Scale
	switch op {
	case '+', '-':
		s := max(s1, s2)
		return decOf(max(p1-s1, p2-s2)+s+1, s), nil
	case '*':
		if s1+s2 > maxDecDigits {
			return nil, fmt.Errorf("the product's scale %d exceeds %d", s1+s2, maxDecDigits)
		}
		return decOf(p1+p2+1, s1+s2), nil
	case '/':
		s := min(s1+4, maxDecDigits)
		return decOf(p1+(s-s1+s2), s), nil
	}
	s := max(s1, s2)
	return decOf(min(p1-s1, p2-s2)+s, s), nil
}

func pow10(k int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil) }

// i128 bounds a 128-bit signed integer.
type i128 struct{ lo, hi *big.Int }

func newI128() i128 {
	hi := new(big.Int).Lsh(big.NewInt(1), 127)
	lo := new(big.Int).Neg(hi)
	return i128{lo: lo, hi: hi.Sub(hi, big.NewInt(1))}
}

func (b i128) fits(x *big.Int) bool { return x.Cmp(b.lo) >= 0 && x.Cmp(b.hi) <= 0 }

// toDec converts v (integer or decimal) to unscaled values at scale s.
func (v *nvec) toDec(s int32, rows int) []*big.Int {
	out := make([]*big.Int, rows)
	var m *big.Int
	from := int32(0)
	if v.d != nil {
		from = v.scale
	}
	if s > from {
		m = pow10(s - from)
	}
	for k := range out {
		var x *big.Int
		switch {
		case v.d != nil:
			x = new(big.Int).Set(v.d[k])
		case v.i != nil:
			x = big.NewInt(v.i[k])
		default:
			x = new(big.Int).SetUint64(v.u[k])
		}
		if m != nil {
			x.Mul(x, m)
		}
		out[k] = x
	}
	return out
}

func decBinOp(op byte, t *arrow.Decimal128Type, l, r *nvec, rows int, live []bool) (*nvec, error) {
	out := &nvec{t: t, null: orNull(l.null, r.null), scale: t.Scale, d: make([]*big.Int, rows)}
	bound := newI128()
	ls, rs := int32(0), int32(0)
	if l.d != nil {
		ls = l.scale
	}
	if r.d != nil {
		rs = r.scale
	}
	var a, b []*big.Int
	switch op {
	case '*':
		a, b = l.toDec(ls, rows), r.toDec(rs, rows)
	case '/':
		mulPow := t.Scale - ls + rs
		a, b = l.toDec(ls+max(mulPow, 0), rows), r.toDec(rs+max(-mulPow, 0), rows)
	default:
		a, b = l.toDec(t.Scale, rows), r.toDec(t.Scale, rows)
	}
	for k := range out.d {
		z := new(big.Int)
		out.d[k] = z
		if out.isNull(k) || (live != nil && !live[k]) {
			continue
		}
		x, y := a[k], b[k]
		if !bound.fits(x) || !bound.fits(y) {
			return nil, fmt.Errorf("%w: overflow rescaling to %s", ErrArithmetic, t)
		}
		switch op {
		case '+':
			z.Add(x, y)
		case '-':
			z.Sub(x, y)
		case '*':
			z.Mul(x, y)
		default:
			if y.Sign() == 0 {
				return nil, fmt.Errorf("%w: divide by zero", ErrArithmetic)
			}
			if op == '/' {
				z.Quo(x, y)
			} else {
				z.Rem(x, y)
			}
		}
		if !bound.fits(z) {
			return nil, fmt.Errorf("%w: overflow in %s %c %s (%s)", ErrArithmetic, x, op, y, t)
		}
	}
	return out, nil
}

// decFloat converts an unscaled decimal to float64 as arrow-rs casts it.
func decFloat(x *big.Int, scale int32) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return f / math.Pow(10, float64(scale))
}
