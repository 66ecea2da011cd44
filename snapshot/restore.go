package snapshot

import (
	"context"
	"fmt"

	"github.com/lancekeeper/lancekeeper/commit"
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// Commit tunes the restore's commit (retries, unsafe stores, clock).
	Commit commit.Options
}

// Restore makes the version target selects the new head of its branch
// (§8.3): a new version (latest+1) whose content equals the target's, with
// a fresh transaction, the larger fragment-id and row-id high-water marks,
// the target's writer_version, flags recomputed from the restored content
// and the current head's sticky paired bits OR-ed in (§6.5, R57: restoring
// a version from before FLAG_ZONE_WRITE_SEEDS was activated keeps the
// bits). It is refused when the head uses stable row ids and the target
// does not (§6.6). The commit goes through the commit engine's Restore
// transaction and its conflict rules; earlier manifests are never touched
// (R58). The target's branch is the line restored (a tag names its own).
func (d *Dataset) Restore(ctx context.Context, target Ref, opts RestoreOptions) (*Snapshot, *commit.Result, error) {
	t, err := d.load(ctx, target)
	if err != nil {
		return nil, nil, err
	}
	// The head must be writable by this build; the commit engine checks the
	// target's flags (read and write) itself.
	head, err := d.Checkout(ctx, Options{Ref: Ref{Branch: t.Branch}, ForWrite: true})
	if err != nil {
		return nil, nil, err
	}
	st, err := d.BranchStore(t.Branch)
	if err != nil {
		return nil, nil, err
	}
	copts := opts.Commit
	if copts.Now == nil {
		copts.Now = d.now
	}
	res, err := commit.Commit(ctx, st, commit.NewRestore(head.Version, t.Version), copts)
	if err != nil {
		return nil, nil, fmt.Errorf("restore %s to %s (version %d): %w", d.uri, target, t.Version, err)
	}
	s, err := d.load(ctx, Ref{Branch: t.Branch, Version: res.Version})
	if err != nil {
		return nil, nil, err
	}
	return s, res, nil
}
