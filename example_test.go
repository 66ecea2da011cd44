package lancekeeper_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper"
)

// records returns a reader of one record batch with columns x (int64,
// the values from..to-1) and s (string "row<x>").
func records(from, to int64) array.RecordReader {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for x := from; x < to; x++ {
		b.Field(0).(*array.Int64Builder).Append(x)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row%d", x))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err)
	}
	return rdr
}

// tempDir returns a new directory for an example's datasets.
func tempDir() string {
	dir, err := os.MkdirTemp("", "lancekeeper-example-")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

// The journey of the README: create, append with seeds and their explicit
// activation, tag, reopen at the tag, list versions, and ask which zones a
// predicate keeps. README.md shows the body from Create to the last Printf
// (TestREADMESnippetIsThisExample keeps them identical).
func Example() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "events.lance")

	// records(from, to) is any array.RecordReader; here x int64 and s string.
	ds, err := lancekeeper.Create(ctx, uri, records(0, 1000))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	// Append with v1 zone write seeds; the same commit explicitly activates
	// FLAG_ZONE_WRITE_SEEDS (Lance releases without seed support then refuse the table).
	ds, err = ds.Append(ctx, records(1000, 2000),
		lancekeeper.WithSeeds(), lancekeeper.WithRowsPerZone(100), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ds.Tags().Create(ctx, "loaded", 0); err != nil { // 0: this handle's version
		log.Fatal(err)
	}

	again, err := lancekeeper.Open(ctx, uri, lancekeeper.AtTag("loaded"))
	if err != nil {
		log.Fatal(err)
	}
	defer again.Close()
	versions, _ := again.Versions(ctx)
	for _, v := range versions {
		fmt.Println("version", v.Number, "seeds flag:", v.ZoneWriteSeeds, "tags:", v.Tags)
	}
	p, err := again.Prune(ctx, "x > 1900")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("x > 1900 keeps %d of %d fragments, %d of %d seeded zones\n",
		p.FragmentsKept, p.FragmentsTotal, p.ZonesKept, p.ZonesTotal)
	// Output:
	// version 1 seeds flag: false tags: []
	// version 2 seeds flag: true tags: [loaded]
	// x > 1900 keeps 2 of 2 fragments, 1 of 10 seeded zones
}

func ExampleCreate() {
	ctx := context.Background()
	// mem:// datasets live as long as the handle: for tests and examples.
	ds, err := lancekeeper.Create(ctx, "mem://example", records(0, 10), lancekeeper.WithMaxRowsPerFile(4))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	// Lance 12's default storage version is 2.2; 2.0 and 2.1 on request.
	old, err := lancekeeper.Create(ctx, "mem://example-2.0", records(0, 10), lancekeeper.WithStorageVersion("2.0"))
	if err != nil {
		log.Fatal(err)
	}
	defer old.Close()
	s, err := ds.Summary(ctx)
	if err != nil {
		log.Fatal(err)
	}
	o, _ := old.Summary(ctx)
	fmt.Println("version", s.Version, "rows", s.Rows, "fragments", s.Fragments, "format", s.DataStorageVersion, "and", o.DataStorageVersion)
	for _, c := range s.Columns {
		fmt.Println(c.Name, c.Type)
	}
	// Output:
	// version 1 rows 10 fragments 3 format 2.2 and 2.0
	// x int64
	// s string
}

func ExampleOpen() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "t.lance")
	ds, err := lancekeeper.Create(ctx, uri, records(0, 5))
	if err != nil {
		log.Fatal(err)
	}
	ds.Close()

	ds, err = lancekeeper.Open(ctx, uri)
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	fmt.Println("latest version", ds.Version())
	_, err = lancekeeper.Open(ctx, filepath.Join(dir, "missing.lance"))
	fmt.Println("missing dataset:", errors.Is(err, lancekeeper.ErrNotFound))
	// Output:
	// latest version 1
	// missing dataset: true
}

func ExampleDataset_Append() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://append", records(0, 100))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()

	// Seeds on a table without FLAG_ZONE_WRITE_SEEDS need the explicit
	// activation (R56).
	_, err = ds.Append(ctx, records(100, 200), lancekeeper.WithSeeds("x"))
	fmt.Println("without activation:", errors.Is(err, lancekeeper.ErrSeedsNotEnabled))

	ds, err = ds.Append(ctx, records(100, 200), lancekeeper.WithSeeds("x"), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	// Once the flag is set, later appends write seeds without it.
	ds, err = ds.Append(ctx, records(200, 300), lancekeeper.WithSeeds("x"))
	if err != nil {
		log.Fatal(err)
	}
	s, _ := ds.Summary(ctx)
	fmt.Println("version", s.Version, "rows", s.Rows, "seeds flag", s.ZoneWriteSeeds)
	// Output:
	// without activation: true
	// version 3 rows 300 seeds flag true
}

func ExampleDataset_Overwrite() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://overwrite", records(0, 100))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds, err = ds.Overwrite(ctx, records(0, 7))
	if err != nil {
		log.Fatal(err)
	}
	old, err := ds.Checkout(ctx, lancekeeper.AtVersion(1))
	if err != nil {
		log.Fatal(err)
	}
	now, _ := ds.Summary(ctx)
	before, _ := old.Summary(ctx)
	fmt.Println("version", now.Version, "rows", now.Rows, "; version", before.Version, "rows", before.Rows)
	// Output:
	// version 2 rows 7 ; version 1 rows 100
}

func ExampleDataset_Versions() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://versions", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds, _ = ds.Append(ctx, records(10, 20))
	ds, _ = ds.EnableZoneWriteSeeds(ctx)
	vs, err := ds.Versions(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range vs {
		fmt.Println(v.Number, v.Fragments, v.ZoneWriteSeeds)
	}
	// Output:
	// 1 1 false
	// 2 2 false
	// 3 2 true
}

func ExampleDataset_Checkout() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://checkout", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds.Tags().Create(ctx, "first", 0)
	ds, _ = ds.Append(ctx, records(10, 20))
	if _, err := ds.Branches().Create(ctx, "dev", 0); err != nil {
		log.Fatal(err)
	}

	byVersion, _ := ds.Checkout(ctx, lancekeeper.AtVersion(1))
	byTag, _ := ds.Checkout(ctx, lancekeeper.AtTag("first"))
	dev, _ := ds.Checkout(ctx, lancekeeper.OnBranch("dev"))
	fmt.Println(byVersion.Version(), byTag.Version(), dev.Branch(), dev.Version())
	// Output:
	// 1 1 dev 2
}

func ExampleDataset_Tags() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://tags", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	tags := ds.Tags()
	tags.Create(ctx, "stable", 0) // 0: this handle's version
	ds, _ = ds.Append(ctx, records(10, 20))
	tags.Create(ctx, "nightly", ds.Version())
	tags.Update(ctx, "stable", 2)
	_, err = tags.Create(ctx, "nightly", 1)
	fmt.Println("exists:", errors.Is(err, lancekeeper.ErrRefExists))
	tags.Delete(ctx, "nightly")
	list, _ := tags.List(ctx)
	for _, t := range list {
		fmt.Println(t.Name, "->", t.Version)
	}
	// Output:
	// exists: true
	// stable -> 2
}

func ExampleDataset_Branches() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://branches", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	dev, err := ds.Branches().Create(ctx, "dev", 0)
	if err != nil {
		log.Fatal(err)
	}
	// Writes through a branch handle go to the branch.
	dev, err = dev.Append(ctx, records(10, 15))
	if err != nil {
		log.Fatal(err)
	}
	main, _ := ds.Checkout(ctx)
	d, _ := dev.Summary(ctx)
	m, _ := main.Summary(ctx)
	fmt.Printf("dev: version %d, %d rows; main: version %d, %d rows\n", d.Version, d.Rows, m.Version, m.Rows)
	bs, _ := ds.Branches().List(ctx)
	for _, b := range bs {
		fmt.Printf("branch %s from %q@%d\n", b.Name, b.Parent, b.ParentVersion)
	}
	// Output:
	// dev: version 2, 15 rows; main: version 1, 10 rows
	// branch dev from ""@1
}

func ExampleDataset_Clone() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	src, err := lancekeeper.Create(ctx, filepath.Join(dir, "src.lance"), records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	// Shallow: the clone references the source's files through a base path.
	shallow, err := src.Clone(ctx, filepath.Join(dir, "shallow.lance"))
	if err != nil {
		log.Fatal(err)
	}
	defer shallow.Close()
	shallow, err = shallow.Append(ctx, records(10, 20))
	if err != nil {
		log.Fatal(err)
	}
	// Deep: every file is copied.
	deep, err := src.Clone(ctx, filepath.Join(dir, "deep.lance"), lancekeeper.Deep())
	if err != nil {
		log.Fatal(err)
	}
	defer deep.Close()
	s, _ := shallow.Summary(ctx)
	d, _ := deep.Summary(ctx)
	fmt.Println("shallow: version", s.Version, "rows", s.Rows)
	fmt.Println("deep: version", d.Version, "rows", d.Rows)
	// Output:
	// shallow: version 2 rows 20
	// deep: version 1 rows 10
}

func ExampleDataset_Restore() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://restore", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds, _ = ds.Overwrite(ctx, records(0, 3))
	v1, _ := ds.Checkout(ctx, lancekeeper.AtVersion(1))
	head, err := v1.Restore(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s, _ := head.Summary(ctx)
	fmt.Println("version", s.Version, "rows", s.Rows)
	// Output:
	// version 3 rows 10
}

func ExampleDataset_EnableZoneWriteSeeds() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://enable", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	fmt.Println("version", ds.Version(), "flag", ds.ZoneWriteSeeds())
	ds, err = ds.EnableZoneWriteSeeds(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", ds.Version(), "flag", ds.ZoneWriteSeeds())
	ds, _ = ds.EnableZoneWriteSeeds(ctx) // already set: nothing written
	fmt.Println("version", ds.Version(), "flag", ds.ZoneWriteSeeds())
	// Output:
	// version 1 flag false
	// version 2 flag true
	// version 2 flag true
}

func ExampleDataset_Seeds() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://seeds", records(0, 250),
		lancekeeper.WithSeeds("x"), lancekeeper.WithRowsPerZone(100), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	files, err := ds.Seeds(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		for _, s := range f.Seeds {
			fmt.Printf("fragment %d column %s v%d usable=%v\n", f.Fragment, s.Column, s.Version, s.Err == nil)
			for _, z := range s.Zones {
				fmt.Printf("  rows %d+%d: min %v max %v nulls %d\n", z.Start, z.Rows, z.Min, z.Max, z.NullCount)
			}
		}
	}
	// Output:
	// fragment 0 column x v1 usable=true
	//   rows 0+100: min 0 max 99 nulls 0
	//   rows 100+100: min 100 max 199 nulls 0
	//   rows 200+50: min 200 max 249 nulls 0
}

// AND intersects and OR unites the zones each term keeps: rows 100–299 of
// fragment 0 for the BETWEEN, the last zone of fragment 1 for s = 'row999'.
func ExampleDataset_Prune() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://prune", records(0, 1000),
		lancekeeper.WithSeeds(), lancekeeper.WithRowsPerZone(100), lancekeeper.WithMaxRowsPerFile(500),
		lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	p, err := ds.Prune(ctx, "x BETWEEN 120 AND 250 OR s = 'row999'")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range p.Fragments {
		fmt.Printf("fragment %d kept=%v rows %d of %d\n", f.ID, f.Kept, f.RowsKept, f.Rows)
		for _, t := range f.Terms {
			fmt.Printf("  %s (%v): %d of %d zones\n", t.Term, t.Sources, t.ZonesKept, t.ZonesTotal)
		}
	}
	_, err = ds.Prune(ctx, "nosuch > 1")
	fmt.Println(errors.Is(err, lancekeeper.ErrInvalidPredicate))
	// Output:
	// fragment 0 kept=true rows 200 of 500
	//   x >= 120 ([seed v1]): 4 of 5 zones
	//   x <= 250 ([seed v1]): 3 of 5 zones
	//   s = 'row999' ([seed v1]): 0 of 5 zones
	// fragment 1 kept=true rows 100 of 500
	//   x >= 120 ([seed v1]): 5 of 5 zones
	//   x <= 250 ([seed v1]): 0 of 5 zones
	//   s = 'row999' ([seed v1]): 1 of 5 zones
	// true
}

func ExampleDataset_Scan() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://scan", records(0, 1000),
		lancekeeper.WithSeeds("x"), lancekeeper.WithRowsPerZone(100), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	// Zones whose seeds rule the predicate out are not read; the filter is
	// evaluated exactly on the rows that are.
	rdr, err := ds.Scan(ctx, lancekeeper.Where("x >= 500 AND x < 503 OR s = 'row7'"),
		lancekeeper.WithColumns("s", "x"), lancekeeper.WithRowID())
	if err != nil {
		log.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		s, x, id := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Uint64)
		for i := 0; i < int(rec.NumRows()); i++ {
			fmt.Println(id.Value(i), x.Value(i), s.Value(i))
		}
	}
	if err := rdr.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 7 7 row7
	// 500 500 row500
	// 501 501 row501
	// 502 502 row502
}

func ExampleDataset_Delete() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://delete", records(0, 100))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds, n, err := ds.Delete(ctx, "x < 10 OR s = 'row50'")
	if err != nil {
		log.Fatal(err)
	}
	s, _ := ds.Summary(ctx)
	fmt.Println("deleted", n, "; version", s.Version, "rows", s.Rows)
	// Output:
	// deleted 11 ; version 2 rows 89
}

func ExampleDataset_Compact() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://compact", records(0, 100), lancekeeper.WithMaxRowsPerFile(10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	ds, _, err = ds.Delete(ctx, "x >= 95")
	if err != nil {
		log.Fatal(err)
	}
	ds, err = ds.Compact(ctx, lancekeeper.WithTargetRowsPerFragment(50))
	if err != nil {
		log.Fatal(err)
	}
	s, _ := ds.Summary(ctx)
	fmt.Println("version", s.Version, "fragments", s.Fragments, "rows", s.Rows)
	// Output:
	// version 3 fragments 2 rows 95
}

func ExampleDataset_BackfillSeeds() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://backfill", records(0, 300))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	// Existing data gets v1 seeds by rewriting it; on a table without the
	// flag this needs the explicit activation.
	ds, err = ds.BackfillSeeds(ctx, lancekeeper.WithSeeds("x"), lancekeeper.WithRowsPerZone(100), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	files, _ := ds.Seeds(ctx)
	for _, f := range files {
		for _, s := range f.Seeds {
			fmt.Println(s.Column, "v", s.Version, "zones", len(s.Zones), "usable", s.Err == nil)
		}
	}
	fmt.Println("flag", ds.ZoneWriteSeeds())
	// Output:
	// x v 1 zones 3 usable true
	// flag true
}

func ExampleDataset_Cleanup() {
	ctx := context.Background()
	ds, err := lancekeeper.Create(ctx, "mem://cleanup", records(0, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	for i := int64(1); i <= 3; i++ {
		if ds, err = ds.Overwrite(ctx, records(0, 10*i)); err != nil {
			log.Fatal(err)
		}
	}
	r, err := ds.Cleanup(ctx, lancekeeper.RetainVersions(2))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed", r.RemovedVersions, "kept", r.KeptVersions, "files", len(r.RemovedFiles))
	vs, _ := ds.Versions(ctx)
	fmt.Println(len(vs), "versions left")
	// Output:
	// removed [1 2] kept [3 4] files 6
	// 2 versions left
}

func ExampleDataset_Check() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "t.lance")
	ds, err := lancekeeper.Create(ctx, uri, records(0, 100), lancekeeper.WithSeeds(), lancekeeper.ActivateZoneWriteSeeds())
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	r, err := ds.Check(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ok:", r.OK(), "files", r.Files, "seeds", r.Seeds)

	// Lose a data file behind the table's back.
	files, _ := filepath.Glob(filepath.Join(uri, "data", "*.lance"))
	os.Remove(files[0])
	r, _ = ds.Check(ctx, lancekeeper.AllVersions())
	for _, p := range r.Problems {
		fmt.Println("version", p.Version, p.Kind)
	}
	// Output:
	// ok: true files 1 seeds 2
	// version 1 missing_file
}
