package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// Maintenance workloads (issue 14): compaction of many small fragments and
// cleanup of many versions, ours against Lance 12's optimize() on an
// identical copy of the same table (built once by lancekeeper, copied per
// round for each side; copying is not timed).

func init() {
	Register(Workload{
		Name:  "maint/compact",
		About: "compact F fragments of 1000 rows into 1 Mi-row fragments (1000 fragments; 20 with -short)",
		Base:  BaseLance,
		Setup: setupCompact,
	})
	Register(Workload{
		Name:  "maint/cleanup",
		About: "clean up all but the latest of V versions, each an overwrite (1000 versions; 30 with -short)",
		Base:  BaseLance,
		Setup: setupCleanup,
	})
}

// buildTable writes a table at dir with lancekeeper: create, then more
// commits made by next (one per call).
func buildTable(ctx context.Context, dir string, frags int, overwrites int) error {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	recs := tripleBatches(0, 1000*frags, 1000)
	defer releaseAll(recs)
	rdr, err := reader(recs)
	if err != nil {
		return err
	}
	_, err = commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: storageVersion, MaxRowsPerFile: 1000})
	rdr.Release()
	if err != nil {
		return err
	}
	small := tripleBatches(0, 10, 10)
	defer releaseAll(small)
	for range overwrites {
		rdr, err := reader(small)
		if err != nil {
			return err
		}
		_, err = commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeOverwrite})
		rdr.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func setupCompact(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("compact-")
	if err != nil {
		return nil, err
	}
	frags := 1000
	if env.Short {
		frags = 20
	}
	src := filepath.Join(dir, "src.lance")
	if err := buildTable(ctx, src, frags, 0); err != nil {
		return nil, err
	}
	round := 0
	cp := func(side string) (string, error) {
		round++
		d := filepath.Join(dir, fmt.Sprintf("%s-%d.lance", side, round))
		return d, peerlance.CopyDir(src, d)
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			d, err := cp("ours")
			if err != nil {
				return Sample{}, err
			}
			st, err := store.Open(ctx, d)
			if err != nil {
				return Sample{}, err
			}
			defer st.Close()
			c0, t0 := processCPU(), time.Now()
			res, err := maint.Compact(ctx, st, maint.CompactOptions{})
			el, cpu := time.Since(t0), processCPU()-c0
			if err != nil {
				return Sample{}, err
			}
			if res.FragmentsRemoved != frags {
				err = fmt.Errorf("compacted %d fragments, want %d", res.FragmentsRemoved, frags)
			}
			return Sample{Time: el, Metrics: map[string]float64{"fragments_removed": float64(res.FragmentsRemoved), "cpu_s": cpu.Seconds()}}, err
		},
		Base: func(ctx context.Context) (Sample, error) {
			d, err := cp("lance")
			if err != nil {
				return Sample{}, err
			}
			return LanceTimed(ctx, p, "bench-optimize", d)
		},
	}, nil
}

func setupCleanup(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("cleanup-")
	if err != nil {
		return nil, err
	}
	versions := 1000
	if env.Short {
		versions = 30
	}
	src := filepath.Join(dir, "src.lance")
	if err := buildTable(ctx, src, 1, versions-1); err != nil {
		return nil, err
	}
	round := 0
	cp := func(side string) (string, error) {
		round++
		d := filepath.Join(dir, fmt.Sprintf("%s-%d.lance", side, round))
		return d, peerlance.CopyDir(src, d)
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			d, err := cp("ours")
			if err != nil {
				return Sample{}, err
			}
			st, err := store.Open(ctx, d)
			if err != nil {
				return Sample{}, err
			}
			defer st.Close()
			t0 := time.Now()
			res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: time.Now().Add(time.Second)})
			el := time.Since(t0)
			if err != nil {
				return Sample{}, err
			}
			if len(res.RemovedVersions) != versions-1 {
				return Sample{}, fmt.Errorf("removed %d versions, want %d", len(res.RemovedVersions), versions-1)
			}
			return Sample{Time: el, Metrics: map[string]float64{"versions_removed": float64(len(res.RemovedVersions)), "requests": float64(res.Requests)}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			d, err := cp("lance")
			if err != nil {
				return Sample{}, err
			}
			return LanceTimed(ctx, p, "bench-optimize", d, "--cleanup-older-than-ms", strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10))
		},
	}, nil
}
