package lancekeeper

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Delete deletes the rows of the latest version of this handle's branch
// that match predicate (Scan's language), found with the pruned scan so
// that zones which cannot match are never read. It writes one deletion
// file per touched fragment as Lance does and commits a Delete, rebased
// over concurrent commits as the conflict matrix allows. It returns the
// new version and the number of rows deleted; when nothing matches,
// nothing is committed and the latest version is returned with 0.
func (d *Dataset) Delete(ctx context.Context, predicate string) (*Dataset, uint64, error) {
	if strings.TrimSpace(predicate) == "" {
		return nil, 0, fmt.Errorf("%w: a delete needs a predicate", ErrInvalidPredicate)
	}
	res, err := scan.Delete(ctx, d.h.ds, d.snap.Branch, predicate, d.h.commitOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("delete from %s: %w", describe(d.URI(), d.snap.Branch), predicateErr(err))
	}
	ref := snapshot.Ref{Branch: d.snap.Branch, Version: res.ReadVersion}
	if res.Commit != nil {
		ref.Version = res.Commit.Version
	}
	nd, err := d.h.checkout(ctx, ref)
	return nd, res.Rows, err
}

// Compact merges small fragments of the latest version of this handle's
// branch and drops deleted rows, as Lance's compact_files does (one
// Rewrite transaction; stable row ids kept; appends racing it are
// compatible). Options: WithTargetRowsPerFragment (default 1 Mi rows),
// and WithSeeds, WithRowsPerZone, ActivateZoneWriteSeeds for v1 seeds in
// the new files (a flagged table gets fresh v1 seeds for the columns that
// had them anyway). It returns the new version, or the latest when there
// was nothing to do.
func (d *Dataset) Compact(ctx context.Context, opts ...Option) (*Dataset, error) {
	s, err := collect("Compact", useCompact, opts)
	if err != nil {
		return nil, err
	}
	st, err := d.h.ds.BranchStore(d.snap.Branch)
	if err != nil {
		return nil, err
	}
	co := maint.CompactOptions{
		TargetRowsPerFragment: s.targetRows,
		SeedColumns:           s.seedColumns,
		SeedAllColumns:        s.seeds && len(s.seedColumns) == 0,
		RowsPerZone:           s.rowsPerZone,
		Commit:                d.h.commitOptions(),
	}
	co.Commit.EnableZoneWriteSeeds = s.activate
	res, err := maint.Compact(ctx, st, co)
	if err != nil {
		return nil, fmt.Errorf("compact %s: %w", describe(d.URI(), d.snap.Branch), err)
	}
	return d.h.checkout(ctx, snapshot.Ref{Branch: d.snap.Branch, Version: res.Version})
}

// BackfillSeeds gives the existing fragments of this handle's branch v1
// zone write seeds by rewriting their data files with the same rows
// (never relabelling a buffer, R52): the columns WithSeeds names (every
// column when it is absent or names none), at WithRowsPerZone. A table
// without FLAG_ZONE_WRITE_SEEDS needs ActivateZoneWriteSeeds (R56).
// Fragments that already carry the seeds are skipped, so an interrupted
// backfill resumes. It returns the latest version afterwards.
func (d *Dataset) BackfillSeeds(ctx context.Context, opts ...Option) (*Dataset, error) {
	s, err := collect("BackfillSeeds", useBackfill, opts)
	if err != nil {
		return nil, err
	}
	st, err := d.h.ds.BranchStore(d.snap.Branch)
	if err != nil {
		return nil, err
	}
	bo := maint.BackfillOptions{Columns: s.seedColumns, RowsPerZone: s.rowsPerZone, Commit: d.h.commitOptions()}
	bo.Commit.EnableZoneWriteSeeds = s.activate
	if _, err := maint.BackfillSeeds(ctx, st, bo); err != nil {
		return nil, fmt.Errorf("backfill seeds of %s: %w", describe(d.URI(), d.snap.Branch), err)
	}
	return d.h.checkout(ctx, snapshot.Ref{Branch: d.snap.Branch})
}

// CleanupReport lists what Cleanup removed (or, with DryRun, would
// remove).
type CleanupReport struct {
	RemovedVersions []uint64
	// KeptVersions are the versions left; TaggedVersions those kept only
	// because a tag points at them.
	KeptVersions, TaggedVersions []uint64
	// RemovedFiles are paths relative to the dataset root, sorted.
	RemovedFiles []string
	BytesRemoved int64
	DryRun       bool
}

// Cleanup removes old versions of the dataset and the files only they
// referenced, as Lance's cleanup_old_versions does: OlderThan(d) (versions
// committed before now-d) and/or RetainVersions(n) (keep the newest n);
// DryRun lists without deleting. The latest version, tagged versions and
// versions a branch forks from are always kept; as in Lance, a tagged
// version the policy would remove makes Cleanup fail (maint's
// ErrTaggedVersions) before anything is deleted. Files newer than the
// cutoff and files under another dataset's root (shallow clones) are
// never touched. It works on the whole dataset whatever the handle's
// version; handles on removed versions cannot be read afterwards.
func (d *Dataset) Cleanup(ctx context.Context, opts ...Option) (*CleanupReport, error) {
	s, err := collect("Cleanup", useCleanup, opts)
	if err != nil {
		return nil, err
	}
	if s.olderThan == 0 && s.retain == 0 {
		return nil, fmt.Errorf("%w: Cleanup needs OlderThan or RetainVersions", ErrInvalidOption)
	}
	res, err := maint.Cleanup(ctx, d.h.ds.Store(), maint.CleanupOptions{
		OlderThan: s.olderThan, RetainVersions: s.retain, DryRun: s.dryRun,
	})
	if err != nil {
		return nil, fmt.Errorf("cleanup %s: %w", d.URI(), err)
	}
	return &CleanupReport{
		RemovedVersions: res.RemovedVersions, KeptVersions: res.KeptVersions, TaggedVersions: res.TaggedVersions,
		RemovedFiles: slices.Clone(res.RemovedFiles), BytesRemoved: res.BytesRemoved, DryRun: res.DryRun,
	}, nil
}

// Delete deletes a branch: its ref first (from then on it does not
// exist for any reader), then the files of its tree. Main, a branch
// another branch forks from, and a branch a tag points into are refused.
func (b *Branches) Delete(ctx context.Context, name string) error {
	if _, err := maint.DeleteBranch(ctx, b.d.h.ds.Store(), name); err != nil {
		return fmt.Errorf("delete branch %s of %s: %w", name, b.d.URI(), err)
	}
	return nil
}

// WithTargetRowsPerFragment sets the fragment size Compact aims at.
func WithTargetRowsPerFragment(n uint64) Option {
	return Option{name: "WithTargetRowsPerFragment", use: useCompact, set: func(s *settings) { s.targetRows = n }}
}

// OlderThan makes Cleanup remove versions committed more than d ago.
func OlderThan(d time.Duration) Option {
	return Option{name: "OlderThan", use: useCleanup, set: func(s *settings) { s.olderThan = d }}
}

// RetainVersions makes Cleanup keep the newest n versions whatever their
// age; with OlderThan a version goes only when both rules remove it.
func RetainVersions(n uint64) Option {
	return Option{name: "RetainVersions", use: useCleanup, set: func(s *settings) { s.retain = n }}
}

// DryRun makes Cleanup report what it would remove without removing it.
func DryRun() Option {
	return Option{name: "DryRun", use: useCleanup, set: func(s *settings) { s.dryRun = true }}
}
