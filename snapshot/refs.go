package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Ref directories and the branch data root, relative to the main dataset
// root (lance-table-format.md §1, §7).
const (
	TagsDir     = "_refs/tags"
	BranchesDir = "_refs/branches"
	TreeDir     = "tree"
	refSuffix   = ".json"
	// MainBranch is the name Lance gives the main line; it is never a
	// branch name of its own.
	MainBranch = "main"
)

// ErrInvalidRef is wrapped by every error about a tag or branch name that
// breaks the naming rules, and by every decoding error of a ref file.
var ErrInvalidRef = errors.New("invalid ref")

// Tag is the content of a tag file _refs/tags/{name}.json (§7.1).
type Tag struct {
	// Name is the tag's name (from the file name; not stored in the JSON).
	Name string
	// Branch is the branch the tagged version lives on; "" is main (JSON null).
	Branch string
	// Version is the tagged version.
	Version uint64
	// CreatedAt and UpdatedAt are the creation and last-update times; the
	// zero time means unknown (the key is omitted).
	CreatedAt time.Time
	UpdatedAt time.Time
	// ManifestSize is the byte size of the tagged manifest (0: unknown).
	ManifestSize uint64
	// Metadata is user metadata; nil and empty both encode as {}.
	Metadata map[string]string
}

// VersionMapping is one entry of a branch identifier's lineage: the parent
// version a branch was forked at and the branch's 32-hex-digit id.
type VersionMapping struct {
	Version uint64
	ID      string
}

// Branch is the content of a branch file
// _refs/branches/{name with '/' as %2F}.json (§7.2).
type Branch struct {
	// Name is the branch's name (from the file name; not stored in the JSON).
	Name string
	// ParentBranch is the branch this one forks from; "" is main (JSON null).
	ParentBranch string
	// Identifier is the lineage (parent's mapping plus this branch's own
	// entry). HasIdentifier is false for legacy files without the key.
	Identifier    []VersionMapping
	HasIdentifier bool
	// ParentVersion is the version of the parent the branch forks from.
	ParentVersion uint64
	// CreateAt is the creation time in Unix seconds (JSON key "createAt").
	CreateAt int64
	// ManifestSize is the size of the parent's manifest at ParentVersion.
	ManifestSize uint64
	// Metadata is user metadata; nil and empty both encode as {}.
	Metadata map[string]string
}

// TagPath returns the key of a tag file relative to the main dataset root.
func TagPath(name string) string { return TagsDir + "/" + name + refSuffix }

// BranchRefPath returns the key of a branch file relative to the main
// dataset root; '/' in the name is written as %2F (§9 trap 9).
func BranchRefPath(name string) string {
	return BranchesDir + "/" + strings.ReplaceAll(name, "/", "%2F") + refSuffix
}

// BranchRoot returns the root of a branch's dataset relative to the main
// dataset root ("" for main); '/' in the name are real sub-directories.
func BranchRoot(name string) string {
	if name == "" {
		return ""
	}
	return TreeDir + "/" + name
}

// isAlnum reports whether r is alphanumeric in the Unicode sense Lance uses
// (Alphabetic or Numeric).
func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Other_Alphabetic, r)
}

// ValidateTagName checks the tag name rules of §7.1: non-empty; only
// Unicode alphanumerics, '.', '-' and '_'; not starting or ending with '.';
// no ".."; not ending with ".lock".
func ValidateTagName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: tag name %q %s", ErrInvalidRef, name, why)
	}
	if name == "" {
		return bad("is empty")
	}
	if !utf8.ValidString(name) {
		return bad("is not valid UTF-8")
	}
	for i, r := range name {
		if !isAlnum(r) && r != '.' && r != '-' && r != '_' {
			return bad(fmt.Sprintf("contains %q at byte %d (only alphanumerics, '.', '-' and '_' are allowed)", r, i))
		}
	}
	switch {
	case strings.HasPrefix(name, "."):
		return bad("starts with '.'")
	case strings.HasSuffix(name, "."):
		return bad("ends with '.'")
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.HasSuffix(name, ".lock"):
		return bad(`ends with ".lock"`)
	}
	return nil
}

// ValidateBranchName checks the branch name rules of §7.2: non-empty; no
// leading or trailing '/'; no "//", ".." or '\'; every '/'-separated segment
// non-empty and made only of alphanumerics, '.', '-' and '_'; not ending
// with ".lock"; not "main".
func ValidateBranchName(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: branch name %q %s", ErrInvalidRef, name, why)
	}
	switch {
	case name == "":
		return bad("is empty")
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case name == MainBranch:
		return bad("is reserved for the main line")
	case strings.HasPrefix(name, "/"):
		return bad("starts with '/'")
	case strings.HasSuffix(name, "/"):
		return bad("ends with '/'")
	case strings.Contains(name, "//"):
		return bad(`contains "//"`)
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.Contains(name, `\`):
		return bad(`contains '\'`)
	case strings.HasSuffix(name, ".lock"):
		return bad(`ends with ".lock"`)
	}
	for i, seg := range strings.Split(name, "/") {
		if seg == "" {
			return bad(fmt.Sprintf("has an empty segment %d", i))
		}
		for _, r := range seg {
			if !isAlnum(r) && r != '.' && r != '-' && r != '_' {
				return bad(fmt.Sprintf("segment %q contains %q (only alphanumerics, '.', '-' and '_' are allowed)", seg, r))
			}
		}
	}
	return nil
}

// FormatRefTime renders t in UTC as RFC 3339 the way Lance's tag files do:
// seconds, then a fraction of 3, 6 or 9 digits only when needed, then "Z"
// (e.g. 2026-11-30T19:57:05.768693133Z).
func FormatRefTime(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		s += fmt.Sprintf(".%06d", ns/1_000)
	default:
		s += fmt.Sprintf(".%09d", ns)
	}
	return s + "Z"
}

// EncodeTag renders a tag file exactly as Lance 12 writes it: pretty JSON
// with a 2-space indent and no trailing newline, keys in the order branch,
// version, createdAt, updatedAt, manifestSize, metadata. Unknown times are
// omitted; metadata keys are sorted.
func EncodeTag(t Tag) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"branch\": ")
	writeNullableString(&b, t.Branch)
	b.WriteString(",\n  \"version\": ")
	b.WriteString(strconv.FormatUint(t.Version, 10))
	if !t.CreatedAt.IsZero() {
		b.WriteString(",\n  \"createdAt\": ")
		writeJSONString(&b, FormatRefTime(t.CreatedAt))
	}
	if !t.UpdatedAt.IsZero() {
		b.WriteString(",\n  \"updatedAt\": ")
		writeJSONString(&b, FormatRefTime(t.UpdatedAt))
	}
	b.WriteString(",\n  \"manifestSize\": ")
	b.WriteString(strconv.FormatUint(t.ManifestSize, 10))
	b.WriteString(",\n  \"metadata\": ")
	writeStringMap(&b, t.Metadata, "  ")
	b.WriteString("\n}")
	return b.Bytes()
}

// EncodeBranch renders a branch file as Lance 12 writes it: pretty JSON,
// 2-space indent, no trailing newline, keys parentBranch, identifier (with
// the snake_case version_mapping inside), parentVersion, createAt,
// manifestSize, metadata. A branch without an identifier (legacy) omits
// the key.
func EncodeBranch(br Branch) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"parentBranch\": ")
	writeNullableString(&b, br.ParentBranch)
	if br.HasIdentifier {
		b.WriteString(",\n  \"identifier\": {\n    \"version_mapping\": ")
		if len(br.Identifier) == 0 {
			b.WriteString("[]")
		} else {
			b.WriteString("[")
			for i, vm := range br.Identifier {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString("\n      [\n        ")
				b.WriteString(strconv.FormatUint(vm.Version, 10))
				b.WriteString(",\n        ")
				writeJSONString(&b, vm.ID)
				b.WriteString("\n      ]")
			}
			b.WriteString("\n    ]")
		}
		b.WriteString("\n  }")
	}
	b.WriteString(",\n  \"parentVersion\": ")
	b.WriteString(strconv.FormatUint(br.ParentVersion, 10))
	b.WriteString(",\n  \"createAt\": ")
	b.WriteString(strconv.FormatInt(br.CreateAt, 10))
	b.WriteString(",\n  \"manifestSize\": ")
	b.WriteString(strconv.FormatUint(br.ManifestSize, 10))
	b.WriteString(",\n  \"metadata\": ")
	writeStringMap(&b, br.Metadata, "  ")
	b.WriteString("\n}")
	return b.Bytes()
}

func writeNullableString(b *bytes.Buffer, s string) {
	if s == "" {
		b.WriteString("null")
		return
	}
	writeJSONString(b, s)
}

func writeStringMap(b *bytes.Buffer, m map[string]string, indent string) {
	if len(m) == 0 {
		b.WriteString("{}")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + indent + "  ")
		writeJSONString(b, k)
		b.WriteString(": ")
		writeJSONString(b, m[k])
	}
	b.WriteString("\n" + indent + "}")
}

// writeJSONString escapes s the way serde_json does: '"', '\\' and the
// control characters below 0x20 are escaped (\b \f \n \r \t short forms,
// others as \u00XX); everything else, including '<', '>', '&' and U+2028,
// is written as is. Invalid UTF-8 becomes U+FFFD.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&15])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// refError builds a decoding error naming the ref file.
func refError(file, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidRef, file, fmt.Sprintf(format, args...))
}

// decodeObject parses data as one JSON object into raw members, refusing
// trailing data. Duplicate keys keep the last value, as serde_json does for
// maps (struct fields are rejected there; we accept the last for leniency).
func decodeObject(file string, data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, refError(file, "not a JSON object: %v (near byte %d)", err, dec.InputOffset())
	}
	if obj == nil {
		return nil, refError(file, "not a JSON object: null")
	}
	if _, err := dec.Token(); err == nil {
		return nil, refError(file, "trailing data after the JSON object at byte %d", dec.InputOffset())
	}
	return obj, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func decodeU64(file, key string, raw json.RawMessage) (uint64, error) {
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, refError(file, "%q must be a non-negative integer, got %.40s", key, s)
	}
	return v, nil
}

func decodeI64(file, key string, raw json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, refError(file, "%q must be an integer, got %.40s", key, s)
	}
	return v, nil
}

func decodeOptString(file, key string, raw json.RawMessage) (string, error) {
	if raw == nil || isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", refError(file, "%q must be a string or null", key)
	}
	return s, nil
}

func decodeTime(file, key string, raw json.RawMessage) (time.Time, error) {
	if raw == nil || isNull(raw) {
		return time.Time{}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, refError(file, "%q must be an RFC 3339 string", key)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, refError(file, "%q is not an RFC 3339 time: %q", key, s)
	}
	t = t.UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, refError(file, "%q is outside years 0000-9999 in UTC: %q", key, s)
	}
	return t, nil
}

func decodeMetadata(file string, raw json.RawMessage) (map[string]string, error) {
	m := map[string]string{}
	if raw == nil || isNull(raw) {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, refError(file, `"metadata" must be an object of strings: %v`, err)
	}
	return m, nil
}

// DecodeTag parses a tag file. name is the tag's name (stored in the
// result and used in errors). "version" is required; "branch" may be
// null or absent (main); createdAt/updatedAt may be absent; a missing
// manifestSize reads as 0 (unknown); unknown keys are ignored.
func DecodeTag(name string, data []byte) (Tag, error) {
	file := TagPath(name)
	obj, err := decodeObject(file, data)
	if err != nil {
		return Tag{}, err
	}
	t := Tag{Name: name}
	if t.Branch, err = decodeOptString(file, "branch", obj["branch"]); err != nil {
		return Tag{}, err
	}
	raw, ok := obj["version"]
	if !ok {
		return Tag{}, refError(file, `missing "version"`)
	}
	if t.Version, err = decodeU64(file, "version", raw); err != nil {
		return Tag{}, err
	}
	if t.CreatedAt, err = decodeTime(file, "createdAt", obj["createdAt"]); err != nil {
		return Tag{}, err
	}
	if t.UpdatedAt, err = decodeTime(file, "updatedAt", obj["updatedAt"]); err != nil {
		return Tag{}, err
	}
	if raw, ok := obj["manifestSize"]; ok && !isNull(raw) {
		if t.ManifestSize, err = decodeU64(file, "manifestSize", raw); err != nil {
			return Tag{}, err
		}
	}
	if t.Metadata, err = decodeMetadata(file, obj["metadata"]); err != nil {
		return Tag{}, err
	}
	return t, nil
}

// DecodeBranch parses a branch file. name is the branch's name (with '/',
// not %2F). "parentVersion" is required; "parentBranch" null or absent is
// main; "identifier" may be absent (legacy, HasIdentifier false); a missing
// createAt or manifestSize reads as 0; unknown keys are ignored.
func DecodeBranch(name string, data []byte) (Branch, error) {
	file := BranchRefPath(name)
	obj, err := decodeObject(file, data)
	if err != nil {
		return Branch{}, err
	}
	br := Branch{Name: name}
	if br.ParentBranch, err = decodeOptString(file, "parentBranch", obj["parentBranch"]); err != nil {
		return Branch{}, err
	}
	if raw, ok := obj["identifier"]; ok && !isNull(raw) {
		if br.Identifier, err = decodeIdentifier(file, raw); err != nil {
			return Branch{}, err
		}
		br.HasIdentifier = true
	}
	raw, ok := obj["parentVersion"]
	if !ok {
		return Branch{}, refError(file, `missing "parentVersion"`)
	}
	if br.ParentVersion, err = decodeU64(file, "parentVersion", raw); err != nil {
		return Branch{}, err
	}
	if raw, ok := obj["createAt"]; ok && !isNull(raw) {
		if br.CreateAt, err = decodeI64(file, "createAt", raw); err != nil {
			return Branch{}, err
		}
	}
	if raw, ok := obj["manifestSize"]; ok && !isNull(raw) {
		if br.ManifestSize, err = decodeU64(file, "manifestSize", raw); err != nil {
			return Branch{}, err
		}
	}
	if br.Metadata, err = decodeMetadata(file, obj["metadata"]); err != nil {
		return Branch{}, err
	}
	return br, nil
}

func decodeIdentifier(file string, raw json.RawMessage) ([]VersionMapping, error) {
	var id map[string]json.RawMessage
	if err := json.Unmarshal(raw, &id); err != nil || id == nil {
		return nil, refError(file, `"identifier" must be an object with "version_mapping"`)
	}
	vmRaw, ok := id["version_mapping"]
	if !ok {
		return nil, refError(file, `"identifier" has no "version_mapping"`)
	}
	var pairs []json.RawMessage
	if err := json.Unmarshal(vmRaw, &pairs); err != nil {
		return nil, refError(file, `"identifier.version_mapping" must be an array of [version, id] pairs`)
	}
	out := make([]VersionMapping, 0, len(pairs))
	for i, p := range pairs {
		var pair []json.RawMessage
		if err := json.Unmarshal(p, &pair); err != nil || len(pair) != 2 {
			return nil, refError(file, `"identifier.version_mapping"[%d] must be a [version, id] pair`, i)
		}
		v, err := decodeU64(file, fmt.Sprintf("identifier.version_mapping[%d][0]", i), pair[0])
		if err != nil {
			return nil, err
		}
		var s string
		if err := json.Unmarshal(pair[1], &s); err != nil {
			return nil, refError(file, `"identifier.version_mapping"[%d][1] must be a string`, i)
		}
		out = append(out, VersionMapping{Version: v, ID: s})
	}
	return out, nil
}

// branchNameFromRefFile turns a file name in _refs/branches/ into a branch
// name ('%2F' back to '/'); ok is false for non-ref files.
func branchNameFromRefFile(file string) (string, bool) {
	if !strings.HasSuffix(file, refSuffix) || len(file) == len(refSuffix) {
		return "", false
	}
	return strings.ReplaceAll(strings.TrimSuffix(file, refSuffix), "%2F", "/"), true
}

// tagNameFromFile turns a file name in _refs/tags/ into a tag name.
func tagNameFromFile(file string) (string, bool) {
	if !strings.HasSuffix(file, refSuffix) || len(file) == len(refSuffix) {
		return "", false
	}
	return strings.TrimSuffix(file, refSuffix), true
}
