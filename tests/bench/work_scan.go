package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// scanRows is the size of the scan workload's table.
const scanRows = 1 << 20

func init() {
	Register(Workload{
		Name:  "scan/full-column-1Mi",
		About: "full scan of one float64 column of a 1 Mi-row 2.2 table Lance 12 wrote (8 fragments); ours: scan.Reader; Lance: query().select([x]) batches as Arrow IPC",
		Base:  BaseLance,
		Setup: setupScan,
	})
}

// scanTable returns a cached table Lance 12 wrote: tripleBatches rows in
// 8 fragments at storageVersion.
func scanTable(ctx context.Context, env *Env, p *peerlance.Peer, rows int) (string, error) {
	dir := filepath.Join(env.Cache(), fmt.Sprintf("scan-%s-%d.lance", storageVersion, rows))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	env.Log("   building %s (once; cached)", dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	per := rows / 8
	for f := 0; f < 8; f++ {
		recs := tripleBatches(f*per, per, 64<<10)
		ipc, err := writeIPC(env.Temp(), fmt.Sprintf("scan%d.arrow", f), recs)
		releaseAll(recs)
		if err != nil {
			return "", err
		}
		if f == 0 {
			_, err = p.Create(ctx, dir, ipc, peerlance.CreateOptions{StorageVersion: storageVersion})
		} else {
			_, err = p.Append(ctx, dir, ipc)
		}
		os.Remove(ipc)
		if err != nil {
			return "", err
		}
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

func setupScan(ctx context.Context, env *Env) (*Pair, error) {
	p, err := env.Peer()
	if err != nil {
		return nil, err
	}
	rows := scanRows
	if env.Short {
		rows = 8 << 10
	}
	dir, err := scanTable(ctx, env, p, rows)
	if err != nil {
		return nil, err
	}
	return &Pair{
		Ours: func(ctx context.Context) (Sample, error) {
			start := now()
			d, err := snapshot.OpenDataset(ctx, dir)
			if err != nil {
				return Sample{}, err
			}
			defer d.Close()
			s, err := scan.New(ctx, d, scan.Options{Columns: []string{"x"}, BatchSize: 64 << 10})
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
			if n != int64(rows/8*8) {
				return Sample{}, fmt.Errorf("scanned %d rows, want %d", n, rows/8*8)
			}
			_, b := s.BytesRead()
			return Sample{Time: since(start), Ops: 1, Metrics: map[string]float64{"bytes": float64(b)}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			s, err := LanceTimed(ctx, p, "bench-scan", dir, "--column", "x", "--n", "1")
			delete(s.Metrics, "ipc_bytes")
			return s, err
		},
	}, nil
}
