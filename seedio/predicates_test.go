package seedio

// Predicate constructors for the tests (callers build Predicate{Op, Values}
// directly).

// Eq returns x = v.
func Eq(v any) Predicate { return Predicate{Op: OpEq, Values: []any{v}} }

// Lt returns x < v.
func Lt(v any) Predicate { return Predicate{Op: OpLt, Values: []any{v}} }

// Le returns x <= v.
func Le(v any) Predicate { return Predicate{Op: OpLe, Values: []any{v}} }

// Gt returns x > v.
func Gt(v any) Predicate { return Predicate{Op: OpGt, Values: []any{v}} }

// Ge returns x >= v.
func Ge(v any) Predicate { return Predicate{Op: OpGe, Values: []any{v}} }

// Between returns x BETWEEN lo AND hi.
func Between(lo, hi any) Predicate { return Predicate{Op: OpBetween, Values: []any{lo, hi}} }

// In returns x IN (vs...).
func In(vs ...any) Predicate { return Predicate{Op: OpIn, Values: vs} }

// IsNull returns x IS NULL.
func IsNull() Predicate { return Predicate{Op: OpIsNull} }

// IsNotNull returns x IS NOT NULL.
func IsNotNull() Predicate { return Predicate{Op: OpIsNotNull} }

// IsNaN returns isnan(x).
func IsNaN() Predicate { return Predicate{Op: OpIsNaN} }

// NotIsNaN returns NOT isnan(x).
func NotIsNaN() Predicate { return Predicate{Op: OpNotIsNaN} }
