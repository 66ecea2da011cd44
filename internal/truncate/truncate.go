// Package truncate shortens long string and binary bounds into bounds of at
// most a given length that still enclose the value (zone-seeds.md §6.2,
// rules T-R1…T-R8, decision Q17): a lower bound is a prefix, an upper bound
// a prefix with its last character (or byte) incremented, or the value
// itself up to a hard cap. Strings stay valid UTF-8.
package truncate

import "unicode/utf8"

// MinString returns a lower bound of s of at most maxBytes bytes
// (T-R3): s itself when len(s) <= maxBytes, otherwise the longest prefix of at
// most maxBytes bytes that ends on a UTF-8 character boundary (possibly empty,
// which is a valid weak lower bound). maxBytes < 0 is treated as 0.
func MinString(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	return s[:utf8Cut(s, maxBytes)]
}

// utf8Cut returns the largest cut <= max (max < len(s)) with s[cut] a rune
// start.
func utf8Cut(s string, max int) int {
	cut := max
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}

// MaxString returns an upper bound of s (T-R5, T-R6) and whether one
// exists within the caps:
//   - len(s) <= maxBytes: s itself.
//   - otherwise: the prefix of at most maxBytes bytes on a character boundary,
//     whose rightmost character that has a successor of the same UTF-8 width
//     is replaced by that successor (U+D7FF → U+E000, never a surrogate,
//     U+10FFFF has none), with everything after it dropped. The result is
//     strictly greater than every string starting with the kept prefix, hence
//     greater than s.
//   - when no character qualifies: s itself if len(s) <= hardCap, else
//     ("", false): the bound must be written null (R37).
//
// s must be valid UTF-8 for the result to be valid UTF-8 (R38).
func MaxString(s string, maxBytes, hardCap int) (string, bool) {
	if len(s) <= maxBytes {
		return s, true
	}
	p := s[:utf8Cut(s, maxBytes)]
	for end := len(p); end > 0; {
		r, size := utf8.DecodeLastRuneInString(p[:end])
		start := end - size
		if r == utf8.RuneError && size <= 1 {
			// Not a valid encoding: cannot increment a character here.
			end = start
			continue
		}
		if next, ok := succRune(r); ok && utf8.RuneLen(next) == size {
			out := make([]byte, start, start+size)
			copy(out, p[:start])
			out = utf8.AppendRune(out, next)
			return string(out), true
		}
		end = start
	}
	if len(s) <= hardCap {
		return s, true
	}
	return "", false
}

// succRune returns the next Unicode scalar value after r, skipping the
// surrogate range; U+10FFFF has no successor.
func succRune(r rune) (rune, bool) {
	switch {
	case r >= utf8.MaxRune:
		return 0, false
	case r == 0xD7FF:
		return 0xE000, true
	}
	return r + 1, true
}

// MinBinary returns a lower bound of b of at most maxBytes bytes
// (T-R3): b itself when short enough, else its first maxBytes bytes. The
// result aliases b.
func MinBinary(b []byte, maxBytes int) []byte {
	if len(b) <= maxBytes {
		return b
	}
	if maxBytes < 0 {
		maxBytes = 0
	}
	return b[:maxBytes]
}

// MaxBinary returns an upper bound of b (T-R4, T-R6) and whether one
// exists within the caps:
//   - len(b) <= maxBytes: b itself (aliased);
//   - otherwise: the first maxBytes bytes with trailing 0xFF bytes dropped and
//     the last remaining byte incremented (a fresh slice), which is strictly
//     greater than every value with that prefix;
//   - when only 0xFF bytes remain: b itself if len(b) <= hardCap, else
//     (nil, false).
func MaxBinary(b []byte, maxBytes, hardCap int) ([]byte, bool) {
	if len(b) <= maxBytes {
		return b, true
	}
	if maxBytes < 0 {
		maxBytes = 0
	}
	n := maxBytes
	for n > 0 && b[n-1] == 0xFF {
		n--
	}
	if n > 0 {
		out := make([]byte, n)
		copy(out, b[:n])
		out[n-1]++
		return out, true
	}
	if len(b) <= hardCap {
		return b, true
	}
	return nil, false
}
