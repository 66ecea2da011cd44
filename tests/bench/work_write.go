package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

func init() {
	for _, seeds := range []bool{false, true} {
		name, about := "write/1Mi-rows", "write 1 Mi rows {int64, float64, utf8} as a new table (overwrite), local fs"
		if seeds {
			name += "-seeds"
			about += "; ours with v1 seeds on every column, Lance without (it has none)"
		}
		Register(Workload{
			Name:  name,
			About: about,
			Base:  BaseLance,
			Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupWrite(ctx, env, seeds) },
		})
	}
}

// dirBytes is the size of the data files of dir.
func dirBytes(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(filepath.Join(dir, "data"), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return float64(n)
}

func setupWrite(ctx context.Context, env *Env, seeds bool) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("write-")
	if err != nil {
		return nil, err
	}
	rows := 1 << 20
	if env.Short {
		rows = 1 << 14
	}
	recs := tripleBatches(0, rows, 64<<10)
	ipc, err := writeIPC(dir, "rows.arrow", recs)
	if err != nil {
		return nil, err
	}
	ours := filepath.Join(dir, "ours")
	lance := filepath.Join(dir, "lance.lance")
	write := func(ctx context.Context, recs []arrow.RecordBatch) error {
		if err := os.RemoveAll(ours); err != nil {
			return err
		}
		st, err := store.Open(ctx, ours)
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
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			c0, t0 := processCPU(), now()
			if err := write(ctx, recs); err != nil {
				return Sample{}, err
			}
			el, cpu := since(t0), processCPU()-c0
			return Sample{Time: el, Ops: 1, Metrics: map[string]float64{"bytes": dirBytes(ours), "cpu_s": cpu.Seconds()}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			if err := os.RemoveAll(lance); err != nil {
				return Sample{}, err
			}
			s, err := LanceTimed(ctx, p, "bench-create", lance, "--ipc", ipc, "--storage-version", storageVersion)
			if err != nil {
				return Sample{}, err
			}
			if s.Metrics == nil {
				s.Metrics = map[string]float64{}
			}
			s.Metrics["bytes"] = dirBytes(lance)
			return s, nil
		},
		Close: func() error { releaseAll(recs); return nil },
	}, nil
}
