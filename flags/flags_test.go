package flags

import (
	"errors"
	"strings"
	"testing"
)

// §6.1: every registry bit has its name; unregistered bits are named as unknown.
func TestRegistryNames(t *testing.T) {
	tests := []struct {
		bit  uint64
		name string
	}{
		{DeletionFiles, "DELETION_FILES"},
		{StableRowIDs, "STABLE_ROW_IDS"},
		{UseV2FormatDeprecated, "USE_V2_FORMAT_DEPRECATED"},
		{TableConfig, "TABLE_CONFIG"},
		{BasePaths, "BASE_PATHS"},
		{DisableTransactionFile, "DISABLE_TRANSACTION_FILE"},
		{UnstableDataOverlayFiles, "UNSTABLE_DATA_OVERLAY_FILES"},
		{CoveredIndexMetadata, "COVERED_INDEX_METADATA"},
		{MixedDataFileVersions, "MIXED_DATA_FILE_VERSIONS"},
		{FragReuseWithStableRowIDs, "FRAG_REUSE_WITH_STABLE_ROW_IDS"},
		{FragmentReuseIndex, "FRAGMENT_REUSE_INDEX"},
		{Contested11, "CONTESTED_BIT_11"},
		{FragmentTree, "FRAGMENT_TREE"},
		{IndependentCoveringFields, "INDEPENDENT_COVERING_FIELDS"},
		{ManagedBlobs, "MANAGED_BLOBS"},
		{1 << 15, "UNKNOWN_BIT_15"},
		{ZoneWriteSeeds, "FLAG_ZONE_WRITE_SEEDS"},
		{1 << 63, "UNKNOWN_BIT_63"},
	}
	for _, tt := range tests {
		if got := Name(tt.bit); got != tt.name {
			t.Errorf("Name(%d) = %q, want %q", tt.bit, got, tt.name)
		}
	}
	if got := strings.Join(Names(1|8|1<<16), ","); got != "DELETION_FILES,TABLE_CONFIG,FLAG_ZONE_WRITE_SEEDS" {
		t.Errorf("Names = %s", got)
	}
	if got := Names(0); len(got) != 0 {
		t.Errorf("Names(0) = %v", got)
	}
	if got := Name(3); !strings.HasPrefix(got, "INVALID") {
		t.Errorf("Name(3) = %q, want an invalid-value name", got)
	}
}

// R53: FLAG_ZONE_WRITE_SEEDS is 1<<16 = 65536.
func TestR53_FlagValue(t *testing.T) {
	if ZoneWriteSeeds != 65536 {
		t.Fatalf("ZoneWriteSeeds = %d", ZoneWriteSeeds)
	}
}

// The supported set is exactly bits 0-5, 7, 8 and 16 (issue 2 §3).
func TestSupportedMask(t *testing.T) {
	for n := 0; n < 64; n++ {
		bit := uint64(1) << n
		want := n <= 5 || n == 7 || n == 8 || n == 16
		if got := Supported&bit != 0; got != want {
			t.Errorf("bit %d supported = %v, want %v", n, got, want)
		}
	}
}

// R55 and §6.3: a reader refuses unknown reader bits, a writer unknown writer
// bits; the error wraps ErrUnsupported and names every unknown bit.
func TestR55_UnsupportedBitsRefused(t *testing.T) {
	tests := []struct {
		name           string
		reader, writer uint64
		readErr        bool
		writeErr       bool
		mention        string
	}{
		{"none", 0, 0, false, false, ""},
		{"all supported", 1 | 2 | 16 | 128 | 256 | 1<<16, 1 | 2 | 8 | 16 | 32 | 128 | 256 | 1<<16, false, false, ""},
		{"overlay bit 6 in reader", 64, 64, true, true, "bit 6"},
		{"bit 9 in reader only", 512, 0, true, false, "bit 9"},
		{"bit 14 in writer only", 0, 1 << 14, false, true, "bit 14"},
		{"bit 15", 1 << 15, 1 << 15, true, true, "bit 15"},
		{"bit 17 and 40", 1<<17 | 1<<40, 0, true, false, "bit 40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rerr := CheckRead(tt.reader, tt.writer)
			werr := CheckWrite(tt.reader, tt.writer)
			if (rerr != nil) != tt.readErr || (werr != nil) != tt.writeErr {
				t.Fatalf("CheckRead=%v CheckWrite=%v", rerr, werr)
			}
			for _, err := range []error{rerr, werr} {
				if err == nil {
					continue
				}
				if !errors.Is(err, ErrUnsupported) || errors.Is(err, ErrHalfSet) {
					t.Errorf("error %v does not wrap only ErrUnsupported", err)
				}
				var ue *UnsupportedError
				if !errors.As(err, &ue) || ue.Unknown == 0 {
					t.Errorf("not an *UnsupportedError with unknown bits: %v", err)
				}
				if !strings.Contains(err.Error(), tt.mention) || !strings.Contains(err.Error(), "Flags: ") {
					t.Errorf("message %q does not name %q", err, tt.mention)
				}
			}
		})
	}
}

// R59, T72, E25: exactly one of a paired bit is corrupt on both paths.
func TestR59_HalfSetPairRefused(t *testing.T) {
	tests := []struct {
		name           string
		reader, writer uint64
	}{
		{"seeds reader only", ZoneWriteSeeds, 0},
		{"seeds writer only", 0, ZoneWriteSeeds},
		{"mixed versions reader only", MixedDataFileVersions, 0},
		{"mixed versions writer only", 1, 1 | MixedDataFileVersions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, check := range []func(uint64, uint64) error{CheckRead, CheckWrite, CheckPaired} {
				err := check(tt.reader, tt.writer)
				if !errors.Is(err, ErrHalfSet) {
					t.Fatalf("got %v, want ErrHalfSet", err)
				}
				if !strings.Contains(err.Error(), "only in the") {
					t.Errorf("message %q", err)
				}
			}
			if _, err := Carry(tt.reader, tt.writer); !errors.Is(err, ErrHalfSet) {
				t.Errorf("Carry accepted a half-set parent: %v", err)
			}
		})
	}
	// A half-set pair is reported before an unsupported bit (§6.3 order).
	if err := CheckRead(ZoneWriteSeeds|1<<20, 0); !errors.Is(err, ErrHalfSet) {
		t.Errorf("got %v, want the half-set error first", err)
	}
}

// §6.2: derived bits are recomputed from content on every commit.
func TestDerivedBitsFromContent(t *testing.T) {
	tests := []struct {
		name           string
		c              Content
		reader, writer uint64
	}{
		{"empty", Content{}, 0, 0},
		{"deletions bit 0 in both", Content{DeletionFiles: true}, 1, 1},
		{"stable row ids bit 1 in both", Content{StableRowIDs: true}, 2, 2},
		{"config bit 3 writer only", Content{Config: true}, 0, 8},
		{"base paths bit 4 in both", Content{BasePaths: true}, 16, 16},
		{"no txn file bit 5 writer only", Content{NoTransactionFile: true}, 0, 32},
		{"covering fields bit 7", Content{CoveringFields: true}, 128, 128},
		{"mixed versions bit 8", Content{MixedDataFileVersions: true}, 256, 256},
		{"R54 v1 seeds set both bits", Content{ReferencesV1Seeds: true}, 1 << 16, 1 << 16},
		{"R56 explicit activation", Content{ActivateZoneSeeds: true}, 1 << 16, 1 << 16},
		{"deletions and config", Content{DeletionFiles: true, Config: true}, 1, 9},
	}
	for _, tt := range tests {
		r, w := Derive(tt.c)
		if r != tt.reader || w != tt.writer {
			t.Errorf("%s: Derive = %d/%d, want %d/%d", tt.name, r, w, tt.reader, tt.writer)
		}
	}
}

// R57 and §6.4: sticky paired bits survive every derived manifest, even when
// the content no longer needs them; non-sticky bits (5, 7, deletions) do not.
func TestR57_StickyBitsCarried(t *testing.T) {
	parentR := uint64(1 | 128 | 256 | 1<<16)
	parentW := uint64(1 | 8 | 32 | 128 | 256 | 1<<16)
	r, w, err := Next(parentR, parentW, Content{})
	if err != nil {
		t.Fatal(err)
	}
	if r != 256|1<<16 || w != 256|1<<16 {
		t.Errorf("Next = %d/%d, want only the sticky bits 256|65536", r, w)
	}
	// Restore of an older, unflagged version: the current head's bits are OR-ed in.
	r, w, err = Next(parentR, parentW, Content{DeletionFiles: true})
	if err != nil || !Has(r, w, ZoneWriteSeeds) || r&1 == 0 {
		t.Errorf("restore-like Next = %d/%d, %v", r, w, err)
	}
	if CheckPaired(r, w) != nil {
		t.Error("Next produced a half-set pair")
	}
}

// R58-adjacent: Next never produces a half-set pair from any valid parent.
func TestNextNeverHalfSet(t *testing.T) {
	for p := uint64(0); p < 4; p++ {
		pr := (p & 1) * ZoneWriteSeeds
		pw := (p >> 1) * ZoneWriteSeeds
		for _, c := range []Content{{}, {ReferencesV1Seeds: true}, {ActivateZoneSeeds: true}} {
			r, w, err := Next(pr, pw, c)
			if pr != pw {
				if err == nil {
					t.Errorf("parent %d/%d accepted", pr, pw)
				}
				continue
			}
			if err != nil || CheckPaired(r, w) != nil {
				t.Errorf("parent %d/%d content %+v: %d/%d %v", pr, pw, c, r, w, err)
			}
		}
	}
}
