package lancekeeper

// The single-column predicate grammar of `lancekeeper seeds --where`,
// carried here until the filter package (the scan work) provides the one
// parser both use; Prune is its only caller.

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// litKind is the lexical kind of a predicate literal.
type litKind int

const (
	litNumber litKind = iota
	litString
	litBool
	litHex // x'0a0b'
)

type literal struct {
	kind litKind
	text string
}

// parsedPredicate is a single-column predicate, with literals still
// untyped: they are bound to each seed's value type.
type parsedPredicate struct {
	Text   string
	Column string
	Op     seedio.Op
	Lits   []literal
}

// maxPredicateLen bounds the input the parser accepts.
const maxPredicateLen = 1 << 16

type lexer struct {
	s   string
	pos int
}

type token struct {
	kind string // "ident", "num", "str", "hex", "op", "(", ")", ",", "eof"
	text string
	pos  int
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.s) && (l.s[l.pos] == ' ' || l.s[l.pos] == '\t' || l.s[l.pos] == '\n' || l.s[l.pos] == '\r') {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.s) {
		return token{kind: "eof", pos: start}, nil
	}
	c := l.s[l.pos]
	switch {
	case c == '(' || c == ')' || c == ',':
		l.pos++
		return token{kind: string(c), pos: start}, nil
	case c == '=' || c == '<' || c == '>' || c == '!':
		l.pos++
		if l.pos < len(l.s) && (l.s[l.pos] == '=' || (c == '<' && l.s[l.pos] == '>')) {
			l.pos++
		}
		op := l.s[start:l.pos]
		if op == "!" {
			return token{}, fmt.Errorf("unexpected '!' at offset %d", start)
		}
		return token{kind: "op", text: op, pos: start}, nil
	case c == '\'':
		var sb strings.Builder
		l.pos++
		for {
			if l.pos >= len(l.s) {
				return token{}, fmt.Errorf("unterminated string starting at offset %d", start)
			}
			if l.s[l.pos] == '\'' {
				if l.pos+1 < len(l.s) && l.s[l.pos+1] == '\'' {
					sb.WriteByte('\'')
					l.pos += 2
					continue
				}
				l.pos++
				return token{kind: "str", text: sb.String(), pos: start}, nil
			}
			sb.WriteByte(l.s[l.pos])
			l.pos++
		}
	case c == '"' || c == '`':
		end := strings.IndexByte(l.s[l.pos+1:], c)
		if end < 0 {
			return token{}, fmt.Errorf("unterminated quoted identifier starting at offset %d", start)
		}
		l.pos += end + 2
		return token{kind: "ident", text: l.s[start+1 : l.pos-1], pos: start}, nil
	case (c == 'x' || c == 'X') && l.pos+1 < len(l.s) && l.s[l.pos+1] == '\'':
		end := strings.IndexByte(l.s[l.pos+2:], '\'')
		if end < 0 {
			return token{}, fmt.Errorf("unterminated hex literal starting at offset %d", start)
		}
		l.pos += end + 3
		return token{kind: "hex", text: l.s[start+2 : l.pos-1], pos: start}, nil
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		l.pos++
		for l.pos < len(l.s) {
			d := l.s[l.pos]
			if (d >= '0' && d <= '9') || d == '.' || d == 'e' || d == 'E' || d == '_' ||
				((d == '-' || d == '+') && (l.s[l.pos-1] == 'e' || l.s[l.pos-1] == 'E')) {
				l.pos++
				continue
			}
			break
		}
		// -inf, +inf
		if (c == '-' || c == '+') && l.pos == start+1 {
			for l.pos < len(l.s) && isIdentByte(l.s[l.pos]) {
				l.pos++
			}
		}
		return token{kind: "num", text: l.s[start:l.pos], pos: start}, nil
	case isIdentStart(rune(c)) || c >= 0x80:
		for l.pos < len(l.s) && (isIdentByte(l.s[l.pos]) || l.s[l.pos] >= 0x80) {
			l.pos++
		}
		return token{kind: "ident", text: l.s[start:l.pos], pos: start}, nil
	}
	return token{}, fmt.Errorf("unexpected %q at offset %d", c, start)
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentByte(b byte) bool {
	return b == '_' || b == '.' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// parsePredicate parses one single-column predicate:
//
//	col (= | == | < | <= | > | >=) lit
//	col BETWEEN lit AND lit
//	col IN (lit, …)
//	col IS [NOT] NULL
//	[NOT] isnan(col)
//
// Literals: numbers (also nan, inf, -inf), 'strings' (a doubled single quote stands for one),
// true/false, x'hex'. Column names may be "quoted" or `quoted`. Keywords
// are case-insensitive.
func parsePredicate(s string) (*parsedPredicate, error) {
	if len(s) > maxPredicateLen {
		return nil, fmt.Errorf("predicate longer than %d bytes", maxPredicateLen)
	}
	p := &parsedPredicate{Text: strings.TrimSpace(s)}
	l := &lexer{s: s}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, fmt.Errorf("predicate %q: %w", s, err)
		}
		toks = append(toks, t)
		if t.kind == "eof" {
			break
		}
	}
	i := 0
	peek := func() token { return toks[i] }
	take := func() token { t := toks[i]; i++; return t }
	isKw := func(t token, kw string) bool { return t.kind == "ident" && strings.EqualFold(t.text, kw) }
	bad := func(t token, want string) error {
		got := t.text
		if t.kind == "eof" {
			got = "end of input"
		} else if got == "" {
			got = t.kind
		}
		return fmt.Errorf("predicate %q: expected %s at offset %d, got %q", s, want, t.pos, got)
	}
	lit := func() (literal, error) {
		t := take()
		switch {
		case t.kind == "num":
			return literal{litNumber, t.text}, nil
		case t.kind == "str":
			return literal{litString, t.text}, nil
		case t.kind == "hex":
			return literal{litHex, t.text}, nil
		case isKw(t, "true") || isKw(t, "false"):
			return literal{litBool, strings.ToLower(t.text)}, nil
		case isKw(t, "nan") || isKw(t, "inf") || isKw(t, "infinity"):
			return literal{litNumber, strings.ToLower(t.text)}, nil
		}
		return literal{}, bad(t, "a literal")
	}
	// [NOT] isnan(col)
	not := false
	if isKw(peek(), "not") {
		take()
		not = true
	}
	if isKw(peek(), "isnan") {
		take()
		if t := take(); t.kind != "(" {
			return nil, bad(t, "'('")
		}
		col := take()
		if col.kind != "ident" {
			return nil, bad(col, "a column name")
		}
		if t := take(); t.kind != ")" {
			return nil, bad(t, "')'")
		}
		p.Column, p.Op = col.text, seedio.OpIsNaN
		if not {
			p.Op = seedio.OpNotIsNaN
		}
	} else {
		if not {
			return nil, bad(peek(), "isnan( after NOT")
		}
		col := take()
		if col.kind != "ident" {
			return nil, bad(col, "a column name")
		}
		p.Column = col.text
		t := take()
		switch {
		case t.kind == "op":
			switch t.text {
			case "=", "==":
				p.Op = seedio.OpEq
			case "<":
				p.Op = seedio.OpLt
			case "<=":
				p.Op = seedio.OpLe
			case ">":
				p.Op = seedio.OpGt
			case ">=":
				p.Op = seedio.OpGe
			default:
				return nil, fmt.Errorf("predicate %q: operator %q is not supported (use =, <, <=, >, >=, BETWEEN, IN, IS [NOT] NULL, isnan)", s, t.text)
			}
			v, err := lit()
			if err != nil {
				return nil, err
			}
			p.Lits = []literal{v}
		case isKw(t, "between"):
			lo, err := lit()
			if err != nil {
				return nil, err
			}
			if t := take(); !isKw(t, "and") {
				return nil, bad(t, "AND")
			}
			hi, err := lit()
			if err != nil {
				return nil, err
			}
			p.Op, p.Lits = seedio.OpBetween, []literal{lo, hi}
		case isKw(t, "in"):
			if t := take(); t.kind != "(" {
				return nil, bad(t, "'('")
			}
			for {
				v, err := lit()
				if err != nil {
					return nil, err
				}
				p.Lits = append(p.Lits, v)
				t := take()
				if t.kind == ")" {
					break
				}
				if t.kind != "," {
					return nil, bad(t, "',' or ')'")
				}
			}
			p.Op = seedio.OpIn
		case isKw(t, "is"):
			p.Op = seedio.OpIsNull
			if isKw(peek(), "not") {
				take()
				p.Op = seedio.OpIsNotNull
			}
			if t := take(); !isKw(t, "null") {
				return nil, bad(t, "NULL")
			}
		default:
			return nil, bad(t, "an operator")
		}
	}
	if t := peek(); t.kind != "eof" {
		return nil, bad(t, "end of input")
	}
	return p, nil
}

// bind converts the literals to Go values of the seed value type dt (the
// dictionary's value type for dictionary columns), as seedio.Prune wants.
func (p *parsedPredicate) bind(dt arrow.DataType) (seedio.Predicate, error) {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	out := seedio.Predicate{Op: p.Op}
	for _, l := range p.Lits {
		v, err := bindLiteral(l, dt)
		if err != nil {
			return out, fmt.Errorf("predicate %q: column %q (%s): %w", p.Text, p.Column, dt, err)
		}
		out.Values = append(out.Values, v)
	}
	return out, nil
}

func parseFloatLit(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), nil
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
}

// wantDecimal accepts only plain decimal numbers ([-+]digits[.digits],
// at most 80 digits): arrow-go's decimal parsers panic on "inf" and "nan"
// and grow big.Ints from huge exponents.
func wantDecimal(l literal) error {
	s := strings.TrimLeft(l.text, "+-")
	digits, dots := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			digits = -1
		}
		if digits < 0 {
			break
		}
	}
	if l.kind != litNumber || digits < 1 || dots > 1 || digits > 80 || len(l.text)-len(s) > 1 {
		return fmt.Errorf("literal %q: want a plain decimal number such as -12.50", l.text)
	}
	return nil
}

func bindLiteral(l literal, dt arrow.DataType) (any, error) {
	want := func(k litKind, what string) error {
		if l.kind != k {
			return fmt.Errorf("literal %q: want %s", l.text, what)
		}
		return nil
	}
	intLit := func(bits int) (int64, error) {
		if err := want(litNumber, "an integer"); err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.ReplaceAll(l.text, "_", ""), 10, bits)
	}
	uintLit := func(bits int) (uint64, error) {
		if err := want(litNumber, "a non-negative integer"); err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.ReplaceAll(l.text, "_", ""), 10, bits)
	}
	switch t := dt.(type) {
	case *arrow.Int8Type:
		v, err := intLit(8)
		return int8(v), err
	case *arrow.Int16Type:
		v, err := intLit(16)
		return int16(v), err
	case *arrow.Int32Type:
		v, err := intLit(32)
		return int32(v), err
	case *arrow.Int64Type:
		return intLit(64)
	case *arrow.Uint8Type:
		v, err := uintLit(8)
		return uint8(v), err
	case *arrow.Uint16Type:
		v, err := uintLit(16)
		return uint16(v), err
	case *arrow.Uint32Type:
		v, err := uintLit(32)
		return uint32(v), err
	case *arrow.Uint64Type:
		return uintLit(64)
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		if err := want(litNumber, "a number"); err != nil {
			return nil, err
		}
		f, err := parseFloatLit(l.text)
		if err != nil {
			return nil, err
		}
		switch dt.(type) {
		case *arrow.Float16Type:
			return float16.New(float32(f)), nil
		case *arrow.Float32Type:
			return float32(f), nil
		}
		return f, nil
	case *arrow.BooleanType:
		if err := want(litBool, "true or false"); err != nil {
			return nil, err
		}
		return l.text == "true", nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		if err := want(litString, "a 'string'"); err != nil {
			return nil, err
		}
		return l.text, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		switch l.kind {
		case litString:
			return []byte(l.text), nil
		case litHex:
			return hex.DecodeString(l.text)
		}
		return nil, fmt.Errorf("literal %q: want 'text' or x'hex'", l.text)
	case *arrow.Date32Type, *arrow.Date64Type:
		if err := want(litString, "a 'YYYY-MM-DD' date"); err != nil {
			return nil, err
		}
		tm, err := time.Parse("2006-01-02", l.text)
		if err != nil {
			return nil, err
		}
		if _, ok := dt.(*arrow.Date32Type); ok {
			return arrow.Date32FromTime(tm), nil
		}
		return arrow.Date64FromTime(tm), nil
	case *arrow.TimestampType:
		if l.kind == litNumber {
			v, err := intLit(64)
			return arrow.Timestamp(v), err
		}
		if err := want(litString, "an RFC 3339 timestamp string or an integer"); err != nil {
			return nil, err
		}
		ts, _, err := arrow.TimestampFromStringInLocation(l.text, t.Unit, time.UTC)
		return ts, err
	case *arrow.Time32Type:
		v, err := intLit(32)
		return arrow.Time32(v), err
	case *arrow.Time64Type:
		v, err := intLit(64)
		return arrow.Time64(v), err
	case *arrow.DurationType:
		v, err := intLit(64)
		return arrow.Duration(v), err
	case *arrow.Decimal32Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal.Decimal32FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal64Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal.Decimal64FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal128Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal128.FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal256.FromString(l.text, t.Precision, t.Scale)
	}
	// Types without bounds: any literal works, only counts are used.
	return l.text, nil
}
