package seedio

// The seed_null_bitmap metadata value: lowercase hex of a 32-bit Roaring
// bitmap in the portable RoaringFormatSpec layout (R41–R48, §9).
//
// Error codes defined in this file: E20 (ErrSeedBitmapHex) and
// E21 (ErrSeedBitmapDecode) of spec §5.2. E22/E23 (offsets against the file's
// row count and the zones' null counts) are reader-side validation.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
)

var (
	// ErrSeedBitmapHex (E20): seed_null_bitmap has odd length or a byte that
	// is not an ASCII hex digit.
	ErrSeedBitmapHex = errors.New("seed null bitmap hex (E20)")
	// ErrSeedBitmapDecode (E21): the decoded bytes are not exactly one valid
	// portable 32-bit Roaring bitmap (bad cookie, truncated, trailing bytes,
	// inconsistent header, unsorted or overlapping content).
	ErrSeedBitmapDecode = errors.New("seed null bitmap decode (E21)")
)

// emptyNullBitmapHex is the hex of the serialized empty bitmap, which v1
// writers emit when a column has no nulls (R44, T13).
const emptyNullBitmapHex = "3a30000000000000"

// encodeNullBitmapHex serializes bm in the portable Roaring layout after run
// optimisation (R42, R48) and returns it as lowercase hex (R43). A nil or
// empty bitmap gives [emptyNullBitmapHex] (R44). bm is not modified.
func encodeNullBitmapHex(bm *roaring.Bitmap) (string, error) {
	if bm == nil || bm.IsEmpty() {
		return emptyNullBitmapHex, nil
	}
	c := bm.Clone()
	return encodeOwnedBitmap(c)
}

// encodeOwnedBitmap is encodeNullBitmapHex for a bitmap the caller owns (it is
// run-optimised in place).
func encodeOwnedBitmap(bm *roaring.Bitmap) (string, error) {
	bm.RunOptimize()
	raw, err := bm.ToBytes()
	if err != nil {
		return "", fmt.Errorf("seedio: serializing null bitmap: %w", err)
	}
	return hex.EncodeToString(raw), nil
}

// decodeNullBitmapHex decodes a seed_null_bitmap value strictly:
//   - "" is a present, empty bitmap (R44, v0 compatibility);
//   - otherwise the value must be hex (upper or lower case, even length),
//     else ErrSeedBitmapHex (E20);
//   - the bytes must be exactly one portable 32-bit Roaring bitmap: cookie
//     12346 or 12347, consistent header and offsets, sorted keys, array
//     contents strictly increasing, bitmap popcounts and run lengths equal to
//     the header cardinalities, runs sorted and non-overlapping, and no
//     trailing bytes; else ErrSeedBitmapDecode (E21).
//
// The structure is checked in time and memory linear in len(s) before any
// allocation that depends on header fields, so hostile input cannot cause a
// panic or unbounded allocation.
func decodeNullBitmapHex(s string) (*roaring.Bitmap, error) {
	if s == "" {
		return roaring.New(), nil
	}
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("%w: odd length %d", ErrSeedBitmapHex, len(s))
	}
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return nil, fmt.Errorf("%w: byte %q at offset %d is not a hex digit", ErrSeedBitmapHex, s[i], i)
		}
	}
	raw, err := hex.DecodeString(s)
	if err != nil { // unreachable after the checks above; kept for safety
		return nil, fmt.Errorf("%w: %v", ErrSeedBitmapHex, err)
	}
	return decodeRoaringStrict(raw)
}

func isHexDigit(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

const (
	roaringCookieNoRun = 12346
	roaringCookieRun   = 12347
	roaringNoOffsetMax = 4 // offset header present when size >= 4 (run cookie)
	roaringArrayMax    = 4096
	roaringBitmapBytes = 8192
)

// decodeRoaringStrict validates raw as one portable Roaring bitmap and then
// deserializes it.
func decodeRoaringStrict(raw []byte) (bm *roaring.Bitmap, err error) {
	if err := checkRoaringLayout(raw); err != nil {
		return nil, err
	}
	// The layout is fully validated; a panic inside the library would still be
	// a bug we must not propagate to callers handling hostile bytes.
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("%w: roaring decoder panicked: %v", ErrSeedBitmapDecode, r)
		}
	}()
	bm = roaring.New()
	n, err := bm.ReadFrom(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSeedBitmapDecode, err)
	}
	if n != int64(len(raw)) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the bitmap", ErrSeedBitmapDecode, int64(len(raw))-n)
	}
	return bm, nil
}

// checkRoaringLayout walks the portable format (RoaringFormatSpec) and checks
// every structural invariant, in O(len(raw)) time and no allocation.
func checkRoaringLayout(raw []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrSeedBitmapDecode}, args...)...)
	}
	if len(raw) < 4 {
		return bad("%d bytes, too short for a cookie", len(raw))
	}
	cookie := binary.LittleEndian.Uint32(raw)
	pos := 4
	var size int
	var runFlags []byte
	hasOffsets := true
	switch {
	case cookie == roaringCookieNoRun:
		if len(raw) < 8 {
			return bad("truncated container count")
		}
		sz := binary.LittleEndian.Uint32(raw[4:])
		if sz > 1<<16 {
			return bad("container count %d exceeds 65536", sz)
		}
		size = int(sz)
		pos = 8
	case cookie&0xFFFF == roaringCookieRun:
		size = int(cookie>>16) + 1
		nf := (size + 7) / 8
		if len(raw)-pos < nf {
			return bad("truncated run-container flags")
		}
		runFlags = raw[pos : pos+nf]
		pos += nf
		hasOffsets = size >= roaringNoOffsetMax
	default:
		return bad("unknown cookie 0x%08x", cookie)
	}
	headerBytes := 4 * size
	if hasOffsets {
		headerBytes += 4 * size
	}
	if len(raw)-pos < headerBytes {
		return bad("truncated header: %d containers need %d bytes, %d left", size, headerBytes, len(raw)-pos)
	}
	desc := raw[pos : pos+4*size]
	pos += 4 * size
	var offsets []byte
	if hasOffsets {
		offsets = raw[pos : pos+4*size]
		pos += 4 * size
	}
	prevKey := -1
	for i := 0; i < size; i++ {
		key := int(binary.LittleEndian.Uint16(desc[4*i:]))
		card := int(binary.LittleEndian.Uint16(desc[4*i+2:])) + 1
		if key <= prevKey {
			return bad("container %d: key %d not after key %d", i, key, prevKey)
		}
		prevKey = key
		if hasOffsets {
			if off := binary.LittleEndian.Uint32(offsets[4*i:]); uint64(off) != uint64(pos) {
				return bad("container %d: offset header says %d, container starts at %d", i, off, pos)
			}
		}
		isRun := runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0
		rest := raw[pos:]
		switch {
		case isRun:
			if len(rest) < 2 {
				return bad("container %d: truncated run count", i)
			}
			nruns := int(binary.LittleEndian.Uint16(rest))
			need := 2 + 4*nruns
			if len(rest) < need {
				return bad("container %d: %d runs need %d bytes, %d left", i, nruns, need, len(rest))
			}
			total, next := 0, 0
			for r := 0; r < nruns; r++ {
				start := int(binary.LittleEndian.Uint16(rest[2+4*r:]))
				length := int(binary.LittleEndian.Uint16(rest[4+4*r:])) + 1
				if start < next {
					return bad("container %d: run %d starts at %d, overlapping or unsorted", i, r, start)
				}
				if start+length > 1<<16 {
					return bad("container %d: run %d [%d,+%d) leaves the container", i, r, start, length)
				}
				next = start + length
				total += length
			}
			if total != card {
				return bad("container %d: runs hold %d values, header says %d", i, total, card)
			}
			pos += need
		case card <= roaringArrayMax:
			need := 2 * card
			if len(rest) < need {
				return bad("container %d: array of %d values needs %d bytes, %d left", i, card, need, len(rest))
			}
			prev := -1
			for j := 0; j < card; j++ {
				v := int(binary.LittleEndian.Uint16(rest[2*j:]))
				if v <= prev {
					return bad("container %d: array value %d not after %d", i, v, prev)
				}
				prev = v
			}
			pos += need
		default:
			if len(rest) < roaringBitmapBytes {
				return bad("container %d: bitmap needs %d bytes, %d left", i, roaringBitmapBytes, len(rest))
			}
			pop := 0
			for j := 0; j < roaringBitmapBytes; j += 8 {
				pop += bits.OnesCount64(binary.LittleEndian.Uint64(rest[j:]))
			}
			if pop != card {
				return bad("container %d: bitmap holds %d values, header says %d", i, pop, card)
			}
			pos += roaringBitmapBytes
		}
	}
	if pos != len(raw) {
		return bad("%d trailing bytes after the bitmap", len(raw)-pos)
	}
	return nil
}
