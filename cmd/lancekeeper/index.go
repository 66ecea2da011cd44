package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// Index is `lancekeeper index`.
func (commands) Index() command {
	return command{
		name: "index",
		usage: "create DATASET --column C --type zonemap [--rows-per-zone N] [--name NAME] [--replace]  |  " +
			"update DATASET --name NAME  |  list DATASET [--verify]  |  drop DATASET --name NAME",
		summary: "Build (from zone write seeds where usable), update, list and drop ZoneMap index segments.",
		run:     runIndex,
	}
}

func runIndex(e *env, args []string) int {
	c := commands{}.Index()
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "usage: lancekeeper index %s\n", c.usage)
		return exitBadInput
	}
	switch args[0] {
	case "create":
		return runIndexCreate(e, args[1:])
	case "update":
		return runIndexUpdate(e, args[1:])
	case "list":
		return runIndexList(e, args[1:])
	case "drop":
		return runIndexDrop(e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stderr, "usage: lancekeeper index %s\n%s\n", c.usage, c.summary)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "lancekeeper index: unknown subcommand %q (want create, update, list or drop)\n", args[0])
	return exitBadInput
}

// indexSub builds the command value of one subcommand (for flag usage).
func indexSub(name, usage, summary string) command {
	return command{name: "index " + name, usage: usage, summary: summary}
}

// indexStore opens the dataset and the store of the branch to change.
func indexStore(e *env, cmd, uri, branch string) (*snapshot.Dataset, *store.Store, int) {
	d, err := openDataset(e.ctx, uri)
	if err != nil {
		return nil, nil, fail(e, cmd, exitBadInput, err)
	}
	st, err := d.BranchStore(branch)
	if err != nil {
		d.Close()
		return nil, nil, fail(e, cmd, exitBadInput, err)
	}
	return d, st, exitOK
}

// indexErrorCode classifies an index command's error.
func indexErrorCode(err error) int {
	switch {
	case errors.Is(err, zonemap.ErrIndexExists), errors.Is(err, zonemap.ErrNoIndex), errors.Is(err, zonemap.ErrNoColumn),
		errors.Is(err, zonemap.ErrUnsupportedType), errors.Is(err, zonemap.ErrNotZoneMap), errors.Is(err, zonemap.ErrUpToDate),
		errors.Is(err, commit.ErrDatasetNotFound), errors.Is(err, zonemap.ErrInvalidIndex):
		return exitBadInput
	}
	return errorCode(err)
}

// buildJSON is the --json output of create and update.
type buildJSON struct {
	Dataset       string         `json:"dataset"`
	Name          string         `json:"name"`
	Column        string         `json:"column"`
	Segment       string         `json:"segment"`
	Removed       []string       `json:"removed_segments"`
	RowsPerZone   uint64         `json:"rows_per_zone"`
	Version       uint64         `json:"version"`
	ReadVersion   uint64         `json:"read_version"`
	Fragments     int            `json:"fragments"`
	FromSeeds     int            `json:"fragments_from_seeds"`
	FromData      int            `json:"fragments_from_data"`
	FromAbsent    int            `json:"fragments_without_column"`
	Zones         int            `json:"zones"`
	NullBitmap    bool           `json:"null_bitmap"`
	DataBytesRead int64          `json:"data_bytes_read"`
	PageBytesRead int64          `json:"data_page_bytes_read"`
	PerFragment   []fragmentJSON `json:"per_fragment"`
}

type fragmentJSON struct {
	ID          uint64 `json:"id"`
	Rows        uint64 `json:"rows"`
	Zones       int    `json:"zones"`
	Source      string `json:"source"`
	SeedVersion *int   `json:"seed_version,omitempty"`
	SeedError   string `json:"seed_error,omitempty"`
}

func buildOutput(uri, column string, r *zonemap.Result) buildJSON {
	d, _ := zonemap.DecodeDetails(r.Segment)
	out := buildJSON{
		Dataset: uri, Name: r.Name, Column: column, RowsPerZone: d.RowsPerZone, NullBitmap: d.HasNullBitmap,
		Version: r.Commit.Version, ReadVersion: r.Commit.ReadVersion, Removed: []string{},
		Fragments: r.Stats.Fragments, FromSeeds: r.Stats.FromSeeds, FromData: r.Stats.FromData, FromAbsent: r.Stats.FromAbsent,
		Zones: r.Stats.Zones, DataBytesRead: r.Stats.DataBytesRead, PageBytesRead: r.Stats.PageBytesRead,
	}
	out.Segment, _ = manifest.IndexUUID(r.Segment)
	for _, idx := range r.Removed {
		u, _ := manifest.IndexUUID(idx)
		out.Removed = append(out.Removed, u)
	}
	for _, f := range r.Fragments {
		fj := fragmentJSON{ID: f.ID, Rows: f.Rows, Zones: f.Zones, Source: f.Source.String()}
		if f.Source == zonemap.FromSeed {
			v := f.SeedVersion
			fj.SeedVersion = &v
		}
		if f.SeedError != nil {
			fj.SeedError = oneLine(f.SeedError.Error())
		}
		out.PerFragment = append(out.PerFragment, fj)
	}
	return out
}

func printBuild(w io.Writer, verb string, b buildJSON, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(b)
		return
	}
	fmt.Fprintf(w, "%s ZoneMap index %q on column %q: segment %s, %d zones of %d rows, version %d (read %d)\n",
		verb, b.Name, b.Column, b.Segment, b.Zones, b.RowsPerZone, b.Version, b.ReadVersion)
	fmt.Fprintf(w, "fragments: %d indexed — %d from seeds, %d from data", b.Fragments, b.FromSeeds, b.FromData)
	if b.FromAbsent > 0 {
		fmt.Fprintf(w, ", %d without the column (all null)", b.FromAbsent)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "read: %d bytes of data files, %d of them data pages\n", b.DataBytesRead, b.PageBytesRead)
	if len(b.Removed) > 0 {
		fmt.Fprintf(w, "replaced segments: %s\n", strings.Join(b.Removed, ", "))
	}
	for _, f := range b.PerFragment {
		if f.SeedError != "" {
			fmt.Fprintf(w, "  fragment %d: seed not used: %s\n", f.ID, f.SeedError)
		}
	}
}

func runIndexCreate(e *env, args []string) int {
	c := indexSub("create", "DATASET --column C --type zonemap [--rows-per-zone N] [--name NAME] [--replace] [--branch B] [--json]",
		"Build a ZoneMap index segment over every fragment and commit it (CreateIndex).")
	fs := newFlagSet(e, c)
	column := fs.String("column", "", "the top-level column to index (required)")
	typ := fs.String("type", "", "the index type: zonemap (required; the only type this command builds)")
	rpz := fs.Uint64("rows-per-zone", zonemap.DefaultRowsPerZone, "rows per zone")
	name := fs.String("name", "", "index name (default COLUMN_idx)")
	replace := fs.Bool("replace", false, "replace an existing index of that name")
	noWriterSeeds := fs.Bool("no-writer-seeds", false, "record use_seeds=false: writers add no seeds for the column to new files")
	fromData := fs.Bool("from-data", false, "read every fragment's column, ignoring seeds")
	branch := fs.String("branch", "", "index this branch instead of main")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || *column == "" || *typ == "" {
		fs.Usage()
		return exitBadInput
	}
	if !strings.EqualFold(*typ, "zonemap") {
		return fail(e, c.name, exitBadInput, fmt.Errorf("--type %q: only zonemap indices can be built (Lance builds the other types)", *typ))
	}
	if *rpz == 0 || *rpz > zonemap.MaxRowsPerZone {
		return fail(e, c.name, exitBadInput, fmt.Errorf("--rows-per-zone %d is outside 1..%d", *rpz, uint64(zonemap.MaxRowsPerZone)))
	}
	d, st, code := indexStore(e, c.name, pos[0], *branch)
	if d == nil {
		return code
	}
	defer d.Close()
	var stats datafile.IOStats
	r, err := zonemap.Create(e.ctx, st, zonemap.CreateOptions{Column: *column, Name: *name, RowsPerZone: *rpz, Replace: *replace,
		NoWriterSeeds: *noWriterSeeds, NoSeeds: *fromData, Stats: &stats})
	if err != nil {
		return fail(e, c.name, indexErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	printBuild(e.stdout, "created", buildOutput(pos[0], *column, r), *asJSON)
	return exitOK
}

func runIndexUpdate(e *env, args []string) int {
	c := indexSub("update", "DATASET --name NAME [--new-segment] [--branch B] [--json]",
		"Index the fragments appended since (from their seeds where usable) and commit.")
	fs := newFlagSet(e, c)
	name := fs.String("name", "", "the index to update (required)")
	newSeg := fs.Bool("new-segment", false, "add a segment for the new fragments instead of rewriting the index as one segment")
	fromData := fs.Bool("from-data", false, "read every new fragment's column, ignoring seeds")
	branch := fs.String("branch", "", "update the index of this branch")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || *name == "" {
		fs.Usage()
		return exitBadInput
	}
	d, st, code := indexStore(e, c.name, pos[0], *branch)
	if d == nil {
		return code
	}
	defer d.Close()
	r, err := zonemap.Update(e.ctx, st, zonemap.UpdateOptions{Name: *name, NewSegment: *newSeg, NoSeeds: *fromData})
	if errors.Is(err, zonemap.ErrUpToDate) {
		fmt.Fprintf(e.stdout, "index %q already covers every fragment; nothing to do\n", *name)
		return exitOK
	}
	if err != nil {
		return fail(e, c.name, indexErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	col := ""
	if f, _, err := manifest.LoadLatest(e.ctx, st.Bucket(), st.KeyPrefix()); err == nil && len(r.Segment.GetFields()) == 1 {
		if cc, err := zonemap.ColumnByID(f.Manifest, r.Segment.GetFields()[0]); err == nil {
			col = cc.Name
		}
	}
	printBuild(e.stdout, "updated", buildOutput(pos[0], col, r), *asJSON)
	return exitOK
}

// listJSON is one segment of `index list --json`.
type listJSON struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	UUID          string   `json:"uuid"`
	Fields        []string `json:"fields"`
	Fragments     int      `json:"fragments"`
	LiveFragments int      `json:"live_fragments"`
	DatasetVer    uint64   `json:"dataset_version"`
	RowsPerZone   uint64   `json:"rows_per_zone,omitempty"`
	UseSeeds      *bool    `json:"use_seeds,omitempty"`
	NullBitmap    *bool    `json:"null_bitmap,omitempty"`
	Verified      bool     `json:"verified,omitempty"`
	Zones         int      `json:"zones,omitempty"`
	Error         string   `json:"error,omitempty"`
}

func runIndexList(e *env, args []string) int {
	c := indexSub("list", "DATASET [--verify] [--version N | --tag T] [--branch B] [--json]",
		"List the index segments of a version; --verify reads and checks each ZoneMap file.")
	fs := newFlagSet(e, c)
	verify := fs.Bool("verify", false, "read and validate every ZoneMap segment's file")
	version := fs.Uint64("version", 0, "list this version (default: the latest)")
	tag := fs.String("tag", "", "list the version this tag points at")
	branch := fs.String("branch", "", "list a version of this branch")
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
	s, err := d.Checkout(e.ctx, snapshot.Options{Ref: snapshot.Ref{Version: *version, Tag: *tag, Branch: *branch}})
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	st, err := d.BranchStore(s.Branch)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	segs, err := zonemap.Inspect(e.ctx, st, s.File, *verify)
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	types := map[string]inspect.Index{}
	for _, ix := range inspect.FromFile(s.File).Indices {
		types[ix.UUID] = ix
	}
	out := []listJSON{}
	for _, si := range segs {
		ix := types[si.UUID]
		lj := listJSON{Name: si.Name, Type: ix.Type, UUID: si.UUID, Fields: ix.Fields, Fragments: len(si.Fragments),
			LiveFragments: si.Live, DatasetVer: si.Index.GetDatasetVersion(), Verified: si.Verified, Zones: si.Zones}
		if lj.Fields == nil {
			lj.Fields = []string{}
		}
		if si.ZoneMap {
			lj.Type = "ZoneMap"
			lj.RowsPerZone = si.Details.RowsPerZone
			u, nb := si.Details.UseSeeds, si.Details.HasNullBitmap
			lj.UseSeeds, lj.NullBitmap = &u, &nb
		}
		if si.Err != nil {
			lj.Error = oneLine(si.Err.Error())
		}
		out = append(out, lj)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"dataset": pos[0], "version": s.Version, "fragments": len(s.Manifest().GetFragments()), "segments": out})
		return exitOK
	}
	fmt.Fprintf(e.stdout, "version %d: %d fragments, %d index segments\n", s.Version, len(s.Manifest().GetFragments()), len(out))
	if len(out) == 0 {
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tCOLUMNS\tSEGMENT\tFRAGMENTS\tROWS/ZONE\tSEEDS\tSTATUS")
	for _, l := range out {
		rpz, seeds := "-", "-"
		if l.Type == "ZoneMap" {
			rpz = fmt.Sprint(l.RowsPerZone)
			seeds = fmt.Sprint(*l.UseSeeds)
		}
		status := "-"
		switch {
		case l.Error != "":
			status = "INVALID: " + l.Error
		case l.Verified:
			status = fmt.Sprintf("ok (%d zones)", l.Zones)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", l.Name, l.Type, strings.Join(l.Fields, ","), l.UUID,
			l.LiveFragments, len(s.Manifest().GetFragments()), rpz, seeds, status)
	}
	_ = tw.Flush()
	return exitOK
}

func runIndexDrop(e *env, args []string) int {
	c := indexSub("drop", "DATASET --name NAME [--branch B]",
		"Remove every segment of an index (CreateIndex with removals only); sticky flag bits stay set.")
	fs := newFlagSet(e, c)
	name := fs.String("name", "", "the index to drop (required)")
	branch := fs.String("branch", "", "drop the index of this branch")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 || *name == "" {
		fs.Usage()
		return exitBadInput
	}
	d, st, code := indexStore(e, c.name, pos[0], *branch)
	if d == nil {
		return code
	}
	defer d.Close()
	r, err := zonemap.Drop(e.ctx, st, zonemap.DropOptions{Name: *name})
	if err != nil {
		return fail(e, c.name, indexErrorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	fmt.Fprintf(e.stdout, "dropped index %q (%d segment(s)); committed version %d\n", *name, len(r.Removed), r.Commit.Version)
	return exitOK
}
