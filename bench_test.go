package lancekeeper

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
)

// BenchmarkAppendVsCommit measures what the facade adds to a commit:
// 1000-row appends to a local dataset through Dataset.Append (write,
// commit, then open the new version for the returned handle) against the
// same work through commit.WriteArrow, the baseline, alternating A B A B
// in one run on two datasets so that machine noise hits both. It reports
// the ratio of their total times (facade/commit) and each side's mean
// (docs/benchmarks.md, facade).
func BenchmarkAppendVsCommit(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "base.lance"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := commit.WriteArrow(ctx, st, rows(0, 1000), commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		b.Fatal(err)
	}
	ds, err := Create(ctx, filepath.Join(b.TempDir(), "facade.lance"), rows(0, 1000))
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	var base, facade time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := commit.WriteArrow(ctx, st, rows(0, 1000), commit.WriteOptions{Mode: commit.ModeAppend}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if ds, err = ds.Append(ctx, rows(0, 1000)); err != nil {
			b.Fatal(err)
		}
		base += t1.Sub(t0)
		facade += time.Since(t1)
	}
	b.ReportMetric(float64(facade)/float64(base), "facade/commit")
	b.ReportMetric(float64(base.Milliseconds())/float64(b.N), "commit-ms/op")
	b.ReportMetric(float64(facade.Milliseconds())/float64(b.N), "facade-ms/op")
}
