package main

import (
	"context"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest"
)

// TestOpenRequests_HintO1_NoHintLogN counts the object-store requests of
// one open of the latest version (V2 manifest naming, lance-table-format.md
// §4.5): with the latest-version hint the count does not grow with the
// number of versions; without it, it grows at most logarithmically.
func TestOpenRequests_HintO1_NoHintLogN(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	recs := tripleBatches(0, 10, 10)
	defer releaseAll(recs)
	if err := createOurs(ctx, dir, recs); err != nil {
		t.Fatal(err)
	}
	versions := 1
	withHint := map[int]float64{}
	for _, target := range []int{2, 8, 32, 128} {
		if _, err := appendOurs(ctx, dir, recs, target-versions); err != nil {
			t.Fatal(err)
		}
		versions = target
		n, err := countRequests(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		withHint[target] = n
		// Without the hint: a copy of the table that has none.
		bare := filepath.Join(t.TempDir(), fmt.Sprintf("bare-%d", target))
		if err := os.CopyFS(bare, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(bare, manifest.VersionsDir, manifest.HintName)); err != nil {
			t.Fatal(err)
		}
		m, err := countRequests(ctx, bare)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%3d versions: %v requests with the hint, %v without", target, n, m)
		if n != withHint[2] {
			t.Errorf("%d versions: %v requests with the hint, %v at 2 versions: not O(1)", target, n, withHint[2])
		}
		if limit := float64(4 + 2*bits.Len(uint(target))); m > limit {
			t.Errorf("%d versions: %v requests without the hint, more than %v (O(log n))", target, m, limit)
		}
	}
}
