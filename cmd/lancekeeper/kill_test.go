package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// killHelperEnv makes the test binary run one lancekeeper command (its
// arguments separated by \x1f) in TestKillHelperProcess and exit, so a
// test can SIGKILL a real process mid-command.
const killHelperEnv = "LANCEKEEPER_KILL_HELPER"

// TestKillHelperProcess is not a test: it is the helper process of
// TestKill9_CompactAndCleanup (it does nothing without killHelperEnv).
func TestKillHelperProcess(t *testing.T) {
	args := os.Getenv(killHelperEnv)
	if args == "" {
		return
	}
	fmt.Fprintln(os.Stderr, "helper: started")
	os.Exit(run(&env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}, strings.Split(args, "\x1f")))
}

// startHelper starts the test binary as a helper running args and
// returns once the helper is about to run the command (process start-up
// is over).
func startHelper(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelperProcess$")
	cmd.Env = append(os.Environ(), killHelperEnv+"="+strings.Join(args, "\x1f"))
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(errp)
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, "helper: started") {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			t.Fatalf("helper ended before starting: %v", err)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return cmd
}

// TestKill9_CompactAndCleanup (issue 14: kill -9 at random points of
// compact and cleanup): a helper process compacting (or cleaning up) a
// copy of one table is SIGKILLed after a random delay, for several seeds.
// Afterwards the table opens at its last good version (the one before, or
// the compaction's), `check` finds nothing missing in any version left,
// Lance 12 counts every live row, and the command run again to the end
// leaves a table Lance 12 still reads.
func TestKill9_CompactAndCleanup(t *testing.T) {
	p, err := peerlance.ForTest(t).Serve()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base.lance")
	csv := filepath.Join(tmp, "in.csv")
	rows := 0
	for i := 0; i < 24; i++ {
		writeCSV(t, csv, i*300, 300)
		mode := "append"
		switch {
		case i == 0:
			mode = "create"
		case i == 8 || i == 16:
			mode = "overwrite" // files only old versions reference, for cleanup
			rows = 0
		}
		if code, _, errs := runCLI(t, "write", base, "--from", csv, "--mode", mode); code != exitOK {
			t.Fatalf("write %d: %d %s", i, code, errs)
		}
		rows += 300
	}
	if code, _, errs := runCLI(t, "delete", base, "--where", "x < 200 OR (x >= 2500 AND x < 2600) OR x = 7000"); code != exitOK {
		t.Fatalf("delete: %d %s", code, errs)
	}
	latest := func(dir string) uint64 {
		st, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, info, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatalf("%s does not open after the kill: %v", dir, err)
		}
		return info.Version
	}
	baseVersion := latest(base)
	_, want, err := p.Count(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // every file older than the cleanup cutoff
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"compact", []string{"compact", "", "--target-rows-per-fragment", "2000", "--max-rows-per-group", "100"}},
		{"cleanup", []string{"cleanup", "", "--older-than", "1ms", "--delete-unverified"}},
	} {
		// An uninterrupted run times the command; the kills fall anywhere
		// in it (and a little after).
		ref := filepath.Join(tmp, tc.name+"-ref.lance")
		if err := peerlance.CopyDir(base, ref); err != nil {
			t.Fatal(err)
		}
		args := append([]string(nil), tc.args...)
		args[1] = ref
		cmd := startHelper(t, args...)
		start := time.Now()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s uninterrupted: %v", tc.name, err)
		}
		span := time.Since(start)
		t.Logf("%s uninterrupted: %v", tc.name, span)
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) {
				dir := filepath.Join(tmp, fmt.Sprintf("%s-%d.lance", tc.name, seed))
				if err := peerlance.CopyDir(base, dir); err != nil {
					t.Fatal(err)
				}
				args := append([]string(nil), tc.args...)
				args[1] = dir
				delay := time.Duration(rand.New(rand.NewPCG(seed, 14)).Int64N(int64(span) * 11 / 10))
				cmd := startHelper(t, args...)
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
				v := latest(dir)
				left, _ := os.ReadDir(filepath.Join(dir, manifest.VersionsDir))
				dataLeft, _ := os.ReadDir(filepath.Join(dir, manifest.DataDir))
				if v != baseVersion && !(tc.name == "compact" && v == baseVersion+1) {
					t.Fatalf("killed after %v: latest version %d, want %d (or the compaction's)", delay, v, baseVersion)
				}
				if code, out, errs := runCLI(t, "check", dir, "--all-versions"); code != exitOK {
					t.Fatalf("killed after %v (version %d): check: %d %s %s", delay, v, code, out, errs)
				}
				if _, n, err := p.Count(ctx, dir); err != nil || n != want {
					t.Fatalf("killed after %v (version %d): Lance 12 counts %d rows (%v), want %d", delay, v, n, err, want)
				}
				// Run again to the end: the table is still sound.
				if code, out, errs := runCLI(t, args...); code != exitOK {
					t.Fatalf("%s again: %d %s %s", tc.name, code, out, errs)
				}
				if code, out, errs := runCLI(t, "check", dir); code != exitOK {
					t.Fatalf("check after %s again: %d %s %s", tc.name, code, out, errs)
				}
				if _, n, err := p.Count(ctx, dir); err != nil || n != want {
					t.Fatalf("after %s again: Lance 12 counts %d rows (%v), want %d", tc.name, n, err, want)
				}
				t.Logf("killed after %v at version %d (%d entries in _versions, %d data files)", delay, v, len(left), len(dataLeft))
			})
		}
	}
}
