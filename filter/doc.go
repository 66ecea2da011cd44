// Package filter is the predicate language of scans, deletes and seed
// previews: Lance/DataFusion-style SQL predicates (=, !=, <>, <, <=, >,
// >=, AND, OR, NOT, parentheses, IN, NOT IN, BETWEEN, IS [NOT] NULL,
// IS [NOT] TRUE/FALSE, isnan(col), LIKE, typed literals, nested field
// references a.b, quoted names), arithmetic (+ - * / %, unary minus) and
// column-to-column comparisons with DataFusion's coercion and Lance 12's
// results (arith.go; Decimal128 and UInt64/signed mixes in decimal.go,
// dates and times in temporal.go), IN / BETWEEN / IS NULL on arithmetic.
//
// Whether a query fails (a division by zero, an overflow) follows Lance
// 12 too: EvalLive evaluates one of Lance's batches with DataFusion's
// AND/OR short-circuits, MayFail tells a scan that it must not skip zones
// by seeds, and KeepRangesAsLance12Index prunes only where Lance 12's
// index use does.
//
// Parse turns text into an Expr (errors: *SyntaxError with the offset and
// the token); Bind checks it against an Arrow schema (errors: *TypeError
// with the offset: a missing column, a literal that does not fit, an
// unknown function). The resulting Filter
//
//   - evaluates exactly on record batches (Eval), with SQL three-valued
//     logic and Lance 12's semantics (checked value by value against the
//     peer): floats compare after coercion to Float64 in IEEE totalOrder
//     (NaN above +Inf, -NaN below -Inf, NaN payloads ordered) except that
//     -0.0 equals +0.0; strings and binaries bytewise;
//   - converts to seedio pruning terms (Terms), combined inexactly over
//     row ranges (KeepRanges): AND intersects, OR unites, NOT is pushed
//     into the terms; what a term cannot decide keeps the rows (R65).
//
// The package sits at layer 3: it imports seedio and arrow only, never
// datafile.
package filter
