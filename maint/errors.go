package maint

import "errors"

// Errors of this package; each is wrapped (%w) with the detail.
var (
	// ErrStorageVersion: the table's data storage version (or a data file's)
	// is one this build cannot rewrite. Legacy 0.1 tables are refused by
	// every rewriting operation: their data files are not Lance v2 files.
	ErrStorageVersion = errors.New("maint: data storage version not supported for rewriting")
	// ErrCorruptFragment: a fragment's files disagree with the manifest.
	ErrCorruptFragment = errors.New("maint: corrupt fragment")
	// ErrCorruptRowIDs: a row id or row version sequence cannot be decoded.
	ErrCorruptRowIDs = errors.New("maint: corrupt row id sequence")
	// ErrTaggedVersions: cleanup would remove tagged versions (Lance's
	// error_if_tagged_old_versions, which this package never overrides:
	// tagged versions are always kept and only reported).
	ErrTaggedVersions = errors.New("maint: tagged versions marked for cleanup")
	// ErrBranch: a branch cannot be deleted (unknown, main, or parent of
	// another branch).
	ErrBranch = errors.New("maint: branch")
	// ErrInvalidOptions: an option is out of range.
	ErrInvalidOptions = errors.New("maint: invalid options")
)
