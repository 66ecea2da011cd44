package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/internal/floatorder"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// Seeds is `lancekeeper seeds`.
func (commands) Seeds() command {
	return command{
		name:  "seeds",
		usage: "DATASET [--column C] [--where PRED] [--zones] [--version N | --tag T] [--branch B] [--json]  |  seeds enable DATASET [--branch B] [--yes]  |  seeds verify DATASET [--version N | --tag T] [--column C] [--json]",
		summary: "Show each data file's zone write seeds (version, zones, validation) and a --where pruning preview; " +
			"'seeds enable' explicitly activates FLAG_ZONE_WRITE_SEEDS.",
		run: runSeeds,
	}
}

// seedsJSON is the `seeds --json` output.
type seedsJSON struct {
	Dataset        string          `json:"dataset"`
	Version        uint64          `json:"version"`
	ZoneSeedsFlag  bool            `json:"zone_write_seeds"`
	Files          []fileSeedsJSON `json:"files"`
	Prune          *pruneJSON      `json:"prune,omitempty"`
	SeedsValid     int             `json:"seeds_valid"`
	SeedsInvalid   int             `json:"seeds_invalid"`
	FilesWithSeeds int             `json:"files_with_seeds"`
}

type fileSeedsJSON struct {
	Fragment uint64     `json:"fragment"`
	Path     string     `json:"path"`
	Rows     uint64     `json:"rows"`
	Seeds    []seedJSON `json:"seeds"`
	Error    string     `json:"error,omitempty"`
}

type seedJSON struct {
	Column      string     `json:"column"`
	Version     *int       `json:"version"` // nil when the seed could not be read far enough
	RowsPerZone uint64     `json:"rows_per_zone"`
	Zones       int        `json:"zones"`
	Valid       bool       `json:"valid"`
	Error       string     `json:"error,omitempty"`
	ZoneStats   []zoneJSON `json:"zone_stats,omitempty"`
}

type zoneJSON struct {
	Start     uint64 `json:"start"`
	Rows      uint64 `json:"rows"`
	Min       any    `json:"min"`
	Max       any    `json:"max"`
	NullCount uint64 `json:"null_count"`
	NaNCount  uint64 `json:"nan_count"`
	// NegativeNaNCount is the v1 field (issue 15 item 11); null for v0
	// seeds, which have none.
	NegativeNaNCount *uint64 `json:"negative_nan_count"`
	// Kept: with --where, whether the predicate keeps the zone.
	Kept *bool `json:"kept,omitempty"`
}

type pruneJSON struct {
	Predicate        string `json:"predicate"`
	Column           string `json:"column"`
	ZonesTotal       int    `json:"zones_total"`
	ZonesKept        int    `json:"zones_kept"`
	RowsTotal        uint64 `json:"rows_total"`
	RowsKept         uint64 `json:"rows_kept"`
	FragmentsTotal   int    `json:"fragments_total"`
	FragmentsKept    int    `json:"fragments_kept"`
	FragmentsScanned int    `json:"fragments_without_usable_seed"`
}

func runSeeds(e *env, args []string) int {
	if len(args) > 0 && args[0] == "enable" {
		return runSeedsEnable(e, args[1:])
	}
	if len(args) > 0 && args[0] == "backfill" {
		return runSeedsBackfill(e, args[1:])
	}
	if len(args) > 0 && args[0] == "verify" {
		return runSeedsVerify(e, args[1:])
	}
	c := commands{}.Seeds()
	fs := newFlagSet(e, c)
	column := fs.String("column", "", "only this column")
	where := fs.String("where", "", "pruning preview for a predicate, e.g. \"x > 5\", \"x BETWEEN 1 AND 3\", \"s = 'abc'\", \"x IS NULL\", \"isnan(x)\", \"x IN (1,2)\"")
	zones := fs.Bool("zones", false, "list every zone's statistics")
	version := fs.Uint64("version", 0, "read this version (default: the latest)")
	tag := fs.String("tag", "", "read the version this tag points at")
	branch := fs.String("branch", "", "read this branch instead of main")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitBadInput
	}
	var expr *filter.Expr
	if *where != "" {
		if expr, err = filter.Parse(*where); err != nil {
			return fail(e, c.name, exitBadInput, fmt.Errorf("--where: %w", err))
		}
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
	var pred *filter.Filter
	if expr != nil {
		sch, err := scan.TableSchema(s.Manifest())
		if err != nil {
			return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
		}
		if pred, err = expr.Bind(sch); err != nil {
			return fail(e, c.name, exitBadInput, fmt.Errorf("--where: %w", err))
		}
		if *column != "" && !slices.Contains(pred.Columns(), *column) {
			return fail(e, c.name, exitBadInput, fmt.Errorf("--column %q and --where on %s disagree", *column, strings.Join(pred.Columns(), ", ")))
		}
	}
	rep, err := seedReport(e.ctx, bst, s.Manifest(), *column, pred, *zones)
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", pos[0], err))
	}
	rep.Dataset = pos[0]
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(e, c.name, exitFailure, err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	if err := writeSeedsText(e.stdout, rep); err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	return exitOK
}

func runSeedsEnable(e *env, args []string) int {
	c := command{name: "seeds enable", usage: "DATASET [--branch B] [--yes]", summary: "Explicitly activate FLAG_ZONE_WRITE_SEEDS (a commit that sets the bit in both flag words and changes nothing else)."}
	fs := newFlagSet(e, c)
	branch := fs.String("branch", "", "activate on this branch instead of main")
	yes := fs.Bool("yes", false, "do not ask for confirmation on a terminal")
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
	st, err := d.BranchStore(*branch)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	head, _, err := manifest.LoadLatest(e.ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		return fail(e, c.name, errorCode(err), fmt.Errorf("%s: %w", st, err))
	}
	m := head.Manifest
	if commit.HasZoneWriteSeeds(m) {
		fmt.Fprintf(e.stdout, "%s: FLAG_ZONE_WRITE_SEEDS is already set; nothing to do\n", st)
		return exitOK
	}
	// Refuse when this build cannot write seeded files into the table:
	// the activation would lock Lance releases out for nothing.
	if v := commit.DataFormatVersion(m); v != "2.0" && v != "2.1" && v != "2.2" && v != "2.3" {
		return fail(e, c.name, exitRefused, fmt.Errorf("%s: the table's data storage version is %s and this build writes seeded data files in 2.0, 2.1, 2.2 and 2.3 only; activating FLAG_ZONE_WRITE_SEEDS would lock Lance releases out without any seeded file to gain", st, v))
	}
	fmt.Fprintf(e.stderr, "Activating FLAG_ZONE_WRITE_SEEDS on %s: from the new version on, Lance releases without zone write seed support refuse to open this dataset, for good (restore and overwrite keep the bit). Earlier versions are unchanged.\n", st)
	if !*yes && isTerminal(os.Stdin) && isTerminal(os.Stderr) {
		fmt.Fprint(e.stderr, "Continue? [y/N] ")
		answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(e.stderr, "nothing changed")
			return exitBadInput
		}
	}
	res, already, err := commit.EnableZoneWriteSeeds(e.ctx, st, commit.Options{})
	if err != nil {
		code := exitFailure
		if errors.Is(err, commit.ErrDatasetNotFound) {
			code = exitBadInput
		}
		return fail(e, c.name, code, fmt.Errorf("%s: %w", pos[0], err))
	}
	if already {
		fmt.Fprintf(e.stdout, "%s: FLAG_ZONE_WRITE_SEEDS is already set; nothing to do\n", pos[0])
		return exitOK
	}
	m = res.Manifest
	fmt.Fprintf(e.stdout, "%s: version %d activates FLAG_ZONE_WRITE_SEEDS (reader flags %d, writer flags %d); nothing else changed.\n",
		pos[0], res.Version, m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags())
	fmt.Fprintln(e.stdout, "Lance releases without zone write seed support now refuse to open this dataset (restore and overwrite keep the bit); earlier versions are unchanged.")
	return exitOK
}

// fileOpener opens data files of a manifest, in the dataset's store or in
// a base path's store.
type fileOpener struct {
	res   *manifest.Resolver
	bases *store.Bases
}

func (o *fileOpener) open(ctx context.Context, df *pb.DataFile) (*datafile.File, error) {
	loc, err := o.res.DataFile(df)
	if err != nil {
		return nil, err
	}
	st, err := o.bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, err
	}
	return datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+loc.Path, datafile.OpenOptions{Size: int64(df.GetFileSizeBytes())})
}

func (o *fileOpener) close() { o.bases.Close() }

// seedReport reads the seeds of every data file of m (only column when
// given) and, with a predicate, previews what pruning keeps: per fragment,
// the filter's terms are evaluated on the usable seeds of their columns
// and combined as the scan combines them (filter.KeepRanges); a zone of a
// referenced column is kept when it overlaps a kept row range. A v1 seed
// in a manifest without FLAG_ZONE_WRITE_SEEDS is reported unusable (R61);
// a broken seed is reported and treated as absent (R63). Nothing is
// written.
func seedReport(ctx context.Context, st *store.Store, m *pb.Manifest, column string, pred *filter.Filter, withZones bool) (*seedsJSON, error) {
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	op := &fileOpener{res: res, bases: store.NewBases(st)}
	defer op.close()
	flagged := commit.HasZoneWriteSeeds(m)
	rep := &seedsJSON{Version: m.GetVersion(), ZoneSeedsFlag: flagged, Files: []fileSeedsJSON{}}
	var pr *pruneJSON
	predCols := map[string]int32{} // top-level columns the filter reads → field id
	if pred != nil {
		pr = &pruneJSON{Predicate: pred.String(), Column: strings.Join(pred.Columns(), ","), FragmentsTotal: len(m.GetFragments())}
		for _, name := range pred.Columns() {
			for _, f := range m.GetFields() {
				if f.GetParentId() == -1 && f.GetName() == name {
					predCols[name] = f.GetId()
				}
			}
		}
		rep.Prune = pr
	}
	for _, fr := range m.GetFragments() {
		type seedRef struct {
			file, seed int
			s          *seedio.Seed
		}
		var refs []seedRef
		byCol := map[string]*seedio.Seed{}
		rows := fr.GetPhysicalRows()
		for _, df := range fr.GetFiles() {
			fj := fileSeedsJSON{Fragment: fr.GetId(), Path: "data/" + df.GetPath(), Seeds: []seedJSON{}}
			f, err := op.open(ctx, df)
			if err != nil {
				fj.Error = oneLine(err.Error())
				rep.Files = append(rep.Files, fj)
				continue
			}
			fj.Rows = f.NumRows()
			if rows == 0 {
				rows = f.NumRows()
			}
			infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: flagged})
			if err != nil {
				return nil, err
			}
			for _, si := range infos {
				if column != "" && si.Column != column {
					continue
				}
				sj := seedJSON{Column: si.Column, RowsPerZone: si.Locator.RowsPerZone, Valid: si.Err == nil}
				switch {
				case si.Seed != nil:
					v := si.Seed.Version
					sj.Version = &v
					sj.Zones = len(si.Seed.Zones)
				case errors.Is(si.Err, seedio.ErrSeedV1WithoutFlag):
					v := 1
					sj.Version = &v
				}
				if si.Err != nil {
					sj.Error = oneLine(si.Err.Error())
					rep.SeedsInvalid++
				} else {
					rep.SeedsValid++
				}
				if withZones && si.Seed != nil {
					for _, z := range si.Seed.Zones {
						zj := zoneJSON{Start: z.Start, Rows: z.Rows, Min: jsonValue(z.Min), Max: jsonValue(z.Max), NullCount: z.NullCount, NaNCount: z.NaNCount}
						if si.Seed.Version >= 1 {
							neg := z.NegativeNaNCount
							zj.NegativeNaNCount = &neg
						}
						sj.ZoneStats = append(sj.ZoneStats, zj)
					}
				}
				fj.Seeds = append(fj.Seeds, sj)
				top := strings.Split(si.Column, ".")[0]
				if id, ok := predCols[top]; ok && si.Seed != nil && slices.Contains(df.GetFields(), id) && si.Seed.NumRows == f.NumRows() {
					byCol[si.Column] = si.Seed
					refs = append(refs, seedRef{file: len(rep.Files), seed: len(fj.Seeds) - 1, s: si.Seed})
				}
			}
			if len(infos) > 0 {
				rep.FilesWithSeeds++
			}
			rep.Files = append(rep.Files, fj)
		}
		if pr == nil {
			continue
		}
		terms := pred.Terms()
		usable := false
		kept := pred.KeepRanges(rows, func(i int) ([]filter.Range, bool) {
			s := byCol[terms[i].Column]
			if s == nil {
				return nil, false
			}
			keep, err := s.Prune(terms[i].Pred)
			if err != nil {
				return nil, false
			}
			usable = true
			return filter.ZoneRanges(s.Zones, keep, rows), true
		})
		for _, r := range refs {
			for zi, z := range r.s.Zones {
				k := overlaps(kept, z.Start, z.End())
				pr.ZonesTotal++
				pr.RowsTotal += z.Rows
				if k {
					pr.ZonesKept++
					pr.RowsKept += z.Rows
				}
				if zs := rep.Files[r.file].Seeds[r.seed].ZoneStats; zi < len(zs) {
					zs[zi].Kept = &k
				}
			}
		}
		switch {
		case !usable:
			pr.FragmentsScanned++
			pr.FragmentsKept++
		case len(kept) > 0:
			pr.FragmentsKept++
		}
	}
	return rep, nil
}

func overlaps(rs []filter.Range, s, e uint64) bool {
	for _, r := range rs {
		if r.Start < e && s < r.End {
			return true
		}
	}
	return false
}

// jsonValue renders a bound for JSON and text output.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprint(x)
		}
		return x
	case float32:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Sprint(x)
		}
		return f
	case float16.Num:
		// Exactly, subnormals included (issue 15 item 7); ±Inf and NaN as
		// for float32/64, since JSON has no number for them (item 8).
		f := floatorder.Float16ToFloat64(x.Uint16())
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Sprint(f)
		}
		return f
	case bool, string, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

func writeSeedsText(w io.Writer, rep *seedsJSON) error {
	flag := "not set"
	if rep.ZoneSeedsFlag {
		flag = "set"
	}
	fmt.Fprintf(w, "%s version %d: FLAG_ZONE_WRITE_SEEDS %s; %d data file(s), %d with seeds; %d valid seed(s), %d unusable\n",
		rep.Dataset, rep.Version, flag, len(rep.Files), rep.FilesWithSeeds, rep.SeedsValid, rep.SeedsInvalid)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FRAGMENT\tDATA FILE\tROWS\tCOLUMN\tSEED\tROWS/ZONE\tZONES\tVALIDATION")
	for _, f := range rep.Files {
		if f.Error != "" {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t-\t-\tunreadable: %s\n", f.Fragment, f.Path, f.Error)
			continue
		}
		if len(f.Seeds) == 0 {
			fmt.Fprintf(tw, "%d\t%s\t%d\t-\tnone\t-\t-\t-\n", f.Fragment, f.Path, f.Rows)
		}
		for _, s := range f.Seeds {
			v := "?"
			if s.Version != nil {
				v = fmt.Sprintf("v%d", *s.Version)
			}
			status := "ok"
			if !s.Valid {
				status = "unusable: " + s.Error
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%d\t%d\t%s\n", f.Fragment, f.Path, f.Rows, s.Column, v, s.RowsPerZone, s.Zones, status)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range rep.Files {
		for _, s := range f.Seeds {
			if len(s.ZoneStats) == 0 {
				continue
			}
			fmt.Fprintf(w, "\nzones of %s in %s:\n", s.Column, f.Path)
			zw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(zw, "  START\tROWS\tMIN\tMAX\tNULLS\tNANS\tNEG_NANS\tWHERE")
			for _, z := range s.ZoneStats {
				neg := "-" // v0 seeds have no negative_nan_count
				if z.NegativeNaNCount != nil {
					neg = fmt.Sprint(*z.NegativeNaNCount)
				}
				kept := "-"
				if z.Kept != nil {
					kept = map[bool]string{true: "kept", false: "pruned"}[*z.Kept]
				}
				fmt.Fprintf(zw, "  %d\t%d\t%v\t%v\t%d\t%d\t%s\t%s\n", z.Start, z.Rows, fmtBound(z.Min), fmtBound(z.Max), z.NullCount, z.NaNCount, neg, kept)
			}
			if err := zw.Flush(); err != nil {
				return err
			}
		}
	}
	if p := rep.Prune; p != nil {
		fmt.Fprintf(w, "\npruning preview for %s:\n", p.Predicate)
		fmt.Fprintf(w, "  seeded zones kept: %d of %d (%s), covering %d of %d seeded rows\n", p.ZonesKept, p.ZonesTotal, pct(p.ZonesKept, p.ZonesTotal), p.RowsKept, p.RowsTotal)
		fmt.Fprintf(w, "  fragments kept:    %d of %d (%d pruned; %d without a usable seed for %s, which must be scanned)\n",
			p.FragmentsKept, p.FragmentsTotal, p.FragmentsTotal-p.FragmentsKept, p.FragmentsScanned, p.Column)
	}
	return nil
}

func fmtBound(v any) string {
	if v == nil {
		return "null"
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}
