package seedio

// Seed locator: the data-file schema-metadata entry
// "lance.seed.<column>" = "<buffer_index>:<rows_per_zone>" (R1–R7).
//
// Error codes defined in this file: E01 (ErrSeedLocatorSyntax) and
// E02 (ErrSeedLocatorRange) of spec §5.2.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// LocatorKeyPrefix is the literal prefix of every seed locator key (R1).
const LocatorKeyPrefix = "lance.seed."

var (
	// ErrSeedLocatorSyntax (E01): the locator value is not canonical
	// "<digits>:<digits>" (exactly one ':', ASCII digits only, no sign, no
	// whitespace, no leading zeros).
	ErrSeedLocatorSyntax = errors.New("seed locator syntax (E01)")
	// ErrSeedLocatorRange (E02): buffer_index is 0 or exceeds 2^32-1, or
	// rows_per_zone is 0 or exceeds 2^64-1.
	ErrSeedLocatorRange = errors.New("seed locator out of range (E02)")
)

// LocatorError is the typed error returned by [ParseLocator]. It unwraps to
// [ErrSeedLocatorSyntax] or [ErrSeedLocatorRange].
type LocatorError struct {
	Value  string // the offending locator value (possibly shortened for display)
	Reason string // what is wrong, e.g. "buffer_index has a leading zero"
	Err    error  // ErrSeedLocatorSyntax or ErrSeedLocatorRange
}

func (e *LocatorError) Error() string {
	return fmt.Sprintf("%v: locator value %q: %s", e.Err, e.Value, e.Reason)
}

func (e *LocatorError) Unwrap() error { return e.Err }

// Locator is a parsed locator value.
type Locator struct {
	BufferIndex uint32 // global buffer holding the seed, >= 1 (R3)
	RowsPerZone uint64 // >= 1 (R4)
}

// String formats the locator canonically (same as [FormatLocator]).
func (l Locator) String() string { return FormatLocator(l.BufferIndex, l.RowsPerZone) }

// LocatorKey returns the schema-metadata key of the seed of top-level column
// column: "lance.seed." followed by the exact bytes of the name, with no
// escaping or normalisation (R1, R7).
func LocatorKey(column string) string { return LocatorKeyPrefix + column }

// FormatLocator returns the canonical locator value
// "<buffer_index>:<rows_per_zone>" in plain decimal (R2). It does not check
// ranges; writers pass buffer_index >= 1 and 1 <= rows_per_zone <= 2^32-1.
func FormatLocator(bufferIndex uint32, rowsPerZone uint64) string {
	b := make([]byte, 0, 32)
	b = strconv.AppendUint(b, uint64(bufferIndex), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, rowsPerZone, 10)
	return string(b)
}

// ParseLocator parses a locator value strictly (R2–R4, Q13): exactly two
// canonical decimal fields separated by one ':'; buffer_index in
// [1, 2^32-1]; rows_per_zone in [1, 2^64-1]. A malformed value gives a
// *LocatorError wrapping ErrSeedLocatorSyntax (E01); a well-formed value out of
// range wraps ErrSeedLocatorRange (E02). Whether the buffer exists (E03) is the
// caller's check.
func ParseLocator(value string) (Locator, error) {
	fail := func(sentinel error, reason string) (Locator, error) {
		return Locator{}, &LocatorError{Value: shorten(value), Reason: reason, Err: sentinel}
	}
	colon := strings.IndexByte(value, ':')
	if colon < 0 {
		return fail(ErrSeedLocatorSyntax, "missing ':' separator")
	}
	if strings.IndexByte(value[colon+1:], ':') >= 0 {
		return fail(ErrSeedLocatorSyntax, "more than one ':' separator")
	}
	bufStr, rpzStr := value[:colon], value[colon+1:]
	if reason := canonicalDigits(bufStr, "buffer_index"); reason != "" {
		return fail(ErrSeedLocatorSyntax, reason)
	}
	if reason := canonicalDigits(rpzStr, "rows_per_zone"); reason != "" {
		return fail(ErrSeedLocatorSyntax, reason)
	}
	buf, err := strconv.ParseUint(bufStr, 10, 32)
	if err != nil {
		return fail(ErrSeedLocatorRange, "buffer_index exceeds 2^32-1")
	}
	if buf == 0 {
		return fail(ErrSeedLocatorRange, "buffer_index is 0 (global buffer 0 is the file descriptor)")
	}
	rpz, err := strconv.ParseUint(rpzStr, 10, 64)
	if err != nil {
		return fail(ErrSeedLocatorRange, "rows_per_zone exceeds 2^64-1")
	}
	if rpz == 0 {
		return fail(ErrSeedLocatorRange, "rows_per_zone is 0")
	}
	return Locator{BufferIndex: uint32(buf), RowsPerZone: rpz}, nil
}

// canonicalDigits returns "" when s is canonical unsigned decimal (ASCII
// digits, non-empty, no leading zero unless s == "0"), else the reason.
func canonicalDigits(s, name string) string {
	if s == "" {
		return name + " is empty"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return fmt.Sprintf("%s has non-digit byte %q at position %d", name, c, i)
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return name + " has a leading zero"
	}
	return ""
}

// shorten keeps error messages bounded for hostile inputs.
func shorten(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
