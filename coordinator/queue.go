package coordinator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	coordapi "github.com/lancekeeper/lancekeeper/coordinator/api"
	"github.com/lancekeeper/lancekeeper/manifest"
)

// errQueueFull is returned when a dataset already has MaxPending commit
// requests (HTTP 429).
var errQueueFull = errors.New("too many pending commits for this dataset")

// errShuttingDown is returned for commit requests that arrive while the
// server drains (HTTP 503).
var errShuttingDown = errors.New("the coordinator is shutting down")

// job is one commit request waiting for, or being run by, its dataset's
// worker.
type job struct {
	p        *prepared
	ctx      context.Context // the request's context: a job whose caller left before it started is skipped
	enqueued time.Time
	done     chan jobResult // buffered, receives exactly one result
}

type jobResult struct {
	res         *commit.Result
	fragmentIDs []uint64
	batch       int
	already     bool   // seed activation found the flag set
	latest      uint64 // with already: the latest version
	err         error
}

// dsQueue serialises the commits of one dataset of one root. Its fields
// are guarded by Server.mu.
type dsQueue struct {
	key     string
	st      commit.Store
	pending []*job
	n       int  // jobs queued or running
	running bool // a worker goroutine is active
	wake    chan struct{}
}

// enqueue adds a job to the dataset's queue, starting its worker when idle.
func (s *Server) enqueue(key string, st commit.Store, j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() {
		return errShuttingDown
	}
	q := s.queues[key]
	if q == nil {
		q = &dsQueue{key: key, st: st, wake: make(chan struct{}, 1)}
		s.queues[key] = q
		s.m.activeQueues.Inc()
	}
	if q.n >= s.cfg.MaxPending {
		return fmt.Errorf("%w (%d queued or running)", errQueueFull, q.n)
	}
	q.n++
	s.m.pending.Inc()
	s.jobs.Add(1)
	q.pending = append(q.pending, j)
	if !q.running {
		q.running = true
		go s.work(q)
	} else {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// finish delivers a job's result and releases its slot.
func (s *Server) finish(q *dsQueue, j *job, r jobResult) {
	j.done <- r
	s.mu.Lock()
	q.n--
	s.mu.Unlock()
	s.m.pending.Dec()
	s.jobs.Done()
}

// work is a dataset's worker: it runs the queued jobs one at a time (a
// batch of Appends counting as one) and exits when the queue is empty.
func (s *Server) work(q *dsQueue) {
	for {
		s.mu.Lock()
		if len(q.pending) == 0 {
			q.running = false
			if q.n == 0 {
				delete(s.queues, q.key)
				s.m.activeQueues.Dec()
			}
			s.mu.Unlock()
			return
		}
		first := q.pending[0]
		q.pending = q.pending[1:]
		s.mu.Unlock()
		if !first.p.batchable {
			s.runAlone(q, first)
			continue
		}
		s.runBatch(q, s.collect(q, first))
	}
}

// collect gathers batchable Appends compatible with first (same seed
// opt-in): those already queued, and those arriving until first has waited
// BatchWindow, up to MaxBatch.
func (s *Server) collect(q *dsQueue, first *job) []*job {
	batch := []*job{first}
	deadline := first.enqueued.Add(s.cfg.BatchWindow)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		kept := q.pending[:0]
		for _, j := range q.pending {
			if len(batch) < s.cfg.MaxBatch && j.p.batchable && j.p.opts.EnableZoneWriteSeeds == first.p.opts.EnableZoneWriteSeeds {
				batch = append(batch, j)
			} else {
				kept = append(kept, j)
			}
		}
		clear(q.pending[len(kept):])
		q.pending = kept
		s.mu.Unlock()
		wait := time.Until(deadline)
		if len(batch) >= s.cfg.MaxBatch || s.cfg.BatchWindow < 0 || wait <= 0 || s.draining.Load() {
			return batch
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// commitContext returns the context a commit runs under: not cancelled
// when the caller disconnects (a commit that started is finished, so its
// outcome is never left half-way by a client), but cancelled when the
// server's drain deadline passes.
func (s *Server) commitContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(s.hardCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

// started reports whether the job's caller is still waiting; a job whose
// caller left is answered with the caller's context error and not run.
func (s *Server) started(q *dsQueue, j *job) bool {
	if err := j.ctx.Err(); err != nil {
		s.finish(q, j, jobResult{err: err})
		return false
	}
	s.m.queueWait.Observe(time.Since(j.enqueued).Seconds())
	return true
}

// runAlone commits one request.
func (s *Server) runAlone(q *dsQueue, j *job) {
	if !s.started(q, j) {
		return
	}
	s.commitAndFinish(q, j)
}

func (s *Server) commitOne(q *dsQueue, j *job) jobResult {
	ctx, cancel := s.commitContext(j.ctx)
	defer cancel()
	if s.cfg.beforeCommit != nil {
		s.cfg.beforeCommit(ctx, 1)
	}
	start := time.Now()
	var r jobResult
	if j.p.enableSeeds {
		r.res, r.already, r.err = commit.EnableZoneWriteSeeds(ctx, q.st, j.p.opts)
		if r.err == nil && r.already {
			var info manifest.VersionInfo
			info, r.err = manifest.LatestVersion(ctx, q.st.Bucket(), q.st.KeyPrefix())
			r.latest = info.Version
		}
	} else {
		r.res, r.err = commit.Commit(ctx, q.st, j.p.txn, j.p.opts)
	}
	s.observe(j.p.op, 1, start, r.res, r.err)
	if r.err == nil && r.res != nil {
		r.fragmentIDs, r.batch = r.res.FragmentIDs, 1
	}
	s.logCommit(q, j.p.op, 1, start, r.res, r.err)
	return r
}

// runBatch publishes a batch of Appends as one version. When the merged
// commit fails, each request is committed on its own so that each gets
// its own outcome — except when the merged commit's outcome is unknown:
// it may have landed, and committing the requests again could duplicate
// them, so every request gets that error.
func (s *Server) runBatch(q *dsQueue, batch []*job) {
	live := batch[:0]
	for _, j := range batch {
		if s.started(q, j) {
			live = append(live, j)
		}
	}
	switch len(live) {
	case 0:
		return
	case 1:
		s.commitAndFinish(q, live[0])
		return
	}
	// De-duplicate: a request naming a data file an earlier request of the
	// batch also names (two identical appends in flight) leaves the batch
	// and is committed alone after it, where data_files_absent or the
	// commit engine's invariants refuse it (issue 15 item 2).
	live, dups := splitDuplicateFiles(live)
	defer func() {
		for _, j := range dups {
			s.commitAndFinish(q, j)
		}
	}()
	if len(live) == 1 {
		s.commitAndFinish(q, live[0])
		return
	}
	txns := make([]*commit.Transaction, len(live))
	opts := live[0].p.opts
	opts.Requirements = nil
	var absent dataFilesAbsent // one check for every request's data_files_absent
	for i, j := range live {
		txns[i] = j.p.txn
		for _, r := range j.p.opts.Requirements {
			if a, ok := r.(dataFilesAbsent); ok {
				absent = append(absent, a...)
			} else {
				opts.Requirements = append(opts.Requirements, r)
			}
		}
	}
	if len(absent) > 0 {
		opts.Requirements = append(opts.Requirements, absent)
	}
	merged, err := commit.MergeAppends(txns...)
	if err == nil {
		ctx, cancel := s.commitContext(context.Background())
		if s.cfg.beforeCommit != nil {
			s.cfg.beforeCommit(ctx, len(live))
		}
		start := time.Now()
		var res *commit.Result
		res, err = commit.Commit(ctx, q.st, merged, opts)
		cancel()
		s.observe("append", len(live), start, res, err)
		s.logCommit(q, "append", len(live), start, res, err)
		if err == nil {
			off := 0
			for _, j := range live {
				n := len(j.p.txn.Message().GetAppend().GetFragments())
				s.finish(q, j, jobResult{res: res, fragmentIDs: res.FragmentIDs[off : off+n], batch: len(live)})
				off += n
			}
			s.afterCommit(live[0], res, nil)
			return
		}
		if errors.Is(err, commit.ErrCommitOutcomeUnknown) {
			for _, j := range live {
				s.finish(q, j, jobResult{err: err})
			}
			return
		}
	}
	s.m.fallbacks.Inc()
	s.log.Info("group commit failed; committing its requests one by one", "dataset", q.key, "requests", len(live), "error", err)
	for _, j := range live {
		s.commitAndFinish(q, j)
	}
}

// observe records the metrics of one commit (n requests).
func (s *Server) observe(op string, n int, start time.Time, res *commit.Result, err error) {
	s.m.commitTime.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err == nil {
		s.m.batchSize.Observe(float64(n))
		if res != nil && res.Attempts > 1 {
			s.m.retries.Add(float64(res.Attempts - 1))
		}
	}
}

// count records the outcome of one request.
func (s *Server) count(op string, err error) {
	result := "ok"
	var ce *commit.ConflictError
	switch {
	case err == nil:
	case errors.Is(err, commit.ErrCommitOutcomeUnknown):
		result = "outcome_unknown"
	case errors.As(err, &ce):
		result = "conflict"
		kind := "incompatible"
		if ce.Retryable {
			kind = "retryable"
		}
		s.m.conflicts.WithLabelValues(op, kind).Inc()
	case errors.Is(err, commit.ErrRequirement):
		result = "requirement_failed"
		s.m.conflicts.WithLabelValues(op, "requirement").Inc()
	case errors.Is(err, commit.ErrTooManyRetries):
		result = "too_many_retries"
		s.m.conflicts.WithLabelValues(op, "too_many_retries").Inc()
	default:
		result = "error"
	}
	s.m.commits.WithLabelValues(op, result).Inc()
}

func (s *Server) logCommit(q *dsQueue, op string, n int, start time.Time, res *commit.Result, err error) {
	ms := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		s.log.Info("commit failed", "dataset", q.key, "op", op, "requests", n, "ms", ms, "error", err)
		return
	}
	if res == nil {
		s.log.Info("nothing to commit: zone write seeds already enabled", "dataset", q.key, "op", op)
		return
	}
	s.log.Info("committed", "dataset", q.key, "op", op, "version", res.Version, "read_version", res.ReadVersion,
		"requests", n, "attempts", res.Attempts, "ms", ms)
	if s.activates(q, res) {
		s.log.Warn("this commit activated FLAG_ZONE_WRITE_SEEDS: Lance releases without zone write seed support now refuse the dataset",
			"dataset", q.key, "op", op, "version", res.Version)
	}
}

// activates reports whether the committed version is the first with
// FLAG_ZONE_WRITE_SEEDS (its parent lacks the flag).
func (s *Server) activates(q *dsQueue, res *commit.Result) bool {
	if res == nil || res.Manifest == nil || !commit.HasZoneWriteSeeds(res.Manifest) || res.Version <= 1 {
		return res != nil && res.Manifest != nil && res.Version == 1 && commit.HasZoneWriteSeeds(res.Manifest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prev, err := manifest.ReadVersion(ctx, q.st.Bucket(), q.st.KeyPrefix(), res.Version-1)
	return err == nil && !commit.HasZoneWriteSeeds(prev.Manifest)
}

// commitResponse converts a job result.
func commitResponse(root, dataset string, r jobResult) *coordapi.CommitResponse {
	out := &coordapi.CommitResponse{Dataset: dataset, Root: root, FragmentIDs: r.fragmentIDs, BatchSize: r.batch, AlreadyEnabled: r.already}
	if r.already {
		out.Version, out.ZoneWriteSeeds = r.latest, true
	}
	if out.FragmentIDs == nil {
		out.FragmentIDs = []uint64{}
	}
	if res := r.res; res != nil {
		m := res.Manifest
		out.Version, out.ReadVersion, out.Attempts = res.Version, res.ReadVersion, res.Attempts
		out.ManifestPath, out.TransactionFile = res.ManifestPath, res.TransactionFile
		out.ReaderFeatureFlags, out.WriterFeatureFlags = m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()
		out.ZoneWriteSeeds = commit.HasZoneWriteSeeds(m)
		out.ReservedFirst, out.ReservedLast = res.ReservedFirst, res.ReservedLast
	}
	return out
}

// splitDuplicateFiles keeps the jobs none of whose data files an earlier
// job of the batch names, and returns the others apart.
func splitDuplicateFiles(batch []*job) (kept, dups []*job) {
	seen := map[string]bool{}
	for _, j := range batch {
		paths := filePaths(j.p.txn.Message().GetAppend().GetFragments())
		dup := false
		for _, p := range paths {
			if seen[p] {
				dup = true
				break
			}
		}
		if dup {
			dups = append(dups, j)
			continue
		}
		for _, p := range paths {
			seen[p] = true
		}
		kept = append(kept, j)
	}
	return kept, dups
}
