package datafile

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package for bad input wraps
// one of them, so callers can classify failures with errors.Is; the typed
// errors below carry the details (errors.As).
var (
	// ErrNotLance: the bytes are not a Lance file (too short or no "LANC" magic).
	ErrNotLance = errors.New("datafile: not a Lance file")
	// ErrLegacyFormat: a Lance v1 ("0.1"/legacy) data file, which this package refuses.
	ErrLegacyFormat = errors.New("datafile: legacy v1 Lance file")
	// ErrUnsupportedVersion: a footer version this package does not know.
	ErrUnsupportedVersion = errors.New("datafile: unsupported Lance file version")
	// ErrTruncated: a table, buffer or message extends past the end of the file.
	ErrTruncated = errors.New("datafile: truncated file")
	// ErrMalformed: the file violates a rule of the Lance file format.
	ErrMalformed = errors.New("datafile: malformed file")
	// ErrUnsupported: a valid file uses a feature this package cannot decode
	// (an encoding, a compression scheme, a logical type).
	ErrUnsupported = errors.New("datafile: unsupported feature")
	// ErrTooLarge: a length in the file exceeds what this package is willing to allocate.
	ErrTooLarge = errors.New("datafile: metadata too large")
	// ErrInvalidSchema: the Arrow schema given to the writer cannot be
	// stored at the writer's version (the wrapping message says why and at
	// which version, e.g. a map in 2.0/2.1).
	ErrInvalidSchema = errors.New("datafile: schema not writable")
	// ErrInvalidData: a record batch given to the writer cannot be stored
	// (for example a struct array with nulls, which 2.0 cannot represent);
	// the wrapping message names the field and the version.
	ErrInvalidData = errors.New("datafile: data not writable")
	// ErrWriterClosed: Write or Close called after Close (or after a failed write).
	ErrWriterClosed = errors.New("datafile: writer closed")
)

// FormatError reports input that is not a valid Lance v2 file. Offset is the
// absolute file offset of the offending bytes (-1 when not applicable),
// Section names the structure being decoded ("footer", "GBO table",
// "FileDescriptor", "column 3 page 1 encoding", ...). Err is one of the
// sentinels above.
type FormatError struct {
	Path    string
	Section string
	Offset  int64
	Reason  string
	Err     error
}

func (e *FormatError) Error() string {
	var b []byte
	b = append(b, "datafile: "...)
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	if e.Section != "" {
		b = append(b, e.Section...)
	}
	if e.Offset >= 0 {
		b = fmt.Appendf(b, " at offset %d", e.Offset)
	}
	b = append(b, ": "...)
	b = append(b, e.Reason...)
	return string(b)
}

func (e *FormatError) Unwrap() error { return e.Err }

// LegacyFileError reports a Lance v1 data file (footer version 0.0, 0.1 or
// 0.2). It matches ErrLegacyFormat with errors.Is.
type LegacyFileError struct {
	Path         string
	Major, Minor uint16
}

func (e *LegacyFileError) Error() string {
	p := ""
	if e.Path != "" {
		p = e.Path + ": "
	}
	return fmt.Sprintf("datafile: %slegacy v1 Lance file (footer version %d.%d); only Lance v2 files (2.0, 2.1, 2.2) are supported", p, e.Major, e.Minor)
}

func (e *LegacyFileError) Unwrap() error { return ErrLegacyFormat }

// VersionError reports a footer version this package does not know. It
// matches ErrUnsupportedVersion with errors.Is.
type VersionError struct {
	Path         string
	Major, Minor uint16
}

func (e *VersionError) Error() string {
	p := ""
	if e.Path != "" {
		p = e.Path + ": "
	}
	return fmt.Sprintf("datafile: %sunknown Lance file footer version %d.%d", p, e.Major, e.Minor)
}

func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }

func formatErr(sentinel error, section string, off int64, format string, args ...any) *FormatError {
	return &FormatError{Section: section, Offset: off, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}

// withPath fills in the file path of the typed errors of this package.
func withPath(err error, path string) error {
	if path == "" || err == nil {
		return err
	}
	var fe *FormatError
	if errors.As(err, &fe) && fe.Path == "" {
		fe.Path = path
	}
	var le *LegacyFileError
	if errors.As(err, &le) && le.Path == "" {
		le.Path = path
	}
	var ve *VersionError
	if errors.As(err, &ve) && ve.Path == "" {
		ve.Path = path
	}
	return err
}
