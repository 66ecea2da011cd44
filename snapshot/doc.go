// Package snapshot opens a Lance dataset at a chosen point in its history
// and manages that history: the latest version, a numbered version, a tag
// or a branch; tag and branch refs (_refs/tags, _refs/branches); shallow and
// deep clones to a new root; and restore of an old version as the new head.
//
// Opening checks the manifest's feature flags before anything else is used
// (lance-table-format.md §6.3): a reader refuses unknown reader bits and
// half-set paired bits, a writer also unknown writer bits. Opening never
// writes. Every derived manifest (clone, branch, restore) recomputes the
// derived flag bits and carries the sticky paired ones, including
// FLAG_ZONE_WRITE_SEEDS (zone-seeds.md R57); historical manifests are never
// rewritten (R58).
//
// Ref files follow §7 byte for byte (pretty JSON, 2-space indent, no
// trailing newline, Lance 12's key order). Tags always live at the main
// dataset root, even for versions on a branch; a branch's data lives in
// tree/{name}/.
package snapshot
