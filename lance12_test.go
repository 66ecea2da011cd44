package lancekeeper

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// Real Lance 12 (the node peer) reads what the facade writes, value by
// value: Create (two files), Append, Overwrite, a tag, a branch, Restore,
// a shallow clone, Delete by predicate and Compact; after EnableZoneWriteSeeds it refuses the dataset
// naming the unsupported flag bit 16 (R55).
func TestLance12_ReadsWhatTheFacadeWrote(t *testing.T) {
	peer := peerlance.ServeForTest(t)
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "t.lance")
	ds := create(t, uri, 100, WithMaxRowsPerFile(60))
	ds = mustT[*Dataset](t)(ds.Append(ctx, rows(100, 250)))
	mustT[Tag](t)(ds.Tags().Create(ctx, "two", 0))

	// Every value of version 2, in row-address order.
	got, err := peer.Rows(ctx, uri, peerlance.OrderByRowAddr())
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.NumRows != 250 {
		t.Fatalf("Lance reads version %d with %d rows", got.Version, got.NumRows)
	}
	xi, si := got.Column("x"), got.Column("s")
	for i, row := range got.Rows {
		var x, s string
		if err := json.Unmarshal(row[xi], &x); err != nil {
			t.Fatalf("row %d x: %v", i, err)
		}
		if err := json.Unmarshal(row[si], &s); err != nil {
			t.Fatalf("row %d s: %v", i, err)
		}
		if x != fmt.Sprint(i) || s != fmt.Sprintf("row%d", i) {
			t.Fatalf("Lance row %d: x=%s s=%q", i, x, s)
		}
	}

	// Overwrite, Restore, a branch and a shallow clone, counted by Lance.
	ds = mustT[*Dataset](t)(ds.Overwrite(ctx, rows(0, 7)))
	count := func(dir string, want int64, opts ...peerlance.ReadOption) {
		t.Helper()
		_, n, err := peer.Count(ctx, dir, opts...)
		if err != nil {
			t.Fatalf("Lance count %s: %v", dir, err)
		}
		if n != want {
			t.Fatalf("Lance counts %d rows in %s, want %d", n, dir, want)
		}
	}
	count(uri, 7)
	count(uri, 250, peerlance.AtTag("two"))
	two := mustT[*Dataset](t)(ds.Checkout(ctx, AtTag("two")))
	head := mustT[*Dataset](t)(two.Restore(ctx))
	count(uri, 250)
	dev := mustT[*Dataset](t)(head.Branches().Create(ctx, "dev", 0))
	mustT[*Dataset](t)(dev.Append(ctx, rows(250, 260)))
	count(uri, 250)
	count(filepath.Join(uri, "tree", "dev"), 260)
	clone := mustT[*Dataset](t)(head.Clone(ctx, filepath.Join(dir, "clone.lance")))
	defer clone.Close()
	mustT[*Dataset](t)(clone.Append(ctx, rows(0, 5)))
	count(filepath.Join(dir, "clone.lance"), 255)

	// Delete by predicate and compaction through the facade.
	head, n, err := head.Delete(ctx, "x >= 200 OR s = 'row3'")
	if err != nil || n != 51 {
		t.Fatalf("delete: %d rows, %v", n, err)
	}
	count(uri, 199)
	count(uri, 1, peerlance.Where("x = 4"))
	count(uri, 0, peerlance.Where("x = 3"))
	head = mustT[*Dataset](t)(head.Compact(ctx))
	if s := mustT[*Summary](t)(head.Summary(ctx)); s.Fragments != 1 || s.Rows != 199 {
		t.Fatalf("compacted: %+v", s)
	}
	count(uri, 199)

	// The explicit activation: Lance 12 refuses the dataset.
	mustT[*Dataset](t)(head.EnableZoneWriteSeeds(ctx))
	if _, _, err := peer.Count(ctx, uri); err == nil || !(strings.Contains(err.Error(), "Flags: 65536") || strings.Contains(err.Error(), "Flags: 65537")) {
		t.Fatalf("Lance 12 on the flagged version: %v, want its unsupported-flags error naming 65536 or 65537 (bit 16, with bit 0 when deletion files remain)", err)
	}
}
