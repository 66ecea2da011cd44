package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// storageVersion is the data storage version of the benchmark tables, the
// same on both sides (Lance 12's and lancekeeper's default for new tables).
const storageVersion = "2.2"

// commitAppends is the number of 10-row appends per round (per process).
func commitAppends(env *Env) int {
	if env.Short {
		return 5
	}
	return 300
}

func init() {
	Register(Workload{
		Name:  "commit/append-1writer",
		About: "one 10-row append (data file + durable commit), 1 writer, local fs; cpu_s = CPU of the writing process",
		Base:  BaseLance,
		Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupCommit1(ctx, env, false) },
	})
	Register(Workload{
		Name:  "commit/append-1writer-inline",
		About: "commit/append-1writer with our opt-in commit.Options.InlineTransactionOnly (no .txn file; writer flag bit 5); Lance as in commit/append-1writer",
		Base:  BaseLance,
		Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupCommit1(ctx, env, true) },
	})
}

// appendOurs appends rec n times to the dataset at dir with WriteArrow.
func appendOurs(ctx context.Context, dir string, recs []arrow.RecordBatch, n int) (time.Duration, error) {
	return appendOursWith(ctx, dir, recs, n, commit.Options{})
}

// appendOursWith is appendOurs with commit options (MaxRetries is set here).
func appendOursWith(ctx context.Context, dir string, recs []arrow.RecordBatch, n int, co commit.Options) (time.Duration, error) {
	co.MaxRetries = 1000
	st, err := store.Open(ctx, dir)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	start := time.Now()
	for range n {
		rdr, err := reader(recs)
		if err != nil {
			return 0, err
		}
		_, err = commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeAppend, Commit: co})
		rdr.Release()
		if err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// createOurs creates a fresh dataset at dir holding recs.
func createOurs(ctx context.Context, dir string, recs []arrow.RecordBatch) error {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	rdr, err := reader(recs)
	if err != nil {
		return err
	}
	defer rdr.Release()
	_, err = commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: storageVersion})
	return err
}

// setupCommit1: inline selects our opt-in inline-only transactions.
func setupCommit1(ctx context.Context, env *Env, inline bool) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("commit1-")
	if err != nil {
		return nil, err
	}
	recs := tripleBatches(0, 10, 10)
	ipc, err := writeIPC(dir, "rows10.arrow", recs)
	if err != nil {
		return nil, err
	}
	n := commitAppends(env)
	round := 0
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			round++
			ds := filepath.Join(dir, fmt.Sprintf("ours-%d", round))
			if err := createOurs(ctx, ds, recs); err != nil {
				return Sample{}, err
			}
			c0 := processCPU()
			d, err := appendOursWith(ctx, ds, recs, n, commit.Options{InlineTransactionOnly: inline})
			// cpu_s: this process's CPU (user + system, the kernel's
			// work for the writes and fsyncs included) — less sensitive
			// to a loaded machine than the wall time.
			return Sample{Time: d, Ops: n, Metrics: map[string]float64{"cpu_s": (processCPU() - c0).Seconds()}}, err
		},
		Base: func(ctx context.Context) (Sample, error) {
			round++
			ds := filepath.Join(dir, fmt.Sprintf("lance-%d.lance", round))
			if err := createLance(ctx, p, ds, ipc); err != nil {
				return Sample{}, err
			}
			return LanceTimed(ctx, p, "bench-append", ds, "--ipc", ipc, "--n", fmt.Sprint(n))
		},
		Close: func() error { releaseAll(recs); return nil },
	}, nil
}

// createLance creates a table at ds with Lance 12 from an IPC file.
func createLance(ctx context.Context, p *peerlance.Peer, ds, ipc string) error {
	_, err := p.Create(ctx, ds, ipc, peerlance.CreateOptions{StorageVersion: storageVersion})
	return err
}
