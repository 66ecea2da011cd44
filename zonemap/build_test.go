package zonemap

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/seedio"
	"github.com/lancekeeper/lancekeeper/store"
)

func latest(t testing.TB, st *store.Store) *manifest.File {
	t.Helper()
	f, _, err := manifest.LoadLatest(context.Background(), st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func build(t testing.TB, st *store.Store, column string, rpz uint64, noSeeds bool) (*Segment, []FragmentReport, BuildStats) {
	t.Helper()
	m := latest(t, st).Manifest
	col, err := FindColumn(m, column)
	if err != nil {
		t.Fatal(err)
	}
	seg, reps, bs, err := BuildSegment(context.Background(), st, m, col, m.GetFragments(), BuildOptions{RowsPerZone: rpz, NoSeeds: noSeeds})
	if err != nil {
		t.Fatal(err)
	}
	return seg, reps, bs
}

// TestSeedsEqualData_Property: on random tables written with v1 seeds (a
// flagged table), the segment built from the seeds is identical to the one
// built by reading the data, for every supported column type, and the
// seed build reads no data page.
func TestSeedsEqualData_Property(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		rpz := []uint64{1, 3, 16, 100}[rng.IntN(4)]
		wo := commit.WriteOptions{SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: rpz, MaxRowsPerFile: 50 + rng.IntN(200), PageSize: 256}
		st, _ := newDataset(t, wo, randomBatch(rng, 0, 1+rng.IntN(500)))
		appendRows(t, st, wo, randomBatch(rng, 1000, 1+rng.IntN(300)))
		for _, f := range testSchema().Fields() {
			fromSeeds, reps, bs := build(t, st, f.Name, rpz, false)
			fromData, _, bd := build(t, st, f.Name, rpz, true)
			if bs.FromSeeds != bs.Fragments || bs.FromData != 0 {
				for _, r := range reps {
					t.Logf("fragment %d: %s %v", r.ID, r.Source, r.SeedError)
				}
				t.Fatalf("seed %d column %s: %d of %d fragments from seeds", seed, f.Name, bs.FromSeeds, bs.Fragments)
			}
			if bs.PageBytesRead != 0 {
				t.Fatalf("seed %d column %s: the seed build read %d bytes of data pages", seed, f.Name, bs.PageBytesRead)
			}
			if bd.FromData != bd.Fragments {
				t.Fatalf("NoSeeds build used seeds: %+v", bd)
			}
			if !sameSegment(fromSeeds, fromData) {
				t.Fatalf("seed %d column %s (rpz %d): segment from seeds differs from segment from data\nseeds: %+v\ndata:  %+v", seed, f.Name, rpz, fromSeeds.Zones, fromData.Zones)
			}
			a, err := EncodeSegment(fromSeeds)
			if err != nil {
				t.Fatal(err)
			}
			b, err := EncodeSegment(fromData)
			if err != nil {
				t.Fatal(err)
			}
			if string(a) != string(b) {
				t.Fatalf("column %s: the index files differ", f.Name)
			}
		}
	}
}

// TestV0SeedsUsedAsTheyAre: v0 seeds (the layout Lance 12 writes; here
// written by our writer for an unflagged table with a declared ZoneMap)
// are used without reading data, never relabelled, and give zones that
// cover the data build's (NaN signs are unknown in v0, so float zones with
// NaNs are wider).
func TestV0SeedsUsedAsTheyAre(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 3))
	st, _ := newDataset(t, commit.WriteOptions{MaxRowsPerFile: 100}, randomBatch(rng, 0, 250))
	for _, c := range []string{"f64", "s", "i8", "b"} {
		if _, err := Create(ctx, st, CreateOptions{Column: c, RowsPerZone: 8}); err != nil {
			t.Fatal(err)
		}
	}
	// The declared indices make the append write v0 seeds (unflagged table).
	w := appendRows(t, st, commit.WriteOptions{MaxRowsPerFile: 100}, randomBatch(rng, 1000, 230))
	for _, f := range w.Files {
		if len(f.Seeds) != 4 {
			t.Fatalf("append wrote %d seeds, want 4 (one per declared column): %+v", len(f.Seeds), f.Seeds)
		}
		for _, s := range f.Seeds {
			if s.Err != nil || s.Version != 0 || s.RowsPerZone != 8 {
				t.Fatalf("seed %+v: want a v0 seed with 8 rows per zone", s)
			}
		}
	}
	m := latest(t, st).Manifest
	if commit.HasZoneWriteSeeds(m) {
		t.Fatal("v0 seeds set FLAG_ZONE_WRITE_SEEDS")
	}
	for _, c := range []string{"f64", "s", "i8", "b"} {
		seg, reps, bs := build(t, st, c, 8, false)
		data, _, _ := build(t, st, c, 8, true)
		if bs.FromSeeds != 3 || bs.FromData != 3 {
			for _, r := range reps {
				t.Logf("fragment %d: %s %v", r.ID, r.Source, r.SeedError)
			}
			t.Fatalf("%s: %+v; want the 3 appended fragments from seeds, the 3 first from data", c, bs)
		}
		for _, r := range reps {
			if r.Source == FromSeed && r.SeedVersion != 0 {
				t.Fatalf("%s: fragment %d seed version %d", c, r.ID, r.SeedVersion)
			}
		}
		if len(seg.Zones) != len(data.Zones) {
			t.Fatalf("%s: %d zones from seeds, %d from data", c, len(seg.Zones), len(data.Zones))
		}
		fromSeed := map[uint64]bool{}
		for _, r := range reps {
			fromSeed[r.ID] = r.Source == FromSeed
		}
		for i := range seg.Zones {
			a, b := seg.Zones[i], data.Zones[i]
			if c != "f64" || a.NaNCount == 0 || !fromSeed[a.FragmentID] {
				if !sameZone(a, b) {
					t.Fatalf("%s zone %d: from v0 seed %+v, from data %+v", c, i, a, b)
				}
				continue
			}
			// NaN zone: v0 knows no sign, so min is -Inf and max +NaN.
			if a.NullCount != b.NullCount || a.NaNCount != b.NaNCount || !isNaN(a.Max) || !isInf(a.Min) {
				t.Fatalf("%s NaN zone %d: from v0 seed %+v, from data %+v", c, i, a, b)
			}
		}
	}
}

// TestSeedRules_R61_R63_E24: a seed is used only when usable; otherwise the
// column is read and the reason reported. A seed that fails validation is
// never copied into an index.
func TestSeedRules_R61_R63_E24(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	recs := randomBatch(rng, 0, 120)
	t.Run("R61 v1 seed on an unflagged table is not used", func(t *testing.T) {
		st, _ := newDataset(t, commit.WriteOptions{SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: 10}, recs)
		clearZoneSeedFlag(t, st)
		_, reps, bs := build(t, st, "f64", 10, false)
		if bs.FromData != 1 || !errors.Is(reps[0].SeedError, seedio.ErrSeedV1WithoutFlag) {
			t.Fatalf("%+v %v; want a data read with E26", bs, reps[0].SeedError)
		}
	})
	t.Run("E24 other zone size", func(t *testing.T) {
		st, _ := newDataset(t, commit.WriteOptions{SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: 10}, recs)
		_, reps, bs := build(t, st, "f64", 16, false)
		if bs.FromData != 1 || !errors.Is(reps[0].SeedError, seedio.ErrSeedRowsPerZoneMismatch) {
			t.Fatalf("%+v %v; want a data read with E24", bs, reps[0].SeedError)
		}
	})
	t.Run("R63 invalid seed never copied", func(t *testing.T) {
		st, dir := newDataset(t, commit.WriteOptions{SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: 10}, recs)
		good, _, _ := build(t, st, "i8", 10, true)
		corruptSeed(t, ctx, st, dir, "i8")
		seg, reps, bs := build(t, st, "i8", 10, false)
		if bs.FromData != 1 || reps[0].SeedError == nil {
			t.Fatalf("%+v; want the corrupted seed refused and the data read", bs)
		}
		if !sameSegment(seg, good) {
			t.Fatal("the segment differs from the one built from data")
		}
	})
}

// TestCreateCommitsIndexMetadata checks the committed IndexMetadata, the
// file, Replace and ErrIndexExists.
func TestCreateCommitsIndexMetadata(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 4))
	st, _ := newDataset(t, commit.WriteOptions{MaxRowsPerFile: 64}, randomBatch(rng, 0, 200))
	var stats datafile.IOStats
	r, err := Create(ctx, st, CreateOptions{Column: "s", RowsPerZone: 10, Stats: &stats})
	if err != nil {
		t.Fatal(err)
	}
	f := latest(t, st)
	if r.Commit.Version != 2 || f.Manifest.GetVersion() != 2 {
		t.Fatalf("committed version %d", r.Commit.Version)
	}
	idx := f.Indices()
	if len(idx) != 1 || idx[0].GetName() != "s_idx" {
		t.Fatalf("indices %v", idx)
	}
	meta := idx[0]
	col, _ := FindColumn(f.Manifest, "s")
	if len(meta.GetFields()) != 1 || meta.GetFields()[0] != col.FieldID || meta.GetDatasetVersion() != 1 || meta.GetIndexVersion() != 0 || meta.CreatedAt == nil {
		t.Fatalf("metadata %v", meta)
	}
	bm, err := fragmentBitmap(meta)
	if err != nil || bm.GetCardinality() != 4 {
		t.Fatalf("fragment bitmap %v %v", bm, err)
	}
	d, err := DecodeDetails(meta)
	if err != nil || d != (Details{RowsPerZone: 10, UseSeeds: true, HasNullBitmap: true}) {
		t.Fatalf("details %+v %v", d, err)
	}
	u, _ := manifest.IndexUUID(meta)
	size, err := st.Size(ctx, "_indices/"+u+"/"+FileName)
	if err != nil || len(meta.GetFiles()) != 1 || meta.GetFiles()[0].GetPath() != FileName || int64(meta.GetFiles()[0].GetSizeBytes()) != size {
		t.Fatalf("files %v, size %d %v", meta.GetFiles(), size, err)
	}
	if stats.Bytes.Load() == 0 || r.Stats.FromData != 4 {
		t.Fatalf("stats %+v %d", r.Stats, stats.Bytes.Load())
	}
	if _, err := Create(ctx, st, CreateOptions{Column: "s", RowsPerZone: 10}); !errors.Is(err, ErrIndexExists) {
		t.Fatalf("second create: %v, want ErrIndexExists", err)
	}
	r2, err := Create(ctx, st, CreateOptions{Column: "s", RowsPerZone: 20, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Removed) != 1 || len(latest(t, st).Indices()) != 1 {
		t.Fatalf("replace removed %d, indices now %d", len(r2.Removed), len(latest(t, st).Indices()))
	}
	segs, err := Inspect(ctx, st, latest(t, st), true)
	if err != nil || len(segs) != 1 || segs[0].Err != nil || segs[0].Zones == 0 || segs[0].Details.RowsPerZone != 20 {
		t.Fatalf("inspect %+v %v", segs, err)
	}
	if _, err := Create(ctx, st, CreateOptions{Column: "nope"}); !errors.Is(err, ErrNoColumn) {
		t.Fatalf("unknown column: %v", err)
	}
}

// TestUpdateExtendsFromSeeds: fragments appended after the index come from
// the seeds the declared index made the writer embed.
func TestUpdateExtendsFromSeeds(t *testing.T) {
	ctx := context.Background()
	for _, flagged := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 5))
		wo := commit.WriteOptions{MaxRowsPerFile: 64}
		if flagged {
			wo.SeedColumns, wo.Commit.EnableZoneWriteSeeds = []string{"id"}, true
		}
		st, _ := newDataset(t, wo, randomBatch(rng, 0, 150))
		if _, err := Create(ctx, st, CreateOptions{Column: "f32", RowsPerZone: 16}); err != nil {
			t.Fatal(err)
		}
		appendRows(t, st, commit.WriteOptions{MaxRowsPerFile: 64}, randomBatch(rng, 500, 140))
		r, err := Update(ctx, st, UpdateOptions{Name: "f32_idx"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats.FromSeeds != 3 || r.Stats.FromData != 0 || r.Stats.PageBytesRead != 0 {
			t.Fatalf("flagged=%v: update %+v; want 3 fragments from seeds, no page read", flagged, r.Stats)
		}
		want := 0
		if flagged {
			want = 1
		}
		for _, f := range r.Fragments {
			if f.SeedVersion != want {
				t.Fatalf("flagged=%v: seed version %d", flagged, f.SeedVersion)
			}
		}
		idx := latest(t, st).Indices()
		if len(idx) != 1 || len(r.Removed) != 1 {
			t.Fatalf("after update: %d segments, removed %d", len(idx), len(r.Removed))
		}
		full, _, _ := build(t, st, "f32", 16, true)
		segs, _ := Inspect(ctx, st, latest(t, st), true)
		if segs[0].Err != nil || segs[0].Zones != len(full.Zones) {
			t.Fatalf("merged segment: %+v, want %d zones", segs[0], len(full.Zones))
		}
		if _, err := Update(ctx, st, UpdateOptions{Name: "f32_idx"}); !errors.Is(err, ErrUpToDate) {
			t.Fatalf("second update: %v", err)
		}
		appendRows(t, st, commit.WriteOptions{}, randomBatch(rng, 900, 10))
		r3, err := Update(ctx, st, UpdateOptions{Name: "f32_idx", NewSegment: true})
		if err != nil || len(r3.Removed) != 0 || len(latest(t, st).Indices()) != 2 {
			t.Fatalf("new segment: %v, %d indices", err, len(latest(t, st).Indices()))
		}
	}
}

// TestDropKeepsStickyFlag_R57: dropping the index keeps FLAG_ZONE_WRITE_SEEDS.
func TestDropKeepsStickyFlag_R57(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(6, 6))
	st, _ := newDataset(t, commit.WriteOptions{SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: 32}, randomBatch(rng, 0, 100))
	r, err := Create(ctx, st, CreateOptions{Column: "i8", RowsPerZone: 32})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.FromSeeds != 1 {
		t.Fatalf("%+v", r.Stats)
	}
	dr, err := Drop(ctx, st, DropOptions{Name: "i8_idx"})
	if err != nil {
		t.Fatal(err)
	}
	m := dr.Commit.Manifest
	if !flags.Has(m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), flags.ZoneWriteSeeds) || len(latest(t, st).Indices()) != 0 {
		t.Fatalf("after drop: flags %d/%d, %d indices", m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags(), len(latest(t, st).Indices()))
	}
	if _, err := Drop(ctx, st, DropOptions{Name: "i8_idx"}); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("second drop: %v", err)
	}
}

// TestConflicts: a CreateIndex built at version v commits across a
// concurrent Append (the new fragment stays unindexed) and fails against a
// concurrent Overwrite (lance-table-format.md §5.4); the file is removed.
func TestConflicts(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 8))
	st, _ := newDataset(t, commit.WriteOptions{}, randomBatch(rng, 0, 50))
	m := latest(t, st).Manifest
	col, _ := FindColumn(m, "i8")
	seg, _, _, err := BuildSegment(ctx, st, m, col, m.GetFragments(), BuildOptions{RowsPerZone: 8})
	if err != nil {
		t.Fatal(err)
	}
	appendRows(t, st, commit.WriteOptions{}, randomBatch(rng, 100, 20))
	r, err := commitSegment(ctx, st, m.GetVersion(), "i8_idx", col, seg, Details{RowsPerZone: 8}, nil, commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Commit.Version != 3 || r.Segment.GetDatasetVersion() != 1 {
		t.Fatalf("committed at %d, dataset_version %d", r.Commit.Version, r.Segment.GetDatasetVersion())
	}
	segs, _ := Inspect(ctx, st, latest(t, st), true)
	if segs[0].Live != 1 || len(latest(t, st).Manifest.GetFragments()) != 2 {
		t.Fatalf("index covers %d live fragments", segs[0].Live)
	}
	// Overwrite concurrently: incompatible.
	m = latest(t, st).Manifest
	seg, _, _, err = BuildSegment(ctx, st, m, col, m.GetFragments(), BuildOptions{RowsPerZone: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := commit.WriteArrow(ctx, st, reader(t, randomBatch(rng, 0, 5)), commit.WriteOptions{Mode: commit.ModeOverwrite}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.List(ctx, "_indices/", store.ListOptions{})
	_, err = commitSegment(ctx, st, m.GetVersion(), "i8_zm", col, seg, Details{RowsPerZone: 8}, nil, commit.Options{})
	if !errors.Is(err, commit.ErrIncompatibleConflict) {
		t.Fatalf("against an overwrite: %v", err)
	}
	after, _ := st.List(ctx, "_indices/", store.ListOptions{})
	if len(after) != len(before) {
		t.Fatalf("the index file of the failed commit was left behind: %d -> %d", len(before), len(after))
	}
}

// TestIndexSource: the scan's view of the segments of a version; an
// unreadable index file is reported and ignored, never trusted.
func TestIndexSource(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 11))
	st, _ := newDataset(t, commit.WriteOptions{MaxRowsPerFile: 100}, randomBatch(rng, 0, 250))
	r, err := Create(ctx, st, CreateOptions{Column: "i8", RowsPerZone: 32})
	if err != nil {
		t.Fatal(err)
	}
	appendRows(t, st, commit.WriteOptions{}, randomBatch(rng, 500, 10)) // unindexed fragment 3
	src, err := NewIndexSource(st, latest(t, st), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Zones(ctx, 1, 100, []string{"i8", "s"})
	if err != nil || len(got["i8"]) != 1 || len(got["i8"][0].Zones) != 4 || len(got["s"]) != 0 {
		t.Fatalf("fragment 1: %v %v", got, err)
	}
	if got, err := src.Zones(ctx, 3, 10, []string{"i8"}); err != nil || len(got) != 0 {
		t.Fatalf("unindexed fragment: %v %v", got, err)
	}
	// Zones beyond the fragment's rows: not used for it.
	if got, err := src.Zones(ctx, 1, 50, []string{"i8"}); err == nil || len(got) != 0 {
		t.Fatalf("short fragment: %v %v", got, err)
	}
	// Damage the file: the next source reports it and returns nothing.
	u, _ := manifest.IndexUUID(r.Segment)
	if err := st.Put(ctx, indexDir(uuidOf(t, u))+"/"+FileName, []byte("garbage, not a lance file at all.......")); err != nil {
		t.Fatal(err)
	}
	src, _ = NewIndexSource(st, latest(t, st), nil)
	got, err = src.Zones(ctx, 1, 100, []string{"i8"})
	if !errors.Is(err, ErrInvalidIndex) || len(got) != 0 || len(src.Problems()) != 1 {
		t.Fatalf("damaged file: %v %v %v", got, err, src.Problems())
	}
}
