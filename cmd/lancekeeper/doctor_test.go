package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
)

// checkThenPut is a store whose conditional create is a check followed by a
// put, as on an S3-compatible server whose If-None-Match does not hold under
// concurrency. It still declares an atomic create, as such a server would.
type checkThenPut struct{ *store.Store }

func (c checkThenPut) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	ok, err := c.Exists(ctx, key)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("check-then-put %q: %w", key, store.ErrAlreadyExists)
	}
	time.Sleep(time.Millisecond) // widen the window between check and put
	return c.Put(ctx, key, data)
}

// ignoresPrecondition is a server that ignores If-None-Match entirely.
type ignoresPrecondition struct{ *store.Store }

func (i ignoresPrecondition) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	return i.Put(ctx, key, data)
}

// brokenDoctor probes a memory store through wrap instead of the store the
// URL names.
func brokenDoctor(wrap func(*store.Store) store.Target) doctorFunc {
	return func(ctx context.Context, _ string, opts store.DoctorOptions) (*store.DoctorReport, error) {
		s, err := store.Open(ctx, "mem://broken")
		if err != nil {
			return nil, err
		}
		defer s.Close()
		return store.DoctorTarget(ctx, wrap(s), opts)
	}
}

func runDoctorWith(t *testing.T, probe doctorFunc, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runDoctor(&env{ctx: context.Background(), stdout: &out, stderr: &errb}, args, probe)
	return code, out.String(), errb.String()
}

func TestDoctorCLI_LocalStorePasses(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "doctor", dir, "--rounds", "5", "--contenders", "4")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
	}
	for _, want := range []string{"GUARANTEE", "RESULT", store.CheckRace, "PASS: safe for commits", "(local)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") || errs != "" {
		t.Errorf("unexpected failure output:\n%s\nstderr: %s", out, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("doctor left %v behind", entries)
	}
}

func TestDoctorCLI_JSON(t *testing.T) {
	code, out, errs := runCLI(t, "doctor", "mem://", "--json", "--rounds", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got doctorJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !got.OK || got.Kind != "memory" || got.Rounds != 2 || got.Contenders != 8 || !got.Guarantees.AtomicCreate || len(got.Checks) != 7 {
		t.Errorf("unexpected report %+v", got)
	}
	for _, c := range got.Checks {
		if c.Result != "PASS" || c.Guarantee == "" || c.Detail == "" {
			t.Errorf("check %+v", c)
		}
	}
	// The documented keys (docs/cli.md) are present.
	var raw map[string]any
	_ = json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"store", "kind", "ok", "probe_prefix", "contenders", "rounds", "shared_client", "guarantees", "checks"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("doctor --json lacks %q", k)
		}
	}
}

// A store whose conditional create is a check then a put, and one that
// ignores the precondition: the table says FAIL, one line on stderr names
// the failed guarantee, exit code 1.
func TestDoctorCLI_BrokenStoreFails(t *testing.T) {
	cases := []struct {
		name   string
		wrap   func(*store.Store) store.Target
		failed []string
	}{
		{"check-then-put", func(s *store.Store) store.Target { return checkThenPut{s} }, []string{store.CheckRace}},
		{"ignores-precondition", func(s *store.Store) store.Target { return ignoresPrecondition{s} }, []string{store.CheckRefuse, store.CheckRace}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runDoctorWith(t, brokenDoctor(tc.wrap), "s3://pretend-bucket/x", "--rounds", "4")
			if code != exitFailure {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailure, out, errs)
			}
			if !strings.Contains(out, "FAIL: do not commit to this store") {
				t.Errorf("table does not say FAIL:\n%s", out)
			}
			if n := strings.Count(errs, "\n"); n != 1 || !strings.HasPrefix(errs, "lancekeeper doctor: ") {
				t.Errorf("stderr is not one line: %q", errs)
			}
			for _, g := range tc.failed {
				if !strings.Contains(errs, g+" (FAIL)") {
					t.Errorf("stderr does not name %q: %s", g, errs)
				}
			}
			if strings.Contains(errs, store.CheckList) {
				t.Errorf("stderr names a passing check: %s", errs)
			}
			code, out, _ = runDoctorWith(t, brokenDoctor(tc.wrap), "mem://", "--rounds", "4", "--json")
			var got doctorJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitFailure || got.OK {
				t.Fatalf("--json: exit %d ok %v err %v\n%s", code, got.OK, err, out)
			}
		})
	}
}

func TestDoctorCLI_HelpExitsZero(t *testing.T) {
	code, out, errs := runCLI(t, "doctor", "-h")
	if code != exitOK || out != "" || !strings.Contains(errs, "usage: lancekeeper doctor URL") || !strings.Contains(errs, "-contenders") {
		t.Fatalf("doctor -h: exit %d stdout %q stderr %q", code, out, errs)
	}
}

func TestDoctorCLI_BadInput(t *testing.T) {
	for _, args := range [][]string{
		{"doctor"},
		{"doctor", "a", "b"},
		{"doctor", "ftp://host/x"},
		{"doctor", "mem://", "--rounds", "-3"},
		{"doctor", "mem://", "--rounds", "1001"},
		{"doctor", "mem://", "--contenders", "1"},
		{"doctor", "mem://", "--contenders", "0"},
		{"doctor", "mem://", "--no-such-flag"},
		{"doctor", "s3://"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != exitBadInput {
			t.Errorf("%q: exit %d, want %d\n%s\n%s", args, code, exitBadInput, out, errs)
		}
		if out != "" {
			t.Errorf("%q: stdout %q", args, out)
		}
	}
}
