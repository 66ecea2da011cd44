package codec

import (
	"errors"
	"fmt"
)

// Sentinels wrapped by every *Error of this package.
var (
	// ErrCorrupt: the bytes contradict the encoding (short buffer, bad
	// offsets, a run past the count, a malformed zstd/lz4/FSST stream).
	ErrCorrupt = errors.New("corrupt compressed data")
	// ErrUnsupported: a valid encoding this package does not decode in the
	// context it appears in (or an encoding Lance never writes there).
	ErrUnsupported = errors.New("unsupported compression")
	// ErrLimit: decoding would exceed the caller's Limits.
	ErrLimit = errors.New("decoded size over limit")
)

// Error names the compression (e.g. "inline_bitpacking", "fsst") whose bytes
// failed and why. It wraps one of the sentinels, and possibly a cause.
type Error struct {
	Encoding string // CompressiveEncoding variant, e.g. "rle"
	Context  string // "mini-block", "block" or "per-value"
	Msg      string
	Err      error // a sentinel, or a cause that wraps one
}

func (e *Error) Error() string {
	return fmt.Sprintf("codec: %s (%s): %s: %v", e.Encoding, e.Context, e.Msg, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func errf(sentinel error, enc, ctx, format string, args ...any) error {
	return &Error{Encoding: enc, Context: ctx, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
