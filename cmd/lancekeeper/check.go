package main

import (
	"encoding/json"
	"fmt"

	"github.com/lancekeeper/lancekeeper/check"
	"github.com/lancekeeper/lancekeeper/store"
)

// exitProblems is check's exit code when it found a problem.
const exitProblems = 4

// Check is `lancekeeper check`.
func (commands) Check() command {
	return command{
		name:    "check",
		usage:   "DATASET [--version N | --all-versions] [--seeds] [--json]",
		summary: "Check that a version's files exist and agree with its manifest (exit 4 on any problem).",
		run:     runCheck,
	}
}

func runCheck(e *env, args []string) int {
	c := commands{}.Check()
	fs := newFlagSet(e, c)
	version := fs.Uint64("version", 0, "check this version (default: the latest)")
	all := fs.Bool("all-versions", false, "check every version under _versions/")
	// Every seed is decoded and validated (E01–E26) by default; --seeds
	// adds the audit of `seeds verify` (every value against the bounds).
	seeds := fs.Bool("seeds", false, "also audit every zone write seed against the values its data file stores (as `seeds verify`)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || (*all && *version != 0) {
		fs.Usage()
		return exitBadInput
	}
	st, err := store.Open(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer st.Close()
	rep, err := check.Dataset(e.ctx, st, check.Options{Version: *version, AllVersions: *all, Seeds: *seeds})
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintln(e.stdout, p.String())
		}
		status := "clean"
		if !rep.OK() {
			status = fmt.Sprintf("%d problem(s)", len(rep.Problems))
		}
		fmt.Fprintf(e.stdout, "checked %d version(s), %d file(s), %d seed(s): %s\n", len(rep.Versions), rep.Files, rep.Seeds, status)
	}
	if !rep.OK() {
		return exitProblems
	}
	return exitOK
}
