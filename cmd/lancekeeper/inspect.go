package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lancekeeper/lancekeeper/inspect"
)

// Inspect is `lancekeeper inspect`.
func (commands) Inspect() command {
	return command{
		name:    "inspect",
		usage:   "DATASET [--version N | --tag NAME] [--branch NAME] [--json] [--check] [--no-rows]",
		summary: "Summarize one version of a Lance dataset (flags, format, fragments, rows, schema, indices, tags).",
		run:     runInspect,
	}
}

func runInspect(e *env, args []string) int {
	c := commands{}.Inspect()
	fs := newFlagSet(e, c)
	version := fs.Uint64("version", 0, "inspect this version (default: the latest)")
	tag := fs.String("tag", "", "inspect the version this tag points at")
	branch := fs.String("branch", "", "read this branch instead of main")
	asJSON := fs.Bool("json", false, "print the stable JSON form (docs/cli.md)")
	check := fs.Bool("check", false, "exit 3 if this build would refuse to read or write the version")
	noRows := fs.Bool("no-rows", false, "do not open data or deletion files to count rows the manifest does not record")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	if *version != 0 && *tag != "" {
		return fail(e, c.name, exitBadInput, errors.New("give --version or --tag, not both"))
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	defer d.Close()
	s, err := inspect.Summarize(e.ctx, d, inspect.Options{Version: *version, Tag: *tag, Branch: *branch, SkipRowCount: *noRows})
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		out, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else if err := inspect.WriteText(e.stdout, s); err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	if *check && (s.ReadRefused != "" || s.WriteRefused != "") {
		if s.ReadRefused != "" {
			fmt.Fprintf(e.stderr, "lancekeeper inspect: read refused: %s\n", oneLine(s.ReadRefused))
		}
		if s.WriteRefused != "" {
			fmt.Fprintf(e.stderr, "lancekeeper inspect: write refused: %s\n", oneLine(s.WriteRefused))
		}
		return exitRefused
	}
	return exitOK
}

// errorCode maps an error to an exit code: bad input (corrupt or missing
// manifest, unknown ref, mixed naming, invalid URL) is 2, anything else 1.
func errorCode(err error) int {
	var bi badInput
	if errors.As(err, &bi) || inspect.IsBadInput(err) {
		return exitBadInput
	}
	return exitFailure
}
