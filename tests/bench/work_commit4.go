package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
)

// procs is the number of racing writer processes of commit/append-4proc.
const procs = 4

func init() {
	Register(Workload{
		Name:  "commit/append-4proc",
		About: "one 10-row append; 4 processes race on one table, each its own appends (retries included), local fs",
		Base:  BaseLance,
		Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupCommit4(ctx, env, false) },
	})
	Register(Workload{
		Name:  "commit/append-4proc-inline",
		About: "commit/append-4proc with our opt-in commit.Options.InlineTransactionOnly (no .txn file; writer flag bit 5); Lance as in commit/append-4proc",
		Base:  BaseLance,
		Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupCommit4(ctx, env, true) },
	})
	RegisterWorker("append", workerAppend)
}

type appendArgs struct {
	Dir   string `json:"dir"`
	N     int    `json:"n"`
	Start int    `json:"start"`
	// Inline: commit.Options.InlineTransactionOnly.
	Inline bool `json:"inline,omitempty"`
}

// workerAppend appends N 10-row batches to Dir with WriteArrow and reports
// the time measured in the worker.
func workerAppend(ctx context.Context, raw json.RawMessage) (any, error) {
	var a appendArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	recs := tripleBatches(a.Start, 10, 10)
	defer releaseAll(recs)
	d, err := appendOursWith(ctx, a.Dir, recs, a.N, commit.Options{InlineTransactionOnly: a.Inline})
	if err != nil {
		return nil, err
	}
	return Timed(Sample{Time: d, Ops: a.N}), nil
}

// setupCommit4: inline selects our opt-in inline-only transactions.
func setupCommit4(ctx context.Context, env *Env, inline bool) (*Pair, error) {
	workers, err := env.Workers(procs)
	if err != nil {
		return nil, err
	}
	peers, err := env.Peers(procs)
	if err != nil {
		return nil, err
	}
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("commit4-")
	if err != nil {
		return nil, err
	}
	recs := tripleBatches(0, 10, 10)
	ipc, err := writeIPC(dir, "rows10.arrow", recs)
	if err != nil {
		return nil, err
	}
	n := 50
	if env.Short {
		n = 3
	}
	round := 0
	// race runs one call per process at once; the round's time is the
	// wall time from the first start to the last finish.
	race := func(ctx context.Context, call func(ctx context.Context, i int) (Sample, error)) (Sample, error) {
		var wg sync.WaitGroup
		errs := make([]error, procs)
		ops := make([]int, procs)
		start := time.Now()
		for i := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := call(ctx, i)
				errs[i], ops[i] = err, s.ops()
			}()
		}
		wg.Wait()
		el := time.Since(start)
		total := 0
		for i := range procs {
			if errs[i] != nil {
				return Sample{}, errs[i]
			}
			total += ops[i]
		}
		return Sample{Time: el, Ops: total}, nil
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			round++
			ds := filepath.Join(dir, fmt.Sprintf("ours-%d", round))
			if err := createOurs(ctx, ds, recs); err != nil {
				return Sample{}, err
			}
			return race(ctx, func(ctx context.Context, i int) (Sample, error) {
				return workers[i].CallTimed(ctx, "append", appendArgs{Dir: ds, N: n, Start: i * 1000, Inline: inline})
			})
		},
		Base: func(ctx context.Context) (Sample, error) {
			round++
			ds := filepath.Join(dir, fmt.Sprintf("lance-%d.lance", round))
			if err := createLance(ctx, p, ds, ipc); err != nil {
				return Sample{}, err
			}
			return race(ctx, func(ctx context.Context, i int) (Sample, error) {
				return LanceTimed(ctx, peers[i], "bench-append", ds, "--ipc", ipc, "--n", fmt.Sprint(n))
			})
		},
		Close: func() error { releaseAll(recs); return nil },
	}, nil
}
