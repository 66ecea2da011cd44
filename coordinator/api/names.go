package api

import (
	"errors"
	"fmt"
)

// ErrInvalidDatasetName is wrapped by every refusal of ValidateDatasetName.
var ErrInvalidDatasetName = errors.New("invalid dataset name")

// Limits of a dataset name.
const (
	MaxDatasetNameLen      = 255
	MaxDatasetNameSegments = 8
)

// ValidateDatasetName checks that name addresses a dataset strictly inside
// a root. The rule is an allow-list, so that no spelling can escape the
// root however it was encoded on the way: the name is 1 to 8 segments
// separated by '/', each segment starts with an ASCII letter or digit and
// continues with ASCII letters, digits, '.', '_' or '-', and does not end
// with '.'. That excludes
// "..", ".", empty segments (leading, trailing or doubled '/'), absolute
// paths, URL schemes (':'), percent signs (an encoded "%2e%2e" that some
// layer might decode again), backslashes, NUL and every other control
// character, and hidden or internal directories (".x", "_versions"). A
// segment after the first may not be "data" or "tree", the folders of a
// table that hold data files and branches: a table there would sit inside
// another table's reserved folder (the server also refuses names inside an
// existing table).
// The name is checked after the HTTP layer decoded it exactly once.
func ValidateDatasetName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidDatasetName)
	}
	if len(name) > MaxDatasetNameLen {
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidDatasetName, len(name), MaxDatasetNameLen)
	}
	segs, start := 0, 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			c := name[i]
			ok := isAlnum(c) || (i > start && (c == '.' || c == '_' || c == '-'))
			if !ok {
				what := fmt.Sprintf("byte %#02x", c)
				if c >= 0x20 && c < 0x7f {
					what = fmt.Sprintf("%q", rune(c))
				}
				if i == start && (c == '.' || c == '_' || c == '-') {
					return fmt.Errorf("%w %q: segment %d starts with %s (segments start with a letter or digit)", ErrInvalidDatasetName, name, segs+1, what)
				}
				return fmt.Errorf("%w %q: %s at offset %d (allowed: ASCII letters, digits, '.', '_', '-' and '/' between segments)", ErrInvalidDatasetName, name, what, i)
			}
			continue
		}
		if i == start {
			return fmt.Errorf("%w %q: empty segment at offset %d (leading, trailing or doubled '/')", ErrInvalidDatasetName, name, i)
		}
		if name[i-1] == '.' {
			return fmt.Errorf("%w %q: segment %d ends with '.'", ErrInvalidDatasetName, name, segs+1)
		}
		if seg := name[start:i]; segs > 0 && (seg == "data" || seg == "tree") {
			return fmt.Errorf("%w %q: segment %d is %q, a folder Lance reserves inside a table (a table there would lie inside the table %q, whose cleanup deletes it)",
				ErrInvalidDatasetName, name, segs+1, seg, name[:start-1])
		}
		segs++
		if segs > MaxDatasetNameSegments {
			return fmt.Errorf("%w %q: more than %d segments", ErrInvalidDatasetName, name, MaxDatasetNameSegments)
		}
		start = i + 1
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ValidateRootName checks a root name: 1 to 64 ASCII letters, digits, '_'
// or '-', starting with a letter or digit.
func ValidateRootName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("invalid root name %q: want 1 to 64 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) && (i == 0 || (c != '_' && c != '-')) {
			return fmt.Errorf("invalid root name %q: character %d (allowed: ASCII letters, digits, '_', '-')", name, i)
		}
	}
	return nil
}
