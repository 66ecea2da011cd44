package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/store"
)

// maint/cleanup-10k-versions (issue 14, speed): cleanup of a table with
// 10,000 versions — ours (maint.Cleanup through a counting bucket: every
// list page, read, stat and delete) against Lance 12's cleanup
// (optimize({cleanupOlderThan}) in the node peer) on an identical copy.
// The table (create + 9,999 overwrites of 10 rows, so 9,999 versions,
// data files and transaction files go) is built once and cached; each
// round copies it for each side (not timed), keeping the files'
// modification times: both cleanups keep a file modified after the oldest
// kept manifest's timestamp.

func init() {
	Register(Workload{
		Name:  "maint/cleanup-10k-versions",
		About: "clean up all but the latest of 10,000 versions (each an overwrite; 200 with -short); object-store requests counted on our side",
		Base:  BaseLance,
		Setup: setupCleanup10k,
	})
}

// cleanupTable returns the cached table of n versions, building it once.
func cleanupTable(ctx context.Context, env *Env, n int) (string, error) {
	dir := filepath.Join(env.Cache(), fmt.Sprintf("cleanup-%s-%d.lance", storageVersion, n))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	env.Log("   building %s (once; cached)", dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	t0 := time.Now()
	if err := buildTable(ctx, dir, 1, n-1); err != nil {
		return "", err
	}
	env.Log("   built %d versions in %v", n, time.Since(t0).Round(time.Second))
	return dir, os.WriteFile(done, nil, 0o644)
}

func setupCleanup10k(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	versions := 10000
	if env.Short {
		versions = 200
	}
	src, err := cleanupTable(ctx, env, versions)
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("cleanup10k-")
	if err != nil {
		return nil, err
	}
	round := 0
	cp := func(side string) (string, error) {
		round++
		d := filepath.Join(dir, fmt.Sprintf("%s-%d.lance", side, round))
		return d, copyTreeKeepTimes(src, d)
	}
	left := func(d string) (int, error) {
		n := 0
		for _, sub := range []string{"_versions", "data", "_transactions"} {
			ents, err := os.ReadDir(filepath.Join(d, sub))
			if err != nil {
				return 0, err
			}
			n += len(ents)
		}
		return n, nil
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			d, err := cp("ours")
			if err != nil {
				return Sample{}, err
			}
			defer os.RemoveAll(d)
			raw, err := store.Open(ctx, d)
			if err != nil {
				return Sample{}, err
			}
			defer raw.Close()
			cb, b := newCountingBucket(raw.Bucket())
			st, err := store.FromBucket(b, raw.KeyPrefix(), true)
			if err != nil {
				return Sample{}, err
			}
			t0 := time.Now()
			res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: time.Now().Add(time.Second)})
			el := time.Since(t0)
			if err != nil {
				return Sample{}, err
			}
			if len(res.RemovedVersions) != versions-1 {
				return Sample{}, fmt.Errorf("removed %d versions, want %d", len(res.RemovedVersions), versions-1)
			}
			if n, err := left(d); err != nil || n > 4 {
				return Sample{}, fmt.Errorf("our cleanup left %d entries in _versions, data and _transactions (%v)", n, err)
			}
			return Sample{Time: el, Metrics: map[string]float64{
				"versions_removed": float64(len(res.RemovedVersions)),
				"files_removed":    float64(len(res.RemovedFiles)),
				"requests":         float64(cb.total() + cb.deletes.Load()),
				"list_pages":       float64(cb.lists.Load()),
				"reads":            float64(cb.reads.Load()),
				"stats":            float64(cb.stats.Load()),
				"deletes":          float64(cb.deletes.Load()),
			}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			d, err := cp("lance")
			if err != nil {
				return Sample{}, err
			}
			defer os.RemoveAll(d)
			s, err := LanceTimed(ctx, p, "bench-optimize", d, "--cleanup-older-than-ms", strconv.FormatInt(time.Now().Add(time.Second).UnixMilli(), 10))
			if err == nil {
				if n, lerr := left(d); lerr != nil || n > 4 {
					err = fmt.Errorf("Lance 12 left %d entries in _versions, data and _transactions (%v)", n, lerr)
				}
			}
			return s, err
		},
	}, nil
}

// copyTreeKeepTimes copies the directory tree src to dst (which must not
// exist), files keeping their modification times.
func copyTreeKeepTimes(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.Mkdir(target, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(target, fi.ModTime(), fi.ModTime())
	})
}
