package lancekeeper

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
)

// TestAutoCleanupAfterAppend: issue 14 item 3 — a commit through the facade
// on a table whose config carries lance.auto_cleanup.* runs the cleanup
// after the commit, as Lance does (here: interval 2, older than 0s, so
// the append that makes version 2 removes version 1).
func TestAutoCleanupAfterAppend(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := commit.WriteArrow(ctx, st, rows(0, 10), commit.WriteOptions{Mode: commit.ModeCreate,
		Config: map[string]string{maint.AutoCleanupInterval: "2", maint.AutoCleanupOlderThan: "0s"}}); err != nil {
		t.Fatal(err)
	}
	ds := mustT[*Dataset](t)(Open(ctx, dir))
	defer ds.Close()
	v2 := mustT[*Dataset](t)(ds.Append(ctx, rows(10, 20)))
	if _, err := manifest.ReadVersion(ctx, st.Bucket(), st.KeyPrefix(), 1); err == nil {
		t.Fatal("version 1 survived the automatic cleanup after version 2")
	}
	vs := mustT[[]Version](t)(v2.Versions(ctx))
	if len(vs) != 1 || vs[0].Number != 2 {
		t.Fatalf("versions after auto cleanup: %+v", vs)
	}
}
