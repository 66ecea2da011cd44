package lancekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
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

// Pruning is what a predicate keeps of a version, decided from zone write
// seeds alone (no data read). It is inexact and safe: a zone or fragment
// is pruned only when its seed proves no row can match; a fragment
// without a usable seed of the column is kept whole.
type Pruning struct {
	Predicate string
	Column    string
	// Fragments lists every fragment in manifest order.
	Fragments []FragmentPruning
	// Totals over the fragments with a usable seed (Zones*) and over all
	// fragments (Fragments*).
	ZonesTotal, ZonesKept         int
	RowsTotal, RowsKept           uint64
	FragmentsTotal, FragmentsKept int
}

// FragmentPruning is the decision for one fragment.
type FragmentPruning struct {
	ID uint64
	// Seeded reports that a usable seed of the column decided; Zones then
	// lists its zones. Otherwise the fragment is kept (it must be read).
	Seeded bool
	Kept   bool
	Zones  []ZonePruning
}

// ZonePruning is the decision for one zone: rows [Start, Start+Rows) of
// the fragment.
type ZonePruning struct {
	Start, Rows uint64
	Kept        bool
}

// Prune says which fragments and zones of this version the predicate
// keeps, from the seeds of the column it names (v0 always, v1 only when
// the version carries FLAG_ZONE_WRITE_SEEDS, R61). The grammar is that of
// `lancekeeper seeds --where`: col = | != | < | <= | > | >= literal,
// BETWEEN, IN (…), IS [NOT] NULL, isnan(col). A predicate that does not
// parse, names no top-level column or has a literal that does not fit
// matches ErrInvalidPredicate.
func (d *Dataset) Prune(ctx context.Context, predicate string) (*Pruning, error) {
	pred, err := parsePredicate(predicate)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPredicate, err)
	}
	var fieldID int32 = -1
	for _, f := range d.snap.Manifest().GetFields() {
		if f.GetParentId() == -1 && f.GetName() == pred.Column {
			fieldID = f.GetId()
		}
	}
	if fieldID < 0 {
		return nil, fmt.Errorf("%w: the dataset has no top-level column %q", ErrInvalidPredicate, pred.Column)
	}
	p := &Pruning{Predicate: pred.Text, Column: pred.Column}
	byFrag := map[uint64]int{}
	err = d.eachFile(ctx, func(fr *pb.DataFragment, df *pb.DataFile, f *datafile.File, infos []datafile.SeedInfo, _ error) error {
		i, ok := byFrag[fr.GetId()]
		if !ok {
			i = len(p.Fragments)
			byFrag[fr.GetId()] = i
			p.Fragments = append(p.Fragments, FragmentPruning{ID: fr.GetId()})
		}
		fp := &p.Fragments[i]
		if fp.Seeded || !slices.Contains(df.GetFields(), fieldID) {
			return nil
		}
		for _, si := range infos {
			if si.Column != pred.Column || si.Seed == nil {
				continue
			}
			bound, err := pred.bind(si.Seed.ValueType)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidPredicate, err)
			}
			keep, err := si.Seed.Prune(bound)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidPredicate, err)
			}
			fp.Seeded = true
			for z, k := range keep {
				zone := si.Seed.Zones[z]
				fp.Zones = append(fp.Zones, ZonePruning{Start: zone.Start, Rows: zone.Rows, Kept: k})
				p.ZonesTotal++
				p.RowsTotal += zone.Rows
				if k {
					p.ZonesKept++
					p.RowsKept += zone.Rows
					fp.Kept = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range p.Fragments {
		fp := &p.Fragments[i]
		if !fp.Seeded {
			fp.Kept = true
		}
		p.FragmentsTotal++
		if fp.Kept {
			p.FragmentsKept++
		}
	}
	return p, nil
}
