package seedio

// Truncation limits of string and binary bounds (spec §6.2, rules
// T-R1…T-R8, decision Q17); the truncation itself is internal/truncate.

const (
	// DefaultMaxBoundBytes is the default truncation length L for string and
	// binary bounds (T-R2, Q17).
	DefaultMaxBoundBytes = 64
	// HardCapBoundBytes is the hard cap H: when a long maximum cannot be
	// truncated into an upper bound, it is written untruncated if it is at
	// most this long, otherwise that bound is written null (T-R6, Q17).
	HardCapBoundBytes = 4096
)
