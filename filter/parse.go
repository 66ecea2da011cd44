package filter

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen bounds the predicate text Parse accepts.
const MaxLen = 1 << 16

// maxDepth bounds the nesting of parentheses and NOTs.
const maxDepth = 200

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuoted // "name" or `name`
	tNum
	tStr
	tHex
	tOp
	tLParen
	tRParen
	tComma
	tDot
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) show() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tStr:
		return "'" + t.text + "'"
	case tQuoted:
		return `"` + t.text + `"`
	case tHex:
		return "x'" + t.text + "'"
	case tLParen:
		return "("
	case tRParen:
		return ")"
	case tComma:
		return ","
	case tDot:
		return "."
	}
	return t.text
}

func synErr(t token, format string, args ...any) error {
	return &SyntaxError{Offset: t.pos, Token: t.show(), Msg: fmt.Sprintf(format, args...)}
}

func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	prevValue := func() bool { // whether the previous token ends an operand
		if len(toks) == 0 {
			return false
		}
		last := toks[len(toks)-1]
		if last.kind == tIdent && reserved[strings.ToLower(last.text)] {
			return false
		}
		switch last.kind {
		case tIdent, tQuoted, tNum, tStr, tHex, tRParen:
			return true
		}
		return false
	}
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i >= len(s) {
			toks = append(toks, token{kind: tEOF, pos: i})
			return toks, nil
		}
		start := i
		c := s[i]
		switch {
		case c == '(':
			toks = append(toks, token{tLParen, "(", i})
			i++
		case c == ')':
			toks = append(toks, token{tRParen, ")", i})
			i++
		case c == ',':
			toks = append(toks, token{tComma, ",", i})
			i++
		case c == '=' || c == '<' || c == '>' || c == '!':
			i++
			if i < len(s) && (s[i] == '=' || (c == '<' && s[i] == '>')) {
				i++
			}
			op := s[start:i]
			if op == "!" {
				return nil, &SyntaxError{Offset: start, Token: "!", Msg: "unexpected '!' (use != or NOT)"}
			}
			toks = append(toks, token{tOp, op, start})
		case c == '\'':
			var sb strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, &SyntaxError{Offset: start, Token: s[start:min(len(s), start+20)], Msg: "unterminated string"}
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						sb.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				sb.WriteByte(s[i])
				i++
			}
			toks = append(toks, token{tStr, sb.String(), start})
		case c == '"' || c == '`':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, &SyntaxError{Offset: start, Token: s[start:min(len(s), start+20)], Msg: "unterminated quoted name"}
			}
			toks = append(toks, token{tQuoted, s[i+1 : i+1+end], start})
			i += end + 2
		case (c == 'x' || c == 'X') && i+1 < len(s) && s[i+1] == '\'':
			end := strings.IndexByte(s[i+2:], '\'')
			if end < 0 {
				return nil, &SyntaxError{Offset: start, Token: s[start:min(len(s), start+20)], Msg: "unterminated hex literal"}
			}
			toks = append(toks, token{tHex, s[i+2 : i+2+end], start})
			i += end + 3
		case c == '.' && !(prevValue() == false && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			toks = append(toks, token{tDot, ".", i})
			i++
		case c == '*' || c == '/' || c == '%':
			toks = append(toks, token{tOp, string(c), start})
			i++
		case (c == '-' || c == '+') && (prevValue() || !signedLiteral(s[i+1:])):
			// binary or unary arithmetic (a sign directly before a number,
			// inf or nan, where no operand ends, is part of the literal)
			toks = append(toks, token{tOp, string(c), start})
			i++
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			i++
			for i < len(s) {
				d := s[i]
				if (d >= '0' && d <= '9') || d == '.' || d == 'e' || d == 'E' || d == '_' ||
					((d == '-' || d == '+') && (s[i-1] == 'e' || s[i-1] == 'E')) {
					i++
					continue
				}
				break
			}
			if (c == '-' || c == '+') && i == start+1 { // -inf, +infinity, -nan
				for i < len(s) && isIdentByte(s[i]) {
					i++
				}
				if i == start+1 {
					return nil, &SyntaxError{Offset: start, Token: string(c), Msg: "a sign must be followed by a number"}
				}
			}
			toks = append(toks, token{tNum, s[start:i], start})
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == '_' || unicode.IsLetter(r) {
				i += size
				for i < len(s) {
					r, size := utf8.DecodeRuneInString(s[i:])
					if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
						i += size
						continue
					}
					break
				}
				toks = append(toks, token{tIdent, s[start:i], start})
				continue
			}
			return nil, &SyntaxError{Offset: start, Token: string(r), Msg: "unexpected character"}
		}
	}
}

// signedLiteral reports whether the text after a sign starts a number,
// inf, infinity or nan (which the sign belongs to).
func signedLiteral(rest string) bool {
	if rest != "" && ((rest[0] >= '0' && rest[0] <= '9') || rest[0] == '.') {
		return true
	}
	j := 0
	for j < len(rest) && isIdentByte(rest[j]) {
		j++
	}
	switch strings.ToLower(rest[:j]) {
	case "inf", "infinity", "nan":
		return true
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// ---- AST ----

type node interface{ offset() int }

type litKind int

const (
	litNull litKind = iota
	litNumber
	litString
	litBool
	litHex
	litDate      // DATE 'YYYY-MM-DD'
	litTimestamp // TIMESTAMP '...'
)

type refNode struct {
	path []string
	off  int
}

type litNode struct {
	kind litKind
	text string
	off  int
}

type cmpNode struct {
	op  string // = != < <= > >=  (normalised: ref op lit)
	ref *refNode
	lit *litNode
	off int
}

type logicNode struct {
	and  bool
	l, r node
	off  int
}

type notNode struct {
	x   node
	off int
}

type inNode struct {
	ref  *refNode
	lits []*litNode
	neg  bool
	off  int
}

type betweenNode struct {
	ref    *refNode
	lo, hi *litNode
	neg    bool
	off    int
}

type isNullNode struct {
	ref *refNode
	neg bool
	off int
}

// isBoolNode is "x IS [NOT] TRUE|FALSE".
type isBoolNode struct {
	ref *refNode
	val bool
	neg bool
	off int
}

type callNode struct {
	name string
	args []node
	off  int
}

type likeNode struct {
	ref *refNode
	pat *litNode
	neg bool
	off int
}

// arithNode is "l op r" for op one of + - * / %.
type arithNode struct {
	op   byte
	l, r node
	off  int
}

// negNode is unary minus on a non-literal operand.
type negNode struct {
	x   node
	off int
}

// exprCmpNode is a comparison that is not "column op literal": arithmetic
// on either side, two columns, or two literals.
type exprCmpNode struct {
	op   string
	l, r node
	off  int
}

// exprTestNode is IN (lits), BETWEEN lits[0] AND lits[1], IS [NOT] NULL,
// IS [NOT] TRUE/FALSE or LIKE applied to an expression that is not a
// plain column (arithmetic, a literal).
type exprTestNode struct {
	kind  testKind
	x     node
	items []node // IN's list, BETWEEN's bounds, LIKE's pattern
	neg   bool
	off   int
}

type testKind int

const (
	testIn testKind = iota
	testBetween
	testNull
	testBool
	testLike
)

// constNode is a boolean or NULL literal used as a predicate.
type constNode struct {
	lit *litNode
}

func (n *refNode) offset() int      { return n.off }
func (n *litNode) offset() int      { return n.off }
func (n *cmpNode) offset() int      { return n.off }
func (n *logicNode) offset() int    { return n.off }
func (n *notNode) offset() int      { return n.off }
func (n *inNode) offset() int       { return n.off }
func (n *betweenNode) offset() int  { return n.off }
func (n *isNullNode) offset() int   { return n.off }
func (n *isBoolNode) offset() int   { return n.off }
func (n *callNode) offset() int     { return n.off }
func (n *likeNode) offset() int     { return n.off }
func (n *constNode) offset() int    { return n.lit.off }
func (n *arithNode) offset() int    { return n.off }
func (n *negNode) offset() int      { return n.off }
func (n *exprCmpNode) offset() int  { return n.off }
func (n *exprTestNode) offset() int { return n.off }

func (n *refNode) name() string { return strings.Join(n.path, ".") }

// Expr is a parsed predicate, not yet checked against a schema.
type Expr struct {
	text string
	root node
}

// String returns the predicate text as given.
func (e *Expr) String() string { return e.text }

// Parse parses a Lance/DataFusion-style SQL predicate:
//
//	expr  := expr OR expr | expr AND expr | NOT expr | ( expr ) | pred
//	pred  := col op lit | lit op col            op: = == != <> < <= > >=
//	       | num op num                         (arithmetic, two columns)
//	       | x [NOT] IN (num, …) | x [NOT] BETWEEN num AND num
//	       | x IS [NOT] NULL | col IS [NOT] TRUE|FALSE      x: col or num
//	       | col [NOT] LIKE 'pattern' | isnan(col) | col (a boolean column)
//	       | TRUE | FALSE | NULL
//	col   := name(.name)*                   name: ident, "quoted" or `quoted`
//	lit   := number | nan | inf | -inf | 'string' | x'hex' | TRUE | FALSE | NULL
//	       | DATE 'YYYY-MM-DD' | TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.f]'
//	num   := num (+|-) num | num (*|/|%) num | -num | ( num ) | col | lit
//
// Precedence, tightest first: unary minus, * / %, + -, comparisons, NOT,
// AND, OR.
// Keywords are case-insensitive; a doubled single quote stands for one in
// strings. Errors are *SyntaxError (offset and token).
func Parse(s string) (*Expr, error) {
	if len(s) > MaxLen {
		return nil, &SyntaxError{Offset: MaxLen, Token: "", Msg: fmt.Sprintf("predicate longer than %d bytes", MaxLen)}
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tEOF {
		return nil, synErr(p.peek(), "empty predicate")
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, synErr(t, "expected AND, OR or end of input")
	}
	return &Expr{text: strings.TrimSpace(s), root: root}, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token  { return p.toks[p.i] }
func (p *parser) peek2() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) take() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func isKw(t token, kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

var reserved = map[string]bool{"and": true, "or": true, "not": true, "in": true, "between": true, "is": true, "null": true, "like": true, "true": true, "false": true}

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for isKw(p.peek(), "or") {
		t := p.take()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &logicNode{and: false, l: l, r: r, off: t.pos}
	}
	return l, nil
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	for isKw(p.peek(), "and") {
		t := p.take()
		r, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		l = &logicNode{and: true, l: l, r: r, off: t.pos}
	}
	return l, nil
}

func (p *parser) not(depth int) (node, error) {
	if depth > maxDepth {
		return nil, synErr(p.peek(), "nested more than %d deep", maxDepth)
	}
	if isKw(p.peek(), "not") {
		t := p.take()
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &notNode{x: x, off: t.pos}, nil
	}
	return p.pred(depth)
}

// operand parses a column reference, a literal or a function call.
func (p *parser) operand(depth int) (node, error) {
	t := p.peek()
	switch t.kind {
	case tNum, tStr, tHex:
		return p.literal()
	case tQuoted:
		return p.ref()
	case tIdent:
		switch {
		case isKw(t, "true"), isKw(t, "false"), isKw(t, "null"), isKw(t, "nan"), isKw(t, "inf"), isKw(t, "infinity"):
			return p.literal()
		case (isKw(t, "date") || isKw(t, "timestamp")) && p.peek2().kind == tStr:
			return p.literal()
		case (isKw(t, "cast") || isKw(t, "arrow_cast")) && p.peek2().kind == tLParen:
			return p.literal()
		case p.peek2().kind == tLParen:
			p.take()
			p.take()
			c := &callNode{name: strings.ToLower(t.text), off: t.pos}
			if p.peek().kind != tRParen {
				for {
					a, err := p.operand(depth + 1)
					if err != nil {
						return nil, err
					}
					c.args = append(c.args, a)
					if p.peek().kind == tComma {
						p.take()
						continue
					}
					break
				}
			}
			if r := p.take(); r.kind != tRParen {
				return nil, synErr(r, "expected ')' closing %s(", t.text)
			}
			return c, nil
		case reserved[strings.ToLower(t.text)]:
			return nil, synErr(t, "expected a column name or a literal")
		}
		return p.ref()
	}
	return nil, synErr(t, "expected a column name or a literal")
}

func (p *parser) ref() (node, error) {
	t := p.take()
	if t.kind != tIdent && t.kind != tQuoted {
		return nil, synErr(t, "expected a column name")
	}
	r := &refNode{path: []string{t.text}, off: t.pos}
	for p.peek().kind == tDot {
		p.take()
		n := p.take()
		if n.kind != tIdent && n.kind != tQuoted {
			return nil, synErr(n, "expected a field name after '.'")
		}
		r.path = append(r.path, n.text)
	}
	return r, nil
}

func (p *parser) literal() (*litNode, error) {
	t := p.take()
	switch {
	case t.kind == tNum:
		return &litNode{kind: litNumber, text: t.text, off: t.pos}, nil
	case t.kind == tStr:
		return &litNode{kind: litString, text: t.text, off: t.pos}, nil
	case t.kind == tHex:
		return &litNode{kind: litHex, text: t.text, off: t.pos}, nil
	case isKw(t, "true"), isKw(t, "false"):
		return &litNode{kind: litBool, text: strings.ToLower(t.text), off: t.pos}, nil
	case isKw(t, "null"):
		return &litNode{kind: litNull, text: "NULL", off: t.pos}, nil
	case isKw(t, "nan"), isKw(t, "inf"), isKw(t, "infinity"):
		return &litNode{kind: litNumber, text: strings.ToLower(t.text), off: t.pos}, nil
	case isKw(t, "cast"), isKw(t, "arrow_cast"):
		// CAST(lit AS type) / arrow_cast(lit, 'Type'): the literal, typed
		// by the column it is compared with.
		if lp := p.take(); lp.kind != tLParen {
			return nil, synErr(lp, "expected '(' after %s", t.text)
		}
		inner, err := p.literal()
		if err != nil {
			return nil, err
		}
		if isKw(t, "cast") {
			if as := p.take(); !isKw(as, "as") {
				return nil, synErr(as, "expected AS in CAST")
			}
			ty := p.take()
			if ty.kind != tIdent {
				return nil, synErr(ty, "expected a type name in CAST")
			}
			for p.peek().kind == tIdent { // DOUBLE PRECISION
				p.take()
			}
			if p.peek().kind == tLParen { // DECIMAL(10, 2)
				for t := p.take(); t.kind != tRParen; t = p.take() {
					if t.kind == tEOF {
						return nil, synErr(t, "expected ')'")
					}
				}
			}
			if inner.kind == litString {
				switch strings.ToLower(ty.text) {
				case "double", "float", "real", "float4", "float8", "int", "integer", "bigint", "smallint", "tinyint", "decimal", "numeric":
					inner.kind = litNumber
				case "date":
					inner.kind = litDate
				case "timestamp":
					inner.kind = litTimestamp
				}
			}
		} else {
			if c := p.take(); c.kind != tComma {
				return nil, synErr(c, "expected ',' in arrow_cast")
			}
			if ty := p.take(); ty.kind != tStr {
				return nil, synErr(ty, "expected a 'Type' string in arrow_cast")
			}
		}
		if rp := p.take(); rp.kind != tRParen {
			return nil, synErr(rp, "expected ')'")
		}
		inner.off = t.pos
		return inner, nil
	case isKw(t, "date"), isKw(t, "timestamp"):
		s := p.take()
		if s.kind != tStr {
			return nil, synErr(s, "expected a quoted string after %s", strings.ToUpper(t.text))
		}
		k := litDate
		if isKw(t, "timestamp") {
			k = litTimestamp
		}
		return &litNode{kind: k, text: s.text, off: t.pos}, nil
	}
	return nil, synErr(t, "expected a literal")
}

// additive := multiplicative (("+" | "-") multiplicative)*
func (p *parser) additive(depth int) (node, error) {
	l, err := p.multiplicative(depth)
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == tOp && (t.text == "+" || t.text == "-"); t = p.peek() {
		p.take()
		r, err := p.multiplicative(depth)
		if err != nil {
			return nil, err
		}
		l = &arithNode{op: t.text[0], l: l, r: r, off: t.pos}
	}
	return l, nil
}

// multiplicative := unary (("*" | "/" | "%") unary)*
func (p *parser) multiplicative(depth int) (node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == tOp && (t.text == "*" || t.text == "/" || t.text == "%"); t = p.peek() {
		p.take()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &arithNode{op: t.text[0], l: l, r: r, off: t.pos}
	}
	return l, nil
}

// unary := ("-" | "+") unary | "(" additive ")" | operand
func (p *parser) unary(depth int) (node, error) {
	if depth > maxDepth {
		return nil, synErr(p.peek(), "nested more than %d deep", maxDepth)
	}
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "-" || t.text == "+"):
		p.take()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		if t.text == "+" {
			return x, nil
		}
		if l, ok := x.(*litNode); ok && l.kind == litNumber {
			txt := strings.TrimPrefix(l.text, "+")
			if strings.HasPrefix(txt, "-") {
				txt = txt[1:]
			} else {
				txt = "-" + txt
			}
			return &litNode{kind: litNumber, text: txt, off: t.pos}, nil
		}
		return &negNode{x: x, off: t.pos}, nil
	case t.kind == tLParen:
		p.take()
		x, err := p.additive(depth + 1)
		if err != nil {
			return nil, err
		}
		if r := p.take(); r.kind != tRParen {
			return nil, synErr(r, "expected ')'")
		}
		return x, nil
	case t.kind == tOp:
		return nil, synErr(t, "expected a column name or a literal")
	}
	return p.operand(depth)
}

func isCmpOp(t token) bool {
	if t.kind != tOp {
		return false
	}
	switch t.text {
	case "=", "==", "!=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func (p *parser) pred(depth int) (node, error) {
	if p.peek().kind == tLParen {
		// "(a + b) > 5" or a parenthesised predicate: try the arithmetic
		// reading first (linear: it never backtracks itself).
		save := p.i
		if x, err := p.additive(depth); err == nil {
			if t := p.peek(); isCmpOp(t) {
				return p.comparison(x, depth)
			} else if _, ref := x.(*refNode); !ref && (isTestKw(t) || (isKw(t, "not") && isTestKw(p.peek2()))) {
				neg := isKw(t, "not")
				if neg {
					p.take()
				}
				return p.exprTest(x, p.peek(), neg)
			}
		}
		p.i = save
		p.take()
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if t := p.take(); t.kind != tRParen {
			return nil, synErr(t, "expected ')'")
		}
		return x, nil
	}
	left, err := p.additive(depth)
	if err != nil {
		return nil, err
	}
	t := p.peek()
	neg := false
	if isKw(t, "not") && (isKw(p.peek2(), "in") || isKw(p.peek2(), "between") || isKw(p.peek2(), "like")) {
		p.take()
		neg = true
		t = p.peek()
	}
	// A left side that is not a plain column (arithmetic, a literal):
	// IN, BETWEEN and IS [NOT] NULL apply to its value (exprTestNode).
	_, isRef := left.(*refNode)
	asRef := func(what token) (*refNode, error) {
		r, ok := left.(*refNode)
		if !ok {
			return nil, &SyntaxError{Offset: left.offset(), Token: "", Msg: fmt.Sprintf("the left side of %s must be a column", strings.ToUpper(what.text))}
		}
		return r, nil
	}
	if !isRef && (isKw(t, "in") || isKw(t, "between") || isKw(t, "is") || isKw(t, "like")) {
		if _, call := left.(*callNode); !call {
			return p.exprTest(left, t, neg)
		}
	}
	switch {
	case isCmpOp(t):
		return p.comparison(left, depth)
	case t.kind == tOp:
		return nil, synErr(t, "unexpected operator")
	case isKw(t, "in"):
		p.take()
		r, err := asRef(t)
		if err != nil {
			return nil, err
		}
		items, err := p.inList(depth)
		if err != nil {
			return nil, err
		}
		lits := allLits(items)
		if lits == nil { // a column or arithmetic in the list
			return &exprTestNode{kind: testIn, x: r, items: items, neg: neg, off: t.pos}, nil
		}
		return &inNode{ref: r, lits: lits, neg: neg, off: t.pos}, nil
	case isKw(t, "between"):
		p.take()
		r, err := asRef(t)
		if err != nil {
			return nil, err
		}
		lo, hi, err := p.betweenBounds(depth)
		if err != nil {
			return nil, err
		}
		if lits := allLits([]node{lo, hi}); lits != nil {
			return &betweenNode{ref: r, lo: lits[0], hi: lits[1], neg: neg, off: t.pos}, nil
		}
		return &exprTestNode{kind: testBetween, x: r, items: []node{lo, hi}, neg: neg, off: t.pos}, nil
	case isKw(t, "like"):
		p.take()
		r, err := asRef(t)
		if err != nil {
			return nil, err
		}
		pat := p.take()
		if pat.kind != tStr {
			return nil, synErr(pat, "expected a 'pattern' after LIKE")
		}
		return &likeNode{ref: r, pat: &litNode{kind: litString, text: pat.text, off: pat.pos}, neg: neg, off: t.pos}, nil
	case isKw(t, "is"):
		p.take()
		r, err := asRef(t)
		if err != nil {
			return nil, err
		}
		neg := false
		if isKw(p.peek(), "not") {
			p.take()
			neg = true
		}
		v := p.take()
		switch {
		case isKw(v, "null"):
			return &isNullNode{ref: r, neg: neg, off: t.pos}, nil
		case isKw(v, "true"), isKw(v, "false"):
			return &isBoolNode{ref: r, val: isKw(v, "true"), neg: neg, off: t.pos}, nil
		}
		return nil, synErr(v, "expected NULL, TRUE or FALSE after IS")
	}
	switch l := left.(type) {
	case *refNode, *callNode:
		return l, nil // a boolean column or function used as a predicate
	case *litNode:
		if l.kind == litBool || l.kind == litNull {
			return &constNode{lit: l}, nil
		}
	}
	return nil, synErr(t, "expected an operator")
}

func isTestKw(t token) bool {
	return isKw(t, "in") || isKw(t, "between") || isKw(t, "is") || isKw(t, "like")
}

// exprTest parses IN (...), BETWEEN, IS [NOT] NULL or LIKE after a left
// side that is not a plain column.
func (p *parser) exprTest(left node, t token, neg bool) (node, error) {
	p.take()
	n := &exprTestNode{x: left, neg: neg, off: t.pos}
	switch {
	case isKw(t, "in"):
		n.kind = testIn
		items, err := p.inList(0)
		if err != nil {
			return nil, err
		}
		n.items = items
	case isKw(t, "between"):
		n.kind = testBetween
		lo, hi, err := p.betweenBounds(0)
		if err != nil {
			return nil, err
		}
		n.items = []node{lo, hi}
	case isKw(t, "like"):
		n.kind = testLike
		pat := p.take()
		if pat.kind != tStr {
			return nil, synErr(pat, "expected a 'pattern' after LIKE")
		}
		n.items = []node{&litNode{kind: litString, text: pat.text, off: pat.pos}}
	default: // IS
		if isKw(p.peek(), "not") {
			p.take()
			n.neg = true
		}
		v := p.take()
		switch {
		case isKw(v, "null"):
			n.kind = testNull
		case isKw(v, "true"), isKw(v, "false"):
			n.kind = testBool
		default:
			return nil, synErr(v, "expected NULL, TRUE or FALSE after IS")
		}
	}
	return n, nil
}

// inList parses "(item, …)" after IN; items are literals or arithmetic
// over columns.
func (p *parser) inList(depth int) ([]node, error) {
	if lp := p.take(); lp.kind != tLParen {
		return nil, synErr(lp, "expected '(' after IN")
	}
	var items []node
	for {
		x, err := p.additive(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		s := p.take()
		if s.kind == tRParen {
			return items, nil
		}
		if s.kind != tComma {
			return nil, synErr(s, "expected ',' or ')'")
		}
	}
}

// betweenBounds parses "lo AND hi" after BETWEEN (multiplicative bounds,
// so that the AND is BETWEEN's).
func (p *parser) betweenBounds(depth int) (node, node, error) {
	lo, err := p.additive(depth + 1)
	if err != nil {
		return nil, nil, err
	}
	if a := p.take(); !isKw(a, "and") {
		return nil, nil, synErr(a, "expected AND in BETWEEN")
	}
	hi, err := p.additive(depth + 1)
	if err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
}

// allLits returns the items as literals, or nil when one is not.
func allLits(items []node) []*litNode {
	out := make([]*litNode, len(items))
	for i, x := range items {
		l, ok := x.(*litNode)
		if !ok {
			return nil
		}
		out[i] = l
	}
	return out
}

// comparison parses "op right" after left.
func (p *parser) comparison(left node, depth int) (node, error) {
	t := p.take()
	right, err := p.additive(depth)
	if err != nil {
		return nil, err
	}
	op := t.text
	switch op {
	case "==":
		op = "="
	case "<>":
		op = "!="
	}
	if _, ok := left.(*callNode); ok {
		return nil, synErr(t, "comparing a function's result is not supported")
	}
	if _, ok := right.(*callNode); ok {
		return nil, synErr(t, "comparing a function's result is not supported")
	}
	lr, lok := left.(*refNode)
	rl, rok := right.(*litNode)
	if lok && rok {
		return &cmpNode{op: op, ref: lr, lit: rl, off: t.pos}, nil
	}
	ll, lok := left.(*litNode)
	rr, rok := right.(*refNode)
	if lok && rok {
		return &cmpNode{op: flip(op), ref: rr, lit: ll, off: t.pos}, nil
	}
	return &exprCmpNode{op: op, l: left, r: right, off: t.pos}, nil
}

func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}
