// Package flags knows the Lance feature-flag bits: their names, which ones
// this build supports, the paired and sticky rules, and the errors a reader
// or writer returns when it must refuse a dataset.
//
// Every manifest carries two 64-bit words, reader_feature_flags and
// writer_feature_flags (shared/spec/lance-table-format.md §6). A client
// refuses to read a dataset whose reader word has a bit it does not know,
// and refuses to write one whose writer word has such a bit. Paired bits
// must be set in both words or in neither; sticky bits, once set, are carried
// into every derived manifest. This build supports bits 0–5, 7, 8 and 16
// (FLAG_ZONE_WRITE_SEEDS, shared/spec/zone-seeds.md R53).
package flags

import (
	"fmt"
	"math/bits"
	"strings"
)

// The feature-flag bits (lance-table-format.md §6.1).
const (
	DeletionFiles             uint64 = 1 << 0
	StableRowIDs              uint64 = 1 << 1
	UseV2FormatDeprecated     uint64 = 1 << 2
	TableConfig               uint64 = 1 << 3
	BasePaths                 uint64 = 1 << 4
	DisableTransactionFile    uint64 = 1 << 5
	UnstableDataOverlayFiles  uint64 = 1 << 6
	CoveredIndexMetadata      uint64 = 1 << 7
	MixedDataFileVersions     uint64 = 1 << 8
	FragReuseWithStableRowIDs uint64 = 1 << 9
	FragmentReuseIndex        uint64 = 1 << 10
	Contested11               uint64 = 1 << 11
	FragmentTree              uint64 = 1 << 12
	IndependentCoveringFields uint64 = 1 << 13
	ManagedBlobs              uint64 = 1 << 14
	// ZoneWriteSeeds is FLAG_ZONE_WRITE_SEEDS: the table references v1 zone
	// write seeds (zone-seeds.md R53). Paired and sticky.
	ZoneWriteSeeds uint64 = 1 << 16
)

// Supported is the set of bits this build understands, in either word.
const Supported = DeletionFiles | StableRowIDs | UseV2FormatDeprecated | TableConfig |
	BasePaths | DisableTransactionFile | CoveredIndexMetadata | MixedDataFileVersions |
	ZoneWriteSeeds

// Paired bits must be set in both words or in neither (§6.4 rule 1, R59).
const Paired = MixedDataFileVersions | ZoneWriteSeeds

// Sticky bits are carried from a parent manifest into every derived one and
// never cleared (§6.4 rule 2, R57).
const Sticky = MixedDataFileVersions | ZoneWriteSeeds

// names maps a bit number to its registry name. It is a function rather than
// a package-level map so that there is no package-level mutable state.
func bitName(n int) string {
	switch n {
	case 0:
		return "DELETION_FILES"
	case 1:
		return "STABLE_ROW_IDS"
	case 2:
		return "USE_V2_FORMAT_DEPRECATED"
	case 3:
		return "TABLE_CONFIG"
	case 4:
		return "BASE_PATHS"
	case 5:
		return "DISABLE_TRANSACTION_FILE"
	case 6:
		return "UNSTABLE_DATA_OVERLAY_FILES"
	case 7:
		return "COVERED_INDEX_METADATA"
	case 8:
		return "MIXED_DATA_FILE_VERSIONS"
	case 9:
		return "FRAG_REUSE_WITH_STABLE_ROW_IDS"
	case 10:
		return "FRAGMENT_REUSE_INDEX"
	case 11:
		return "CONTESTED_BIT_11"
	case 12:
		return "FRAGMENT_TREE"
	case 13:
		return "INDEPENDENT_COVERING_FIELDS"
	case 14:
		return "MANAGED_BLOBS"
	case 16:
		return "FLAG_ZONE_WRITE_SEEDS"
	default:
		return fmt.Sprintf("UNKNOWN_BIT_%d", n)
	}
}

// Name returns the registry name of a single bit (a value with exactly one
// bit set). Bits without a registry entry are named UNKNOWN_BIT_<n>.
func Name(bit uint64) string {
	if bits.OnesCount64(bit) != 1 {
		return fmt.Sprintf("INVALID_BIT_VALUE_%d", bit)
	}
	return bitName(bits.TrailingZeros64(bit))
}

// Names returns the names of every bit set in word, lowest bit first.
func Names(word uint64) []string {
	out := []string{}
	for w := word; w != 0; w &= w - 1 {
		out = append(out, bitName(bits.TrailingZeros64(w)))
	}
	return out
}

// Unsupported returns the bits of word that this build does not support.
func Unsupported(word uint64) uint64 { return word &^ Supported }

func describeBits(word uint64) string {
	parts := []string{}
	for w := word; w != 0; w &= w - 1 {
		n := bits.TrailingZeros64(w)
		parts = append(parts, fmt.Sprintf("bit %d (%d, %s)", n, uint64(1)<<n, bitName(n)))
	}
	return strings.Join(parts, ", ")
}
