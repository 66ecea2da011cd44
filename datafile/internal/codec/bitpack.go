package codec

// AppendBitpacked appends one inline-bitpacking chunk (§7.3) to dst: the
// width word (T bits) and the FastLanes-packed block of vals, n ≤ 1024
// values of t bits (8, 16, 32 or 64) given as raw little-endian words in
// vals; the block is padded with zeros to 1024 values. The width is the
// smallest that holds every value.
func AppendBitpacked(dst []byte, t uint64, vals []byte, n int) []byte {
	return dst
}
