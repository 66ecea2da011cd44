package flags

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by every refusal caused by a flag bit this build
// does not support (R55).
var ErrUnsupported = errors.New("unsupported feature flags")

// ErrHalfSet is wrapped when a paired bit is set in only one of the two
// words (R59, E25 ErrFeatureFlagsHalfSet). Such a manifest is corrupt.
var ErrHalfSet = errors.New("paired feature flag set in only one word")

// Access says which check refused a dataset.
type Access int

const (
	// Read is the reader-word check.
	Read Access = iota
	// Write is the writer-word check.
	Write
)

func (a Access) String() string {
	if a == Write {
		return "written"
	}
	return "read"
}

// UnsupportedError names the bits a reader or writer does not support. Its
// message is modelled on Lance's own refusal (lance-table-format.md §6.6).
type UnsupportedError struct {
	Access  Access
	Flags   uint64 // the whole word that was checked
	Unknown uint64 // the bits of Flags this build does not support
}

func (e *UnsupportedError) Error() string {
	verb := "read"
	if e.Access == Write {
		verb = "write"
	}
	return fmt.Sprintf("This dataset cannot be %s by this version of lancekeeper. Please upgrade lancekeeper to %s this dataset. Flags: %d (unsupported: %s)",
		e.Access, verb, e.Flags, describeBits(e.Unknown))
}

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// HalfSetError reports a paired bit set in only one of the two words.
type HalfSetError struct {
	Bit    uint64
	Reader uint64
	Writer uint64
}

func (e *HalfSetError) Error() string {
	which := "reader"
	if e.Writer&e.Bit != 0 {
		which = "writer"
	}
	return fmt.Sprintf("corrupt manifest: %s is set only in the %s feature flags (reader_feature_flags=%d, writer_feature_flags=%d), so its semantics are undefined",
		Name(e.Bit), which, e.Reader, e.Writer)
}

// Is reports whether target is ErrHalfSet.
func (e *HalfSetError) Is(target error) bool { return target == ErrHalfSet }
