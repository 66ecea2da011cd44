package s3_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/s3util"
)

// appenderEnv makes the test binary an appender process (see TestMain):
// "URL\tPROC\tN\tSTART_UNIX_NANO".
const appenderEnv = "LANCEKEEPER_S3_TEST_APPENDER"

const (
	raceProcs = 4
	// raceAppends per process. SeaweedFS serialises conditional creates of
	// one key with a lock whose waiters poll once a second, so a create that
	// meets another in flight can take 1–2 s; measured here, 40 appends take
	// a few seconds because most losers see the winner's manifest already.
	raceAppends = 10
	// raceMaxRetries bounds the attempts of one append (the default 20 is
	// for datasets with far fewer simultaneous writers than a test that
	// makes every commit contended).
	raceMaxRetries = 60
)

// ack is what an appender prints for every append the commit engine
// acknowledged.
type ack struct {
	Proc     int    `json:"proc"`
	Seq      int    `json:"seq"`
	ID       int64  `json:"id"`
	Version  uint64 `json:"version"`
	File     string `json:"file"`
	Attempts int    `json:"attempts"`
}

func raceID(proc, seq int) int64 { return int64(proc*1000 + seq) }

// appenderMain is the child process: it waits for the common start time,
// then appends N one-row batches (id = PROC*1000+seq) to the dataset,
// printing an ack line after each acknowledged commit. Exit status 1 on
// any error (already acknowledged commits stay printed).
func appenderMain(spec string) int {
	parts := strings.Split(spec, "\t")
	if len(parts) != 4 {
		fmt.Fprintf(os.Stderr, "appender: bad spec %q\n", spec)
		return 2
	}
	url := parts[0]
	proc, err1 := strconv.Atoi(parts[1])
	n, err2 := strconv.Atoi(parts[2])
	start, err3 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || n < 1 || n > 100 {
		fmt.Fprintf(os.Stderr, "appender: bad spec %q\n", spec)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "appender %d: %v\n", proc, err)
		return 1
	}
	defer st.Close()
	time.Sleep(time.Until(time.Unix(0, start)))
	enc := json.NewEncoder(os.Stdout)
	for seq := range n {
		id := raceID(proc, seq)
		res, err := commit.WriteArrow(ctx, st, rows(id), commit.WriteOptions{
			Mode: commit.ModeAppend, Commit: commit.Options{MaxRetries: raceMaxRetries}})
		if err != nil {
			fmt.Fprintf(os.Stderr, "appender %d: append %d: %v\n", proc, seq, err)
			return 1
		}
		if err := enc.Encode(ack{Proc: proc, Seq: seq, ID: id, Version: res.Version, File: res.Files[0].Path, Attempts: res.Attempts}); err != nil {
			return 1
		}
	}
	return 0
}

// testRacingAppends: four processes (re-executions of this test binary, each
// with its own S3 client) append ten rows each to one dataset at the same
// moment. Every acknowledged commit must be present exactly once, the
// versions must be contiguous, each version must add exactly the fragment
// its committer was told it got, and the final version must hold every
// acknowledged row once.
func testRacingAppends(t *testing.T, srv *s3util.Server) {
	ctx := testContext(t, 4*time.Minute)
	url := srv.URL("race/ds.lance")
	st := openStore(t, ctx, url)
	if _, err := commit.WriteArrow(ctx, st, rows(-1), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	startAt := began.Add(2 * time.Second).UnixNano() // after every child has started
	var (
		mu   sync.Mutex
		acks []ack
		wg   sync.WaitGroup
		errs = make([]string, raceProcs)
	)
	for p := range raceProcs {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s\t%d\t%d\t%d", appenderEnv, url, p, raceAppends, startAt))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			werr := cmd.Wait()
			sc := bufio.NewScanner(&stdout)
			var mine []ack
			for sc.Scan() {
				var a ack
				if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
					errs[p] = fmt.Sprintf("appender %d printed %q", p, sc.Text())
					return
				}
				mine = append(mine, a)
			}
			mu.Lock()
			acks = append(acks, mine...)
			mu.Unlock()
			if werr != nil {
				errs[p] = fmt.Sprintf("appender %d: %v: %s", p, werr, stderr.String())
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(time.Unix(0, startAt))
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	total := raceProcs * raceAppends
	if len(acks) != total {
		t.Fatalf("%d acknowledged appends, want %d", len(acks), total)
	}

	// Versions 1..total+1, no gap; every acknowledged version distinct.
	wantContiguous(t, versionNumbers(t, ctx, st), uint64(total)+1)
	byVersion := map[uint64]ack{}
	attempts := 0
	for _, a := range acks {
		if prev, dup := byVersion[a.Version]; dup {
			t.Fatalf("version %d acknowledged to two appends: %+v and %+v", a.Version, prev, a)
		}
		byVersion[a.Version] = a
		attempts += a.Attempts
	}
	// Each version adds exactly the fragment its committer was told about,
	// on top of the previous version's fragments.
	prev := fragmentFiles(readManifest(t, ctx, st, 1))
	for v := uint64(2); v <= uint64(total)+1; v++ {
		cur := fragmentFiles(readManifest(t, ctx, st, v))
		a, ok := byVersion[v]
		if !ok {
			t.Fatalf("version %d was committed but acknowledged to nobody", v)
		}
		if want := append(slices.Clone(prev), strings.TrimPrefix(a.File, manifest.DataDir+"/")); !slices.Equal(cur, want) {
			t.Fatalf("version %d has files %v, want %v (the previous version's plus %s)", v, cur, want, a.File)
		}
		prev = cur
	}
	// The final version holds every acknowledged row exactly once.
	want := []int64{-1}
	for _, a := range acks {
		want = append(want, a.ID)
	}
	final := readManifest(t, ctx, st, 0)
	if final.Manifest.GetVersion() != uint64(total)+1 {
		t.Fatalf("latest version %d, want %d", final.Manifest.GetVersion(), total+1)
	}
	wantIDs(t, "final version", liveIDs(t, ctx, st, final.Manifest), want)
	t.Logf("%d processes x %d appends on SeaweedFS: %d commits in %s, %d attempts in all (%.1f per commit)",
		raceProcs, raceAppends, total, elapsed.Round(time.Millisecond), attempts, float64(attempts)/float64(total))
}

// fragmentFiles lists the data file of each fragment, in manifest order.
func fragmentFiles(f *manifest.File) []string {
	var out []string
	for _, frag := range f.Manifest.GetFragments() {
		for _, df := range frag.GetFiles() {
			out = append(out, df.GetPath())
		}
	}
	return out
}
