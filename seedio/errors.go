package seedio

import (
	"errors"
	"fmt"
)

// Reader-side sentinels of the seed error catalogue (zone-seeds.md §5.2).
// Every error returned by Decode wraps exactly one of them (or one of the
// locator / bitmap-hex sentinels defined next to ParseLocator and
// decodeNullBitmapHex), so callers can test with errors.Is. The concrete
// error is a *SeedError carrying the code, the zone and the field concerned.
var (
	// ErrSeedBufferMissing (E03): the locator names a global buffer the data
	// file does not have, or the buffer cannot be read.
	ErrSeedBufferMissing = errors.New("seed buffer missing (E03)")
	// ErrSeedNotIPCFile (E04): the buffer is not exactly one well-formed
	// Arrow IPC file (bad magic, stream format, broken footer or message
	// layout, leading or trailing bytes, unreadable record batch body).
	ErrSeedNotIPCFile = errors.New("seed is not an Arrow IPC file (E04)")
	// ErrSeedVersionUnsupported (E05): schema metadata `version` present and
	// not exactly "1".
	ErrSeedVersionUnsupported = errors.New("seed version unsupported (E05)")
	// ErrSeedSchema (E06): missing, extra, misordered or duplicate fields,
	// wrong count types or nullability, v0 with negative_nan_count, v1
	// without it, duplicate schema-metadata keys.
	ErrSeedSchema = errors.New("seed schema invalid (E06)")
	// ErrSeedValueType (E07): min/max type differs from the column's stored type.
	ErrSeedValueType = errors.New("seed value type differs from column type (E07)")
	// ErrSeedBatchCount (E08): not exactly one record batch (zero allowed
	// for a v0 seed of an empty data file only).
	ErrSeedBatchCount = errors.New("seed record batch count invalid (E08)")
	// ErrSeedNullInCount (E09): a null in null_count, nan_count,
	// negative_nan_count or zone_length.
	ErrSeedNullInCount = errors.New("seed count column contains a null (E09)")
	// ErrSeedZoneLength (E10): zone_length 0, a non-final zone shorter or
	// longer than rows_per_zone, or a final zone longer than rows_per_zone.
	ErrSeedZoneLength = errors.New("seed zone length invalid (E10)")
	// ErrSeedCoverage (E11): the zones do not cover exactly the data file's
	// physical rows (zone count, sum, or start/end overflow).
	ErrSeedCoverage = errors.New("seed zones do not cover the data file (E11)")
	// ErrSeedCountExceedsLength (E12): null_count + nan_count > zone_length.
	ErrSeedCountExceedsLength = errors.New("seed counts exceed zone length (E12)")
	// ErrSeedNegativeNaN (E13): negative_nan_count > nan_count.
	ErrSeedNegativeNaN = errors.New("seed negative NaN count exceeds NaN count (E13)")
	// ErrSeedNaNOnNonFloat (E14): a NaN count is non-zero for a non-float type.
	ErrSeedNaNOnNonFloat = errors.New("seed NaN count on a non-float type (E14)")
	// ErrSeedBoundNaN (E15): a v1 bound is NaN.
	ErrSeedBoundNaN = errors.New("seed bound is NaN (E15)")
	// ErrSeedBoundOrder (E16): min > max.
	ErrSeedBoundOrder = errors.New("seed min greater than max (E16)")
	// ErrSeedBoundUnsupported (E17): a non-null bound for a type without
	// supported bounds.
	ErrSeedBoundUnsupported = errors.New("seed bound on a type without bounds (E17)")
	// ErrSeedBoundWithoutValues (E18): a v1 non-null bound in a zone with no
	// ordinary values.
	ErrSeedBoundWithoutValues = errors.New("seed bound in a zone without ordinary values (E18)")
	// ErrSeedBoundEncoding (E19): a bound is not a valid value of its type
	// (invalid UTF-8, decimal outside its precision).
	ErrSeedBoundEncoding = errors.New("seed bound encoding invalid (E19)")
	// ErrSeedBitmapRange (E22): a null offset >= the data file's row count.
	ErrSeedBitmapRange = errors.New("seed null bitmap offset out of range (E22)")
	// ErrSeedBitmapMismatch (E23): a zone's bitmap cardinality differs from
	// its null_count.
	ErrSeedBitmapMismatch = errors.New("seed null bitmap disagrees with null_count (E23)")
	// ErrSeedRowsPerZoneMismatch (E24): a consumer expected another
	// rows_per_zone (compatibility, not corruption).
	ErrSeedRowsPerZoneMismatch = errors.New("seed rows_per_zone differs from the expected one (E24)")
	// ErrSeedV1WithoutFlag (E26): a v1 seed in a table whose manifest lacks
	// FLAG_ZONE_WRITE_SEEDS; the seed must be ignored.
	ErrSeedV1WithoutFlag = errors.New("v1 seed in a table without the zone write seeds flag (E26)")

	// ErrPredicate reports a predicate Prune cannot evaluate (wrong literal
	// count, literal type, null literal). It is a caller error, not a seed error.
	ErrPredicate = errors.New("seedio: invalid predicate")
	// ErrSummaryOverflow reports a count that overflows uint64 while
	// aggregating zones or summaries.
	ErrSummaryOverflow = errors.New("seedio: summary count overflows uint64")
)

// NoZone is the SeedError.Zone value of errors not tied to one zone.
const NoZone = -1

// SeedError is the concrete type of every validation error Decode returns.
// It unwraps to the catalogue sentinel (errors.Is) and to the underlying
// cause, if any.
type SeedError struct {
	Code  string // catalogue code, e.g. "E12"
	Zone  int    // zone index, or NoZone
	Field string // seed field or metadata key concerned, may be empty
	Msg   string // what exactly is wrong
	Err   error  // the catalogue sentinel
	Cause error  // underlying library error, may be nil
}

func (e *SeedError) Error() string {
	s := "seedio: " + e.Code
	if e.Zone != NoZone {
		s += fmt.Sprintf(" zone %d", e.Zone)
	}
	if e.Field != "" {
		s += " " + e.Field
	}
	s += ": " + e.Msg
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause.
func (e *SeedError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func newErr(code string, sentinel error, zone int, field, format string, args ...any) *SeedError {
	return &SeedError{Code: code, Zone: zone, Field: field, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func wrapErr(code string, sentinel error, cause error, zone int, field, format string, args ...any) *SeedError {
	e := newErr(code, sentinel, zone, field, format, args...)
	e.Cause = cause
	return e
}

// bufferMissingError returns the E03 error for a locator whose buffer index
// names no readable global buffer of the data file (§5.1 item 2). The data
// file reader, which resolves locators, uses it so that E03 has the same
// typed form as the errors Decode returns. cause may be nil.
func bufferMissingError(column string, bufferIndex uint32, available int, cause error) error {
	return wrapErr("E03", ErrSeedBufferMissing, cause, NoZone, shorten(column),
		"locator names global buffer %d, the data file has %d global buffers (R3)", bufferIndex, available)
}
