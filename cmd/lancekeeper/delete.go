package main

import (
	"encoding/json"
	"fmt"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/scan"
)

func (commands) Delete() command {
	return command{
		name:    "delete",
		usage:   "DATASET --where PRED [--branch B] [--json]",
		summary: "Delete the rows a predicate matches (found with the pruned scan; a Delete transaction with new deletion files, rebased over concurrent commits as Lance does).",
		run:     runDelete,
	}
}

func runDelete(e *env, args []string) int {
	c := commands{}.Delete()
	fs := newFlagSet(e, c)
	where := fs.String("where", "", "SQL predicate selecting the rows to delete (required)")
	branch := fs.String("branch", "", "delete on this branch instead of main")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || *where == "" {
		fs.Usage()
		return exitBadInput
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	res, err := scan.Delete(e.ctx, d, *branch, *where, commit.Options{})
	if err != nil {
		return fail(e, c.name, scanErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	var version uint64
	if res.Commit != nil {
		version = res.Commit.Version
	}
	if *asJSON {
		b, _ := json.MarshalIndent(map[string]any{"read_version": res.ReadVersion, "rows_deleted": res.Rows, "fragments": res.Fragments, "version": version}, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	if res.Commit == nil {
		fmt.Fprintf(e.stdout, "%s: no row matches %q at version %d; nothing committed\n", pos[0], *where, res.ReadVersion)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: deleted %d rows in %d fragments (read version %d); version %d\n", pos[0], res.Rows, res.Fragments, res.ReadVersion, version)
	return exitOK
}
