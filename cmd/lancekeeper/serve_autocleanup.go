package main

import (
	"context"
	"log/slog"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/store"
)

// autoCleanupHook is the coordinator's Config.AfterCommit: Lance's
// automatic cleanup (lance.auto_cleanup.* in the table config, run when the
// committed version is a multiple of the interval), as every commit by
// Lance runs it. Its errors are logged, never returned: the commit stands.
func autoCleanupHook(log *slog.Logger) func(ctx context.Context, st *store.Store, res *commit.Result) {
	return func(ctx context.Context, st *store.Store, res *commit.Result) {
		cr, ran, err := maint.AutoCleanup(ctx, st, res)
		switch {
		case err != nil:
			log.Warn("auto cleanup failed", "dataset", st.String(), "version", res.Version, "error", err)
		case ran:
			log.Info("auto cleanup", "dataset", st.String(), "version", res.Version,
				"removed_versions", len(cr.RemovedVersions), "removed_files", len(cr.RemovedFiles))
		}
	}
}
