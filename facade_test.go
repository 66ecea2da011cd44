package lancekeeper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/seedio"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// rows is one record batch: x = from..to-1, s = "row<x>".
func rows(from, to int64) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	for x := from; x < to; x++ {
		b.Field(0).(*array.Int64Builder).Append(x)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row%d", x))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(testSchema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

func mustT[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// create makes a local dataset of rows 0..n-1 and closes it at cleanup.
func create(t testing.TB, uri string, n int64, opts ...Option) *Dataset {
	t.Helper()
	ds, err := Create(context.Background(), uri, rows(0, n), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// writeFlags writes the next version of the dataset at dir as a foreign
// writer would: the latest manifest with the given flag words.
func writeFlags(t *testing.T, dir string, r, w uint64) {
	t.Helper()
	ctx := context.Background()
	ds := mustT[*Dataset](t)(Open(ctx, dir))
	defer ds.Close()
	f := ds.snap.File
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version++
	m.ReaderFeatureFlags, m.WriterFeatureFlags = r, w
	b, err := manifest.Encode(m, f.IndexSection, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(manifest.ManifestPath(manifest.V2, m.GetVersion())))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// §6.3, R55, R59: the facade decides the flag state inside and keeps the
// refusal typed — an unknown reader bit or a half-set paired bit refuses
// Open and Checkout; an unknown writer bit leaves the version readable and
// refuses writes; both through the facade's and the flags package's names.
func TestR55_FlagRefusalTyped(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name              string
		r, w              uint64
		openErr, writeErr error
	}{
		{"unknown reader bit 15", 1 << 15, 1 << 15, ErrUnsupported, ErrUnsupported},
		{"unknown writer bit 14 only", 0, 1 << 14, nil, ErrUnsupported},
		{"R59 half-set FLAG_ZONE_WRITE_SEEDS", flags.ZoneWriteSeeds, 0, ErrHalfSet, ErrHalfSet},
		{"supported FLAG_ZONE_WRITE_SEEDS", flags.ZoneWriteSeeds, flags.ZoneWriteSeeds, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "t.lance")
			create(t, dir, 10)
			writeFlags(t, dir, tt.r, tt.w)
			ds, err := Open(ctx, dir)
			if !errors.Is(err, tt.openErr) || (tt.openErr == nil) != (err == nil) {
				t.Fatalf("Open: %v, want %v", err, tt.openErr)
			}
			if tt.openErr != nil {
				if !errors.Is(err, flags.ErrUnsupported) && !errors.Is(err, flags.ErrHalfSet) {
					t.Fatalf("Open's error is not a flags error: %v", err)
				}
				// The earlier version stays readable, and Checkout refuses as Open.
				v1 := mustT[*Dataset](t)(Open(ctx, dir, AtVersion(1)))
				defer v1.Close()
				if _, err := v1.Checkout(ctx); !errors.Is(err, tt.openErr) {
					t.Fatalf("Checkout of the latest: %v, want %v", err, tt.openErr)
				}
				return
			}
			defer ds.Close()
			if ds.Version() != 2 {
				t.Fatalf("opened version %d", ds.Version())
			}
			_, err = ds.Append(ctx, rows(10, 20))
			if !errors.Is(err, tt.writeErr) || (tt.writeErr == nil) != (err == nil) {
				t.Fatalf("Append: %v, want %v", err, tt.writeErr)
			}
		})
	}
}

// Options are refused, not ignored, where they do not apply.
func TestOptionsRefusedWhereTheyDoNotApply(t *testing.T) {
	ctx := context.Background()
	ds := create(t, "mem://opts", 10)
	cases := []struct {
		name string
		call func() error
	}{
		{"Deep to Open", func() error { _, err := Open(ctx, "mem://x", Deep()); return err }},
		{"AtVersion to Create", func() error { _, err := Create(ctx, "mem://x", rows(0, 1), AtVersion(1)); return err }},
		{"WithSeeds to Checkout", func() error { _, err := ds.Checkout(ctx, WithSeeds()); return err }},
		{"AtTag to Append", func() error { _, err := ds.Append(ctx, rows(0, 1), AtTag("t")); return err }},
		{"AllowUnsafeCommit to Overwrite", func() error { _, err := ds.Overwrite(ctx, rows(0, 1), AllowUnsafeCommit()); return err }},
		{"WithMaxRowsPerFile to Clone", func() error { _, err := ds.Clone(ctx, "mem://y", WithMaxRowsPerFile(3)); return err }},
		{"AtVersion and AtTag", func() error { _, err := ds.Checkout(ctx, AtVersion(1), AtTag("t")); return err }},
		{"twice", func() error { _, err := ds.Checkout(ctx, AtVersion(1), AtVersion(1)); return err }},
		{"zero Option", func() error { _, err := ds.Checkout(ctx, Option{}); return err }},
		{"R56 activation without seeds", func() error { _, err := ds.Append(ctx, rows(0, 1), ActivateZoneWriteSeeds()); return err }},
		{"nil reader", func() error { _, err := ds.Append(ctx, nil); return err }},
		{"InlineTransactionOnly to Open", func() error { _, err := Open(ctx, "mem://opts", InlineTransactionOnly()); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("got %v, want ErrInvalidOption", err)
			}
		})
	}
	if v := mustT[[]Version](t)(ds.Versions(ctx)); len(v) != 1 {
		t.Fatalf("a refused call committed: %d versions", len(v))
	}
}

// R56: seeds on a table without the flag need the explicit activation;
// the typed error survives the facade, and nothing is committed.
func TestR56_SeedsNeedExplicitActivation(t *testing.T) {
	ctx := context.Background()
	ds := create(t, "mem://r56", 10)
	_, err := ds.Append(ctx, rows(10, 20), WithSeeds("x"))
	if !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatalf("got %v", err)
	}
	if _, err := Create(ctx, "mem://r56b", rows(0, 5), WithSeeds()); !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatalf("Create: %v", err)
	}
	latest := mustT[*Dataset](t)(ds.Checkout(ctx))
	if latest.Version() != 1 {
		t.Fatalf("refused append committed version %d", latest.Version())
	}
}

// §8.1: a shallow clone's handle resolves the source's files through the
// base path inside — summary row counts, seeds and pruning read the
// source's data files; files appended to the clone live under its root;
// the source is never written.
func TestShallowCloneBasePathsResolved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := create(t, filepath.Join(dir, "a", "src.lance"), 300,
		WithSeeds("x"), WithRowsPerZone(100), ActivateZoneWriteSeeds())
	clone := mustT[*Dataset](t)(src.Clone(ctx, filepath.Join(dir, "b", "clone.lance")))
	defer clone.Close()
	if clone.Version() != 1 || !clone.ZoneWriteSeeds() {
		t.Fatalf("clone: version %d flag %v", clone.Version(), clone.ZoneWriteSeeds())
	}
	clone = mustT[*Dataset](t)(clone.Append(ctx, rows(300, 400), WithSeeds("x"), WithRowsPerZone(100)))
	s := mustT[*Summary](t)(clone.Summary(ctx))
	if s.Rows != 400 || s.Fragments != 2 {
		t.Fatalf("clone summary: %+v", s)
	}
	files := mustT[[]FileSeeds](t)(clone.Seeds(ctx))
	if len(files) != 2 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		if f.Err != nil || len(f.Seeds) != 1 || f.Seeds[0].Err != nil || f.Seeds[0].Version != 1 {
			t.Fatalf("file %+v", f)
		}
	}
	p := mustT[*Pruning](t)(clone.Prune(ctx, "x >= 350"))
	if p.FragmentsKept != 1 || p.ZonesKept != 1 || p.ZonesTotal != 4 || p.RowsKept != 100 {
		t.Fatalf("pruning: %+v", p)
	}
	// The clone's own data file is under its root, the source has one file.
	own, _ := filepath.Glob(filepath.Join(dir, "b", "clone.lance", "data", "*.lance"))
	srcFiles, _ := filepath.Glob(filepath.Join(dir, "a", "src.lance", "data", "*.lance"))
	if len(own) != 1 || len(srcFiles) != 1 {
		t.Fatalf("clone files %v, source files %v", own, srcFiles)
	}
	if v := mustT[[]Version](t)(src.Versions(ctx)); len(v) != 1 {
		t.Fatalf("source has %d versions", len(v))
	}
}

// R61: the facade decides the flag state for seed use — a v1 seed in a
// version without FLAG_ZONE_WRITE_SEEDS is reported unusable
// (ErrSeedV1WithoutFlag) and pruning keeps the fragment whole; the same
// files in the flagged version are used.
func TestR61_SeedUseFollowsTheVersionsFlag(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	create(t, dir, 200, WithSeeds("x"), WithRowsPerZone(100), ActivateZoneWriteSeeds())
	// Version 2: the same manifest without the flag (a test-only copy).
	writeFlags(t, dir, 0, 0)
	ds := mustT[*Dataset](t)(Open(ctx, dir))
	defer ds.Close()
	if ds.Version() != 2 || ds.ZoneWriteSeeds() {
		t.Fatalf("version %d flag %v", ds.Version(), ds.ZoneWriteSeeds())
	}
	files := mustT[[]FileSeeds](t)(ds.Seeds(ctx))
	if cs := files[0].Seeds[0]; !errors.Is(cs.Err, seedio.ErrSeedV1WithoutFlag) || cs.Version != 1 || cs.Zones != nil {
		t.Fatalf("unflagged: %+v", cs)
	}
	p := mustT[*Pruning](t)(ds.Prune(ctx, "x > 1000"))
	if p.FragmentsKept != 1 || len(p.Fragments[0].Terms) != 1 || len(p.Fragments[0].Terms[0].Sources) != 0 || p.ZonesTotal != 0 {
		t.Fatalf("unflagged pruning: %+v", p)
	}
	v1 := mustT[*Dataset](t)(ds.Checkout(ctx, AtVersion(1)))
	p = mustT[*Pruning](t)(v1.Prune(ctx, "x > 1000"))
	if p.FragmentsKept != 0 || p.Fragments[0].Terms[0].Sources[0] != "seed v1" || p.ZonesTotal != 2 {
		t.Fatalf("flagged pruning: %+v", p)
	}
}

// Prune's predicate errors are typed, and name what is wrong.
func TestPruneInvalidPredicate(t *testing.T) {
	ctx := context.Background()
	ds := create(t, "mem://pred", 10, WithSeeds(), ActivateZoneWriteSeeds())
	for _, pred := range []string{"", "x >", "nosuch = 1", "x = 'abc'", "s > 12", "x IN ()", "x ~ 3"} {
		if _, err := ds.Prune(ctx, pred); !errors.Is(err, ErrInvalidPredicate) {
			t.Errorf("Prune(%q): %v, want ErrInvalidPredicate", pred, err)
		}
	}
}

// §7.2: branch handles write to their branch (whose first version keeps
// the parent's number); main is untouched; Checkout with
// AtVersion stays on the handle's branch; tags created from a branch
// handle point at the branch.
func TestBranchHandles(t *testing.T) {
	ctx := context.Background()
	ds := create(t, filepath.Join(t.TempDir(), "t.lance"), 10)
	dev := mustT[*Dataset](t)(ds.Branches().Create(ctx, "feature/a", 0))
	dev = mustT[*Dataset](t)(dev.Append(ctx, rows(10, 20)))
	dev = mustT[*Dataset](t)(dev.Append(ctx, rows(20, 30)))
	if dev.Branch() != "feature/a" || dev.Version() != 3 {
		t.Fatalf("dev at %s@%d", dev.Branch(), dev.Version())
	}
	at2 := mustT[*Dataset](t)(dev.Checkout(ctx, AtVersion(2)))
	if at2.Branch() != "feature/a" || mustT[*Summary](t)(at2.Summary(ctx)).Rows != 20 {
		t.Fatalf("checkout on branch: %s@%d", at2.Branch(), at2.Version())
	}
	tag := mustT[Tag](t)(at2.Tags().Create(ctx, "dev2", 0))
	if tag.Branch != "feature/a" || tag.Version != 2 {
		t.Fatalf("tag %+v", tag)
	}
	byTag := mustT[*Dataset](t)(ds.Checkout(ctx, AtTag("dev2")))
	if byTag.Branch() != "feature/a" || byTag.Version() != 2 {
		t.Fatalf("by tag: %s@%d", byTag.Branch(), byTag.Version())
	}
	main := mustT[*Dataset](t)(dev.Checkout(ctx, OnBranch("main")))
	if main.Branch() != "" || main.Version() != 1 {
		t.Fatalf("main: %s@%d", main.Branch(), main.Version())
	}
	vs := mustT[[]Version](t)(dev.Versions(ctx))
	if len(vs) != 3 || vs[0].Number != 1 || vs[1].Tags[0] != "dev2" {
		t.Fatalf("branch versions %+v", vs)
	}
	if _, err := ds.Branches().Create(ctx, "feature/a", 0); !errors.Is(err, ErrRefExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := ds.Branches().Get(ctx, "nope"); !errors.Is(err, ErrRefNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	// Restoring the branch's version 2 makes version 4 of the branch.
	head := mustT[*Dataset](t)(at2.Restore(ctx))
	if head.Branch() != "feature/a" || head.Version() != 4 || mustT[*Summary](t)(head.Summary(ctx)).Rows != 20 {
		t.Fatalf("restore: %s@%d", head.Branch(), head.Version())
	}
}

// Create refuses an existing dataset with the typed error.
// §6.1 bit 5 (DISABLE_TRANSACTION_FILE, writer only, per commit): the
// opt-in InlineTransactionOnly writes no .txn file and flags only its own
// version; the next append without it clears the bit.
func TestInlineTransactionOnly_Bit5PerCommit(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	ds := create(t, dir, 3, InlineTransactionOnly())
	sum := mustT[*Summary](t)(ds.Summary(ctx))
	if sum.WriterFlags&flags.DisableTransactionFile == 0 || sum.ReaderFlags&flags.DisableTransactionFile != 0 {
		t.Fatalf("flags reader %d writer %d: bit 5 in the writer word only", sum.ReaderFlags, sum.WriterFlags)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "_transactions")); err == nil && len(ents) > 0 {
		t.Fatalf("inline-only create wrote %d transaction files", len(ents))
	}
	ds2 := mustT[*Dataset](t)(ds.Append(ctx, rows(3, 6))) // same handle as ds: closed with it
	if sum := mustT[*Summary](t)(ds2.Summary(ctx)); sum.WriterFlags&flags.DisableTransactionFile != 0 || sum.Rows != 6 {
		t.Fatalf("append without the option: writer flags %d, rows %d", sum.WriterFlags, sum.Rows)
	}
}

func TestCreateExisting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t.lance")
	create(t, dir, 3)
	if _, err := Create(context.Background(), dir, rows(0, 3)); !errors.Is(err, ErrDatasetExists) {
		t.Fatalf("got %v", err)
	}
}

// Scan through the facade: a shallow clone's scan reads the source's files
// through the base path (§8.1) and its own appended file; pruning never
// changes the answer (R65); a bad predicate is typed with the offset
// (ErrInvalidPredicate and filter.ErrSyntax / filter.ErrType); scan
// options are refused elsewhere.
func TestScanThroughTheFacade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := create(t, filepath.Join(dir, "src.lance"), 300, WithSeeds("x"), WithRowsPerZone(50), ActivateZoneWriteSeeds())
	clone := mustT[*Dataset](t)(src.Clone(ctx, filepath.Join(dir, "clone.lance")))
	defer clone.Close()
	clone = mustT[*Dataset](t)(clone.Append(ctx, rows(300, 400), WithSeeds("x"), WithRowsPerZone(50)))
	count := func(ds *Dataset, opts ...Option) (n int64, sum int64) {
		t.Helper()
		rdr := mustT[array.RecordReader](t)(ds.Scan(ctx, opts...))
		defer rdr.Release()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			xs := rec.Column(int(rec.Schema().FieldIndices("x")[0])).(*array.Int64)
			for i := 0; i < xs.Len(); i++ {
				n++
				sum += xs.Value(i)
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		return n, sum
	}
	if n, sum := count(clone); n != 400 || sum != 399*400/2 {
		t.Fatalf("full scan of the clone: %d rows, sum %d", n, sum)
	}
	if n, sum := count(clone, Where("x >= 250 AND x < 350"), WithColumns("x")); n != 100 || sum != (250+349)*100/2 {
		t.Fatalf("filtered scan: %d rows, sum %d", n, sum)
	}
	if n, _ := count(clone, Where("x >= 0"), WithLimit(7)); n != 7 {
		t.Fatalf("limit: %d rows", n)
	}
	p := mustT[*Pruning](t)(clone.Prune(ctx, "x >= 250 AND x < 350"))
	if p.RowsKept != 100 || p.BytesToRead >= p.BytesFull {
		t.Fatalf("pruning of the clone: %+v", p)
	}
	for _, c := range []struct {
		pred string
		want error
	}{{"x >", filter.ErrSyntax}, {"nosuch = 1", filter.ErrType}, {"x = 'abc'", filter.ErrType}} {
		_, err := clone.Scan(ctx, Where(c.pred))
		if !errors.Is(err, ErrInvalidPredicate) || !errors.Is(err, c.want) {
			t.Errorf("Scan(Where(%q)): %v, want ErrInvalidPredicate and %v", c.pred, err, c.want)
		}
	}
	if _, err := clone.Append(ctx, rows(0, 1), Where("x > 1")); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Where given to Append: %v", err)
	}
	if _, err := clone.Scan(ctx, WithSeeds()); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithSeeds given to Scan: %v", err)
	}
}

// Maintenance through the facade keeps the typed errors and the option
// rules: Branches().Delete refuses main and unknown branches and removes a
// branch; Delete with a bad or empty predicate is typed and commits
// nothing; Cleanup needs a policy; maintenance options are refused
// elsewhere; Compact on a branch handle compacts the branch only.
func TestMaintenanceThroughTheFacade(t *testing.T) {
	ctx := context.Background()
	ds := create(t, filepath.Join(t.TempDir(), "t.lance"), 40, WithMaxRowsPerFile(10))
	dev := mustT[*Dataset](t)(ds.Branches().Create(ctx, "dev", 0))
	dev = mustT[*Dataset](t)(dev.Compact(ctx))
	if s := mustT[*Summary](t)(dev.Summary(ctx)); s.Fragments != 1 || s.Rows != 40 || s.Branch != "dev" {
		t.Fatalf("compacted branch: %+v", s)
	}
	if s := mustT[*Summary](t)(mustT[*Dataset](t)(ds.Checkout(ctx)).Summary(ctx)); s.Fragments != 4 || s.Version != 1 {
		t.Fatalf("main after the branch's compaction: %+v", s)
	}
	if err := ds.Branches().Delete(ctx, "main"); err == nil {
		t.Fatal("deleting main succeeded")
	}
	if err := ds.Branches().Delete(ctx, "nope"); err == nil {
		t.Fatal("deleting an unknown branch succeeded")
	}
	if err := ds.Branches().Delete(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Branches().Get(ctx, "dev"); !errors.Is(err, ErrRefNotFound) {
		t.Fatalf("deleted branch: %v", err)
	}
	for _, pred := range []string{"", "  ", "x >", "nosuch = 2"} {
		if _, _, err := ds.Delete(ctx, pred); !errors.Is(err, ErrInvalidPredicate) {
			t.Errorf("Delete(%q): %v", pred, err)
		}
	}
	nd, n, err := ds.Delete(ctx, "x > 1000")
	if err != nil || n != 0 || nd.Version() != 1 {
		t.Fatalf("delete matching nothing: %v rows %d version %v", err, n, nd)
	}
	if _, err := ds.Cleanup(ctx); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Cleanup without a policy: %v", err)
	}
	if _, err := ds.Cleanup(ctx, WithLimit(3)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithLimit given to Cleanup: %v", err)
	}
	if _, err := ds.Append(ctx, rows(0, 1), DryRun()); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("DryRun given to Append: %v", err)
	}
	if _, err := ds.Compact(ctx, OlderThan(time.Hour)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("OlderThan given to Compact: %v", err)
	}
	if _, err := ds.BackfillSeeds(ctx, WithSeeds("x")); !errors.Is(err, ErrSeedsNotEnabled) {
		t.Fatalf("BackfillSeeds without activation on an unflagged table: %v", err)
	}
	r := mustT[*CleanupReport](t)(ds.Cleanup(ctx, OlderThan(time.Hour), DryRun()))
	if len(r.RemovedVersions) != 0 || !r.DryRun {
		t.Fatalf("dry run: %+v", r)
	}
}

// Check on a branch handle checks the branch's versions; options are
// refused elsewhere.
func TestCheckThroughTheFacade(t *testing.T) {
	ctx := context.Background()
	ds := create(t, filepath.Join(t.TempDir(), "t.lance"), 20, WithMaxRowsPerFile(10))
	dev := mustT[*Dataset](t)(ds.Branches().Create(ctx, "dev", 0))
	dev = mustT[*Dataset](t)(dev.Append(ctx, rows(20, 30)))
	r := mustT[*CheckReport](t)(dev.Check(ctx, AllVersions()))
	if !r.OK() || len(r.Versions) != 2 || r.Files != 5 { // 2 files in version 1, 3 in version 2
		t.Fatalf("branch check: %+v", r)
	}
	if _, err := ds.Check(ctx, DryRun()); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("DryRun given to Check: %v", err)
	}
	if _, err := ds.Append(ctx, rows(0, 1), AllVersions()); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("AllVersions given to Append: %v", err)
	}
}
