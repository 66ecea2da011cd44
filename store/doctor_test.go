package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
	"gocloud.dev/blob/fileblob"
)

var allChecks = []string{store.CheckDeclared, store.CheckReadBack, store.CheckRefuse, store.CheckRace, store.CheckList, store.CheckRange, store.CheckCleanup}

// reportText lists a report's rows for test logs (the CLI renders the
// table).
func reportText(rep *store.DoctorReport) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", c.Guarantee, c.Result, c.Elapsed, c.Detail)
	}
	return b.String()
}

func requireResults(t *testing.T, rep *store.DoctorReport, want map[string]store.Result) {
	t.Helper()
	if len(rep.Checks) != len(allChecks) {
		t.Fatalf("report has %d rows, want %d:\n%s", len(rep.Checks), len(allChecks), reportText(rep))
	}
	for i, name := range allChecks {
		c := rep.Checks[i]
		if c.Guarantee != name {
			t.Errorf("row %d is %q, want %q", i, c.Guarantee, name)
		}
		w, ok := want[name]
		if !ok {
			w = store.Pass
		}
		if c.Result != w {
			t.Errorf("%s: %s (%s), want %s", name, c.Result, c.Detail, w)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", reportText(rep))
	}
}

func TestDoctorPassesOnLocal(t *testing.T) {
	dir := t.TempDir()
	rep, err := store.Doctor(context.Background(), "file://"+dir, store.DoctorOptions{Rounds: 20})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, nil)
	if !rep.OK() {
		t.Fatal("report not OK")
	}
	// Cleanup leaves nothing behind, not even empty directories.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("doctor left %v in %s", entries, dir)
	}
	c, _ := rep.Check(store.CheckRace)
	if !strings.Contains(c.Detail, "8 independent clients") {
		t.Errorf("race detail %q", c.Detail)
	}
}

func TestDoctorPassesOnMemory(t *testing.T) {
	rep, err := store.Doctor(context.Background(), "mem://", store.DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, nil)
}

// The full S3 probe on a real server (SeaweedFS on loopback): 8 contenders on
// independent clients x 50 rounds (LANCEKEEPER_S3_RACE_ROUNDS overrides),
// one winner each round. SeaweedFS makes waiters for a key's write lock poll
// once a second, so this takes about 2.5 minutes.
func TestDoctorPassesOnS3(t *testing.T) {
	url := s3URL(t)
	rounds := 50
	if v := os.Getenv("LANCEKEEPER_S3_RACE_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LANCEKEEPER_S3_RACE_ROUNDS=%q is not a positive integer", v)
		}
		rounds = n
	}
	start := time.Now()
	rep, err := store.Doctor(context.Background(), url, store.DoctorOptions{Contenders: 8, Rounds: rounds})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, nil)
	t.Logf("doctor on SeaweedFS took %s:\n%s", time.Since(start).Round(time.Millisecond), reportText(rep))
	// Nothing is left under the probe prefix.
	s := openStore(t, url)
	if objs, err := s.List(context.Background(), store.DoctorPrefix, store.ListOptions{}); err != nil || len(objs) > 0 {
		t.Fatalf("left after doctor: %v, %v", objs, err)
	}
}

// checkThenPut is a store whose conditional create is a check followed by a
// put: what a server with a non-atomic If-None-Match does. It still claims
// an atomic create (as such a server would).
type checkThenPut struct {
	*store.Store
	gap time.Duration
}

func (c checkThenPut) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	ok, err := c.Exists(ctx, key)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("check-then-put %q: %w", key, store.ErrAlreadyExists)
	}
	time.Sleep(c.gap)
	return c.Put(ctx, key, data)
}

// The doctor catches exactly the non-atomic conditional create: sequential
// refusal still works, only the concurrent probe fails.
func TestDoctorFailsOnCheckThenPutStore(t *testing.T) {
	s := openStore(t, "mem://")
	rep, err := store.DoctorTarget(context.Background(), checkThenPut{s, time.Millisecond}, store.DoctorOptions{Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{store.CheckRace: store.Fail})
	if rep.OK() {
		t.Fatal("report OK for a check-then-put store")
	}
	c, _ := rep.Check(store.CheckRace)
	if !strings.Contains(c.Detail, "winners") {
		t.Errorf("race detail does not name the winners: %q", c.Detail)
	}
}

// ignoresPrecondition is a server that ignores If-None-Match entirely.
type ignoresPrecondition struct{ *store.Store }

func (i ignoresPrecondition) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	return i.Put(ctx, key, data)
}

func TestDoctorFailsOnIgnoredPrecondition(t *testing.T) {
	s := openStore(t, "mem://")
	rep, err := store.DoctorTarget(context.Background(), ignoresPrecondition{s}, store.DoctorOptions{Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{store.CheckRefuse: store.Fail, store.CheckRace: store.Fail})
}

// A raw fileblob bucket passes the in-process probes but is reported as not
// commit-safe: its IfNotExist only excludes goroutines of one process.
func TestDoctorFailsOnRawFileblob(t *testing.T) {
	raw, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s, err := store.FromBucket(raw, "", false)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := store.DoctorTarget(context.Background(), s, store.DoctorOptions{Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{store.CheckDeclared: store.Fail})
}

// failingStore cannot write at all: the later probes are not run, the
// report fails and names the write error.
type failingStore struct{ *store.Store }

var errDenied = errors.New("access denied")

func (f failingStore) Put(ctx context.Context, key string, data []byte) error { return errDenied }

func TestDoctorReportsUnwritableStore(t *testing.T) {
	s := openStore(t, "mem://")
	rep, err := store.DoctorTarget(context.Background(), failingStore{s}, store.DoctorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{
		store.CheckReadBack: store.Fail, store.CheckRefuse: store.NotRun, store.CheckRace: store.NotRun,
		store.CheckList: store.NotRun, store.CheckRange: store.NotRun,
	})
	c, _ := rep.Check(store.CheckReadBack)
	if !strings.Contains(c.Detail, "access denied") {
		t.Errorf("detail %q", c.Detail)
	}
}

// flakyRange corrupts one byte of every range read.
type flakyRange struct {
	*store.Store
	calls *atomic.Int64
}

func (f flakyRange) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := f.Store.GetRange(ctx, key, off, n)
	if err == nil && len(b) > 0 && f.calls.Add(1) > 1 {
		b[len(b)/2] ^= 0xff
	}
	return b, err
}

func TestDoctorCatchesWrongRangeBytes(t *testing.T) {
	s := openStore(t, "mem://")
	rep, err := store.DoctorTarget(context.Background(), flakyRange{s, new(atomic.Int64)}, store.DoctorOptions{Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{store.CheckRange: store.Fail})
}

func TestDoctorOptionsAndURLErrors(t *testing.T) {
	ctx := context.Background()
	for _, o := range []store.DoctorOptions{{Contenders: 1}, {Contenders: 65}, {Rounds: -1}, {Rounds: 1001}} {
		if _, err := store.Doctor(ctx, "mem://", o); !errors.Is(err, store.ErrInvalidOptions) {
			t.Errorf("options %+v: want ErrInvalidOptions, got %v", o, err)
		}
	}
	if _, err := store.Doctor(ctx, "ftp://x", store.DoctorOptions{}); !errors.Is(err, store.ErrInvalidURL) {
		t.Errorf("bad URL: %v", err)
	}
}

func TestDoctorKeepLeavesProbeKeys(t *testing.T) {
	dir := t.TempDir()
	rep, err := store.Doctor(context.Background(), dir, store.DoctorOptions{Rounds: 2, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	requireResults(t, rep, map[string]store.Result{store.CheckCleanup: store.NotRun})
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rep.Prefix), "race", "0")); err != nil {
		t.Fatal(err)
	}
}
