package main

import (
	"fmt"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
)

// Cleanup is `lancekeeper cleanup`.
func (commands) Cleanup() command {
	return command{
		name:    "cleanup",
		usage:   "DATASET --older-than DURATION [--retain-versions N] [--delete-unverified] [--keep-tagged] [--dry-run] [--json]",
		summary: "Remove old versions and the files only they reference, as Lance's cleanup_old_versions (docs/maintenance.md).",
		run:     runCleanup,
	}
}

func runCleanup(e *env, args []string) int {
	c := commands{}.Cleanup()
	fs := newFlagSet(e, c)
	older := fs.String("older-than", "", "remove versions older than this (e.g. 14days, 36h, 2w)")
	retain := fs.Uint64("retain-versions", 0, "always keep the newest N versions")
	unverified := fs.Bool("delete-unverified", false, "also delete unreferenced files younger than 7 days (never newer than the cutoff)")
	keepTagged := fs.Bool("keep-tagged", false, "keep tagged old versions silently instead of refusing (Lance's error_if_tagged_old_versions=false)")
	dry := fs.Bool("dry-run", false, "list what would be removed, remove nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || (*older == "" && *retain == 0) {
		fs.Usage()
		return exitBadInput
	}
	opts := maint.CleanupOptions{RetainVersions: *retain, DeleteUnverified: *unverified, KeepTaggedOldVersions: *keepTagged, DryRun: *dry}
	if *older != "" {
		age, err := maint.ParseDuration(*older)
		if err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		opts.Before = time.Now().Add(-age)
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	res, err := maint.Cleanup(e.ctx, d.Store(), opts)
	if err != nil {
		return fail(e, c.name, maintCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		return printJSON(e, c.name, res)
	}
	verb := "removed"
	if *dry {
		verb = "would remove"
		for _, f := range res.RemovedFiles {
			fmt.Fprintln(e.stdout, f)
		}
	}
	fmt.Fprintf(e.stdout, "%s: %s %d version(s) and %d file(s) (%d bytes); kept %d version(s) (latest %d)\n",
		pos[0], verb, len(res.RemovedVersions), len(res.RemovedFiles), res.BytesRemoved, len(res.KeptVersions), res.Latest)
	return exitOK
}
