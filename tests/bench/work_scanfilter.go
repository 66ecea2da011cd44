package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// The filtered-scan workloads (issue 13, "Speed"): a 2.2 table of
// filterRows rows in 100 fragments — ts clustered (row × 10 + noise < 50),
// u unclustered (uniform over the same range), v a float64 payload —
// written by lancekeeper with v1 seeds on every column (8192 rows per
// zone, FLAG_ZONE_WRITE_SEEDS). Ours scans that table; Lance 12 scans a
// copy of the same data files whose manifests lack bit 16 (Lance refuses
// the flag), once without any index and once with a ZoneMap index on ts.
// A third and fourth copy add the same ZoneMap index on ts to both sides.
// Both sides select ts, u, v; Lance's bytes_read/iops/rows come from one
// analyzePlan of the same query after the clock (Lance prints them with
// three significant digits).
const filterRows = 10 << 20

func init() {
	for _, col := range []string{"ts", "u"} {
		for _, sel := range []float64{0.001, 0.01, 0.1} {
			col, sel := col, sel
			Register(Workload{
				Name:  fmt.Sprintf("scanfilter/%s-%g%%-noindex", col, sel*100),
				About: fmt.Sprintf("filtered scan selecting %g %% on %s (%s) of a 10 Mi-row seeded 2.2 table; Lance: same files, no index", sel*100, col, clusterWord(col)),
				Base:  BaseLance,
				Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupScanFilter(ctx, env, col, sel, false) },
			})
		}
	}
	for _, sel := range []float64{0.001, 0.01, 0.1} {
		sel := sel
		Register(Workload{
			Name:  fmt.Sprintf("scanfilter/ts-%g%%-zonemap", sel*100),
			About: fmt.Sprintf("filtered scan selecting %g %% on ts (clustered), both sides with the same ZoneMap index on ts (ours: built from the seeds) and the same data files", sel*100),
			Base:  BaseLance,
			Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupScanFilter(ctx, env, "ts", sel, true) },
		})
	}
	Register(Workload{
		Name:  "scanfilter/full",
		About: "full scan of ts, u, v of the same table (no filter); Lance: query().select([ts,u,v]) as Arrow IPC",
		Base:  BaseLance,
		Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupScanFilter(ctx, env, "", 0, false) },
	})
}

func clusterWord(col string) string {
	if col == "ts" {
		return "clustered"
	}
	return "unclustered"
}

// filterTables returns the seeded table (ours, no index), its unflagged
// copy (Lance, no index), a copy of the seeded table with a ZoneMap index
// on ts built from its seeds (ours, index) and the unflagged copy of that
// one (Lance, index: the same index files), building them once in the
// cache.
func filterTables(ctx context.Context, env *Env, rows int) (ours, plain, oursZM, plainZM string, err error) {
	base := filepath.Join(env.Cache(), fmt.Sprintf("scanfilter-%d", rows))
	ours, plain, oursZM, plainZM = base+"-seeded.lance", base+"-plain.lance", base+"-seeded-zm.lance", base+"-plain-zm.lance"
	done := base + ".done"
	if _, err := os.Stat(done); err == nil {
		return ours, plain, oursZM, plainZM, nil
	}
	env.Log("   building %s-* (once; cached)", base)
	fail := func(err error) (string, string, string, string, error) { return "", "", "", "", err }
	for _, d := range []string{ours, plain, oursZM, plainZM} {
		if err := os.RemoveAll(d); err != nil {
			return fail(err)
		}
	}
	st, err := store.Open(ctx, ours)
	if err != nil {
		return fail(err)
	}
	_, err = commit.WriteArrow(ctx, st, newFilterGen(rows), commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: "2.2",
		MaxRowsPerFile: (rows + 99) / 100, SeedAllColumns: true, RowsPerZone: 8192, Commit: commit.Options{EnableZoneWriteSeeds: true}})
	st.Close()
	if err != nil {
		return fail(err)
	}
	if err := peerlance.CopyDir(ours, oursZM); err != nil {
		return fail(err)
	}
	zst, err := store.Open(ctx, oursZM)
	if err != nil {
		return fail(err)
	}
	_, err = zonemap.Create(ctx, zst, zonemap.CreateOptions{Column: "ts", RowsPerZone: 8192})
	zst.Close()
	if err != nil {
		return fail(err)
	}
	for _, cp := range [][2]string{{ours, plain}, {oursZM, plainZM}} {
		if err := peerlance.CopyDir(cp[0], cp[1]); err != nil {
			return fail(err)
		}
		if err := clearSeedFlag(ctx, cp[1]); err != nil {
			return fail(err)
		}
	}
	return ours, plain, oursZM, plainZM, os.WriteFile(done, nil, 0o644)
}

// clearSeedFlag removes FLAG_ZONE_WRITE_SEEDS from every manifest of dir
// (a benchmark-only copy: Lance 12 refuses the flag by design).
func clearSeedFlag(ctx context.Context, dir string) error {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	ents, err := os.ReadDir(filepath.Join(dir, "_versions"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".manifest") {
			continue
		}
		key := "_versions/" + e.Name()
		f, err := manifest.ReadFile(ctx, st.Bucket(), st.BucketKey(key))
		if err != nil {
			return err
		}
		f.Manifest.ReaderFeatureFlags &^= flags.ZoneWriteSeeds
		f.Manifest.WriterFeatureFlags &^= flags.ZoneWriteSeeds
		b, err := manifest.EncodePrelude(f.Prelude, f.Manifest, f.IndexSection, f.Transaction)
		if err != nil {
			return err
		}
		if err := st.Put(ctx, key, b); err != nil {
			return err
		}
	}
	return nil
}

// filterGen streams the rows of the filter table in 64 Ki-row batches.
type filterGen struct {
	sch  *arrow.Schema
	rows int
	next int
	rng  *rand.Rand
	cur  arrow.RecordBatch
}

func newFilterGen(rows int) *filterGen {
	sch := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, {Name: "u", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil)
	return &filterGen{sch: sch, rows: rows, rng: rand.New(rand.NewPCG(1, 2))}
}

func (g *filterGen) Retain()                        {}
func (g *filterGen) Release()                       { g.clear() }
func (g *filterGen) Schema() *arrow.Schema          { return g.sch }
func (g *filterGen) RecordBatch() arrow.RecordBatch { return g.cur }
func (g *filterGen) Record() arrow.RecordBatch      { return g.cur }
func (g *filterGen) Err() error                     { return nil }
func (g *filterGen) clear() {
	if g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
}
func (g *filterGen) Next() bool {
	g.clear()
	if g.next >= g.rows {
		return false
	}
	n := min(64<<10, g.rows-g.next)
	b := array.NewRecordBuilder(memory.DefaultAllocator, g.sch)
	defer b.Release()
	ts, u, v := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Int64Builder), b.Field(2).(*array.Float64Builder)
	for i := g.next; i < g.next+n; i++ {
		ts.Append(int64(i)*10 + int64(g.rng.IntN(50)))
		u.Append(int64(g.rng.IntN(g.rows * 10)))
		v.Append(g.rng.Float64())
	}
	g.next += n
	g.cur = b.NewRecordBatch()
	return true
}

// filterWhere selects sel of the rows on col ("" → no filter).
func filterWhere(col string, sel float64, rows int) string {
	if col == "" {
		return ""
	}
	total := int64(rows) * 10
	lo := int64(float64(total) * 0.4)
	hi := lo + int64(float64(total)*sel)
	return fmt.Sprintf("%s >= %d AND %s < %d", col, lo, col, hi)
}

func setupScanFilter(ctx context.Context, env *Env, col string, sel float64, withIndex bool) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	rows := filterRows
	if env.Short {
		rows = 20 << 10
	}
	ours, plain, oursZM, plainZM, err := filterTables(ctx, env, rows)
	if err != nil {
		return nil, err
	}
	lanceDir := plain
	if withIndex {
		ours, lanceDir = oursZM, plainZM
	}
	where := filterWhere(col, sel, rows)
	cols := []string{"ts", "u", "v"}
	args := []string{"bench-scan", lanceDir, "--n", "1", "--analyze"}
	for _, c := range cols {
		args = append(args, "--column", c)
	}
	if where != "" {
		args = append(args, "--where", where)
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			// like the Lance side, the dataset handle is opened before the
			// clock; the checkout of the latest version is timed
			d, err := snapshot.OpenDataset(ctx, ours)
			if err != nil {
				return Sample{}, err
			}
			defer d.Close()
			start := now()
			s, err := scan.New(ctx, d, scan.Options{Columns: cols, Filter: where, BatchSize: 64 << 10})
			if err != nil {
				return Sample{}, err
			}
			defer s.Close()
			rd := s.Reader(ctx)
			defer rd.Release()
			n := int64(0)
			for rd.Next() {
				n += rd.RecordBatch().NumRows()
			}
			if err := rd.Err(); err != nil {
				return Sample{}, err
			}
			_, b := s.BytesRead()
			return Sample{Time: since(start), Ops: 1, Metrics: map[string]float64{"bytes_read": float64(b), "rows": float64(n)}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			s, err := LanceTimed(ctx, p, args...)
			delete(s.Metrics, "ipc_bytes")
			return s, err
		},
	}, nil
}
