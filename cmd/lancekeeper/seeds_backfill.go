package main

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
)

// runSeedsBackfill is `lancekeeper seeds backfill`.
func runSeedsBackfill(e *env, args []string) int {
	c := command{name: "seeds backfill", usage: "DATASET [--columns COL,...] [--rows-per-zone N] [--fragments-per-commit N] [--enable-zone-write-seeds] [--json]",
		summary: "Give existing fragments v1 zone write seeds by rewriting their data files with the same rows (Rewrite commits; resumable)."}
	fs := newFlagSet(e, c)
	columns := fs.String("columns", "", "columns to seed, COL,COL (default: every top-level column)")
	rpz := fs.Uint64("rows-per-zone", 0, "rows per zone of the new seeds (default 8192)")
	per := fs.Int("fragments-per-commit", 16, "fragments rewritten per commit")
	enable := fs.Bool("enable-zone-write-seeds", false, "explicitly activate FLAG_ZONE_WRITE_SEEDS (needed when the table does not carry it)")
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
	_, cols := seedColumns(*columns)
	res, err := maint.BackfillSeeds(e.ctx, d.Store(), maint.BackfillOptions{
		Columns: cols, RowsPerZone: *rpz, FragmentsPerCommit: *per,
		Commit: commit.Options{EnableZoneWriteSeeds: *enable},
		Progress: func(done, total int, v uint64) {
			if !*asJSON {
				fmt.Fprintf(e.stderr, "seeds backfill: %d/%d fragments (version %d)\n", done, total, v)
			}
		},
	})
	if err != nil {
		return fail(e, c.name, maintCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		return printJSON(e, c.name, res)
	}
	fmt.Fprintf(e.stdout, "%s: %d fragment(s) rewritten with v1 seeds in %d version(s); %d already had them\n",
		pos[0], res.Rewritten, len(res.Versions), res.Skipped)
	return exitOK
}
