package maint

import (
	"context"
	"fmt"
	"slices"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// BackfillOptions tune BackfillSeeds.
type BackfillOptions struct {
	// Columns are the top-level columns to seed (nil: every one).
	Columns []string
	// RowsPerZone of the new seeds (0 = 8192).
	RowsPerZone uint64
	// FragmentsPerCommit bounds the fragments one Rewrite commits
	// (0 = 16): each commit is progress a later run does not redo.
	FragmentsPerCommit int
	// Commit tunes the commits; Commit.EnableZoneWriteSeeds is the
	// explicit activation (R56) a table without FLAG_ZONE_WRITE_SEEDS
	// needs.
	Commit commit.Options
	// Progress, when set, is called after every commit.
	Progress func(done, total int, version uint64)
}

// BackfillResult reports a backfill.
type BackfillResult struct {
	Versions  []uint64 `json:"versions"`
	Rewritten int      `json:"fragments_rewritten"`
	Skipped   int      `json:"fragments_skipped"`
	Files     int      `json:"files_written"`
}

// BackfillSeeds gives existing fragments v1 zone write seeds for the
// requested columns by rewriting their data files with the same (live)
// rows — Rewrite transactions with one group per fragment, never a
// relabelling of an existing buffer (R52); each new seed is computed from
// the values as the writer computes any seed. Fragments whose every data
// file already carries a valid v1 seed for every requested column are
// skipped, so an interrupted backfill resumes where it stopped. Memory
// stays bounded as in Compact. A table without FLAG_ZONE_WRITE_SEEDS is
// refused unless Commit.EnableZoneWriteSeeds (the first Rewrite then
// activates the flag, R54).
func BackfillSeeds(ctx context.Context, st commit.Store, opts BackfillOptions) (*BackfillResult, error) {
	if opts.FragmentsPerCommit <= 0 {
		opts.FragmentsPerCommit = 16
	}
	res := &BackfillResult{}
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		return nil, err
	}
	m := head.Manifest
	if _, err := checkWritable(m); err != nil {
		return nil, err
	}
	if !commit.HasZoneWriteSeeds(m) && !opts.Commit.EnableZoneWriteSeeds {
		return nil, fmt.Errorf("%w: backfilling v1 seeds sets FLAG_ZONE_WRITE_SEEDS, which old Lance readers refuse; enable it explicitly (--enable-zone-write-seeds, `lancekeeper seeds enable`, or Commit.EnableZoneWriteSeeds)", commit.ErrSeedsNotEnabled)
	}
	cols := opts.Columns
	tops := topFields(m)
	if len(cols) == 0 {
		for _, f := range tops {
			cols = append(cols, f.GetName())
		}
	}
	for _, c := range cols {
		if !slices.ContainsFunc(tops, func(f *pb.Field) bool { return f.GetName() == c }) {
			return nil, fmt.Errorf("%w: the table has no top-level column %q", ErrInvalidOptions, c)
		}
	}
	s, err := newStores(st, m)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var todo []uint64
	for _, f := range m.GetFragments() {
		done, err := hasV1Seeds(ctx, s, m, f, cols, opts.RowsPerZone)
		if err != nil {
			return nil, err
		}
		if done {
			res.Skipped++
		} else {
			todo = append(todo, f.GetId())
		}
	}
	total := len(todo)
	for len(todo) > 0 {
		n := min(len(todo), opts.FragmentsPerCommit)
		only := map[uint64]bool{}
		for _, id := range todo[:n] {
			only[id] = true
		}
		copts := CompactOptions{SeedColumns: cols, RowsPerZone: opts.RowsPerZone, only: only, Commit: opts.Commit}
		copts, _ = copts.withDefaults()
		cr, err := Compact(ctx, st, copts)
		if err != nil {
			return res, err
		}
		// Fragments that vanished meanwhile (deleted, compacted) are
		// simply not rewritten.
		res.Rewritten += cr.FragmentsRemoved
		res.Files += cr.FilesAdded
		if cr.Version != 0 {
			res.Versions = append(res.Versions, cr.Version)
		}
		todo = todo[n:]
		if opts.Progress != nil {
			opts.Progress(total-len(todo), total, cr.Version)
		}
	}
	return res, nil
}

// hasV1Seeds reports whether every data file of f carries a valid v1 seed
// for each column (with rowsPerZone when it is set).
func hasV1Seeds(ctx context.Context, s *stores, m *pb.Manifest, f *pb.DataFragment, cols []string, rowsPerZone uint64) (bool, error) {
	fr, err := openFragment(ctx, s, m, f)
	if err != nil {
		return false, err
	}
	need := map[string]bool{}
	for _, c := range cols {
		need[c] = true
	}
	for _, file := range fr.files {
		seeds, err := file.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true})
		if err != nil {
			return false, err
		}
		for _, si := range seeds {
			if si.Err == nil && si.Seed != nil && si.Seed.Version == 1 && (rowsPerZone == 0 || si.Locator.RowsPerZone == rowsPerZone) {
				delete(need, si.Column)
			}
		}
	}
	return len(need) == 0, nil
}
