package coordinator

import (
	"context"

	"github.com/lancekeeper/lancekeeper/commit"
)

// afterCommit runs Config.AfterCommit after a successful commit of j's
// dataset (res nil or err set: nothing to do). It runs in the dataset's
// worker after the answer went out, so the next commit of the dataset
// waits for it (as Lance's commit waits for its automatic cleanup) but no
// caller does; a server shutdown cancels it.
func (s *Server) afterCommit(j *job, res *commit.Result, err error) {
	if s.cfg.AfterCommit == nil || err != nil || res == nil || j.p.raw == nil {
		return
	}
	ctx, cancel := s.commitContext(context.Background())
	defer cancel()
	s.cfg.AfterCommit(ctx, j.p.raw, res)
}

// commitAndFinish commits one request, answers it, then runs the
// after-commit hook.
func (s *Server) commitAndFinish(q *dsQueue, j *job) {
	r := s.commitOne(q, j)
	s.finish(q, j, r)
	s.afterCommit(j, r.res, r.err)
}
