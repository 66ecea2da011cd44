package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key accepted (S3 and GCS limit keys to 1024 bytes).
const MaxKeyLen = 1024

// tempPrefix starts the base name of the temporary files the local backend
// writes next to their final name. Keys may not use it, and listings hide it.
const tempPrefix = ".lk-tmp-"

// attrsSuffix is the suffix of fileblob's metadata sidecar files; fileblob
// refuses keys that end with it.
const attrsSuffix = ".attrs"

// ValidateKey reports whether key can be stored identically on every backend.
// Keys are '/'-separated, relative to the store root, and must be non-empty
// valid UTF-8 of at most MaxKeyLen bytes with no leading or trailing '/', no
// empty, "." or ".." segment, no "../" (even inside a segment like "a../"),
// no control character or backslash, no "__0x"
// (the escape marker of gocloud drivers), no ".attrs" suffix (fileblob's
// sidecar files) and no segment starting with ".lk-tmp-" (our temp files).
func ValidateKey(key string) error {
	if err := checkPath(key); err != nil {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, err)
	}
	return nil
}

func checkPath(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("empty")
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%d bytes, longer than %d", len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("not valid UTF-8")
	case strings.HasSuffix(key, attrsSuffix):
		return fmt.Errorf("ends with %q (reserved by the local backend)", attrsSuffix)
	case strings.Contains(key, "__0x"):
		return fmt.Errorf(`contains "__0x" (escape marker of the blob drivers)`)
	case strings.Contains(key, "../"):
		return fmt.Errorf(`contains "../" (the blob drivers escape that '/')`)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return fmt.Errorf("byte %#x at offset %d is a control character or backslash", c, i)
		}
	}
	// The segments in order, without strings.Split's slice (every write
	// of a commit validates its keys).
	i := 0
	for rest := key; ; i++ {
		seg, tail, more := strings.Cut(rest, "/")
		rest = tail
		switch {
		case seg == "":
			return fmt.Errorf("empty path segment %d (leading, trailing or doubled '/')", i)
		case seg == "." || seg == "..":
			return fmt.Errorf("path segment %d is %q", i, seg)
		case strings.HasPrefix(seg, tempPrefix):
			return fmt.Errorf("path segment %d starts with %q (reserved for temporary files)", i, tempPrefix)
		}
		if !more {
			return nil
		}
	}
}

// validatePrefix checks a listing prefix: empty, or a key, or a key followed
// by '/'.
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := checkPath(strings.TrimSuffix(prefix, "/")); err != nil {
		return fmt.Errorf("%w: listing prefix %q: %s", ErrInvalidKey, prefix, err)
	}
	return nil
}
