package filter

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// Filter is a predicate checked against a schema: it evaluates exactly on
// record batches of that schema (Eval) and converts to seedio pruning
// terms combined inexactly (Terms, KeepRanges).
type Filter struct {
	text  string
	root  bnode
	prune pnode
	terms []Term
	cols  []string // top-level columns referenced, in first-use order
}

// Column is a resolved column reference.
type colRef struct {
	path []string
	name string         // dotted
	dt   arrow.DataType // the referenced field's type
	vt   arrow.DataType // valueType(dt)
	off  int
}

type cmpOp int

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

var cmpOps = map[string]cmpOp{"=": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func (o cmpOp) holds(c int) bool {
	switch o {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

func (o cmpOp) negate() cmpOp {
	return [...]cmpOp{opNe, opEq, opGe, opGt, opLe, opLt}[o]
}

// bound expression nodes (exact evaluation)
type bnode interface{}

type (
	bCmp struct {
		col *colRef
		op  cmpOp
		v   any // nil: NULL literal
	}
	bIn struct {
		col     *colRef
		vals    []any
		hasNull bool
		neg     bool
	}
	bBetween struct {
		col    *colRef
		lo, hi any // nil: NULL
		neg    bool
	}
	bIsNull struct {
		col *colRef
		neg bool
	}
	bIsBool struct {
		col      *colRef
		val, neg bool
	}
	bIsNaN struct{ col *colRef }
	bLike  struct {
		col *colRef
		pat string
		neg bool
	}
	bBoolCol struct{ col *colRef }
	bConst   struct{ v uint8 }
	bLogic   struct {
		and  bool
		l, r bnode
	}
	bNot struct{ x bnode }
)

// prune tree nodes (negation normal form)
type pnode interface{}

type (
	pTerm struct{ i int }
	pAll  struct{} // unknown: keep everything
	pNone struct{} // never true: keep nothing
	// pPartial is x AND something no term decides: x prunes, but Lance
	// 12 would not use an index for an OR holding it.
	pPartial struct{ x pnode }
	pLogic   struct {
		and  bool
		l, r pnode
	}
)

// Term is one single-column predicate the filter's pruning uses.
type Term struct {
	// Column is the referenced column, dotted for nested fields.
	Column string
	// Type is the column's Arrow type.
	Type arrow.DataType
	// Pred is the predicate in seedio's terms; its literals have the Go
	// type seedio.ValueAt returns for Type's value type.
	Pred seedio.Predicate
	// Text describes the term in plans, e.g. "x >= 5".
	Text string
}

// Compile parses s and binds it to schema.
func Compile(s string, schema *arrow.Schema) (*Filter, error) {
	e, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return e.Bind(schema)
}

// Bind checks the expression against schema: every column must exist
// (nested fields through structs, a.b), literals must fit the column's
// type, functions must be known. Errors are *TypeError with the offset.
func (e *Expr) Bind(schema *arrow.Schema) (*Filter, error) {
	b := &binder{schema: schema, f: &Filter{text: e.text}}
	root, err := b.bind(e.root)
	if err != nil {
		return nil, err
	}
	b.f.root = root
	b.f.prune, err = b.toPrune(e.root, false)
	if err != nil {
		return nil, err
	}
	return b.f, nil
}

// String returns the predicate text.
func (f *Filter) String() string { return f.text }

// Columns returns the top-level columns the filter reads.
func (f *Filter) Columns() []string { return append([]string(nil), f.cols...) }

// Terms returns the pruning terms; KeepRanges refers to them by index.
func (f *Filter) Terms() []Term { return append([]Term(nil), f.terms...) }

type binder struct {
	schema *arrow.Schema
	f      *Filter
	refs   map[*refNode]*colRef
	litCol arrow.DataType // set: literals take this column type (IN / BETWEEN items)
}

func typeErr(off int, col, format string, args ...any) error {
	return &TypeError{Offset: off, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (b *binder) resolve(r *refNode) (*colRef, error) {
	if c, ok := b.refs[r]; ok {
		return c, nil
	}
	fields := b.schema.Fields()
	var dt arrow.DataType
	path := make([]string, 0, len(r.path))
	for depth, name := range r.path {
		idx := -1
		for i, f := range fields {
			if f.Name == name {
				idx = i
				break
			}
		}
		if idx < 0 { // unquoted names: a unique case-insensitive match
			for i, f := range fields {
				if strings.EqualFold(f.Name, name) {
					if idx >= 0 {
						idx = -2
						break
					}
					idx = i
				}
			}
		}
		if idx < 0 {
			if depth == 0 {
				return nil, typeErr(r.off, r.name(), "no such column")
			}
			return nil, typeErr(r.off, r.name(), "%s has no field %q", strings.Join(path, "."), name)
		}
		f := fields[idx]
		path = append(path, f.Name)
		dt = f.Type
		if depth < len(r.path)-1 {
			st, ok := dt.(*arrow.StructType)
			if !ok {
				return nil, typeErr(r.off, r.name(), "%s is %s, not a struct", strings.Join(path, "."), dt)
			}
			fields = st.Fields()
		}
	}
	c := &colRef{path: path, name: strings.Join(path, "."), dt: dt, vt: valueType(dt), off: r.off}
	if b.refs == nil {
		b.refs = map[*refNode]*colRef{}
	}
	b.refs[r] = c
	found := false
	for _, n := range b.f.cols {
		found = found || n == path[0]
	}
	if !found {
		b.f.cols = append(b.f.cols, path[0])
	}
	return c, nil
}

func (b *binder) lit(c *colRef, l *litNode) (any, error) {
	if l.kind == litNull {
		return nil, nil
	}
	v, err := bindLiteral(l, c.vt)
	if err != nil {
		return nil, typeErr(l.off, c.name, "%v", err)
	}
	return v, nil
}

func comparable(c *colRef) error {
	if !seedio.SupportsBounds(c.vt) {
		return typeErr(c.off, c.name, "columns of type %s cannot be compared", c.dt)
	}
	return nil
}

func isFloat(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false
}

func isString(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

func (b *binder) bind(n node) (bnode, error) {
	switch n := n.(type) {
	case *logicNode:
		l, err := b.bind(n.l)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(n.r)
		if err != nil {
			return nil, err
		}
		return &bLogic{and: n.and, l: l, r: r}, nil
	case *notNode:
		x, err := b.bind(n.x)
		if err != nil {
			return nil, err
		}
		return &bNot{x: x}, nil
	case *constNode:
		switch {
		case n.lit.kind == litNull:
			return &bConst{v: tNull}, nil
		case n.lit.text == "true":
			return &bConst{v: tTrue}, nil
		}
		return &bConst{v: tFalse}, nil
	case *refNode:
		c, err := b.resolve(n)
		if err != nil {
			return nil, err
		}
		if c.vt.ID() != arrow.BOOL {
			return nil, typeErr(n.off, c.name, "%s is not a boolean predicate (compare it with a literal)", c.dt)
		}
		return &bBoolCol{col: c}, nil
	case *callNode:
		if n.name != "isnan" {
			return nil, typeErr(n.off, "", "unknown function %s()", n.name)
		}
		if len(n.args) != 1 {
			return nil, typeErr(n.off, "", "isnan() takes one column, got %d arguments", len(n.args))
		}
		r, ok := n.args[0].(*refNode)
		if !ok {
			return nil, typeErr(n.args[0].offset(), "", "isnan() takes a column")
		}
		c, err := b.resolve(r)
		if err != nil {
			return nil, err
		}
		if !isFloat(c.vt) {
			return nil, typeErr(r.off, c.name, "isnan() needs a float column, not %s", c.dt)
		}
		return &bIsNaN{col: c}, nil
	case *cmpNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		if err := comparable(c); err != nil {
			return nil, err
		}
		v, err := b.lit(c, n.lit)
		if err != nil {
			return nil, err
		}
		return &bCmp{col: c, op: cmpOps[n.op], v: v}, nil
	case *inNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		if err := comparable(c); err != nil {
			return nil, err
		}
		out := &bIn{col: c, neg: n.neg}
		for _, l := range n.lits {
			if l.kind != litNull {
				if err := lanceLit(l, c.vt); err != nil {
					return nil, typeErr(l.off, c.name, "%v", err)
				}
			}
			v, err := b.lit(c, l)
			if err != nil {
				return nil, err
			}
			if v == nil {
				out.hasNull = true
				continue
			}
			out.vals = append(out.vals, v)
		}
		return out, nil
	case *betweenNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		if err := comparable(c); err != nil {
			return nil, err
		}
		for _, l := range []*litNode{n.lo, n.hi} {
			if l.kind != litNull {
				if err := lanceLit(l, c.vt); err != nil {
					return nil, typeErr(l.off, c.name, "%v", err)
				}
			}
		}
		lo, err := b.lit(c, n.lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.lit(c, n.hi)
		if err != nil {
			return nil, err
		}
		return &bBetween{col: c, lo: lo, hi: hi, neg: n.neg}, nil
	case *isNullNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		return &bIsNull{col: c, neg: n.neg}, nil
	case *isBoolNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		if c.vt.ID() != arrow.BOOL {
			return nil, typeErr(n.off, c.name, "IS TRUE/FALSE needs a boolean column, not %s", c.dt)
		}
		return &bIsBool{col: c, val: n.val, neg: n.neg}, nil
	case *exprCmpNode:
		return b.bindExprCmp(n)
	case *exprTestNode:
		return b.bindExprTest(n)
	case *arithNode, *negNode:
		return nil, typeErr(n.offset(), "", "arithmetic is not a predicate (compare it with a value)")
	case *likeNode:
		c, err := b.resolve(n.ref)
		if err != nil {
			return nil, err
		}
		if !isString(c.vt) {
			return nil, typeErr(n.off, c.name, "LIKE needs a string column, not %s", c.dt)
		}
		return &bLike{col: c, pat: n.pat.text, neg: n.neg}, nil
	}
	return nil, typeErr(n.offset(), "", "unsupported expression")
}

// ---- pruning terms ----

func (b *binder) term(c *colRef, p seedio.Predicate, text string) pnode {
	b.f.terms = append(b.f.terms, Term{Column: c.name, Type: c.dt, Pred: p, Text: text})
	return &pTerm{i: len(b.f.terms) - 1}
}

func or(l, r pnode) pnode {
	switch {
	case isAll(l) || isAll(r):
		return &pAll{}
	case isNone(l):
		return r
	case isNone(r):
		return l
	}
	return &pLogic{and: false, l: l, r: r}
}

func and(l, r pnode) pnode {
	switch {
	case isNone(l) || isNone(r):
		return &pNone{}
	case isAll(l) && isAll(r):
		return l
	case isAll(l):
		return &pPartial{x: r}
	case isAll(r):
		return &pPartial{x: l}
	}
	return &pLogic{and: true, l: l, r: r}
}

func isAll(p pnode) bool  { _, ok := p.(*pAll); return ok }
func isNone(p pnode) bool { _, ok := p.(*pNone); return ok }

var seedOps = map[cmpOp]seedio.Op{opEq: seedio.OpEq, opLt: seedio.OpLt, opLe: seedio.OpLe, opGt: seedio.OpGt, opGe: seedio.OpGe}
var opText = [...]string{"=", "!=", "<", "<=", ">", ">="}

// cmpTerm is the pruning term of "col op v" (v non-null) under the
// column's total order.
func (b *binder) cmpTerm(c *colRef, op cmpOp, v any, lit string) pnode {
	if op == opNe {
		return &pAll{}
	}
	if f, ok := v.(float64); ok && c.vt.ID() != arrow.FLOAT64 {
		// The comparison happens in Float64; find the column-typed bound
		// that keeps every matching row.
		cv, exact := toColumnFloat(c.vt, f)
		if !exact {
			switch op {
			case opEq:
				return &pNone{}
			case opLt, opLe:
				cv, op = roundFloat(c.vt, f, true), opLe
			case opGt, opGe:
				cv, op = roundFloat(c.vt, f, false), opGe
			}
		}
		v = cv
	}
	return b.term(c, seedio.Predicate{Op: seedOps[op], Values: []any{v}}, fmt.Sprintf("%s %s %s", c.name, opText[op], lit))
}

func (b *binder) toPrune(n node, neg bool) (pnode, error) {
	switch n := n.(type) {
	case *logicNode:
		l, err := b.toPrune(n.l, neg)
		if err != nil {
			return nil, err
		}
		r, err := b.toPrune(n.r, neg)
		if err != nil {
			return nil, err
		}
		if n.and != neg {
			return and(l, r), nil
		}
		return or(l, r), nil
	case *notNode:
		return b.toPrune(n.x, !neg)
	case *constNode:
		if n.lit.kind == litNull || (n.lit.text == "true") == neg {
			return &pNone{}, nil
		}
		return &pAll{}, nil
	case *refNode:
		c := b.refs[n]
		return b.term(c, seedio.Predicate{Op: seedio.OpEq, Values: []any{!neg}}, fmt.Sprintf("%s = %v", c.name, !neg)), nil
	case *callNode: // isnan
		c := b.refs[n.args[0].(*refNode)]
		if neg {
			return b.term(c, seedio.Predicate{Op: seedio.OpNotIsNaN}, "NOT isnan("+c.name+")"), nil
		}
		return b.term(c, seedio.Predicate{Op: seedio.OpIsNaN}, "isnan("+c.name+")"), nil
	case *cmpNode:
		c := b.refs[n.ref]
		v, _ := b.lit(c, n.lit)
		if v == nil {
			return &pNone{}, nil
		}
		op := cmpOps[n.op]
		if neg {
			op = op.negate()
		}
		return b.cmpTerm(c, op, v, showLit(n.lit)), nil
	case *inNode:
		c := b.refs[n.ref]
		if n.neg != neg { // NOT IN: true only when every element differs
			for _, l := range n.lits {
				if l.kind == litNull {
					return &pNone{}, nil
				}
			}
			return &pAll{}, nil
		}
		var out pnode = &pNone{}
		for _, l := range n.lits {
			v, _ := b.lit(c, l)
			if v == nil {
				continue
			}
			out = or(out, b.cmpTerm(c, opEq, v, showLit(l)))
		}
		return out, nil
	case *betweenNode:
		c := b.refs[n.ref]
		lo, _ := b.lit(c, n.lo)
		hi, _ := b.lit(c, n.hi)
		if n.neg == neg { // x >= lo AND x <= hi
			if lo == nil || hi == nil {
				return &pNone{}, nil
			}
			return and(b.cmpTerm(c, opGe, lo, showLit(n.lo)), b.cmpTerm(c, opLe, hi, showLit(n.hi))), nil
		}
		var out pnode = &pNone{} // x < lo OR x > hi
		if lo != nil {
			out = or(out, b.cmpTerm(c, opLt, lo, showLit(n.lo)))
		}
		if hi != nil {
			out = or(out, b.cmpTerm(c, opGt, hi, showLit(n.hi)))
		}
		return out, nil
	case *isNullNode:
		c := b.refs[n.ref]
		if n.neg != neg {
			return b.term(c, seedio.Predicate{Op: seedio.OpIsNotNull}, c.name+" IS NOT NULL"), nil
		}
		return b.term(c, seedio.Predicate{Op: seedio.OpIsNull}, c.name+" IS NULL"), nil
	case *isBoolNode:
		c := b.refs[n.ref]
		eq := func(v bool) pnode {
			return b.term(c, seedio.Predicate{Op: seedio.OpEq, Values: []any{v}}, fmt.Sprintf("%s = %v", c.name, v))
		}
		if n.neg == neg { // x IS val
			return eq(n.val), nil
		}
		return or(eq(!n.val), b.term(c, seedio.Predicate{Op: seedio.OpIsNull}, c.name+" IS NULL")), nil
	case *exprCmpNode, *exprTestNode:
		// Arithmetic or two columns: nothing a single column's bounds
		// decide (R65: unknown keeps every row).
		return &pAll{}, nil
	case *likeNode:
		c := b.refs[n.ref]
		if n.neg != neg {
			return &pAll{}, nil
		}
		prefix, exact := likePrefix(n.pat.text)
		if exact {
			return b.cmpTerm(c, opEq, prefix, "'"+prefix+"'"), nil
		}
		if prefix == "" {
			return b.term(c, seedio.Predicate{Op: seedio.OpIsNotNull}, c.name+" IS NOT NULL"), nil
		}
		out := b.cmpTerm(c, opGe, prefix, "'"+prefix+"'")
		if succ, ok := prefixSuccessor(prefix); ok {
			out = and(out, b.cmpTerm(c, opLt, succ, fmt.Sprintf("%q", succ)))
		}
		return out, nil
	}
	return &pAll{}, nil
}

// prefixSuccessor returns the least string greater than every string with
// the given prefix, bytewise.
func prefixSuccessor(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
