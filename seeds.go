package lancekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

// FileSeeds are the zone write seeds of one data file.
type FileSeeds struct {
	Fragment uint64
	// Path is the data file's path as the manifest records it, under
	// data/ of the dataset or of a base path.
	Path string
	Rows uint64
	// Seeds are the file's seeds, sorted by column.
	Seeds []ColumnSeed
	// Err is set when the data file could not be opened; Seeds is then
	// empty.
	Err error
}

// ColumnSeed is one column's seed in one data file.
type ColumnSeed struct {
	Column string
	// Version is the seed version (0: Lance 12's layout, 1: v1), or -1
	// when the seed could not be read far enough to tell.
	Version     int
	RowsPerZone uint64
	// Zones are the per-zone statistics of a usable seed.
	Zones []Zone
	// Err is why the seed is unusable (nil: usable). A v1 seed in a
	// version without FLAG_ZONE_WRITE_SEEDS is unusable (R61); an error
	// matches the seedio sentinel of its code (E01–E26).
	Err error
}

// Zone is the statistics of one zone of a seed. Min and Max bound every
// non-null, non-NaN value (nil: unknown or nothing to bound); they may be
// wider than the exact extrema.
type Zone struct {
	Start, Rows         uint64
	Min, Max            any
	NullCount, NaNCount uint64
}

// Seeds reads the zone write seeds of every data file of this version
// (only of the named columns when some are given) and validates them. A
// broken seed is reported in its ColumnSeed.Err, never trusted (R63);
// nothing is written.
func (d *Dataset) Seeds(ctx context.Context, columns ...string) ([]FileSeeds, error) {
	var out []FileSeeds
	err := d.eachFile(ctx, func(fr *pb.DataFragment, df *pb.DataFile, f *datafile.File, infos []datafile.SeedInfo, err error) error {
		fs := FileSeeds{Fragment: fr.GetId(), Path: df.GetPath(), Err: err}
		if f != nil {
			fs.Rows = f.NumRows()
		}
		for _, si := range infos {
			if len(columns) > 0 && !slices.Contains(columns, si.Column) {
				continue
			}
			cs := ColumnSeed{Column: si.Column, Version: -1, RowsPerZone: si.Locator.RowsPerZone, Err: si.Err}
			switch {
			case si.Seed != nil:
				cs.Version = si.Seed.Version
				for _, z := range si.Seed.Zones {
					cs.Zones = append(cs.Zones, Zone{Start: z.Start, Rows: z.Rows, Min: z.Min, Max: z.Max, NullCount: z.NullCount, NaNCount: z.NaNCount})
				}
			case errors.Is(si.Err, seedio.ErrSeedV1WithoutFlag):
				cs.Version = 1
			}
			fs.Seeds = append(fs.Seeds, cs)
		}
		out = append(out, fs)
		return nil
	})
	return out, err
}

// eachFile opens every data file of the version (through its base path's
// store when it has one) and reads its seeds, decided by the version's
// flag state.
func (d *Dataset) eachFile(ctx context.Context, fn func(fr *pb.DataFragment, df *pb.DataFile, f *datafile.File, infos []datafile.SeedInfo, openErr error) error) error {
	m := d.snap.Manifest()
	res, err := manifest.NewResolver(m)
	if err != nil {
		return err
	}
	st, err := d.h.ds.BranchStore(d.snap.Branch)
	if err != nil {
		return err
	}
	bases := store.NewBases(st)
	defer bases.Close()
	flagged := commit.HasZoneWriteSeeds(m)
	for _, fr := range m.GetFragments() {
		for _, df := range fr.GetFiles() {
			f, err := openDataFile(ctx, res, bases, df)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err := fn(fr, df, nil, nil, err); err != nil {
					return err
				}
				continue
			}
			infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: flagged})
			if err != nil {
				return err
			}
			if err := fn(fr, df, f, infos, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func openDataFile(ctx context.Context, res *manifest.Resolver, bases *store.Bases, df *pb.DataFile) (*datafile.File, error) {
	loc, err := res.DataFile(df)
	if err != nil {
		return nil, err
	}
	st, err := bases.Store(ctx, loc.Base)
	if err != nil {
		return nil, err
	}
	f, err := datafile.Open(ctx, st.Bucket(), st.KeyPrefix()+loc.Path, datafile.OpenOptions{Size: int64(df.GetFileSizeBytes())})
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.GetPath(), err)
	}
	return f, nil
}

// Pruning is what a predicate keeps of a version, decided from metadata
// alone — zone write seeds (v0 always, v1 only when the version carries
// FLAG_ZONE_WRITE_SEEDS, R61) and Lance ZoneMap indices — without reading
// a data page. It is inexact and safe: a zone or fragment is pruned only
// when its statistics prove no row can match; AND, OR and NOT combine the
// terms as zone-seeds.md says (R65). It is the plan Scan follows.
type Pruning struct {
	Predicate string
	// Fragments lists every fragment in manifest order.
	Fragments []FragmentPruning
	// Totals over the fragments: fragments and physical rows kept, zones
	// (summed over the filter's terms) kept, and the bytes of the data
	// files a scan needs versus those it reads after pruning.
	FragmentsTotal, FragmentsKept int
	ZonesTotal, ZonesKept         int
	RowsTotal, RowsKept           uint64
	BytesFull, BytesToRead        int64
}

// FragmentPruning is the decision for one fragment.
type FragmentPruning struct {
	ID uint64
	// Rows is the fragment's physical row count, RowsKept those in zones
	// the predicate may match.
	Rows, RowsKept uint64
	Kept           bool
	// Terms says what each single-column term of the predicate learnt
	// here; a term without sources knew nothing (the rows are kept).
	Terms []TermPruning
}

// TermPruning is what one term of the predicate learnt in one fragment.
type TermPruning struct {
	// Term is the single-column term, e.g. "x > 5".
	Term string
	// Sources name the statistics used: "seed v0", "seed v1" or a ZoneMap
	// index.
	Sources               []string
	ZonesTotal, ZonesKept int
}

// Prune says which fragments and zones of this version a predicate keeps,
// without reading data (see Pruning). The predicate language is Scan's
// (Lance/DataFusion SQL: comparisons, AND, OR, NOT, IN, BETWEEN, IS
// [NOT] NULL, isnan, LIKE 'prefix%', nested columns a.b). A predicate that
// is empty, does not parse or does not fit the schema matches
// ErrInvalidPredicate (and the filter package's ErrSyntax or ErrType,
// with the offset).
func (d *Dataset) Prune(ctx context.Context, predicate string) (*Pruning, error) {
	if strings.TrimSpace(predicate) == "" {
		return nil, fmt.Errorf("%w: empty predicate", ErrInvalidPredicate)
	}
	sc, err := d.scanner(ctx, scan.Options{Filter: predicate})
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	plan, err := sc.Explain(ctx)
	if err != nil {
		return nil, err
	}
	p := &Pruning{
		Predicate: predicate, FragmentsTotal: len(plan.Fragments), FragmentsKept: plan.FragmentsKept,
		RowsTotal: plan.RowsTotal, RowsKept: plan.RowsKept, BytesFull: plan.BytesFull, BytesToRead: plan.BytesToRead,
	}
	for _, f := range plan.Fragments {
		fp := FragmentPruning{ID: f.ID, Rows: f.Rows, RowsKept: f.RowsKept, Kept: !f.Pruned}
		for _, t := range f.Terms {
			fp.Terms = append(fp.Terms, TermPruning{Term: t.Term, Sources: slices.Clone(t.Sources), ZonesTotal: t.ZonesTotal, ZonesKept: t.ZonesKept})
			p.ZonesTotal += t.ZonesTotal
			p.ZonesKept += t.ZonesKept
		}
		p.Fragments = append(p.Fragments, fp)
	}
	return p, nil
}
