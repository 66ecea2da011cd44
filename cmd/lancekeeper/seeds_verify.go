package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/inspect"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// exitSeedsUnsound is `seeds verify`'s exit code when a seed is unsound,
// unusable or could not be verified.
const exitSeedsUnsound = 4

type seedsVerifyJSON struct {
	Dataset         string                `json:"dataset"`
	Version         uint64                `json:"version"`
	ZoneSeedsFlag   bool                  `json:"zone_write_seeds"`
	Sound           int                   `json:"sound"`
	Unsound         int                   `json:"unsound"`
	Unusable        int                   `json:"unusable"`
	Unverified      int                   `json:"unverified"`
	FilesUnreadable int                   `json:"files_unreadable"`
	Files           []fileSeedsVerifyJSON `json:"files"`
}

type fileSeedsVerifyJSON struct {
	Fragment uint64            `json:"fragment"`
	Path     string            `json:"path"`
	Rows     uint64            `json:"rows"`
	Error    string            `json:"error,omitempty"`
	Legacy   bool              `json:"legacy,omitempty"`
	Seeds    []seedVerdictJSON `json:"seeds"`
}

type seedVerdictJSON struct {
	Column  string `json:"column"`
	Version *int   `json:"version"`
	Zones   int    `json:"zones"`
	Status  string `json:"status"`
	Zone    *int   `json:"zone,omitempty"`
	Check   string `json:"check,omitempty"`
	Value   any    `json:"value,omitempty"`
	Bound   any    `json:"bound,omitempty"`
	Error   string `json:"error,omitempty"`
	// ZeroWidened: zone bounds sound only as readers read them, a float
	// zero bound widened (min ±0 → −0, max ±0 → +0; R39 on read, Q16);
	// WidenedZone / WidenedCheck name the first.
	ZeroWidened  int    `json:"zero_widened,omitempty"`
	WidenedZone  *int   `json:"widened_zone,omitempty"`
	WidenedCheck string `json:"widened_check,omitempty"`
}

// runSeedsVerify is `lancekeeper seeds verify`.
func runSeedsVerify(e *env, args []string) int {
	c := command{name: "seeds verify", usage: "DATASET [--version N | --tag T] [--branch B] [--column C] [--json]",
		summary: "Decode every seeded column of every data file of a version and prove each seed (v0 and v1) sound against the values; exit 4 when a seed is unsound, unusable or unverifiable."}
	fs := newFlagSet(e, c)
	column := fs.String("column", "", "only this column")
	version := fs.Uint64("version", 0, "verify this version (default: the latest)")
	tag := fs.String("tag", "", "verify the version this tag points at")
	branch := fs.String("branch", "", "verify this branch instead of main")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	if *version != 0 && *tag != "" {
		return fail(e, c.name, exitBadInput, fmt.Errorf("--version and --tag are exclusive"))
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
	bst, err := d.BranchStore(s.Branch)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	a, err := inspect.AuditSeeds(e.ctx, bst, s.Manifest(), *column)
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	rep := seedsVerifyReport(pos[0], a)
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		writeSeedsVerifyText(e.stdout, rep)
	}
	if !a.AllSound() {
		return exitSeedsUnsound
	}
	return exitOK
}

func seedsVerifyReport(dataset string, a *inspect.SeedAudit) *seedsVerifyJSON {
	rep := &seedsVerifyJSON{Dataset: dataset, Version: a.Version, ZoneSeedsFlag: a.ZoneSeedsFlag, Sound: a.Sound, Unsound: a.Unsound,
		Unusable: a.Unusable, Unverified: a.Unverified, FilesUnreadable: a.FilesUnreadable, Files: []fileSeedsVerifyJSON{}}
	for _, f := range a.Files {
		fj := fileSeedsVerifyJSON{Fragment: f.Fragment, Path: f.Path, Rows: f.Rows, Legacy: f.Legacy, Seeds: []seedVerdictJSON{}}
		if f.Err != nil {
			fj.Error = oneLine(f.Err.Error())
		}
		for _, v := range f.Seeds {
			sj := seedVerdictJSON{Column: v.Column, Zones: v.Zones, Status: string(v.Status), Check: v.Check}
			if v.Version >= 0 {
				ver := v.Version
				sj.Version = &ver
			}
			if v.Status == datafile.SeedUnsound {
				z := v.Zone
				sj.Zone = &z
				sj.Value, sj.Bound = jsonValue(v.Value), jsonValue(v.Bound)
			}
			if v.Err != nil {
				sj.Error = oneLine(v.Err.Error())
			}
			if v.ZeroWidened > 0 {
				z := v.WidenedZone
				sj.ZeroWidened, sj.WidenedZone, sj.WidenedCheck = v.ZeroWidened, &z, v.WidenedCheck
			}
			fj.Seeds = append(fj.Seeds, sj)
		}
		rep.Files = append(rep.Files, fj)
	}
	return rep
}

func writeSeedsVerifyText(w io.Writer, rep *seedsVerifyJSON) {
	fmt.Fprintf(w, "%s version %d: %d sound, %d unsound, %d unusable, %d unverified seed(s)", rep.Dataset, rep.Version,
		rep.Sound, rep.Unsound, rep.Unusable, rep.Unverified)
	if rep.FilesUnreadable > 0 {
		fmt.Fprintf(w, ", %d unreadable data file(s)", rep.FilesUnreadable)
	}
	fmt.Fprintln(w)
	for _, f := range rep.Files {
		if f.Error != "" {
			fmt.Fprintf(w, "  %s (fragment %d): unreadable: %s\n", f.Path, f.Fragment, f.Error)
			continue
		}
		if f.Legacy {
			fmt.Fprintf(w, "  %s (fragment %d): legacy v1 data file, no seeds (no global buffers)\n", f.Path, f.Fragment)
			continue
		}
		for _, s := range f.Seeds {
			ver := "v?"
			if s.Version != nil {
				ver = fmt.Sprintf("v%d", *s.Version)
			}
			switch s.Status {
			case string(datafile.SeedUnsound):
				where := "seed"
				if s.Zone != nil && *s.Zone >= 0 {
					where = fmt.Sprintf("zone %d", *s.Zone)
				}
				fmt.Fprintf(w, "  %s  %s  %s  unsound: %s %s: real %v, seed %v\n", f.Path, s.Column, ver, where, s.Check, s.Value, s.Bound)
			case string(datafile.SeedSound):
				widened := ""
				if s.ZeroWidened > 0 && s.WidenedZone != nil {
					widened = fmt.Sprintf("; %d zero bound(s) sound read widened (R39 on read), first zone %d %s", s.ZeroWidened, *s.WidenedZone, s.WidenedCheck)
				}
				fmt.Fprintf(w, "  %s  %s  %s  sound (%d zones%s)\n", f.Path, s.Column, ver, s.Zones, widened)
			default:
				fmt.Fprintf(w, "  %s  %s  %s  %s: %s\n", f.Path, s.Column, ver, s.Status, s.Error)
			}
		}
	}
}
