package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// BaseLance is the baseline name of workloads compared with Lance 12.
const BaseLance = "Lance 12"

// Workload is one side-by-side comparison.
type Workload struct {
	Name  string // "group/case", unique
	About string // one line: what one operation is
	Base  string // the baseline's name (BaseLance, "memcpy", …)
	// Setup prepares the workload once and returns its two sides.
	Setup func(ctx context.Context, env *Env) (*Pair, error)
}

// Pair is the two sides of a workload after Setup.
type Pair struct {
	Ours  func(ctx context.Context) (Sample, error)
	Base  func(ctx context.Context) (Sample, error)
	Close func() error // optional
}

// Sample is one round of one side.
type Sample struct {
	Time    time.Duration      // wall time of the round's operations
	Ops     int                // operations in the round (0 means 1)
	Metrics map[string]float64 // optional extra figures for the round (summed over its ops)
}

func (s Sample) ops() int {
	if s.Ops <= 0 {
		return 1
	}
	return s.Ops
}

// registry holds the workloads registered by init functions; it is filled
// before main runs and only read afterwards.
var registry []Workload

// Register adds a workload; call it from an init function.
func Register(w Workload) {
	if w.Name == "" || w.Setup == nil {
		panic("bench: Register needs Name and Setup")
	}
	for _, o := range registry {
		if o.Name == w.Name {
			panic("bench: workload registered twice: " + w.Name)
		}
	}
	registry = append(registry, w)
}

// Workloads returns the registered workloads sorted by name.
func Workloads() []Workload {
	out := slices.Clone(registry)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Env is what a workload's Setup may use.
type Env struct {
	Short  bool // smoke size wanted
	Rounds int
	Log    func(format string, args ...any)

	temp  string
	cache string

	mu      sync.Mutex
	peer    *peerlance.Peer
	peers   []*peerlance.Peer
	workers []*Worker
	closers []func() error
}

// Temp returns the run's scratch directory (removed at the end).
func (e *Env) Temp() string { return e.temp }

// Cache returns a directory kept across runs, outside the repository
// ($LANCEKEEPER_BENCH_CACHE, else the user cache dir + lancekeeper-bench),
// for tables that are expensive to build. Key subdirectories by shape.
func (e *Env) Cache() string { return e.cache }

// TempDir makes a fresh directory under Temp.
func (e *Env) TempDir(prefix string) (string, error) {
	return os.MkdirTemp(e.temp, prefix)
}

// Peer returns the run's shared serving Lance 12 peer (started on first use).
func (e *Env) Peer() (*peerlance.Peer, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.peer != nil {
		return e.peer, nil
	}
	p, err := startPeer()
	if err != nil {
		return nil, err
	}
	e.peer = p
	e.peers = append(e.peers, p)
	return p, nil
}

// Peers starts n more serving peers, one node process each (stopped at the
// end of the run).
func (e *Env) Peers(n int) ([]*peerlance.Peer, error) {
	out := make([]*peerlance.Peer, 0, n)
	for range n {
		p, err := startPeer()
		if err != nil {
			return nil, err
		}
		e.mu.Lock()
		e.peers = append(e.peers, p)
		e.mu.Unlock()
		out = append(out, p)
	}
	return out, nil
}

// OnClose registers fn to run at the end of the run.
func (e *Env) OnClose(fn func() error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closers = append(e.closers, fn)
}

func startPeer() (*peerlance.Peer, error) {
	p, err := peerlance.Find()
	if err != nil {
		return nil, err
	}
	return p.Serve()
}

func (e *Env) close() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	for _, w := range e.workers {
		errs = append(errs, w.Close())
	}
	for _, p := range e.peers {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// LanceTimed sends one bench-* command to a serving peer and returns the
// Sample measured inside node: the result document must carry "ns" (elapsed
// nanoseconds, as a number or decimal string), "ops", and optionally
// "metrics".
func LanceTimed(ctx context.Context, p *peerlance.Peer, args ...string) (Sample, error) {
	out, err := p.Run(ctx, args...)
	if err != nil {
		return Sample{}, err
	}
	return decodeTimed(out)
}

func decodeTimed(out []byte) (Sample, error) {
	var r struct {
		NS      json.Number        `json:"ns"`
		Ops     int                `json:"ops"`
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return Sample{}, fmt.Errorf("bench: timed result %.200q: %w", out, err)
	}
	ns, err := r.NS.Int64()
	if err != nil || ns < 0 {
		return Sample{}, fmt.Errorf("bench: timed result without a valid ns: %.200q", out)
	}
	return Sample{Time: time.Duration(ns), Ops: r.Ops, Metrics: r.Metrics}, nil
}

// Options configure Run.
type Options struct {
	Short  bool
	Rounds int            // 0: 5, or 1 when Short
	Only   *regexp.Regexp // nil: every workload
	Out    io.Writer      // the table
	Log    io.Writer      // progress lines (nil: none)
	Cache  string         // "" = default cache dir
}

// Result is one workload's outcome.
type Result struct {
	Name, About, Base string
	Rounds            int
	Ours, BaseSide    []Sample
	OursPerOp         time.Duration // median over rounds of time per op
	BasePerOp         time.Duration
	Ratio             float64            // OursPerOp / BasePerOp
	OursMetrics       map[string]float64 // median per op
	BaseMetrics       map[string]float64
	Err               error
}

// DefaultCache is the cache directory used when Options.Cache is empty.
func DefaultCache() string {
	if d := os.Getenv("LANCEKEEPER_BENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "lancekeeper-bench")
	}
	return filepath.Join(os.TempDir(), "lancekeeper-bench")
}

// Run runs the selected workloads and writes the table. It returns every
// workload's result; a failing workload is reported and the others run on.
func Run(ctx context.Context, o Options) ([]Result, error) {
	rounds := o.Rounds
	if rounds <= 0 {
		rounds = 5
		if o.Short {
			rounds = 1
		}
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	cache := o.Cache
	if cache == "" {
		cache = DefaultCache()
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("bench: cache: %w", err)
	}
	temp, err := os.MkdirTemp("", "lkbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(temp)
	env := &Env{Short: o.Short, Rounds: rounds, Log: logf, temp: temp, cache: cache}
	defer func() {
		if err := env.close(); err != nil {
			logf("closing: %v", err)
		}
	}()

	var results []Result
	for _, w := range Workloads() {
		if o.Only != nil && !o.Only.MatchString(w.Name) {
			continue
		}
		logf("== %s: setup", w.Name)
		r := runOne(ctx, env, w, rounds, logf)
		if r.Err != nil {
			logf("== %s: FAILED: %v", w.Name, r.Err)
		}
		results = append(results, r)
	}
	if o.Out != nil {
		writeTable(o.Out, results)
	}
	return results, nil
}

func runOne(ctx context.Context, env *Env, w Workload, rounds int, logf func(string, ...any)) (r Result) {
	r = Result{Name: w.Name, About: w.About, Base: w.Base, Rounds: rounds}
	pair, err := w.Setup(ctx, env)
	if err != nil {
		r.Err = fmt.Errorf("setup: %w", err)
		return r
	}
	if pair.Close != nil {
		defer func() {
			if err := pair.Close(); err != nil && r.Err == nil {
				r.Err = fmt.Errorf("close: %w", err)
			}
		}()
	}
	// One unrecorded round of each side first (not in -short): processes
	// just started (node loading Lance, workers) and cold caches would
	// otherwise land in the first recorded round.
	if !env.Short {
		for _, fn := range []func(context.Context) (Sample, error){pair.Ours, pair.Base} {
			if fn == nil {
				continue
			}
			if _, err := fn(ctx); err != nil {
				r.Err = fmt.Errorf("warm-up: %w", err)
				return r
			}
		}
		logf("   warm-up done")
	}
	for i := range rounds {
		sides := []struct {
			name string
			fn   func(context.Context) (Sample, error)
			dst  *[]Sample
		}{{"ours", pair.Ours, &r.Ours}, {"base", pair.Base, &r.BaseSide}}
		if i%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, s := range sides {
			if s.fn == nil {
				continue
			}
			smp, err := s.fn(ctx)
			if err != nil {
				r.Err = fmt.Errorf("round %d, %s: %w", i+1, s.name, err)
				return r
			}
			*s.dst = append(*s.dst, smp)
			logf("   round %d %-4s %12s for %d ops (%s/op)", i+1, s.name, smp.Time.Round(time.Microsecond), smp.ops(), perOp(smp))
		}
	}
	r.OursPerOp, r.OursMetrics = medians(r.Ours)
	r.BasePerOp, r.BaseMetrics = medians(r.BaseSide)
	if r.BasePerOp > 0 {
		r.Ratio = float64(r.OursPerOp) / float64(r.BasePerOp)
	}
	// Both sides measured CPU time: report the ratio of the medians too.
	if oc, bc := r.OursMetrics["cpu_s"], r.BaseMetrics["cpu_s"]; oc > 0 && bc > 0 {
		r.OursMetrics["cpu_ratio"] = oc / bc
	}
	return r
}

func perOp(s Sample) time.Duration { return s.Time / time.Duration(s.ops()) }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medians(ss []Sample) (time.Duration, map[string]float64) {
	if len(ss) == 0 {
		return 0, nil
	}
	var t []float64
	keys := map[string][]float64{}
	for _, s := range ss {
		t = append(t, float64(perOp(s)))
		for k, v := range s.Metrics {
			keys[k] = append(keys[k], v/float64(s.ops()))
		}
	}
	m := map[string]float64{}
	for k, v := range keys {
		m[k] = median(v)
	}
	return time.Duration(median(t)), m
}

func fmtMetrics(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%.4g", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func writeTable(out io.Writer, results []Result) {
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tbaseline\trounds\tours/op\tbase/op\tratio\tours metrics/op\tbase metrics/op")
	for _, r := range results {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%d\tFAILED: %v\t\t\t\t\n", r.Name, r.Base, r.Rounds, r.Err)
			continue
		}
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Base, r.Rounds,
			r.OursPerOp, r.BasePerOp, ratio, fmtMetrics(r.OursMetrics), fmtMetrics(r.BaseMetrics))
	}
	tw.Flush()
}

func now() time.Time                  { return time.Now() }
func since(t time.Time) time.Duration { return time.Since(t) }
