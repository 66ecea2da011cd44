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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/internal/floatorder"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
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
	var pred *parsedPredicate
	if *where != "" {
		if pred, err = parsePredicate(*where); err != nil {
			return fail(e, c.name, exitBadInput, err)
		}
		if *column != "" && *column != pred.Column {
			return fail(e, c.name, exitBadInput, fmt.Errorf("--column %q and --where on column %q disagree", *column, pred.Column))
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
	if v := commit.DataFormatVersion(m); v != "2.0" && v != "2.1" && v != "2.2" {
		return fail(e, c.name, exitRefused, fmt.Errorf("%s: the table's data storage version is %s and this build writes seeded data files in 2.0, 2.1 and 2.2 only; activating FLAG_ZONE_WRITE_SEEDS would lock Lance releases out without any seeded file to gain", st, v))
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
// given) and, with a predicate, previews what pruning keeps. A v1 seed in a
// manifest without FLAG_ZONE_WRITE_SEEDS is reported unusable (R61); a
// broken seed is reported and treated as absent (R63). Nothing is written.
func seedReport(ctx context.Context, st *store.Store, m *pb.Manifest, column string, pred *parsedPredicate, withZones bool) (*seedsJSON, error) {
	res, err := manifest.NewResolver(m)
	if err != nil {
		return nil, err
	}
	op := &fileOpener{res: res, bases: store.NewBases(st)}
	defer op.close()
	flagged := commit.HasZoneWriteSeeds(m)
	rep := &seedsJSON{Version: m.GetVersion(), ZoneSeedsFlag: flagged, Files: []fileSeedsJSON{}}
	var pr *pruneJSON
	var predFieldID int32 = -1
	if pred != nil {
		pr = &pruneJSON{Predicate: pred.Text, Column: pred.Column, FragmentsTotal: len(m.GetFragments())}
		for _, f := range m.GetFields() {
			if f.GetParentId() == -1 && f.GetName() == pred.Column {
				predFieldID = f.GetId()
			}
		}
		if predFieldID < 0 {
			return nil, badInput{fmt.Errorf("--where: the dataset has no top-level column %q", pred.Column)}
		}
		rep.Prune = pr
	}
	for _, fr := range m.GetFragments() {
		fragKept, fragUsable := false, false
		for _, df := range fr.GetFiles() {
			fj := fileSeedsJSON{Fragment: fr.GetId(), Path: "data/" + df.GetPath(), Seeds: []seedJSON{}}
			f, err := op.open(ctx, df)
			if err != nil {
				fj.Error = oneLine(err.Error())
				rep.Files = append(rep.Files, fj)
				continue
			}
			fj.Rows = f.NumRows()
			infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: flagged})
			if err != nil {
				return nil, err
			}
			storesPredField := false
			for _, id := range df.GetFields() {
				if id == predFieldID {
					storesPredField = true
				}
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
				if pred != nil && si.Column == pred.Column && storesPredField && si.Seed != nil {
					p, err := pred.bind(si.Seed.ValueType)
					if err != nil {
						return nil, badInput{err}
					}
					keep, err := si.Seed.Prune(p)
					if err != nil {
						return nil, badInput{err}
					}
					fragUsable = true
					for i, k := range keep {
						pr.ZonesTotal++
						pr.RowsTotal += si.Seed.Zones[i].Rows
						if k {
							pr.ZonesKept++
							pr.RowsKept += si.Seed.Zones[i].Rows
							fragKept = true
						}
					}
				}
			}
			if len(infos) > 0 {
				rep.FilesWithSeeds++
			}
			rep.Files = append(rep.Files, fj)
		}
		if pr != nil {
			if !fragUsable {
				pr.FragmentsScanned++
				fragKept = true
			}
			if fragKept {
				pr.FragmentsKept++
			}
		}
	}
	return rep, nil
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
			fmt.Fprintln(zw, "  START\tROWS\tMIN\tMAX\tNULLS\tNANS\tNEG_NANS")
			for _, z := range s.ZoneStats {
				neg := "-" // v0 seeds have no negative_nan_count
				if z.NegativeNaNCount != nil {
					neg = fmt.Sprint(*z.NegativeNaNCount)
				}
				fmt.Fprintf(zw, "  %d\t%d\t%v\t%v\t%d\t%d\t%s\n", z.Start, z.Rows, fmtBound(z.Min), fmtBound(z.Max), z.NullCount, z.NaNCount, neg)
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

// ---- predicate parser ----

// litKind is the lexical kind of a predicate literal.
type litKind int

const (
	litNumber litKind = iota
	litString
	litBool
	litHex // x'0a0b'
)

type literal struct {
	kind litKind
	text string
}

// parsedPredicate is a single-column predicate, with literals still
// untyped: they are bound to each seed's value type.
type parsedPredicate struct {
	Text   string
	Column string
	Op     seedio.Op
	Lits   []literal
}

// maxPredicateLen bounds the input the parser accepts.
const maxPredicateLen = 1 << 16

type lexer struct {
	s   string
	pos int
}

type token struct {
	kind string // "ident", "num", "str", "hex", "op", "(", ")", ",", "eof"
	text string
	pos  int
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.s) && (l.s[l.pos] == ' ' || l.s[l.pos] == '\t' || l.s[l.pos] == '\n' || l.s[l.pos] == '\r') {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.s) {
		return token{kind: "eof", pos: start}, nil
	}
	c := l.s[l.pos]
	switch {
	case c == '(' || c == ')' || c == ',':
		l.pos++
		return token{kind: string(c), pos: start}, nil
	case c == '=' || c == '<' || c == '>' || c == '!':
		l.pos++
		if l.pos < len(l.s) && (l.s[l.pos] == '=' || (c == '<' && l.s[l.pos] == '>')) {
			l.pos++
		}
		op := l.s[start:l.pos]
		if op == "!" {
			return token{}, fmt.Errorf("unexpected '!' at offset %d", start)
		}
		return token{kind: "op", text: op, pos: start}, nil
	case c == '\'':
		var sb strings.Builder
		l.pos++
		for {
			if l.pos >= len(l.s) {
				return token{}, fmt.Errorf("unterminated string starting at offset %d", start)
			}
			if l.s[l.pos] == '\'' {
				if l.pos+1 < len(l.s) && l.s[l.pos+1] == '\'' {
					sb.WriteByte('\'')
					l.pos += 2
					continue
				}
				l.pos++
				return token{kind: "str", text: sb.String(), pos: start}, nil
			}
			sb.WriteByte(l.s[l.pos])
			l.pos++
		}
	case c == '"' || c == '`':
		end := strings.IndexByte(l.s[l.pos+1:], c)
		if end < 0 {
			return token{}, fmt.Errorf("unterminated quoted identifier starting at offset %d", start)
		}
		l.pos += end + 2
		return token{kind: "ident", text: l.s[start+1 : l.pos-1], pos: start}, nil
	case (c == 'x' || c == 'X') && l.pos+1 < len(l.s) && l.s[l.pos+1] == '\'':
		end := strings.IndexByte(l.s[l.pos+2:], '\'')
		if end < 0 {
			return token{}, fmt.Errorf("unterminated hex literal starting at offset %d", start)
		}
		l.pos += end + 3
		return token{kind: "hex", text: l.s[start+2 : l.pos-1], pos: start}, nil
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		l.pos++
		for l.pos < len(l.s) {
			d := l.s[l.pos]
			if (d >= '0' && d <= '9') || d == '.' || d == 'e' || d == 'E' || d == '_' ||
				((d == '-' || d == '+') && (l.s[l.pos-1] == 'e' || l.s[l.pos-1] == 'E')) {
				l.pos++
				continue
			}
			break
		}
		// -inf, +inf
		if (c == '-' || c == '+') && l.pos == start+1 {
			for l.pos < len(l.s) && isIdentByte(l.s[l.pos]) {
				l.pos++
			}
		}
		return token{kind: "num", text: l.s[start:l.pos], pos: start}, nil
	case isIdentStart(rune(c)) || c >= 0x80:
		for l.pos < len(l.s) && (isIdentByte(l.s[l.pos]) || l.s[l.pos] >= 0x80) {
			l.pos++
		}
		return token{kind: "ident", text: l.s[start:l.pos], pos: start}, nil
	}
	return token{}, fmt.Errorf("unexpected %q at offset %d", c, start)
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentByte(b byte) bool {
	return b == '_' || b == '.' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// parsePredicate parses one single-column predicate:
//
//	col (= | == | < | <= | > | >=) lit
//	col BETWEEN lit AND lit
//	col IN (lit, …)
//	col IS [NOT] NULL
//	[NOT] isnan(col)
//
// Literals: numbers (also nan, inf, -inf), 'strings' (a doubled single quote stands for one),
// true/false, x'hex'. Column names may be "quoted" or `quoted`. Keywords
// are case-insensitive.
func parsePredicate(s string) (*parsedPredicate, error) {
	if len(s) > maxPredicateLen {
		return nil, fmt.Errorf("predicate longer than %d bytes", maxPredicateLen)
	}
	p := &parsedPredicate{Text: strings.TrimSpace(s)}
	l := &lexer{s: s}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, fmt.Errorf("predicate %q: %w", s, err)
		}
		toks = append(toks, t)
		if t.kind == "eof" {
			break
		}
	}
	i := 0
	peek := func() token { return toks[i] }
	take := func() token { t := toks[i]; i++; return t }
	isKw := func(t token, kw string) bool { return t.kind == "ident" && strings.EqualFold(t.text, kw) }
	bad := func(t token, want string) error {
		got := t.text
		if t.kind == "eof" {
			got = "end of input"
		} else if got == "" {
			got = t.kind
		}
		return fmt.Errorf("predicate %q: expected %s at offset %d, got %q", s, want, t.pos, got)
	}
	lit := func() (literal, error) {
		t := take()
		switch {
		case t.kind == "num":
			return literal{litNumber, t.text}, nil
		case t.kind == "str":
			return literal{litString, t.text}, nil
		case t.kind == "hex":
			return literal{litHex, t.text}, nil
		case isKw(t, "true") || isKw(t, "false"):
			return literal{litBool, strings.ToLower(t.text)}, nil
		case isKw(t, "nan") || isKw(t, "inf") || isKw(t, "infinity"):
			return literal{litNumber, strings.ToLower(t.text)}, nil
		}
		return literal{}, bad(t, "a literal")
	}
	// [NOT] isnan(col)
	not := false
	if isKw(peek(), "not") {
		take()
		not = true
	}
	if isKw(peek(), "isnan") {
		take()
		if t := take(); t.kind != "(" {
			return nil, bad(t, "'('")
		}
		col := take()
		if col.kind != "ident" {
			return nil, bad(col, "a column name")
		}
		if t := take(); t.kind != ")" {
			return nil, bad(t, "')'")
		}
		p.Column, p.Op = col.text, seedio.OpIsNaN
		if not {
			p.Op = seedio.OpNotIsNaN
		}
	} else {
		if not {
			return nil, bad(peek(), "isnan( after NOT")
		}
		col := take()
		if col.kind != "ident" {
			return nil, bad(col, "a column name")
		}
		p.Column = col.text
		t := take()
		switch {
		case t.kind == "op":
			switch t.text {
			case "=", "==":
				p.Op = seedio.OpEq
			case "<":
				p.Op = seedio.OpLt
			case "<=":
				p.Op = seedio.OpLe
			case ">":
				p.Op = seedio.OpGt
			case ">=":
				p.Op = seedio.OpGe
			default:
				return nil, fmt.Errorf("predicate %q: operator %q is not supported (use =, <, <=, >, >=, BETWEEN, IN, IS [NOT] NULL, isnan)", s, t.text)
			}
			v, err := lit()
			if err != nil {
				return nil, err
			}
			p.Lits = []literal{v}
		case isKw(t, "between"):
			lo, err := lit()
			if err != nil {
				return nil, err
			}
			if t := take(); !isKw(t, "and") {
				return nil, bad(t, "AND")
			}
			hi, err := lit()
			if err != nil {
				return nil, err
			}
			p.Op, p.Lits = seedio.OpBetween, []literal{lo, hi}
		case isKw(t, "in"):
			if t := take(); t.kind != "(" {
				return nil, bad(t, "'('")
			}
			for {
				v, err := lit()
				if err != nil {
					return nil, err
				}
				p.Lits = append(p.Lits, v)
				t := take()
				if t.kind == ")" {
					break
				}
				if t.kind != "," {
					return nil, bad(t, "',' or ')'")
				}
			}
			p.Op = seedio.OpIn
		case isKw(t, "is"):
			p.Op = seedio.OpIsNull
			if isKw(peek(), "not") {
				take()
				p.Op = seedio.OpIsNotNull
			}
			if t := take(); !isKw(t, "null") {
				return nil, bad(t, "NULL")
			}
		default:
			return nil, bad(t, "an operator")
		}
	}
	if t := peek(); t.kind != "eof" {
		return nil, bad(t, "end of input")
	}
	return p, nil
}

// bind converts the literals to Go values of the seed value type dt (the
// dictionary's value type for dictionary columns), as seedio.Prune wants.
func (p *parsedPredicate) bind(dt arrow.DataType) (seedio.Predicate, error) {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	out := seedio.Predicate{Op: p.Op}
	for _, l := range p.Lits {
		v, err := bindLiteral(l, dt)
		if err != nil {
			return out, fmt.Errorf("predicate %q: column %q (%s): %w", p.Text, p.Column, dt, err)
		}
		out.Values = append(out.Values, v)
	}
	return out, nil
}

func parseFloatLit(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan":
		return math.NaN(), nil
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
}

// wantDecimal accepts only plain decimal numbers ([-+]digits[.digits],
// at most 80 digits): arrow-go's decimal parsers panic on "inf" and "nan"
// and grow big.Ints from huge exponents.
func wantDecimal(l literal) error {
	s := strings.TrimLeft(l.text, "+-")
	digits, dots := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			digits = -1
		}
		if digits < 0 {
			break
		}
	}
	if l.kind != litNumber || digits < 1 || dots > 1 || digits > 80 || len(l.text)-len(s) > 1 {
		return fmt.Errorf("literal %q: want a plain decimal number such as -12.50", l.text)
	}
	return nil
}

func bindLiteral(l literal, dt arrow.DataType) (any, error) {
	want := func(k litKind, what string) error {
		if l.kind != k {
			return fmt.Errorf("literal %q: want %s", l.text, what)
		}
		return nil
	}
	intLit := func(bits int) (int64, error) {
		if err := want(litNumber, "an integer"); err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.ReplaceAll(l.text, "_", ""), 10, bits)
	}
	uintLit := func(bits int) (uint64, error) {
		if err := want(litNumber, "a non-negative integer"); err != nil {
			return 0, err
		}
		return strconv.ParseUint(strings.ReplaceAll(l.text, "_", ""), 10, bits)
	}
	switch t := dt.(type) {
	case *arrow.Int8Type:
		v, err := intLit(8)
		return int8(v), err
	case *arrow.Int16Type:
		v, err := intLit(16)
		return int16(v), err
	case *arrow.Int32Type:
		v, err := intLit(32)
		return int32(v), err
	case *arrow.Int64Type:
		return intLit(64)
	case *arrow.Uint8Type:
		v, err := uintLit(8)
		return uint8(v), err
	case *arrow.Uint16Type:
		v, err := uintLit(16)
		return uint16(v), err
	case *arrow.Uint32Type:
		v, err := uintLit(32)
		return uint32(v), err
	case *arrow.Uint64Type:
		return uintLit(64)
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		if err := want(litNumber, "a number"); err != nil {
			return nil, err
		}
		f, err := parseFloatLit(l.text)
		if err != nil {
			return nil, err
		}
		switch dt.(type) {
		case *arrow.Float16Type:
			// Round to nearest with subnormals: float16.New flushes them to
			// zero, and a predicate between subnormals then pruned zones
			// holding matches (issue 15 item 7).
			return float16.FromBits(floatorder.Float16FromFloat64(f)), nil
		case *arrow.Float32Type:
			return float32(f), nil
		}
		return f, nil
	case *arrow.BooleanType:
		if err := want(litBool, "true or false"); err != nil {
			return nil, err
		}
		return l.text == "true", nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		if err := want(litString, "a 'string'"); err != nil {
			return nil, err
		}
		return l.text, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		switch l.kind {
		case litString:
			return []byte(l.text), nil
		case litHex:
			return hex.DecodeString(l.text)
		}
		return nil, fmt.Errorf("literal %q: want 'text' or x'hex'", l.text)
	case *arrow.Date32Type, *arrow.Date64Type:
		if err := want(litString, "a 'YYYY-MM-DD' date"); err != nil {
			return nil, err
		}
		tm, err := time.Parse("2006-01-02", l.text)
		if err != nil {
			return nil, err
		}
		if _, ok := dt.(*arrow.Date32Type); ok {
			return arrow.Date32FromTime(tm), nil
		}
		return arrow.Date64FromTime(tm), nil
	case *arrow.TimestampType:
		if l.kind == litNumber {
			v, err := intLit(64)
			return arrow.Timestamp(v), err
		}
		if err := want(litString, "an RFC 3339 timestamp string or an integer"); err != nil {
			return nil, err
		}
		ts, _, err := arrow.TimestampFromStringInLocation(l.text, t.Unit, time.UTC)
		return ts, err
	case *arrow.Time32Type:
		v, err := intLit(32)
		return arrow.Time32(v), err
	case *arrow.Time64Type:
		v, err := intLit(64)
		return arrow.Time64(v), err
	case *arrow.DurationType:
		v, err := intLit(64)
		return arrow.Duration(v), err
	case *arrow.Decimal32Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal.Decimal32FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal64Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal.Decimal64FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal128Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal128.FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		if err := wantDecimal(l); err != nil {
			return nil, err
		}
		return decimal256.FromString(l.text, t.Precision, t.Scale)
	}
	// Types without bounds: any literal works, only counts are used.
	return l.text, nil
}
