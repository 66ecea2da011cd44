package commit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

const (
	envChildDir  = "LANCEKEEPER_COMMIT_TEST_CHILD_DIR"
	envChildID   = "LANCEKEEPER_COMMIT_TEST_CHILD_ID"
	childProcs   = 4
	childWorkers = 4
	childCommits = 8 // per goroutine
)

// appendUntilDone commits one single-fragment Append named name, rebuilding
// it on the latest version after a retryable conflict (as a client would).
// It returns the committed version, or an error if it gave up.
func appendUntilDone(ctx context.Context, st Store, name string) (uint64, error) {
	for try := 0; try < 10; try++ {
		info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			return 0, err
		}
		r, err := Commit(ctx, st, appendTxn(info.Version, fakeFrag(name, 1)), Options{})
		if err == nil {
			return r.Version, nil
		}
		if !errors.Is(err, ErrRetryableConflict) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("%s: gave up", name)
}

// runChild is the body of one spawned process: childWorkers goroutines,
// each committing childCommits appends; every acknowledged commit is
// printed as "ACK <fragment name> <version>".
func runChild(t *testing.T, dir, id string) {
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < childWorkers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < childCommits; i++ {
				name := fmt.Sprintf("p%s-g%d-i%d", id, g, i)
				v, err := appendUntilDone(ctx, st, name)
				mu.Lock()
				if err != nil {
					fmt.Printf("FAIL %s %v\n", name, err)
				} else {
					fmt.Printf("ACK %s %d\n", name, v)
				}
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
}

// TestConcurrentAppends_MultiProcess: 4 processes (this test binary,
// re-executed) × 4 goroutines append to one local dataset. Every
// acknowledged commit appears exactly once, in the version it was
// acknowledged with; versions are contiguous; no fragment is lost or
// duplicated; fragment ids are unique.
func TestConcurrentAppends_MultiProcess(t *testing.T) {
	if dir := os.Getenv(envChildDir); dir != "" {
		runChild(t, dir, os.Getenv(envChildID))
		return
	}
	ctx := context.Background()
	dir := t.TempDir() + "/ds"
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mustCreate(t, st, fakeFrag("seed", 1))

	type out struct {
		stdout bytes.Buffer
		err    error
	}
	outs := make([]*out, childProcs)
	var wg sync.WaitGroup
	for p := 0; p < childProcs; p++ {
		o := &out{}
		outs[p] = o
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentAppends_MultiProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChildDir+"="+dir, envChildID+"="+strconv.Itoa(p))
		cmd.Stdout = &o.stdout
		cmd.Stderr = os.Stderr
		wg.Add(1)
		go func() { defer wg.Done(); o.err = cmd.Run() }()
	}
	wg.Wait()

	acked := map[string]uint64{}
	fails := 0
	for p, o := range outs {
		if o.err != nil {
			t.Fatalf("child %d: %v\n%s", p, o.err, o.stdout.String())
		}
		sc := bufio.NewScanner(&o.stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "ACK":
				v, _ := strconv.ParseUint(f[2], 10, 64)
				acked[f[1]+".lance"] = v
			case len(f) >= 2 && f[0] == "FAIL":
				fails++
				t.Logf("unacknowledged: %s", sc.Text())
			}
		}
	}
	total := childProcs * childWorkers * childCommits
	if len(acked)+fails != total {
		t.Fatalf("%d acks + %d failures, want %d reports", len(acked), fails, total)
	}
	if fails > total/10 {
		t.Fatalf("%d of %d appends gave up", fails, total)
	}

	versions, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for i, vi := range versions {
		if vi.Version != uint64(i+1) {
			t.Fatalf("versions not contiguous at %d: got %d", i+1, vi.Version)
		}
	}
	if got, want := len(versions), 1+len(acked); got != want {
		t.Fatalf("%d versions, want 1 + %d acknowledged commits", got, len(acked))
	}
	// Each version's transaction is the one acknowledged with that version.
	byVersion := map[uint64]string{}
	for name, v := range acked {
		if prev, dup := byVersion[v]; dup {
			t.Fatalf("version %d acknowledged twice (%s, %s)", v, prev, name)
		}
		byVersion[v] = name
	}
	d := &dataset{st: st, root: st.KeyPrefix(), files: map[uint64]*manifest.File{}}
	for v := uint64(2); v <= uint64(len(versions)); v++ {
		txn, err := d.transactionOf(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		frags := txn.GetAppend().GetFragments()
		if len(frags) != 1 || frags[0].GetFiles()[0].GetPath() != byVersion[v] {
			t.Fatalf("version %d committed %v, acknowledged %q", v, frags, byVersion[v])
		}
	}
	head := readVersion(t, st, uint64(len(versions))).Manifest
	seen := map[string]bool{}
	ids := map[uint64]bool{}
	for _, f := range head.GetFragments() {
		p := f.GetFiles()[0].GetPath()
		if seen[p] || ids[f.GetId()] {
			t.Fatalf("fragment %s (id %d) duplicated", p, f.GetId())
		}
		seen[p], ids[f.GetId()] = true, true
	}
	for name := range acked {
		if !seen[name] {
			t.Fatalf("acknowledged fragment %s lost", name)
		}
	}
	if len(seen) != len(acked)+1 {
		t.Fatalf("%d fragments, want %d", len(seen), len(acked)+1)
	}
	t.Logf("%d commits by %d processes × %d goroutines, %d unacknowledged", len(acked), childProcs, childWorkers, fails)
}

// TestConcurrentAppends_ListingWhileCommitting: 8 goroutines append to one
// local dataset with Commit while 4 others list _versions/ over and over.
// Every commit stages a temporary file next to the manifest and the hint
// and removes it again; a listing that meets such a file between reading
// the directory and stat'ing the entry must skip it, not fail. Neither a
// listing nor a commit may report the existing dataset as missing (before
// the local store listed directories itself, ListVersions failed with "not
// found" here and Commit with ErrDatasetNotFound). Half of the writers
// write no hint, so LatestVersion inside Commit falls back to listing too.
func TestConcurrentAppends_ListingWhileCommitting(t *testing.T) {
	const (
		writers   = 8
		perWriter = 12
		listers   = 4
	)
	ctx := context.Background()
	st := localStore(t)
	mustCreate(t, st, fakeFrag("seed", 1))

	var (
		mu       sync.Mutex
		failures []string
		lists    int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	done := make(chan struct{})
	var listWG sync.WaitGroup
	for l := 0; l < listers; l++ {
		listWG.Add(1)
		go func() {
			defer listWG.Done()
			n := 0
			defer func() { mu.Lock(); lists += n; mu.Unlock() }()
			for {
				select {
				case <-done:
					return
				default:
				}
				n++
				if _, err := manifest.ListVersions(ctx, st.Bucket(), st.KeyPrefix()); err != nil {
					fail("ListVersions: %v", err)
					return
				}
				if _, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix()); err != nil {
					fail("LatestVersion: %v", err)
					return
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := Options{MaxRetries: 1000, NoHint: w%2 == 1}
			for i := 0; i < perWriter; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				for {
					info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
					if err != nil {
						fail("%s: LatestVersion: %v", name, err)
						return
					}
					_, err = Commit(ctx, st, appendTxn(info.Version, fakeFrag(name, 1)), opts)
					if err == nil {
						break
					}
					if !errors.Is(err, ErrRetryableConflict) {
						fail("%s: Commit: %v", name, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	listWG.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures during %d listings, first: %s", len(failures), lists, failures[0])
	}
	if got, want := latestVersion(t, st), uint64(1+writers*perWriter); got != want {
		t.Fatalf("latest version %d, want %d", got, want)
	}
	t.Logf("%d commits, %d listings, no spurious not-found", writers*perWriter, lists)
}
