package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
)

func main() {
	if op := os.Getenv(envOp); op != "" {
		mainOp(op)
		return
	}
	if os.Getenv(envWorker) == "1" {
		if err := serveWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		return
	}
	short := flag.Bool("short", false, "smoke sizes, one round unless -rounds")
	rounds := flag.Int("rounds", 0, "A B rounds per workload (default 5, or 1 with -short)")
	only := flag.String("only", "", "run only workloads whose name matches this regexp")
	list := flag.Bool("list", false, "list the workloads and exit")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	quiet := flag.Bool("q", false, "no progress lines")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process (the lancekeeper side) to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if *list {
		for _, w := range Workloads() {
			fmt.Printf("%-32s vs %-10s %s\n", w.Name, w.Base, w.About)
		}
		return
	}
	o := Options{Short: *short, Rounds: *rounds, Out: os.Stdout}
	if !*quiet {
		o.Log = os.Stderr
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -only:", err)
			os.Exit(2)
		}
		o.Only = re
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(jsonResults(res), "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
	for _, r := range res {
		if r.Err != nil {
			pprof.StopCPUProfile()
			os.Exit(1)
		}
	}
}

type jsonResult struct {
	Name        string             `json:"name"`
	Base        string             `json:"base"`
	Rounds      int                `json:"rounds"`
	OursNSPerOp int64              `json:"ours_ns_per_op"`
	BaseNSPerOp int64              `json:"base_ns_per_op"`
	Ratio       float64            `json:"ratio"`
	OursMetrics map[string]float64 `json:"ours_metrics,omitempty"`
	BaseMetrics map[string]float64 `json:"base_metrics,omitempty"`
	Error       string             `json:"error,omitempty"`
}

func jsonResults(rs []Result) []jsonResult {
	var out []jsonResult
	for _, r := range rs {
		j := jsonResult{Name: r.Name, Base: r.Base, Rounds: r.Rounds, OursNSPerOp: r.OursPerOp.Nanoseconds(),
			BaseNSPerOp: r.BasePerOp.Nanoseconds(), Ratio: r.Ratio, OursMetrics: r.OursMetrics, BaseMetrics: r.BaseMetrics}
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		out = append(out, j)
	}
	return out
}
