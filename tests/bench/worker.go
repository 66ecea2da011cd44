package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// envWorker, when set to "1", makes this binary (or the test binary) serve
// worker requests on stdin instead of running benchmarks.
const envWorker = "LANCEKEEPER_BENCH_WORKER"

// WorkerFunc handles one request in a worker process.
type WorkerFunc func(ctx context.Context, args json.RawMessage) (any, error)

// workerHandlers is filled by init functions before main runs.
var workerHandlers = map[string]WorkerFunc{}

// RegisterWorker makes fn callable in worker processes as name; call it from
// an init function. A handler that times something returns a TimedResult.
func RegisterWorker(name string, fn WorkerFunc) {
	if _, dup := workerHandlers[name]; dup {
		panic("bench: worker handler registered twice: " + name)
	}
	workerHandlers[name] = fn
}

// TimedResult is what a timed worker handler (and a bench-* command of the
// node peer) returns.
type TimedResult struct {
	NS      int64              `json:"ns"`
	Ops     int                `json:"ops"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Timed converts a Sample into its wire form.
func Timed(s Sample) TimedResult {
	return TimedResult{NS: s.Time.Nanoseconds(), Ops: s.Ops, Metrics: s.Metrics}
}

type workerRequest struct {
	Handler string          `json:"handler"`
	Args    json.RawMessage `json:"args"`
}

type workerReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Err    string          `json:"err,omitempty"`
}

// serveWorker answers requests from r on w, one JSON line each, until EOF.
func serveWorker(ctx context.Context, r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		var req workerRequest
		var rep workerReply
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			rep.Err = fmt.Sprintf("bad request: %v", err)
		} else if fn := workerHandlers[req.Handler]; fn == nil {
			rep.Err = fmt.Sprintf("no worker handler %q", req.Handler)
		} else if res, err := fn(ctx, req.Args); err != nil {
			rep.Err = err.Error()
		} else if b, err := json.Marshal(res); err != nil {
			rep.Err = err.Error()
		} else {
			rep.Result = b
		}
		line, _ := json.Marshal(rep)
		bw.Write(append(line, '\n'))
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Worker is a lancekeeper worker process (this binary re-executed).
type Worker struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// Workers starts n worker processes (stopped at the end of the run).
func (e *Env) Workers(n int) ([]*Worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []*Worker
	for range n {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envWorker+"=1")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("bench: starting worker: %w", err)
		}
		w := &Worker{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}
		e.mu.Lock()
		e.workers = append(e.workers, w)
		e.mu.Unlock()
		out = append(out, w)
	}
	return out, nil
}

// Call runs handler with args in the worker and decodes its result into out.
func (w *Worker) Call(ctx context.Context, handler string, args, out any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, err := json.Marshal(args)
	if err != nil {
		return err
	}
	req, _ := json.Marshal(workerRequest{Handler: handler, Args: a})
	if _, err := w.stdin.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("bench: worker %s: %w", handler, err)
	}
	line, err := w.stdout.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("bench: worker %s: reading reply: %w", handler, err)
	}
	var rep workerReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return fmt.Errorf("bench: worker %s: reply %.200q: %w", handler, line, err)
	}
	if rep.Err != "" {
		return fmt.Errorf("bench: worker %s: %s", handler, rep.Err)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(rep.Result, out)
}

// CallTimed runs a timed handler and returns its Sample.
func (w *Worker) CallTimed(ctx context.Context, handler string, args any) (Sample, error) {
	var r TimedResult
	if err := w.Call(ctx, handler, args, &r); err != nil {
		return Sample{}, err
	}
	return Sample{Time: time.Duration(r.NS), Ops: r.Ops, Metrics: r.Metrics}, nil
}

// Close ends the worker (EOF on its stdin) and waits for it.
func (w *Worker) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.stdin.Close()
	err := w.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("bench: worker exited: %w", err)
	}
	return err
}
