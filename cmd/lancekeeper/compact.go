package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
)

// Compact is `lancekeeper compact`.
func (commands) Compact() command {
	return command{
		name:    "compact",
		usage:   "DATASET [--target-rows-per-fragment N] [--max-rows-per-group N] [--materialize-deletions=BOOL] [--threshold F] [--seeds all|COL,...] [--enable-zone-write-seeds] [--json]",
		summary: "Merge small fragments and drop deleted rows: a Rewrite transaction as Lance's compact_files writes it (docs/maintenance.md).",
		run:     runCompact,
	}
}

// compactJSON is the `compact --json` output.
type compactJSON struct {
	Dataset            string `json:"dataset"`
	Version            uint64 `json:"version"` // 0: nothing to do
	ReadVersion        uint64 `json:"read_version"`
	Groups             int    `json:"groups"`
	FragmentsRemoved   int    `json:"fragments_removed"`
	FragmentsAdded     int    `json:"fragments_added"`
	FilesRemoved       int    `json:"files_removed"`
	FilesAdded         int    `json:"files_added"`
	RowsWritten        uint64 `json:"rows_written"`
	DeletedRowsDropped uint64 `json:"deleted_rows_dropped"`
	SeedFiles          int    `json:"seed_files"`
	Attempts           int    `json:"attempts"`
}

// seedColumns parses --seeds: "all" or a comma-separated list.
func seedColumns(s string) (all bool, cols []string) {
	if s == "" {
		return false, nil
	}
	if s == "all" {
		return true, nil
	}
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cols = append(cols, c)
		}
	}
	return false, cols
}

// maintCode classifies a maint error as an exit code.
func maintCode(err error) int {
	switch {
	case errors.Is(err, maint.ErrInvalidOptions), errors.Is(err, maint.ErrBranch),
		errors.Is(err, commit.ErrDatasetNotFound), errors.Is(err, commit.ErrSeedsNotEnabled),
		errors.Is(err, maint.ErrTaggedVersions):
		return exitBadInput
	case errors.Is(err, maint.ErrStorageVersion):
		return exitRefused
	}
	return exitFailure
}

func runCompact(e *env, args []string) int {
	c := commands{}.Compact()
	fs := newFlagSet(e, c)
	target := fs.Uint64("target-rows-per-fragment", maint.DefaultTargetRowsPerFragment, "rows per output fragment; smaller fragments are merged")
	group := fs.Int("max-rows-per-group", maint.DefaultMaxRowsPerGroup, "rows written per batch")
	mat := fs.Bool("materialize-deletions", true, "rewrite fragments whose deleted share exceeds --threshold")
	threshold := fs.Float64("threshold", maint.DefaultDeletionThreshold, "deleted share above which deletions are materialized")
	seeds := fs.String("seeds", "", "v1 zone write seeds in the new files: all or COL,COL")
	enable := fs.Bool("enable-zone-write-seeds", false, "explicitly activate FLAG_ZONE_WRITE_SEEDS if --seeds needs it")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	all, cols := seedColumns(*seeds)
	res, err := maint.Compact(e.ctx, d.Store(), maint.CompactOptions{
		TargetRowsPerFragment: *target, MaxRowsPerGroup: *group, KeepDeletions: !*mat, DeletionThreshold: *threshold,
		SeedAllColumns: all, SeedColumns: cols,
		Commit: commit.Options{EnableZoneWriteSeeds: *enable, AfterCommit: maint.AfterCommit(d.Store(), func(f string, a ...any) {
			fmt.Fprintf(e.stderr, "lancekeeper compact: "+f+"\n", a...)
		})},
	})
	if err != nil {
		return fail(e, c.name, maintCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		return printJSON(e, c.name, compactJSON{Dataset: pos[0], Version: res.Version, ReadVersion: res.ReadVersion, Groups: res.Groups,
			FragmentsRemoved: res.FragmentsRemoved, FragmentsAdded: res.FragmentsAdded, FilesRemoved: res.FilesRemoved,
			FilesAdded: res.FilesAdded, RowsWritten: res.RowsWritten, DeletedRowsDropped: res.DeletedRowsDropped,
			SeedFiles: res.SeedFiles, Attempts: res.Attempts})
	}
	if res.Version == 0 {
		fmt.Fprintf(e.stdout, "%s: version %d needs no compaction\n", pos[0], res.ReadVersion)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: version %d rewrites %d fragment(s) into %d (%d group(s), %d rows written, %d deleted rows dropped, %d file(s) with v1 seeds)\n",
		pos[0], res.Version, res.FragmentsRemoved, res.FragmentsAdded, res.Groups, res.RowsWritten, res.DeletedRowsDropped, res.SeedFiles)
	return exitOK
}
