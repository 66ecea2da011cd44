package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// The seed collector against copying the column's buffers (memcpy), on
// the data of seedio's BenchmarkRatios: 1 Mi rows, 1 % nulls; float64 also
// 0.1 % NaNs of both signs; utf8 values of 8–24 bytes. The ratio is
// collector time ÷ memcpy time (targets: ≤ 1.25 for int64 and float64,
// i.e. ≥ 0.8× memcpy's throughput; ≤ 1.667 for utf8, ≥ 0.6×). Both sides
// also report the process CPU time of their rounds (cpu_s, hence cpu_ratio),
// which time slices lost to other processes on a loaded machine do not
// inflate.
func init() {
	for _, kind := range []string{"int64", "float64", "utf8"} {
		Register(Workload{
			Name:  "seeds/collector-" + kind,
			About: "Observe + AppendFinish of one v1 seed collector over a 1 Mi-row " + kind + " column",
			Base:  "memcpy",
			Setup: func(ctx context.Context, env *Env) (*Pair, error) { return setupSeeds(env, kind) },
		})
	}
}

func seedColumn(kind string, rows int) arrow.Array {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(1, 2))
	switch kind {
	case "int64":
		b := array.NewInt64Builder(mem)
		for range rows {
			if rng.IntN(100) == 0 {
				b.AppendNull()
				continue
			}
			b.Append(int64(rng.Uint64()))
		}
		return b.NewArray()
	case "float64":
		b := array.NewFloat64Builder(mem)
		for range rows {
			switch {
			case rng.IntN(100) == 0:
				b.AppendNull()
			case rng.IntN(1000) == 0:
				bits := uint64(0x7FF8_0000_0000_0000) | rng.Uint64()&0xF_FFFF
				if rng.IntN(2) == 0 {
					bits |= 1 << 63
				}
				b.Append(math.Float64frombits(bits))
			default:
				b.Append(rng.NormFloat64() * 1e6)
			}
		}
		return b.NewArray()
	default:
		b := array.NewStringBuilder(mem)
		buf := make([]byte, 32)
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		for range rows {
			if rng.IntN(100) == 0 {
				b.AppendNull()
				continue
			}
			n := 8 + rng.IntN(17)
			for j := range n {
				buf[j] = letters[rng.IntN(len(letters))]
			}
			b.BinaryBuilder.Append(buf[:n])
		}
		return b.NewArray()
	}
}

func setupSeeds(env *Env, kind string) (*Pair, error) {
	rows := 1 << 20
	if env.Short {
		rows = 1 << 12
	}
	arr := seedColumn(kind, rows)
	field := arrow.Field{Name: "c", Type: arr.DataType(), Nullable: true}
	var srcs, dsts [][]byte
	var bytes float64
	for _, b := range arr.Data().Buffers() {
		if b != nil {
			srcs = append(srcs, b.Bytes())
			dsts = append(dsts, make([]byte, b.Len()))
			bytes += float64(b.Len())
		}
	}
	// Enough repetitions for ~100 ms a side.
	n := 200
	if env.Short {
		n = 2
	}
	return &Pair{
		// Each round starts after a forced garbage collection on both sides,
		// so that the garbage of one side's round is not collected during
		// the other side's round (the collector's own garbage is collected
		// inside its own rounds). seedio's BenchmarkRatios measures the same
		// way (docs/benchmarks.md, "seed collector (session 22)").
		Ours: func(ctx context.Context) (Sample, error) {
			c, err := seedio.NewCollector(field, seedio.CollectorOptions{})
			if err != nil {
				return Sample{}, err
			}
			// The seed is appended to a destination buffer reused from
			// operation to operation (AppendFinish, as the data-file writer
			// calls it), as memcpy copies into destination buffers
			// allocated once.
			var dst []byte
			runtime.GC()
			c0, t0 := processCPU(), now()
			for range n {
				if err := c.Observe(arr); err != nil {
					return Sample{}, err
				}
				if dst, err = c.AppendFinish(dst[:0]); err != nil || len(dst) == 0 {
					return Sample{}, fmt.Errorf("finish: %v", err)
				}
			}
			el, cpu := since(t0), processCPU()-c0
			return Sample{Time: el, Ops: n, Metrics: map[string]float64{"bytes": bytes * float64(n), "cpu_s": cpu.Seconds()}}, nil
		},
		Base: func(ctx context.Context) (Sample, error) {
			runtime.GC()
			c0, t0 := processCPU(), now()
			for range n {
				for j := range srcs {
					copy(dsts[j], srcs[j])
				}
			}
			el, cpu := since(t0), processCPU()-c0
			return Sample{Time: el, Ops: n, Metrics: map[string]float64{"bytes": bytes * float64(n), "cpu_s": cpu.Seconds()}}, nil
		},
		Close: func() error { arr.Release(); return nil },
	}, nil
}
