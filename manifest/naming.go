package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NamingScheme is the way manifest files in _versions/ are named
// (lance-table-format.md §4.1).
type NamingScheme int

const (
	// SchemeUnknown is the zero value: no scheme (e.g. not a manifest name).
	SchemeUnknown NamingScheme = iota
	// V1 names version v "{v}.manifest".
	V1
	// V2 names version v "{u64::MAX - v:020}.manifest", so a lexical listing
	// returns the newest version first. Detached versions ("d{v}.manifest")
	// belong to V2.
	V2
)

// String returns "V1", "V2" or "unknown".
func (s NamingScheme) String() string {
	switch s {
	case V1:
		return "V1"
	case V2:
		return "V2"
	}
	return "unknown"
}

// DetachedBit is set in every detached version number (§4.1).
const DetachedBit uint64 = 1 << 63

// IsDetached reports whether version is a detached version (bit 63 set).
func IsDetached(version uint64) bool { return version&DetachedBit != 0 }

// VersionsDir is the directory (relative to the dataset root) that holds the
// manifests.
const VersionsDir = "_versions"

// LegacyLatestName is the root-level byte copy of the newest manifest that
// Lance ≤ 0.16 wrote (§4.4). Modern readers ignore it.
const LegacyLatestName = "_latest.manifest"

// HintName is the latest-version hint file inside _versions/ (§4.5).
const HintName = "latest_version_hint.json"

const manifestSuffix = ".manifest"

// ManifestName returns the file name (without directory) of version under
// scheme. Detached versions are always named "d{v}.manifest". An unknown
// scheme is treated as V2, the default of current Lance.
func ManifestName(scheme NamingScheme, version uint64) string {
	if IsDetached(version) {
		return "d" + strconv.FormatUint(version, 10) + manifestSuffix
	}
	if scheme == V1 {
		return strconv.FormatUint(version, 10) + manifestSuffix
	}
	return fmt.Sprintf("%020d%s", uint64(math.MaxUint64)-version, manifestSuffix)
}

// ManifestPath returns the path of version's manifest relative to the
// dataset root, e.g. "_versions/18446744073709551614.manifest".
func ManifestPath(scheme NamingScheme, version uint64) string {
	return VersionsDir + "/" + ManifestName(scheme, version)
}

// ParseManifestName classifies a file name from _versions/ (without
// directory) by the rule of §4.2: a name starting with "d" is a detached V2
// manifest; otherwise a name ending in "manifest" is V2 when it is 29 bytes
// long and V1 otherwise; anything else (the hint file, staging names
// "…manifest-<uuid>", temporary files) is not a manifest. The version is
// the part before the first '.', as a u64 (V2: u64::MAX minus it). ok is
// false when the name is not a manifest, its number does not parse, or a
// non-"d" name would carry a version with bit 63 set (detached versions
// only have "d…" names).
func ParseManifestName(name string) (version uint64, scheme NamingScheme, ok bool) {
	if !strings.HasSuffix(name, "manifest") {
		return 0, SchemeUnknown, false
	}
	stem := name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		stem = name[:i]
	}
	if strings.HasPrefix(name, "d") {
		v, err := strconv.ParseUint(stem[1:], 10, 64)
		if err != nil || !IsDetached(v) {
			return 0, SchemeUnknown, false
		}
		return v, V2, true
	}
	n, err := strconv.ParseUint(stem, 10, 64)
	if err != nil {
		return 0, SchemeUnknown, false
	}
	v, scheme := n, V1
	if len(name) == 20+len(manifestSuffix) {
		v, scheme = math.MaxUint64-n, V2
	}
	if IsDetached(v) {
		// Only "d…" names carry detached versions; no commit can produce
		// a regular version with bit 63 set.
		return 0, SchemeUnknown, false
	}
	return v, scheme, true
}

// ParseStagingName recognises a staging file "{final-name}-{suffix}" written
// during a rename-based or external-store commit (§4.1) and returns the
// final manifest name and the suffix (normally a UUID).
func ParseStagingName(name string) (final, suffix string, ok bool) {
	i := strings.Index(name, manifestSuffix+"-")
	if i < 0 {
		return "", "", false
	}
	final = name[:i+len(manifestSuffix)]
	if _, _, ok := ParseManifestName(final); !ok {
		return "", "", false
	}
	return final, name[i+len(manifestSuffix)+1:], true
}

// DetectScheme returns the naming scheme of a _versions directory from its
// file names (without directory). Names that are not manifests and detached
// manifests are ignored. A directory with both V1 and V2 names is an error
// matching ErrMixedNaming; a directory with no manifest returns
// SchemeUnknown and no error.
func DetectScheme(names []string) (NamingScheme, error) {
	found := SchemeUnknown
	for _, n := range names {
		v, s, ok := ParseManifestName(n)
		if !ok || IsDetached(v) {
			continue
		}
		if found != SchemeUnknown && s != found {
			return SchemeUnknown, ErrMixedNaming
		}
		found = s
	}
	return found, nil
}
