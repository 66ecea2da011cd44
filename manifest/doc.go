// Package manifest reads and writes Lance table manifests: the manifest file
// container (index section, inline transaction, manifest message, 16-byte
// footer ending in "LANC"), the V1/V2 version naming schemes, the
// latest-version hint, version discovery over a gocloud.dev/blob bucket,
// resolution of data, deletion and index file paths (including base_id /
// base_paths), and the two deletion-file formats (.arrow and .bin).
//
// The protobuf messages live in the sub-package pb. Everything that decodes
// bytes treats them as hostile: no panics, no allocation sized by an
// unchecked length field, and every failure is a *FormatError (or
// *DeletionFileError) that names the file and the byte offset and matches
// ErrCorrupt with errors.Is.
//
// The reference is shared/spec/lance-table-format.md (§2 container, §4
// naming and discovery, §4.7 deletion files, §4.10 base paths).
package manifest
