// Command bench runs lancekeeper and Lance 12 side by side on the same
// workloads, alternating A B A B for several rounds in one run, and prints
// each workload's median per operation and the ratio ours ÷ baseline (Lance 12
// through the node peer, or another baseline such as memcpy). On a noisy
// shared machine only such same-run ratios mean anything.
//
// Usage (from the repository root; the peer must be installed, see
// tests/peer/README.md):
//
//	go run ./tests/bench [-short] [-rounds N] [-only REGEXP] [-list] [-json FILE]
//
// -short shrinks every workload to a smoke size (one round unless -rounds is
// given): TestSmoke runs it to check that every workload still works. The
// full run is not part of .ci/run.
//
// # Adding a workload
//
// A workload lives in its own file tests/bench/work_<name>.go and registers
// itself from init:
//
//	func init() {
//		Register(Workload{
//			Name:  "scan/full",            // "group/case"; -only matches it
//			About: "one line for the table",
//			Base:  BaseLance,              // or another baseline's name, e.g. "memcpy"
//			Setup: func(ctx context.Context, env *Env) (*Pair, error) { ... },
//		})
//	}
//
// Setup runs once, before the rounds: it builds tables (cache expensive ones
// under env.Cache(), keyed by their shape, so later runs reuse them; scratch
// data goes under env.Temp()), starts processes, and returns a Pair. Each
// round calls Pair.Ours then Pair.Base (the order flips every round), each
// returning a Sample: the measured wall time of the round, the number of
// operations it covers, and optional extra metrics ("bytes", "requests",
// "cpu_s", …) that are summed per round and printed as medians per
// operation. Pair.Close (optional) releases what Setup made.
//
// The Lance side must be timed inside node, so that starting node and the
// JSON request do not count: env.Peer() is one long-lived serving peer
// (tests/peer/peer.mjs serve) and the bench-* commands of tests/peer/bench.mjs
// run an operation N times and report the elapsed nanoseconds measured in
// node (LanceTimed). env.Peers(n) gives n distinct serving peers (for
// multi-process workloads), env.Workers(n) n lancekeeper worker processes
// (this binary re-executed) running handlers registered with RegisterWorker.
//
// Env.Short says a smoke run is wanted: use small sizes then.
package main
