package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

// Demo is `lancekeeper demo`.
func (commands) Demo() command {
	return command{
		name:    "demo",
		usage:   "[DIR] [--rows N]",
		summary: "Write a sample dataset with v1 zone write seeds into DIR (default ./demo-data, recreated on every run) and show inspect, seeds and a pruning preview.",
		run:     runDemo,
	}
}

const demoDefaultDir = "demo-data"

var demoCities = [...]string{"Oslo", "Lisbon", "Nairobi", "Lima", "Osaka", "Perth", "Quito", "Riga"}

// demoBatch builds rows [start, start+n): id sorted, day advancing one per
// 2000 rows (so day is clustered too), city and temperature random, with a
// few nulls and NaNs. The generator is seeded: every run writes the same
// rows.
func demoBatch(schema *arrow.Schema, rng *rand.Rand, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	days := b.Field(1).(*array.Date32Builder)
	cities := b.Field(2).(*array.StringBuilder)
	temps := b.Field(3).(*array.Float64Builder)
	epoch := arrow.Date32FromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := start; i < start+n; i++ {
		ids.Append(int64(i))
		days.Append(epoch + arrow.Date32(i/2000))
		cities.Append(demoCities[rng.IntN(len(demoCities))])
		switch r := rng.IntN(1000); {
		case r < 10:
			temps.AppendNull()
		case r < 13:
			temps.Append(math.NaN())
		default:
			temps.Append(math.Round((rng.NormFloat64()*8+15)*10) / 10)
		}
	}
	return b.NewRecordBatch()
}

func demoReader(schema *arrow.Schema, rng *rand.Rand, start, rows, batch int) (array.RecordReader, error) {
	var recs []arrow.RecordBatch
	for off := start; off < start+rows; off += batch {
		recs = append(recs, demoBatch(schema, rng, off, min(batch, start+rows-off)))
	}
	rdr, err := array.NewRecordReader(schema, recs)
	for _, r := range recs {
		r.Release()
	}
	return rdr, err
}

// prepareDemoDir makes dir an empty directory. An existing dir is removed
// only when it is empty or a Lance dataset (it has _versions/) — never an
// arbitrary directory.
func prepareDemoDir(dir string) (recreated bool, err error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s exists and is not a directory; refusing to touch it", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if len(entries) == 0 {
		return false, nil
	}
	if vi, err := os.Stat(filepath.Join(dir, "_versions")); err != nil || !vi.IsDir() {
		return false, fmt.Errorf("%s exists and is not a Lance dataset (no _versions/); refusing to delete it — pick another DIR", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	return true, os.MkdirAll(dir, 0o755)
}

func runDemo(e *env, args []string) int {
	c := commands{}.Demo()
	fset := newFlagSet(e, c)
	rows := fset.Int("rows", 200000, "rows in the sample dataset (half without seeds, half with)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return parseFailed(err)
	}
	if len(pos) > 1 || *rows < 2 {
		fset.Usage()
		return exitBadInput
	}
	dir := demoDefaultDir
	if len(pos) == 1 {
		dir = pos[0]
	}
	recreated, err := prepareDemoDir(dir)
	if err != nil {
		return fail(e, c.name, exitBadInput, err)
	}
	out := e.stdout
	if recreated {
		fmt.Fprintf(out, "(removed the previous demo dataset in %s)\n", dir)
	}
	st, err := store.Open(e.ctx, dir)
	if err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	defer st.Close()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "temperature", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(2026, 11))
	half := *rows / 2
	perFile := max(half/2, 1)

	step := func(title string) { fmt.Fprintf(out, "\n== %s\n", title) }

	step(fmt.Sprintf("1. create %s: %d rows, no seeds (plain Lance 2.2 data, Lance 12's default storage version: Lance 12 reads the dataset until step 2)", dir, half))
	rdr, err := demoReader(schema, rng, 0, half, 10000)
	if err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	res, err := commit.WriteArrow(e.ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: perFile})
	rdr.Release()
	if err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	fmt.Fprintf(out, "version %d: %d rows in %d fragments, feature flags %d/%d\n", res.Version, res.Rows, len(res.Files),
		res.Manifest.GetReaderFeatureFlags(), res.Manifest.GetWriterFeatureFlags())

	step("2. lancekeeper seeds enable " + dir + "   (explicit activation; nothing else changes, but from now on Lance 12 refuses the dataset)")
	if code := runSeedsEnable(e, []string{dir}); code != exitOK {
		return code
	}

	step(fmt.Sprintf("3. append %d rows with v1 zone write seeds on every column (8192 rows per zone)", *rows-half))
	rdr, err = demoReader(schema, rng, half, *rows-half, 10000)
	if err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	res, err = commit.WriteArrow(e.ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend, SeedAllColumns: true, MaxRowsPerFile: perFile})
	rdr.Release()
	if err != nil {
		return fail(e, c.name, exitFailure, err)
	}
	fmt.Fprintf(out, "version %d: %d rows in %d fragments with seeds on %v\n", res.Version, res.Rows, len(res.Files), seededColumns(res.Files[0].Seeds))

	step("4. lancekeeper inspect " + dir)
	if code := runInspect(e, []string{dir}); code != exitOK {
		return code
	}

	step("5. lancekeeper seeds " + dir + " --column id")
	if code := runSeeds(e, []string{dir, "--column", "id"}); code != exitOK {
		return code
	}

	// A range inside the first zone of the first seeded fragment.
	lo := half + min(100, (*rows-half)/4)
	hi := lo + min(1000, (*rows-half)/4)
	where := fmt.Sprintf("id BETWEEN %d AND %d", lo, hi)
	step(fmt.Sprintf("6. lancekeeper seeds %s --where \"%s\"   (pruning preview)", dir, where))
	if code := runSeeds(e, []string{dir, "--column", "id", "--where", where}); code != exitOK {
		return code
	}
	fmt.Fprintf(out, "\nThe fragments of version 1 have no seeds, so a reader must scan them; the seeded\n"+
		"fragments are pruned zone by zone. Try also:\n"+
		"  lancekeeper seeds %s --where \"isnan(temperature)\"\n"+
		"  lancekeeper seeds %s --where \"city = 'Oslo'\" --zones\n"+
		"  lancekeeper versions %s\n", dir, dir, dir)
	return exitOK
}
