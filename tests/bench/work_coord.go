package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/coordinator"
	coordclient "github.com/lancekeeper/lancekeeper/coordinator/client"
	"github.com/lancekeeper/lancekeeper/store"
)

// coordWriters is the number of concurrent writers of commit/coord-32writers.
const coordWriters = 32

func init() {
	Register(Workload{
		Name: "commit/coord-32writers",
		About: "one 10-row append; 32 concurrent writers on one table: ours through the coordinator's group commit " +
			"(loopback HTTP, in-process), Lance's 32 concurrent Table.add calls in one node process",
		Base:  BaseLance,
		Setup: setupCoord,
	})
}

func setupCoord(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	dir, err := env.TempDir("coord-")
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "root")
	srv, err := coordinator.New(ctx, coordinator.Config{
		Roots:  []coordinator.Root{{URL: root}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	env.OnClose(func() error { cancel(); <-served; srv.Close(); return nil })
	client, err := coordclient.New("http://"+ln.Addr().String(), coordclient.Options{})
	if err != nil {
		return nil, err
	}
	recs := tripleBatches(0, 10, 10)
	ipc, err := writeIPC(dir, "rows10.arrow", recs)
	if err != nil {
		return nil, err
	}
	k := 8
	if env.Short {
		k = 1
	}
	round := 0
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			round++
			name := fmt.Sprintf("ours-%d", round)
			ds := filepath.Join(root, name)
			if err := createOurs(ctx, ds, recs); err != nil {
				return Sample{}, err
			}
			st, err := store.Open(ctx, ds)
			if err != nil {
				return Sample{}, err
			}
			defer st.Close()
			var wg sync.WaitGroup
			errs := make([]error, coordWriters)
			t0 := now()
			for w := range coordWriters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range k {
						rdr, err := reader(recs)
						if err != nil {
							errs[w] = err
							return
						}
						_, err = client.WriteArrow(ctx, st, name, rdr, commit.WriteOptions{Mode: commit.ModeAppend})
						rdr.Release()
						if err != nil {
							errs[w] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			el := since(t0)
			for _, err := range errs {
				if err != nil {
					return Sample{}, err
				}
			}
			return Sample{Time: el, Ops: coordWriters * k}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			round++
			ds := filepath.Join(dir, fmt.Sprintf("lance-%d.lance", round))
			if err := createLance(ctx, p, ds, ipc); err != nil {
				return Sample{}, err
			}
			return LanceTimed(ctx, p, "bench-append", ds, "--ipc", ipc, "--n", fmt.Sprint(k), "--writers", fmt.Sprint(coordWriters))
		},
		Close: func() error { releaseAll(recs); return nil },
	}, nil
}
