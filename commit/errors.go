package commit

import (
	"errors"
	"fmt"
)

// ErrConflict is wrapped by every error that says a concurrent commit made
// this transaction impossible to commit as built.
var ErrConflict = errors.New("commit conflict")

// ErrRetryableConflict is wrapped when the transaction was preempted by a
// concurrent one and can succeed if rebuilt against the newer version.
// errors.Is(err, ErrRetryableConflict) implies errors.Is(err, ErrConflict).
var ErrRetryableConflict error = &sentinelConflict{msg: "retryable commit conflict"}

// ErrIncompatibleConflict is wrapped when the transaction can never be
// committed on top of the concurrent one (e.g. Append after Overwrite).
// errors.Is(err, ErrIncompatibleConflict) implies errors.Is(err, ErrConflict).
var ErrIncompatibleConflict error = &sentinelConflict{msg: "incompatible commit conflict"}

// ErrTooManyRetries is wrapped when every attempt lost the race for the next
// version. It also Is ErrRetryableConflict (and so ErrConflict).
var ErrTooManyRetries error = &sentinelConflict{msg: "too many commit retries", retryable: true}

// ErrRequirement is wrapped when a requirement stated by the caller no longer
// holds (e.g. "latest is still N"). It also Is ErrConflict.
var ErrRequirement error = &sentinelConflict{msg: "commit requirement failed"}

// ErrCommitOutcomeUnknown is wrapped when the manifest write failed in a
// way that leaves open whether it landed (and reading it back failed too).
// The version may or may not exist; nothing may be cleaned up.
var ErrCommitOutcomeUnknown = errors.New("commit outcome unknown")

// ErrDatasetExists is returned when a transaction that creates a dataset
// (Overwrite with read version 0, Clone) finds a dataset already there.
var ErrDatasetExists = errors.New("dataset already exists")

// ErrDatasetNotFound is returned when a transaction that needs an existing
// dataset finds no version at all.
var ErrDatasetNotFound = errors.New("dataset not found")

// ErrSeedsNotEnabled is wrapped when a transaction's new data files carry v1
// zone write seeds but the caller did not opt in and the dataset does not
// already carry FLAG_ZONE_WRITE_SEEDS (zone-seeds.md R54, R56).
var ErrSeedsNotEnabled = errors.New("v1 zone write seeds are not enabled for this dataset")

// ErrInvalidTransaction is wrapped when a transaction is malformed or cannot
// apply to the manifest it is committed on (unknown fragment id, schema
// mismatch, data-file version mismatch, …).
var ErrInvalidTransaction = errors.New("invalid transaction")

// ErrStorageVersion is wrapped when the data files cannot be written at the
// table's (or the requested) data storage version: legacy 0.1 tables (Lance
// v1 files), a version Lance 12 does not know, or an append asking for
// another version than the table's.
var ErrStorageVersion = errors.New("data storage version not writable")

type sentinelConflict struct {
	msg       string
	retryable bool
}

func (s *sentinelConflict) Error() string { return s.msg }

func (s *sentinelConflict) Is(target error) bool {
	if target == ErrConflict {
		return true
	}
	return s.retryable && target == ErrRetryableConflict
}

// ConflictError names the concurrent commit a transaction collided with.
// Its message follows Lance's wording (lance-table-format.md §5.2).
type ConflictError struct {
	Op           string // operation being committed, e.g. "Append"
	ConcurrentOp string // operation already committed, e.g. "Overwrite"
	Version      uint64 // version that committed ConcurrentOp
	Retryable    bool   // rebuilding the transaction on the newer version may succeed
	Reason       string // optional detail (which fragment, which key)
}

func (e *ConflictError) Error() string {
	var s string
	if e.Retryable {
		s = fmt.Sprintf("This %s transaction was preempted by concurrent transaction %s at version %d. Please retry.", e.Op, e.ConcurrentOp, e.Version)
	} else {
		s = fmt.Sprintf("This %s transaction is incompatible with concurrent transaction %s at version %d.", e.Op, e.ConcurrentOp, e.Version)
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// Is makes a ConflictError match ErrConflict and, according to Retryable,
// ErrRetryableConflict or ErrIncompatibleConflict.
func (e *ConflictError) Is(target error) bool {
	switch target {
	case ErrConflict:
		return true
	case ErrRetryableConflict:
		return e.Retryable
	case ErrIncompatibleConflict:
		return !e.Retryable
	}
	return false
}

// RequirementError says which requirement failed against which version.
type RequirementError struct {
	Requirement string
	Latest      uint64
	Detail      string
}

func (e *RequirementError) Error() string {
	return fmt.Sprintf("commit requirement %q failed at latest version %d: %s", e.Requirement, e.Latest, e.Detail)
}

// Is makes a RequirementError match ErrRequirement and ErrConflict.
func (e *RequirementError) Is(target error) bool {
	return target == ErrRequirement || target == ErrConflict
}

// ErrIndexBitmap: the commit would carry an index whose fragment bitmap
// Lance recomputes before committing (§5.2 e: no bitmap, the version built
// on written by Lance before 0.8.15 or by a writer recording no version,
// or segments of one index covering the same fragment), and the recompute
// cannot be done: Lance 12's own code panics for that kind of index
// (Bitmap, LabelList, Inverted, IVF_HNSW and v2-format vector indices, or
// the index's field is missing from the schema), or this build does not
// read it (NGram and other kinds, legacy v1 scalar index pages, system
// indices, index files under another base path, datasets with a
// fragment-reuse index). The legacy IVF_PQ, BTree, ZoneMap and
// BloomFilter indices are recomputed; an index file that cannot be read
// is logged past as Lance 12 does (see fixup_indices.go). The error names
// the index and wraps the reason.
var ErrIndexBitmap = errors.New("index fragment bitmap needs recomputing")
