package datafile

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// Seed audit (issue 12 item 3): prove each seed of a file sound against the
// values the file stores, or name the first zone and value that refute it.

// SeedStatus is the verdict on one seed.
type SeedStatus string

// The verdicts of VerifySeeds.
const (
	// SeedSound: counts exact, every ordinary value inside the bounds, the
	// null bitmap equal to the real null rows.
	SeedSound SeedStatus = "sound"
	// SeedUnsound: the seed validates but contradicts the values.
	SeedUnsound SeedStatus = "unsound"
	// SeedUnusable: the seed fails validation (seedio.Decode, R63).
	SeedUnusable SeedStatus = "unusable"
	// SeedUnverified: the column's values could not be decoded or
	// summarised by this build, so nothing is proven either way.
	SeedUnverified SeedStatus = "unverified"
)

// SeedVerdict is the audit of one seed of one file.
type SeedVerdict struct {
	Column  string
	Version int // seed version (0 or 1); -1 when unknown
	Zones   int
	Status  SeedStatus
	// Zone is the first failing zone (-1 when none or not zone-specific).
	Zone int
	// Check names what failed: "rows", "null_count", "nan_count",
	// "negative_nan_count", "min", "max", "zones", "null_bitmap".
	Check string
	// Value is the real value (or count, or row offset) that breaks the
	// seed; Bound is what the seed claims.
	Value, Bound any
	// Err is the validation (unusable) or decoding (unverified) error.
	Err error
	// ZeroWidened counts the zone bounds that hold only as readers read
	// them (seedio.WidenZeroBound, R39 on read, Q16): a float min of +0.0
	// over a zone holding −0.0, or a max of −0.0 over +0.0. Under Arrow's
	// totalOrder such a bound excludes a real zero, but every reader of
	// this module widens a zero bound, so the seed is sound for them.
	// WidenedZone and WidenedCheck ("min"/"max") name the first (-1, "").
	ZeroWidened  int
	WidenedZone  int
	WidenedCheck string
}

// VerifyOptions configures VerifySeeds.
type VerifyOptions struct {
	// TableFlagged is whether the table sets FLAG_ZONE_WRITE_SEEDS (v1
	// seeds are unusable without it, R61).
	TableFlagged bool
	// Column restricts the audit to one column ("" = every seeded column).
	Column string
	// ReadOptions bound the decoding of the column values.
	ReadOptions
}

// verifyRows is the number of rows decoded at a time.
const verifyRows = 1 << 16

// VerifySeeds decodes every seeded column of the file and checks each seed
// against the values (zone-seeds.md R22–R30, R41–R47; v0 seeds as Decode
// interprets them, §3.5): zone lengths, null, NaN and negative-NaN counts
// exact (where the seed claims exactness), every non-null non-NaN value
// within [min, max] in Arrow Rust order (a null side is unknown and proves
// nothing wrong, R32/R37), and the null bitmap equal to the real null rows.
// Bounds are checked as readers use them: a float zero bound widened
// (seedio.WidenZeroBound; a min of ±0 reads −0, a max of ±0 reads +0),
// against the exact extrema of the values; a bound sound only widened is
// counted in SeedVerdict.ZeroWidened.
// The error result is only for a cancelled context.
func (f *File) VerifySeeds(ctx context.Context, opts VerifyOptions) ([]SeedVerdict, error) {
	infos, err := f.Seeds(ctx, seedio.DecodeOptions{TableFlagged: opts.TableFlagged})
	if err != nil {
		return nil, err
	}
	var out []SeedVerdict
	for _, si := range infos {
		if opts.Column != "" && si.Column != opts.Column {
			continue
		}
		v := SeedVerdict{Column: si.Column, Version: -1, Zone: -1, WidenedZone: -1}
		if si.Err != nil {
			v.Status, v.Err = SeedUnusable, si.Err
			out = append(out, v)
			continue
		}
		v.Version, v.Zones = si.Seed.Version, len(si.Seed.Zones)
		if err := f.verifySeed(ctx, si, &v, opts.ReadOptions); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			v.Status, v.Err = SeedUnverified, err
		}
		out = append(out, v)
	}
	return out, nil
}

// verifySeed recomputes the column's exact statistics with a collector of
// the seed's zone size and compares them with the seed.
func (f *File) verifySeed(ctx context.Context, si SeedInfo, v *SeedVerdict, ro ReadOptions) error {
	fi := f.schema.FieldByName(si.Column)
	if fi < 0 {
		return fmt.Errorf("%w: column %q", ErrSeedColumnMissing, si.Column)
	}
	s := si.Seed
	var col *seedio.Collector
	for start := uint64(0); start < f.numRows; start += verifyRows {
		end := min(f.numRows, start+verifyRows)
		rec, err := f.ReadRows(ctx, ReadRequest{Fields: []int{fi}, Ranges: []RowRange{{start, end}}, ReadOptions: ro})
		if err != nil {
			return fmt.Errorf("decoding column %q: %w", si.Column, err)
		}
		if col == nil {
			fld := arrow.Field{Name: si.Column, Type: rec.Column(0).DataType(), Nullable: true}
			if col, err = seedio.NewCollector(fld, seedio.CollectorOptions{RowsPerZone: s.RowsPerZone, MaxBoundBytes: 1 << 30, ExactZeros: true}); err != nil {
				rec.Release()
				return fmt.Errorf("summarising column %q: %w", si.Column, err)
			}
		}
		err = col.Observe(rec.Column(0))
		rec.Release()
		if err != nil {
			return fmt.Errorf("summarising column %q: %w", si.Column, err)
		}
	}
	if col == nil {
		return fmt.Errorf("column %q: the file has no rows", si.Column)
	}
	exact, err := col.Finish()
	if err != nil || exact == nil {
		return fmt.Errorf("summarising column %q: %v", si.Column, err)
	}
	v.Status = SeedSound
	fail := func(zone int, check string, value, bound any) {
		v.Status, v.Zone, v.Check, v.Value, v.Bound = SeedUnsound, zone, check, value, bound
	}
	if len(exact.Zones) != len(s.Zones) {
		fail(-1, "zones", len(exact.Zones), len(s.Zones))
		return nil
	}
	for i, z := range s.Zones {
		e := exact.Zones[i]
		switch {
		case z.Rows != e.Rows:
			fail(i, "rows", e.Rows, z.Rows)
		case z.NullCountExact && z.NullCount != e.NullCount, !z.NullCountExact && z.NullCount > e.NullCount:
			fail(i, "null_count", e.NullCount, z.NullCount)
		case z.NaNCountExact && z.NaNCount != e.NaNCount, !z.NaNCountExact && z.NaNCount > e.NaNCount:
			fail(i, "nan_count", e.NaNCount, z.NaNCount)
		case z.NaNSignKnown && z.NaNCountExact && z.NegativeNaNCount != e.NegativeNaNCount:
			fail(i, "negative_nan_count", e.NegativeNaNCount, z.NegativeNaNCount)
		}
		if v.Status != SeedSound {
			return nil
		}
		for _, side := range [2]struct {
			check       string
			bound, real any
		}{{"min", z.Min, e.Min}, {"max", z.Max, e.Max}} {
			if side.bound == nil || side.real == nil {
				continue
			}
			isMax := side.check == "max"
			read, widened := seedio.WidenZeroBound(side.bound, isMax)
			breaks := func(b any) (bool, error) {
				c, err := seedio.CompareValues(side.real, b)
				if err != nil {
					return false, fmt.Errorf("zone %d: comparing %s: %w", i, side.check, err)
				}
				return c < 0 && !isMax || c > 0 && isMax, nil
			}
			bad, err := breaks(read)
			if err != nil {
				return err
			}
			if bad {
				fail(i, side.check, side.real, side.bound)
				return nil
			}
			if widened {
				if bad, err = breaks(side.bound); err != nil {
					return err
				} else if bad {
					if v.ZeroWidened == 0 {
						v.WidenedZone, v.WidenedCheck = i, side.check
					}
					v.ZeroWidened++
				}
			}
		}
	}
	if s.NullBitmap != nil && s.NullPositionsExact && !s.NullBitmap.Equals(exact.NullBitmap) {
		row := firstDifference(s.NullBitmap, exact.NullBitmap)
		zone := -1
		if s.RowsPerZone > 0 {
			zone = int(uint64(row) / s.RowsPerZone)
		}
		fail(zone, "null_bitmap", row, exact.NullBitmap.Contains(row))
	}
	return nil
}

// firstDifference is the smallest row in exactly one of a and b.
func firstDifference(a, b *roaring.Bitmap) uint32 {
	x := roaring.Xor(a, b)
	if x.IsEmpty() {
		return 0
	}
	return x.Minimum()
}
