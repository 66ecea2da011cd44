package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// answer is one commit answer, collected from a goroutine.
type answer struct {
	res    coordapi.CommitResponse
	status int
	err    *coordapi.ErrorBody
	path   string // the request's data file
}

// post sends a commit request without touching t (safe in goroutines).
func (ts *testServer) post(req coordapi.CommitRequest) answer {
	data, _ := json.Marshal(req)
	resp, err := http.Post(ts.URL+coordapi.PathCommit, "application/json", bytes.NewReader(data))
	if err != nil {
		return answer{status: -1, err: &coordapi.ErrorBody{Message: err.Error()}}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode}
	if resp.StatusCode >= 300 {
		var er coordapi.ErrorResponse
		_ = json.Unmarshal(body, &er)
		a.err = &er.Error
		return a
	}
	_ = json.Unmarshal(body, &a.res)
	return a
}

// queued returns how many jobs wait in a dataset's queue.
func (s *Server) queued(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queues[key]; q != nil {
		return len(q.pending)
	}
	return 0
}

// holder blocks the first commit until n requests wait behind it, so
// that they are collected as one batch. entered is closed when the first
// commit reached the hook.
type holder struct {
	srv     *Server
	key     string
	n       int
	calls   atomic.Int32
	entered chan struct{}
}

func newHolder(key string, n int) *holder {
	return &holder{key: key, n: n, entered: make(chan struct{})}
}

func (h *holder) hook(ctx context.Context, _ int) {
	if h.calls.Add(1) != 1 {
		return
	}
	close(h.entered)
	// Bounded so that a broken test fails instead of hanging.
	for deadline := time.Now().Add(30 * time.Second); h.srv.queued(h.key) < h.n && ctx.Err() == nil && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// appendReqs writes n data files into st (file i holds the value i) and
// returns an append request of dataset "d" at read version 1 for each,
// with the data-file paths.
func appendReqs(t testing.TB, st commit.Store, n int, batch bool) ([]coordapi.CommitRequest, []string) {
	t.Helper()
	var reqs []coordapi.CommitRequest
	var paths []string
	for i := 0; i < n; i++ {
		f := writeFile(t, st, int64(i))
		reqs = append(reqs, appendReq(t, "d", 1, batch, f))
		paths = append(paths, f.Files[0].Path)
	}
	return reqs, paths
}

// sendHeld sends reqs[0], waits until its commit is held, then sends the
// others concurrently; it returns the answers in request order.
func (ts *testServer) sendHeld(h *holder, reqs []coordapi.CommitRequest, paths []string) []answer {
	out := make([]answer, len(reqs))
	var wg sync.WaitGroup
	send := func(i int) {
		defer wg.Done()
		out[i] = ts.post(reqs[i])
		out[i].path = paths[i]
	}
	wg.Add(1)
	go send(0)
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
	}
	for i := 1; i < len(reqs); i++ {
		wg.Add(1)
		go send(i)
	}
	wg.Wait()
	return out
}

// sendAll sends the requests concurrently and returns the answers in
// request order.
func (ts *testServer) sendAll(reqs []coordapi.CommitRequest, paths []string) []answer {
	out := make([]answer, len(reqs))
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = ts.post(reqs[i])
			out[i].path = paths[i]
		}(i)
	}
	wg.Wait()
	return out
}

// checkAcks verifies that every acknowledged request's data file is in the
// latest manifest exactly once, under the fragment id it was given, and
// was committed in the acknowledged version.
func checkAcks(t *testing.T, ts *testServer, dataset string, answers []answer) {
	t.Helper()
	st := ts.dataset(t, dataset)
	head := latest(t, st).Manifest
	byPath := map[string][]uint64{}
	for _, f := range head.GetFragments() {
		byPath[f.GetFiles()[0].GetPath()] = append(byPath[f.GetFiles()[0].GetPath()], f.GetId())
	}
	for _, a := range answers {
		if a.err != nil {
			continue
		}
		ids := byPath[a.path]
		if len(ids) != 1 || len(a.res.FragmentIDs) != 1 || ids[0] != a.res.FragmentIDs[0] {
			t.Fatalf("data file %s: in the manifest as fragments %v, acknowledged as %v", a.path, ids, a.res.FragmentIDs)
		}
		txn := readTxn(t, st, a.res.Version)
		found := false
		for _, f := range txn.GetAppend().GetFragments() {
			found = found || f.GetFiles()[0].GetPath() == a.path
		}
		if !found {
			t.Fatalf("data file %s acknowledged at version %d, which committed %v", a.path, a.res.Version, txn)
		}
	}
}

func readTxn(t *testing.T, st commit.Store, v uint64) *pb.Transaction {
	t.Helper()
	f := readVersionFile(t, st, v)
	return f.Transaction
}

// TestGroupCommit_MergesQueuedAppends: appends that allow batching and
// queue up behind a running commit are published as one version; each
// caller gets that version and its own fragment ids.
func TestGroupCommit_MergesQueuedAppends(t *testing.T) {
	const n = 9
	h := newHolder(queueKey(DefaultRootName, "d"), n-1)
	ts := newTestServer(t, Config{BatchWindow: -1, beforeCommit: h.hook})
	h.srv = ts.Server
	st := ts.createDataset(t, "d")
	reqs, paths := appendReqs(t, st, n, true)
	answers := ts.sendHeld(h, reqs, paths)
	versions := map[uint64]int{}
	for _, a := range answers {
		if a.err != nil {
			t.Fatalf("%d %+v", a.status, a.err)
		}
		versions[a.res.Version]++
		if a.res.BatchSize != versions[a.res.Version] && a.res.BatchSize < versions[a.res.Version] {
			t.Fatalf("batch size %d at version %d", a.res.BatchSize, a.res.Version)
		}
	}
	if len(versions) != 2 || versions[2] != 1 || versions[3] != n-1 {
		t.Fatalf("requests per version %v, want {2:1, 3:%d}", versions, n-1)
	}
	for _, a := range answers {
		if a.res.Version == 3 && a.res.BatchSize != n-1 {
			t.Fatalf("batch_size %d, want %d", a.res.BatchSize, n-1)
		}
	}
	checkAcks(t, ts, "d", answers)
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_batch_size", nil); got != 2 {
		t.Fatalf("batch_size observations %v, want 2 (two versions)", got)
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_commits_total", map[string]string{"op": "append", "result": "ok"}); got != n {
		t.Fatalf("commits_total %v, want %d", got, n)
	}
}

// TestGroupCommit_WindowCollectsConcurrentAppends: with a window, appends
// arriving while the first waits are merged (MaxBatch ends the wait).
func TestGroupCommit_WindowCollectsConcurrentAppends(t *testing.T) {
	const n = 6
	ts := newTestServer(t, Config{BatchWindow: time.Minute, MaxBatch: n})
	st := ts.createDataset(t, "d")
	reqs, paths := appendReqs(t, st, n, true)
	answers := ts.sendAll(reqs, paths)
	for _, a := range answers {
		if a.err != nil || a.res.Version != 2 || a.res.BatchSize != n {
			t.Fatalf("%d %+v %+v", a.status, a.err, a.res)
		}
	}
	checkAcks(t, ts, "d", answers)
}

// TestGroupCommit_NotBatchedWithoutPermission: without allow_batching (or
// with group commit disabled) every append is its own version.
func TestGroupCommit_NotBatchedWithoutPermission(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		batch   bool
		wantVer int
	}{
		{"caller says no", Config{BatchWindow: -1}, false, 5},
		{"server says no", Config{BatchWindow: -1, DisableGroupCommit: true}, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 5
			h := newHolder(queueKey(DefaultRootName, "d"), n-1)
			tc.cfg.beforeCommit = h.hook
			ts := newTestServer(t, tc.cfg)
			h.srv = ts.Server
			st := ts.createDataset(t, "d")
			reqs, paths := appendReqs(t, st, n, tc.batch)
			answers := ts.sendHeld(h, reqs, paths)
			seen := map[uint64]bool{}
			for _, a := range answers {
				if a.err != nil || a.res.BatchSize != 1 || seen[a.res.Version] {
					t.Fatalf("%d %+v %+v", a.status, a.err, a.res)
				}
				seen[a.res.Version] = true
			}
			if v := latest(t, st).Manifest.GetVersion(); v != uint64(1+tc.wantVer) {
				t.Fatalf("latest %d", v)
			}
			checkAcks(t, ts, "d", answers)
		})
	}
}

// TestGroupCommit_FallbackGivesEachItsOwnOutcome: a batch whose merged
// commit fails (one request references a field the schema lacks, another
// states a requirement that no longer holds) is redone request by request:
// the good ones commit, the bad ones get their own errors. A resent data
// file (data_files_absent) is refused without blocking the others.
func TestGroupCommit_FallbackGivesEachItsOwnOutcome(t *testing.T) {
	const n = 7
	h := newHolder(queueKey(DefaultRootName, "d"), n-1)
	ts := newTestServer(t, Config{BatchWindow: -1, beforeCommit: h.hook})
	h.srv = ts.Server
	st := ts.createDataset(t, "d")
	existing := latest(t, st).Manifest.GetFragments()[0]
	var reqs []coordapi.CommitRequest
	var paths []string
	for i := 0; i < n; i++ {
		f := writeFile(t, st, int64(i))
		if i == 2 {
			f.Files[0].Fields = []int32{42}
		}
		if i == 6 {
			// A resend of a data file the dataset already references.
			f = &pb.DataFragment{PhysicalRows: existing.GetPhysicalRows(), Files: existing.GetFiles()}
		}
		r := appendReq(t, "d", 1, true, f)
		if i == 4 {
			r.Requirements = []coordapi.Requirement{{Type: coordapi.RequireLatestVersion, Version: 1}}
		}
		if i == 5 || i == 6 {
			r.Requirements = []coordapi.Requirement{{Type: coordapi.RequireDataFilesAbsent}}
		}
		reqs = append(reqs, r)
		paths = append(paths, f.Files[0].Path)
	}
	answers := ts.sendHeld(h, reqs, paths)
	for i, a := range answers {
		switch i {
		case 2:
			if a.status != http.StatusBadRequest || a.err.Code != coordapi.CodeInvalidTransaction {
				t.Fatalf("bad field: %d %+v", a.status, a.err)
			}
		case 4, 6:
			// 4: request 0 (held first) committed version 2, so "latest is
			// still 1" no longer holds; 6: its data file is referenced.
			if a.status != http.StatusConflict || a.err.Code != coordapi.CodeRequirementFailed {
				t.Fatalf("request %d: %d %+v", i, a.status, a.err)
			}
		default:
			if a.err != nil || a.res.BatchSize != 1 {
				t.Fatalf("request %d: %d %+v %+v", i, a.status, a.err, a.res)
			}
		}
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_batch_fallbacks_total", nil); got != 1 {
		t.Fatalf("fallbacks %v", got)
	}
	if v := latest(t, st).Manifest.GetVersion(); v != 1+uint64(n-3) {
		t.Fatalf("latest %d, want %d", v, 1+n-3)
	}
	checkAcks(t, ts, "d", answers)
}

// flakyStore fails manifest creates and reads while fail is set, so the
// commit engine cannot tell whether the manifest landed.
type flakyStore struct {
	commit.Store
	fail *atomic.Bool
}

var errInjected = errors.New("injected: connection reset")

func (f flakyStore) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	if f.fail.Load() && strings.HasPrefix(key, "_versions/") {
		return errInjected
	}
	return f.Store.CreateIfAbsent(ctx, key, data)
}

func (f flakyStore) Get(ctx context.Context, key string) ([]byte, error) {
	if f.fail.Load() && strings.HasPrefix(key, "_versions/") {
		return nil, errInjected
	}
	return f.Store.Get(ctx, key)
}

// TestGroupCommit_OutcomeUnknownIsNotRetried: when the merged commit's
// outcome is unknown, its requests are not committed again one by one
// (that could duplicate them): each gets commit_outcome_unknown.
func TestGroupCommit_OutcomeUnknownIsNotRetried(t *testing.T) {
	const n = 4
	var fail atomic.Bool
	h := newHolder(queueKey(DefaultRootName, "d"), n-1)
	ts := newTestServer(t, Config{BatchWindow: -1,
		wrapStore: func(st commit.Store) commit.Store { return flakyStore{Store: st, fail: &fail} },
		beforeCommit: func(ctx context.Context, k int) {
			h.hook(ctx, k)
			fail.Store(k > 1)
		}})
	h.srv = ts.Server
	st := ts.createDataset(t, "d")
	reqs, paths := appendReqs(t, st, n, true)
	answers := ts.sendHeld(h, reqs, paths)
	unknown := 0
	for _, a := range answers {
		if a.err != nil {
			if a.status != http.StatusInternalServerError || a.err.Code != coordapi.CodeCommitOutcome {
				t.Fatalf("%d %+v", a.status, a.err)
			}
			unknown++
		}
	}
	if unknown != n-1 {
		t.Fatalf("%d outcome-unknown answers, want %d", unknown, n-1)
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_batch_fallbacks_total", nil); got != 0 {
		t.Fatalf("fallbacks %v", got)
	}
	if got := metricValue(t, ts.Server, "lancekeeper_coordinator_commits_total", map[string]string{"result": "outcome_unknown"}); got != n-1 {
		t.Fatalf("outcome_unknown metric %v", got)
	}
	// The dataset still works.
	fail.Store(false)
	res, code, eb := ts.commit(t, appendReq(t, "d", 2, true, writeFile(t, st, 9)))
	mustOK(t, code, eb)
	if res.Version != 3 {
		t.Fatalf("next commit: %+v", res)
	}
	checkAcks(t, ts, "d", answers)
}
