package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"google.golang.org/protobuf/proto"
)

// openCommits is the number of append commits a table of the open
// workloads is built with (versions = openCommits + 1).
const openCommits = 10

func init() {
	for _, n := range []int{1_000, 10_000, 100_000} {
		Register(Workload{
			Name:  fmt.Sprintf("open/count-%dk-fragments", n/1000),
			About: fmt.Sprintf("open the latest version and count rows, %d fragments, %d versions, local fs, a fresh open each time", n, openCommits+1),
			Base:  BaseLance,
			Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupOpen(ctx, env, n) },
		})
	}
}

// countOurs opens the latest version of dir and counts its rows as Lance's
// countRows() does without a filter: physical rows minus deleted rows.
func countOurs(ctx context.Context, dir string) (uint64, error) {
	s, err := snapshot.Open(ctx, dir, snapshot.Options{})
	if err != nil {
		return 0, err
	}
	defer s.Dataset.Close()
	var n uint64
	for _, f := range s.Manifest().GetFragments() {
		n += f.GetPhysicalRows() - f.GetDeletionFile().GetNumDeletedRows()
	}
	return n, nil
}

// countRequests opens dir's latest version once through a counting bucket
// and returns the object-store requests it made (reads + stats + list
// pages).
func countRequests(ctx context.Context, dir string) (float64, error) {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	cb, b := newCountingBucket(st.Bucket())
	cst, err := store.FromBucket(b, st.KeyPrefix(), true)
	if err != nil {
		return 0, err
	}
	s, err := snapshot.NewDataset(dir, cst).Checkout(ctx, snapshot.Options{})
	if err != nil {
		return 0, err
	}
	if len(s.Manifest().GetFragments()) == 0 {
		return 0, fmt.Errorf("%s: no fragments", dir)
	}
	return float64(cb.total()), nil
}

// openTable returns a table of frags fragments (10 rows each) in the cache,
// building it when missing: one 10-row data file written by lancekeeper,
// hard-linked under a fresh name per fragment, the fragments appended in
// openCommits commits. Lance's countRows reads only the manifest, as ours
// does, so the links are never read; they make every fragment real.
func openTable(ctx context.Context, env *Env, frags int) (string, error) {
	dir := filepath.Join(env.Cache(), fmt.Sprintf("open-%s-%d.lance", storageVersion, frags))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	env.Log("   building %s (once; cached)", dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	recs := tripleBatches(0, 10, 10)
	defer releaseAll(recs)
	if err := createOurs(ctx, dir, recs); err != nil {
		return "", err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	defer st.Close()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		return "", err
	}
	proto0 := f.Manifest.GetFragments()[0]
	first := filepath.Join(dir, "data", proto0.GetFiles()[0].GetPath())
	body, err := os.ReadFile(first)
	if err != nil {
		return "", err
	}
	left := frags - 1
	for c := range openCommits {
		k := left / (openCommits - c)
		left -= k
		// A fresh source per commit: a file takes at most 65000 links on ext4.
		src := filepath.Join(env.Temp(), commit.NewDataFileName())
		if err := os.WriteFile(src, body, 0o644); err != nil {
			return "", err
		}
		var add []*pb.DataFragment
		var names []string
		for range k {
			name := commit.NewDataFileName()
			if err := os.Link(src, filepath.Join(dir, "data", name)); err != nil {
				return "", err
			}
			fr := proto.Clone(proto0).(*pb.DataFragment)
			fr.Id = 0
			fr.Files[0].Path = name
			add = append(add, fr)
			names = append(names, name)
		}
		info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			return "", err
		}
		txn := commit.NewAppend(info.Version, add)
		txn.MarkSeedFiles(false, names...)
		if _, err := commit.Commit(ctx, st, txn, commit.Options{}); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

func setupOpen(ctx context.Context, env *Env, frags int) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	if env.Short {
		frags = min(frags, 100)
	}
	dir, err := openTable(ctx, env, frags)
	if err != nil {
		return nil, err
	}
	want := uint64(frags * 10)
	// Opens per round: enough for a few hundred ms on either side.
	n := max(1, 20_000/frags)
	if env.Short {
		n = 1
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			start := now()
			for range n {
				got, err := countOurs(ctx, dir)
				if err != nil {
					return Sample{}, err
				}
				if got != want {
					return Sample{}, fmt.Errorf("counted %d rows, want %d", got, want)
				}
			}
			el := since(start)
			// One more open, untimed, through a counting bucket.
			reqs, err := countRequests(ctx, dir)
			if err != nil {
				return Sample{}, err
			}
			return Sample{Time: el, Ops: n, Metrics: map[string]float64{"requests": reqs * float64(n)}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			s, err := LanceTimed(ctx, p, "bench-count", dir, "--n", fmt.Sprint(n))
			if err == nil && uint64(s.Metrics["rows"]) != want*uint64(n) {
				err = fmt.Errorf("Lance counted %v rows over %d opens, want %d each", s.Metrics["rows"], n, want)
			}
			delete(s.Metrics, "rows")
			return s, err
		},
	}, nil
}
