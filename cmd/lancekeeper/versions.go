package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/lancekeeper/lancekeeper/inspect"
)

// Versions is `lancekeeper versions`.
func (commands) Versions() command {
	return command{
		name:    "versions",
		usage:   "DATASET [--branch NAME] [--json]",
		summary: "List the versions of a Lance dataset with their timestamps.",
		run:     runVersions,
	}
}

func runVersions(e *env, args []string) int {
	c := commands{}.Versions()
	fs := newFlagSet(e, c)
	branch := fs.String("branch", "", "list this branch instead of main")
	asJSON := fs.Bool("json", false, "print a JSON array (docs/cli.md)")
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
	vs, err := inspect.Versions(e.ctx, d, *branch)
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		b, err := json.MarshalIndent(vs, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIMESTAMP\tSCHEME\tREADER\tWRITER\tFRAGMENTS\tTAGS")
	for _, v := range vs {
		ts := v.Timestamp
		if ts == "" {
			ts = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%s\n", v.Version, ts, v.NamingScheme, v.ReaderFlags, v.WriterFlags, v.NumFragments, strings.Join(v.Tags, ","))
	}
	if err := tw.Flush(); err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	return exitOK
}
