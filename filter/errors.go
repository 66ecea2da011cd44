package filter

import (
	"errors"
	"fmt"
)

// Sentinels; every error of this package wraps one of them.
var (
	// ErrSyntax: the predicate text does not parse (*SyntaxError).
	ErrSyntax = errors.New("filter: syntax error")
	// ErrType: the predicate does not fit the schema (*TypeError): a
	// missing column, a literal that does not fit the column's type, an
	// unknown function, an operator the column's type does not support.
	ErrType = errors.New("filter: type error")
	// ErrEval: a record given to Eval does not hold what the filter was
	// bound to.
	ErrEval = errors.New("filter: evaluation error")
	// ErrArithmetic: integer division or remainder by zero, or MIN / -1,
	// on a row the filter evaluates (Lance 12 fails the query too).
	ErrArithmetic = errors.New("filter: arithmetic error")
)

// SyntaxError names the byte offset and the token where parsing failed.
type SyntaxError struct {
	Offset int    // byte offset in the predicate text
	Token  string // the offending token ("end of input" at the end)
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter: syntax error at offset %d near %q: %s", e.Offset, e.Token, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// TypeError names the byte offset of the construct that does not fit.
type TypeError struct {
	Offset int
	Column string // the column involved, if any
	Msg    string
}

func (e *TypeError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("filter: at offset %d: column %q: %s", e.Offset, e.Column, e.Msg)
	}
	return fmt.Sprintf("filter: at offset %d: %s", e.Offset, e.Msg)
}

func (e *TypeError) Unwrap() error { return ErrType }
