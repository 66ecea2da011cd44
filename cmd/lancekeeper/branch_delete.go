package main

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/maint"
)

// runBranchDelete is `lancekeeper branch delete DATASET NAME`.
func runBranchDelete(e *env, args []string) int {
	c := command{name: "branch delete", usage: "DATASET NAME [--json]",
		summary: "Delete a branch: its ref, then its tree (never main, a parent of another branch, or a branch a tag points into)."}
	fs := newFlagSet(e, c)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 2 {
		fs.Usage()
		return exitBadInput
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	res, err := maint.DeleteBranch(e.ctx, d.Store(), pos[1])
	if err != nil {
		return fail(e, c.name, maintCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		return printJSON(e, c.name, res)
	}
	fmt.Fprintf(e.stdout, "%s: branch %s deleted (%d file(s) removed)\n", pos[0], res.Branch, len(res.RemovedFiles))
	return exitOK
}
