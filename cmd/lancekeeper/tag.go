package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// Tag is `lancekeeper tag`.
func (commands) Tag() command {
	return command{
		name: "tag",
		usage: "create DATASET NAME [--version N | --tag T] [--branch B] [--meta K=V]... [--json]\n" +
			"       lancekeeper tag update DATASET NAME [--version N | --tag T] [--branch B] [--json]\n" +
			"       lancekeeper tag delete DATASET NAME\n" +
			"       lancekeeper tag list DATASET [--json]",
		summary: "Create, update, delete or list tags (_refs/tags/NAME.json; no manifest is written).",
		run:     runTag,
	}
}

// tagJSON is one tag in `tag ... --json` output.
type tagJSON struct {
	Name         string            `json:"name"`
	Branch       *string           `json:"branch"` // null = main
	Version      uint64            `json:"version"`
	CreatedAt    *string           `json:"created_at"`
	UpdatedAt    *string           `json:"updated_at"`
	ManifestSize uint64            `json:"manifest_size"`
	Metadata     map[string]string `json:"metadata"`
}

func toTagJSON(t snapshot.Tag) tagJSON {
	out := tagJSON{Name: t.Name, Version: t.Version, ManifestSize: t.ManifestSize, Metadata: t.Metadata}
	if t.Branch != "" {
		b := t.Branch
		out.Branch = &b
	}
	if !t.CreatedAt.IsZero() {
		s := snapshot.FormatRefTime(t.CreatedAt)
		out.CreatedAt = &s
	}
	if !t.UpdatedAt.IsZero() {
		s := snapshot.FormatRefTime(t.UpdatedAt)
		out.UpdatedAt = &s
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	return out
}

func branchName(b string) string {
	if b == "" {
		return snapshot.MainBranch
	}
	return b
}

// kvFlags collects repeated K=V flags.
type kvFlags map[string]string

func (k kvFlags) String() string {
	parts := make([]string, 0, len(k))
	for key, v := range k {
		parts = append(parts, key+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (k kvFlags) Set(s string) error {
	key, v, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	k[key] = v
	return nil
}

// snapshotCode maps an error of the snapshot package to an exit code: bad
// input (unknown or invalid ref, bad options, missing or corrupt manifest,
// an existing target, a transaction that cannot apply) is 2, anything else
// 1 (fail makes a feature-flag refusal 3).
func snapshotCode(err error) int {
	switch {
	case errors.Is(err, snapshot.ErrInvalidRef), errors.Is(err, manifest.ErrRefNotFound),
		errors.Is(err, manifest.ErrRefExists), errors.Is(err, snapshot.ErrBadOptions),
		errors.Is(err, manifest.ErrNotFound), errors.Is(err, manifest.ErrCorrupt),
		errors.Is(err, manifest.ErrMixedNaming), errors.Is(err, commit.ErrDatasetExists),
		errors.Is(err, commit.ErrDatasetNotFound), errors.Is(err, commit.ErrInvalidTransaction):
		return exitBadInput
	}
	return errorCode(err)
}

func runTag(e *env, args []string) int {
	c := commands{}.Tag()
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(e.stderr, "usage: lancekeeper tag %s\n", c.usage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitBadInput
	}
	sub := args[0]
	sc := command{name: "tag " + sub, summary: c.summary}
	switch sub {
	case "create":
		sc.usage = "DATASET NAME [--version N | --tag T] [--branch B] [--meta K=V]... [--json]"
	case "update":
		sc.usage = "DATASET NAME [--version N | --tag T] [--branch B] [--json]"
	case "delete":
		sc.usage = "DATASET NAME"
	case "list":
		sc.usage = "DATASET [--json]"
	default:
		return fail(e, "tag", exitBadInput, fmt.Errorf("unknown subcommand %q (want create, update, delete or list)", sub))
	}
	fs := newFlagSet(e, sc)
	version := fs.Uint64("version", 0, "the version to tag (default: the latest of the branch)")
	fromTag := fs.String("tag", "", "tag the version this other tag points at")
	branch := fs.String("branch", "", "the branch of the version (default: main)")
	meta := kvFlags{}
	asJSON := fs.Bool("json", false, "print JSON")
	if sub == "create" {
		fs.Var(meta, "meta", "tag metadata KEY=VALUE (repeatable)")
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
	ref := snapshot.Ref{Version: *version, Tag: *fromTag, Branch: *branch}
	var t snapshot.Tag
	switch sub {
	case "create":
		t, err = d.CreateTag(e.ctx, pos[1], ref, meta)
	case "update":
		t, err = d.UpdateTag(e.ctx, pos[1], ref)
	case "delete":
		if err = d.DeleteTag(e.ctx, pos[1]); err == nil {
			fmt.Fprintf(e.stdout, "deleted tag %s\n", pos[1])
			return exitOK
		}
	case "list":
		return listTags(e, d, *asJSON)
	}
	if err != nil {
		return fail(e, sc.name, snapshotCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	if *asJSON {
		return printJSON(e, sc.name, toTagJSON(t))
	}
	verb := "created"
	if sub == "update" {
		verb = "updated"
	}
	fmt.Fprintf(e.stdout, "%s tag %s -> %s version %d (manifest %d bytes)\n", verb, t.Name, branchName(t.Branch), t.Version, t.ManifestSize)
	return exitOK
}

func listTags(e *env, d *snapshot.Dataset, asJSON bool) int {
	tags, err := d.ListTags(e.ctx)
	if err != nil {
		return fail(e, "tag list", snapshotCode(err), fmt.Errorf("%s: %w", d.URI(), err))
	}
	if asJSON {
		out := make([]tagJSON, len(tags))
		for i, t := range tags {
			out[i] = toTagJSON(t)
		}
		return printJSON(e, "tag list", out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBRANCH\tVERSION\tCREATED\tUPDATED\tMANIFEST_SIZE")
	for _, t := range tags {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\n", t.Name, branchName(t.Branch), t.Version, timeOrDash(t.CreatedAt), timeOrDash(t.UpdatedAt), t.ManifestSize)
	}
	if err := tw.Flush(); err != nil {
		return fail(e, "tag list", exitFailure, err)
	}
	return exitOK
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return snapshot.FormatRefTime(t)
}

func printJSON(e *env, cmd string, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fail(e, cmd, exitFailure, err)
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	return exitOK
}
