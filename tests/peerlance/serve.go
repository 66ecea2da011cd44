package peerlance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// session is one `peer.mjs serve` process: requests and responses are JSON
// lines on its stdin and stdout, answered in order.
type session struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailBuffer
	broken error
}

// Serve starts one long-lived driver process and returns a Peer that sends
// every command without stdin to it (commands are answered one at a time).
// That saves starting node and loading Lance per command. Lance's in-process
// caches then live across commands; a test that rewrites a dataset's files in
// place (rather than adding new ones, as Lance and lancekeeper do) should use
// the one-shot Peer. Close the returned Peer when done.
func (p *Peer) Serve() (*Peer, error) {
	cmd := exec.Command(p.Node, p.Driver, "serve")
	cmd.Env = append(os.Environ(), EnvModules+"="+p.Modules, "NO_COLOR=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("peerlance: serve stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("peerlance: serve stdout: %w", err)
	}
	tail := &tailBuffer{max: 64 << 10}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("peerlance: starting %s %s serve: %w", p.Node, p.Driver, err)
	}
	s := &session{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<20), stderr: tail}
	return &Peer{Node: p.Node, Driver: p.Driver, Modules: p.Modules, sess: s}, nil
}

// Close stops a serving Peer's driver process; on other Peers it does nothing.
func (p *Peer) Close() error {
	if p.sess == nil {
		return nil
	}
	s := p.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = errors.New("peerlance: serving peer is closed")
	}
	_ = s.stdin.Close()
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		return nil // killed after a cancelled request
	}
	if err != nil {
		return fmt.Errorf("peerlance: serve exited: %w (stderr %s)", err, s.stderr.String())
	}
	return nil
}

// ServeForTest is ForTest followed by Serve, closed when t ends.
func ServeForTest(t testing.TB) *Peer {
	t.Helper()
	p := ForTest(t)
	s, err := p.Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing serving peer: %v", err)
		}
	})
	return s
}

func (s *session) run(ctx context.Context, args []string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: s.stderr.String(), Err: s.broken}
	}
	req, err := json.Marshal(args)
	if err != nil {
		return nil, &DriverError{Args: args, ExitCode: -1, Err: err}
	}
	type reply struct {
		line []byte
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		if _, err := s.stdin.Write(append(req, '\n')); err != nil {
			done <- reply{err: fmt.Errorf("writing request: %w", err)}
			return
		}
		line, err := s.stdout.ReadBytes('\n')
		done <- reply{line: line, err: err}
	}()
	var r reply
	select {
	case r = <-done:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-done
		s.broken = fmt.Errorf("serving peer killed: %w", ctx.Err())
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: s.stderr.String(), Err: ctx.Err()}
	}
	if r.err != nil {
		s.broken = fmt.Errorf("serving peer died: %w", r.err)
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: s.stderr.String(), Err: s.broken}
	}
	var resp struct {
		Code   int             `json:"code"`
		Result json.RawMessage `json:"result"`
		Stderr string          `json:"stderr"`
	}
	if err := json.Unmarshal(r.line, &resp); err != nil {
		s.broken = fmt.Errorf("undecodable response %.300q: %w", r.line, err)
		return nil, &DriverError{Args: args, ExitCode: -1, Stderr: s.stderr.String(), Err: s.broken}
	}
	if resp.Code == 0 {
		return resp.Result, nil
	}
	return nil, failure(args, resp.Code, resp.Result, resp.Stderr, nil)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if extra := b.buf.Len() - b.max; extra > 0 {
		b.buf.Next(extra)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
