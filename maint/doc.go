// Package maint keeps a Lance table healthy: compaction (Compact, a
// Rewrite transaction as Lance's compact_files writes it), v1 zone write
// seeds for existing data (BackfillSeeds, also a Rewrite — never a
// relabel), removal of old versions (Cleanup, Lance's
// cleanup_old_versions, and AutoCleanup for the lance.auto_cleanup.*
// config), branch deletion (DeleteBranch), and the old-writer fix-ups of
// lance-table-format.md §5.2 e (FixupStatistics).
//
// Every change is a Lance-compatible transaction committed through
// package commit, so it follows the conflict matrix (§5.4) against
// concurrent writers. See docs/maintenance.md.
package maint
