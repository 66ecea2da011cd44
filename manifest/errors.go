package manifest

import (
	"errors"
	"fmt"
)

// ErrCorrupt matches (via errors.Is) every error caused by bytes that do not
// form a valid manifest file, manifest name, hint or deletion file.
var ErrCorrupt = errors.New("corrupt lance file")

// ErrNotFound matches errors for a version, manifest or file that does not
// exist in the dataset.
var ErrNotFound = errors.New("not found")

// ErrMixedNaming is returned when one _versions directory holds manifests
// named with both the V1 and the V2 scheme (lance-table-format.md §4.2).
var ErrMixedNaming = errors.New("Found multiple manifest naming schemes in the same directory: V2 and V1. Use `migrate_manifest_paths_v2` to migrate the directory.")

// FormatError describes bytes that violate the Lance format. File is the
// name the caller gave the bytes (usually the object key), Offset the
// absolute byte offset in that file where the problem was detected.
type FormatError struct {
	File   string
	Offset int64
	Reason string
	Err    error // underlying decoder error, if any
}

func (e *FormatError) Error() string {
	msg := fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrCorrupt.
func (e *FormatError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying decoder error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(file string, off int64, format string, args ...any) *FormatError {
	return &FormatError{File: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// ErrRefNotFound is wrapped when a tag or branch does not exist.
var ErrRefNotFound = errors.New("ref not found")

// ErrRefExists is wrapped when a tag or branch to be created already exists.
var ErrRefExists = errors.New("ref already exists")
