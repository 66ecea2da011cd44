package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

// What v1 seeds cost a data-file write (issue 12: seeds on vs off ≤ 3 %
// wall and ≤ 10 % CPU; issue 17 item 4): both sides are lancekeeper writing
// the same 1 Mi rows {int64, float64, utf8} of write/1Mi-rows as a new
// table at storage version 2.2 (local fs, durable commit included); "ours"
// writes a v1 seed for every column, "base" writes none. The ratio column
// is the wall-time ratio, cpu_ratio (in ours' metrics) the ratio of the
// medians of the process CPU time per write. Every round starts after a
// forced garbage collection, so that one side's garbage is collected in its
// own rounds.
func init() {
	Register(Workload{
		Name:  "write/seeds-overhead",
		About: "write 1 Mi rows {int64, float64, utf8} at 2.2: v1 seeds on every column vs seeds off (both lancekeeper)",
		Base:  "seeds off",
		Setup: setupSeedsOverhead,
	})
}

func setupSeedsOverhead(ctx context.Context, env *Env) (*Pair, error) {
	dir, err := env.TempDir("seedsoverhead-")
	if err != nil {
		return nil, err
	}
	rows, n := 1<<20, 3
	if env.Short {
		rows, n = 1<<14, 1
	}
	recs := tripleBatches(0, rows, 64<<10)
	side := func(seeds bool) func(context.Context) (Sample, error) {
		out := filepath.Join(dir, "off")
		if seeds {
			out = filepath.Join(dir, "on")
		}
		write := func(ctx context.Context, recs []arrow.RecordBatch) error {
			if err := os.RemoveAll(out); err != nil {
				return err
			}
			st, err := store.Open(ctx, out)
			if err != nil {
				return err
			}
			defer st.Close()
			rdr, err := reader(recs)
			if err != nil {
				return err
			}
			defer rdr.Release()
			o := commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: storageVersion}
			if seeds {
				o.SeedAllColumns = true
				o.Commit.EnableZoneWriteSeeds = true
			}
			_, err = commit.WriteArrow(ctx, st, rdr, o)
			return err
		}
		return func(ctx context.Context) (Sample, error) {
			runtime.GC()
			c0, t0 := processCPU(), now()
			for range n {
				if err := write(ctx, recs); err != nil {
					return Sample{}, err
				}
			}
			el, cpu := since(t0), processCPU()-c0
			return Sample{Time: el, Ops: n, Metrics: map[string]float64{"bytes": float64(n) * dirBytes(out), "cpu_s": cpu.Seconds()}}, nil
		}
	}
	return &Pair{
		Ours:  side(true),
		Base:  side(false),
		Close: func() error { releaseAll(recs); return nil },
	}, nil
}
