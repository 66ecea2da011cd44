package store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
)

// Environment of the re-executed test binary in the cross-process race.
const (
	envRaceChild  = "LANCEKEEPER_STORE_RACE_CHILD" // process index
	envRaceDir    = "LANCEKEEPER_STORE_RACE_DIR"
	envRaceRounds = "LANCEKEEPER_STORE_RACE_ROUNDS"
	envRaceGor    = "LANCEKEEPER_STORE_RACE_GOROUTINES"
)

func racePayload(round, proc, g int) string {
	return fmt.Sprintf("round %d process %d goroutine %d", round, proc, g)
}

// The local create-if-absent is atomic across processes: 4 processes x 4
// goroutines race on one key per round; exactly one of the 16 wins each
// round and the file holds the winner's bytes. Rounds start on a shared
// clock so every round is contended.
func TestLocalCreateIfAbsentCrossProcess(t *testing.T) {
	if os.Getenv(envRaceChild) != "" {
		raceChild(t)
		return
	}
	const procs, gor, rounds = 4, 4, 40
	dir := t.TempDir()
	type child struct {
		cmd    *exec.Cmd
		stdout *bufio.Scanner
		out    bytes.Buffer
		stderr bytes.Buffer
	}
	children := make([]*child, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLocalCreateIfAbsentCrossProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(),
			envRaceChild+"="+strconv.Itoa(p), envRaceDir+"="+dir,
			envRaceRounds+"="+strconv.Itoa(rounds), envRaceGor+"="+strconv.Itoa(gor))
		c := &child{cmd: cmd}
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = &c.stderr
		c.stdout = bufio.NewScanner(pipe)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[p] = c
	}
	// Wait until every child is ready, then publish the start time.
	for p, c := range children {
		ready := false
		for c.stdout.Scan() {
			line := c.stdout.Text()
			c.out.WriteString(line + "\n")
			if line == "ready" {
				ready = true
				break
			}
		}
		if !ready {
			c.cmd.Wait()
			t.Fatalf("child %d never got ready:\n%s\n%s", p, c.out.String(), c.stderr.String())
		}
	}
	start := time.Now().Add(100 * time.Millisecond).UnixNano()
	if err := os.WriteFile(filepath.Join(dir, "go.tmp"), []byte(strconv.FormatInt(start, 10)), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "go.tmp"), filepath.Join(dir, "go")); err != nil {
		t.Fatal(err)
	}
	winners := make(map[int][]string)
	for p, c := range children {
		for c.stdout.Scan() {
			line := c.stdout.Text()
			c.out.WriteString(line + "\n")
			if rest, ok := strings.CutPrefix(line, "win "); ok {
				f := strings.Fields(rest)
				r, _ := strconv.Atoi(f[0])
				winners[r] = append(winners[r], rest)
			}
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s\n%s", p, err, c.out.String(), c.stderr.String())
		}
	}
	s := openStore(t, filepath.Join(dir, "ds"))
	for r := range rounds {
		w := winners[r]
		if len(w) != 1 {
			t.Errorf("round %d: %d winners %v, want exactly 1", r, len(w), w)
			continue
		}
		f := strings.Fields(w[0])
		p, _ := strconv.Atoi(f[1])
		g, _ := strconv.Atoi(f[2])
		got, err := s.Get(context.Background(), fmt.Sprintf("_versions/%d.manifest", r))
		if want := racePayload(r, p, g); err != nil || string(got) != want {
			t.Errorf("round %d: file holds %q (%v), want winner's %q", r, got, err, want)
		}
	}
	objs, err := s.List(context.Background(), "_versions/", store.ListOptions{})
	if err != nil || len(objs) != rounds {
		t.Errorf("listing has %d objects (%v), want %d", len(objs), err, rounds)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "ds", "_versions", ".lk-tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// raceChild runs in a re-executed test binary.
func raceChild(t *testing.T) {
	proc, _ := strconv.Atoi(os.Getenv(envRaceChild))
	rounds, _ := strconv.Atoi(os.Getenv(envRaceRounds))
	gor, _ := strconv.Atoi(os.Getenv(envRaceGor))
	dir := os.Getenv(envRaceDir)
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, "ds"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	var start int64
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "go")); err == nil {
			start, _ = strconv.ParseInt(string(b), 10, 64)
			break
		}
	}
	if start == 0 {
		t.Fatal("no start signal")
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range gor {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				time.Sleep(time.Until(time.Unix(0, start).Add(time.Duration(r) * 15 * time.Millisecond)))
				err := s.CreateIfAbsent(ctx, fmt.Sprintf("_versions/%d.manifest", r), []byte(racePayload(r, proc, g)))
				mu.Lock()
				switch {
				case err == nil:
					fmt.Printf("win %d %d %d\n", r, proc, g)
				case !errors.Is(err, store.ErrAlreadyExists):
					t.Errorf("round %d goroutine %d: %v", r, g, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
