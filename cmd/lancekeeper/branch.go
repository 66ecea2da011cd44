package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Branch is `lancekeeper branch`.
func (commands) Branch() command {
	return command{
		name: "branch",
		usage: "create DATASET NAME [--version N | --tag T] [--from BRANCH] [--meta K=V]... [--json]\n" +
			"       lancekeeper branch list DATASET [--json]\n" +
			"       lancekeeper branch delete DATASET NAME [--json]",
		summary: "Create a branch (shallow clone in tree/NAME + _refs/branches/NAME.json) or list branches.",
		run:     runBranch,
	}
}

// branchJSON is one branch in `branch ... --json` output.
type branchJSON struct {
	Name           string            `json:"name"`
	ParentBranch   *string           `json:"parent_branch"` // null = main
	ParentVersion  uint64            `json:"parent_version"`
	CreateAt       int64             `json:"create_at"` // Unix seconds
	ManifestSize   uint64            `json:"manifest_size"`
	VersionMapping [][2]any          `json:"version_mapping"`
	LatestVersion  *uint64           `json:"latest_version"`
	Metadata       map[string]string `json:"metadata"`
	Error          string            `json:"error,omitempty"`
}

func toBranchJSON(b snapshot.Branch) branchJSON {
	out := branchJSON{Name: b.Name, ParentVersion: b.ParentVersion, CreateAt: b.CreateAt, ManifestSize: b.ManifestSize,
		VersionMapping: [][2]any{}, Metadata: b.Metadata}
	if b.ParentBranch != "" {
		p := b.ParentBranch
		out.ParentBranch = &p
	}
	for _, vm := range b.Identifier {
		out.VersionMapping = append(out.VersionMapping, [2]any{vm.Version, vm.ID})
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	return out
}

func runBranch(e *env, args []string) int {
	c := commands{}.Branch()
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(e.stderr, "usage: lancekeeper branch %s\n", c.usage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitBadInput
	}
	sub := args[0]
	if sub == "delete" {
		return runBranchDelete(e, args[1:])
	}
	sc := command{name: "branch " + sub, summary: c.summary}
	switch sub {
	case "create":
		sc.usage = "DATASET NAME [--version N | --tag T] [--from BRANCH] [--meta K=V]... [--json]"
	case "list":
		sc.usage = "DATASET [--json]"
	default:
		return fail(e, "branch", exitBadInput, fmt.Errorf("unknown subcommand %q (want create, list or delete)", sub))
	}
	fs := newFlagSet(e, sc)
	asJSON := fs.Bool("json", false, "print JSON")
	version := fs.Uint64("version", 0, "fork at this version of the source branch (default: its latest)")
	fromTag := fs.String("tag", "", "fork at the version this tag points at")
	from := fs.String("from", "", "the source branch (default: main)")
	meta := kvFlags{}
	if sub == "create" {
		fs.Var(meta, "meta", "branch metadata KEY=VALUE (repeatable)")
	}
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return parseFailed(err)
	}
	want := 2
	if sub == "list" {
		want = 1
	}
	if len(pos) != want {
		fs.Usage()
		return exitBadInput
	}
	if *version != 0 && *fromTag != "" {
		return fail(e, sc.name, exitBadInput, errors.New("give --version or --tag, not both"))
	}
	d, err := openDataset(e.ctx, pos[0])
	if err != nil {
		return fail(e, sc.name, exitBadInput, err)
	}
	defer d.Close()
	if sub == "list" {
		return listBranches(e, d, *asJSON)
	}
	br, s, err := d.CreateBranch(e.ctx, pos[1], snapshot.Ref{Version: *version, Tag: *fromTag, Branch: *from}, snapshot.BranchOptions{Metadata: meta})
	if err != nil {
		return fail(e, sc.name, snapshotCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		out := toBranchJSON(br)
		v := s.Version
		out.LatestVersion = &v
		return printJSON(e, sc.name, out)
	}
	m := s.Manifest()
	fmt.Fprintf(e.stdout, "created branch %s from %s version %d in %s (reader flags %d, writer flags %d)\n",
		br.Name, branchName(br.ParentBranch), br.ParentVersion, snapshot.BranchRoot(br.Name), m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	return exitOK
}

func listBranches(e *env, d *snapshot.Dataset, asJSON bool) int {
	brs, err := d.ListBranches(e.ctx)
	if err != nil {
		return fail(e, "branch list", snapshotCode(err), fmt.Errorf("%s: %w", d.URI(), err))
	}
	out := make([]branchJSON, len(brs))
	for i, b := range brs {
		out[i] = toBranchJSON(b)
		vs, err := d.Versions(e.ctx, b.Name)
		if err != nil {
			out[i].Error = oneLine(err.Error())
			continue
		}
		v := vs[len(vs)-1].Version
		out[i].LatestVersion = &v
	}
	if asJSON {
		return printJSON(e, "branch list", out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPARENT\tPARENT_VERSION\tLATEST\tCREATED")
	for _, b := range out {
		latest := "-"
		if b.LatestVersion != nil {
			latest = fmt.Sprint(*b.LatestVersion)
		} else if b.Error != "" {
			latest = "error: " + b.Error
		}
		parent := snapshot.MainBranch
		if b.ParentBranch != nil {
			parent = *b.ParentBranch
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", b.Name, parent, b.ParentVersion, latest, time.Unix(b.CreateAt, 0).UTC().Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return fail(e, "branch list", exitFailure, err)
	}
	return exitOK
}
