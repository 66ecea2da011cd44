package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/store"
)

// envOp runs one of lancekeeper's operations alone, with no peer and no
// harness, for tests/bench/syscalls.sh to count its system calls under
// strace (Lance 12's side runs the peer's bench-* commands):
//
//	LANCEKEEPER_BENCH_OP=count   bench DIR N   N opens of the latest version + count rows
//	LANCEKEEPER_BENCH_OP=cleanup bench DIR     one cleanup of every version but the latest
//	LANCEKEEPER_BENCH_OP=append  bench DIR N   a new table at DIR, then N durable 10-row appends
//	                                           (commit/append-1writer's work; prints user and system CPU)
//	LANCEKEEPER_BENCH_OP=none    bench         nothing (the process's own start and exit)
const envOp = "LANCEKEEPER_BENCH_OP"

func runOp(ctx context.Context, op string, args []string) error {
	switch op {
	case "none":
		return nil
	case "count":
		if len(args) != 2 {
			return fmt.Errorf("count wants DIR N")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		var rows uint64
		for range n {
			if rows, err = countOurs(ctx, args[0]); err != nil {
				return err
			}
		}
		fmt.Printf("{\"ops\":%d,\"rows\":%d}\n", n, rows)
		return nil
	case "append":
		if len(args) != 2 {
			return fmt.Errorf("append wants DIR N")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return err
		}
		recs := tripleBatches(0, 10, 10)
		defer releaseAll(recs)
		if err := createOurs(ctx, args[0], recs); err != nil {
			return err
		}
		u0, s0 := processCPUSplit()
		d, err := appendOurs(ctx, args[0], recs, n)
		if err != nil {
			return err
		}
		u1, s1 := processCPUSplit()
		per := func(x time.Duration) float64 { return x.Seconds() / float64(max(n, 1)) * 1e3 }
		fmt.Printf("{\"ops\":%d,\"wall_ms_per_op\":%.3f,\"user_ms_per_op\":%.3f,\"sys_ms_per_op\":%.3f}\n", n, per(d), per(u1-u0), per(s1-s0))
		return nil
	case "cleanup":
		if len(args) != 1 {
			return fmt.Errorf("cleanup wants DIR")
		}
		st, err := store.Open(ctx, args[0])
		if err != nil {
			return err
		}
		defer st.Close()
		res, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: time.Now().Add(time.Second)})
		if err != nil {
			return err
		}
		fmt.Printf("{\"versions_removed\":%d,\"files_removed\":%d}\n", len(res.RemovedVersions), len(res.RemovedFiles))
		return nil
	}
	return fmt.Errorf("unknown %s=%q (count, append, cleanup, none)", envOp, op)
}

func mainOp(op string) {
	if err := runOp(context.Background(), op, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench op:", err)
		os.Exit(1)
	}
}
