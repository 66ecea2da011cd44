package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine's logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startServe runs `lancekeeper serve` in the background until the test
// ends (or stop is called) and returns its base URL.
func startServe(t *testing.T, args ...string) (url string, logs *syncBuffer, stop func() int) {
	t.Helper()
	addr := freeLoopbackAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(&env{ctx: ctx, stdout: logs, stderr: logs}, append([]string{"serve", "--addr", addr}, args...))
	}()
	url = "http://" + addr
	for i := 0; ; i++ {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if i > 1000 {
			t.Fatalf("serve never answered: %s", logs.String())
		}
	}
	var once sync.Once
	code := 0
	stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { stop() })
	return url, logs, stop
}

func writeCSV(t *testing.T, path string, from, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("x,s\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%d,s%d\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServe_WriteThroughCoordinator: `serve` with a token, then `write
// --coordinator` creating and appending (data files written by the CLI,
// commits by the coordinator), `inspect` of the result, and a clean drain
// on shutdown.
func TestServe_WriteThroughCoordinator(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "lake")
	tokens := filepath.Join(tmp, "tokens")
	if err := os.WriteFile(tokens, []byte("# coordinator tokens\ncli-test-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, logs, stop := startServe(t, "--root", "lake="+root, "--tokens-file", tokens, "--log-format", "json")
	csv := filepath.Join(tmp, "in.csv")
	writeCSV(t, csv, 0, 50)
	ds := filepath.Join(root, "team", "events")

	code, _, errs := runCLI(t, "write", ds, "--from", csv, "--coordinator", url)
	if code != exitBadInput || !strings.Contains(errs, "unauthorized") {
		t.Fatalf("without a token: %d %s", code, errs)
	}
	t.Setenv(tokenEnv, "cli-test-token-0123456789")
	code, out, errs := runCLI(t, "write", ds, "--from", csv, "--coordinator", url, "--json")
	if code != exitOK {
		t.Fatalf("create: %d %s", code, errs)
	}
	var res writeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Version != 1 || res.Rows != 50 || res.Mode != "create" || len(res.FragmentIDs) != 1 {
		t.Fatalf("create: %+v", res)
	}
	writeCSV(t, csv, 50, 25)
	code, out, errs = runCLI(t, "write", ds, "--from", csv, "--coordinator", url)
	if code != exitOK || !strings.Contains(out, "committed version 2 (append, read version 1)") {
		t.Fatalf("append: %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "inspect", ds, "--json")
	if code != exitOK || !strings.Contains(out, `"version": 2`) {
		t.Fatalf("inspect: %d %s %s", code, out, errs)
	}
	// A dataset outside every root: a usage error unless named explicitly.
	elsewhere := filepath.Join(tmp, "elsewhere")
	code, _, errs = runCLI(t, "write", elsewhere, "--from", csv, "--coordinator", url)
	if code != exitBadInput || !strings.Contains(errs, "not under any root") {
		t.Fatalf("outside the roots: %d %s", code, errs)
	}
	// Named explicitly, but written elsewhere: the coordinator cannot see
	// the data files and refuses.
	code, _, errs = runCLI(t, "write", ds+"-copy", "--from", csv, "--coordinator", url, "--dataset-name", "team/events", "--mode", "append")
	if code != exitBadInput || !strings.Contains(errs, "has no manifest") {
		t.Fatalf("write to another place than the coordinator's: %d %s", code, errs)
	}
	if c := stop(); c != exitOK {
		t.Fatalf("serve exited with %d: %s", c, logs.String())
	}
	for _, want := range []string{`"msg":"coordinator serving"`, `"msg":"committed"`, `"msg":"drained"`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("logs lack %s:\n%s", want, logs.String())
		}
	}
}

// TestServe_RefusesOpenAddressWithoutTokens: no token and a non-loopback
// address is a usage error; the default root is ./lancekeeper-data.
func TestServe_RefusesOpenAddressWithoutTokens(t *testing.T) {
	t.Setenv(tokensEnv, "")
	for _, addr := range []string{"0.0.0.0:8470", ":8470"} {
		code, _, errs := runCLI(t, "serve", "--addr", addr)
		if code != exitBadInput || !strings.Contains(errs, "refusing to serve without bearer tokens") {
			t.Fatalf("%s: %d %s", addr, code, errs)
		}
	}
	code, _, errs := runCLI(t, "serve", "--log-level", "loud")
	if code != exitBadInput || !strings.Contains(errs, "--log-level") {
		t.Fatalf("%d %s", code, errs)
	}
	t.Setenv(tokensEnv, "short")
	code, _, errs = runCLI(t, "serve")
	if code != exitBadInput || !strings.Contains(errs, "shorter than") {
		t.Fatalf("short token: %d %s", code, errs)
	}
	// No configuration at all: serves ./lancekeeper-data on loopback.
	t.Setenv(tokensEnv, "")
	t.Chdir(t.TempDir())
	url, logs, stop := startServe(t)
	resp, err := http.Get(url + "/v1/roots")
	if err != nil {
		t.Fatal(err)
	}
	var roots struct {
		Roots []struct{ Name, URL string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&roots)
	resp.Body.Close()
	if len(roots.Roots) != 1 || roots.Roots[0].Name != "default" || !strings.HasSuffix(roots.Roots[0].URL, "/lancekeeper-data") {
		t.Fatalf("roots %+v", roots)
	}
	if stop() != exitOK || !strings.Contains(logs.String(), "no bearer tokens configured") {
		t.Fatalf("logs: %s", logs.String())
	}
}
