package compat_test

// Lance → us (issue 4 §2): datasets that real Lance 12 builds during the
// test, from seeded random schemas and operation sequences, are read by our
// library with the same versions, flags, schema, row counts, tags and
// indices, and — for storage 2.0, which our page reader decodes — the same
// rows at the same row addresses, bit for bit.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

type randomCase struct {
	seed  uint64
	opts  peerlance.RandomOptions
	short bool // also run under -short
}

// lanceRandomCases are chosen so that together they run every operation
// the generator knows (checked below) on storage 2.0, plus 2.1, 2.2 and
// legacy tables whose metadata (not rows: our page reader decodes 2.0) we
// read.
func lanceRandomCases() []randomCase {
	return []randomCase{
		{seed: 1, opts: peerlance.RandomOptions{Ops: 14}, short: true},
		{seed: 6, opts: peerlance.RandomOptions{Ops: 16}},
		{seed: 9, opts: peerlance.RandomOptions{Ops: 16}},
		{seed: 5, opts: peerlance.RandomOptions{Ops: 12, StableRowIDs: true, MaxBatchRows: 60}, short: true},
		{seed: 4, opts: peerlance.RandomOptions{Ops: 12, V1Paths: true}},
		{seed: 2, opts: peerlance.RandomOptions{Ops: 10, StorageVersion: "2.1", StableRowIDs: true}, short: true},
		{seed: 3, opts: peerlance.RandomOptions{Ops: 10, StorageVersion: "2.2"}},
		{seed: 7, opts: peerlance.RandomOptions{Ops: 20}},
		{seed: 8, opts: peerlance.RandomOptions{Ops: 20, MaxBatchRows: 200}},
		{seed: 11, opts: peerlance.RandomOptions{Ops: 12, StorageVersion: "2.2", StableRowIDs: true, V1Paths: true}},
		{seed: 10, opts: peerlance.RandomOptions{Ops: 10, StorageVersion: "legacy"}},
	}
}

func TestLanceToUs_RandomDatasets(t *testing.T) {
	p := peerlance.ServeForTest(t)
	used := map[string]int{}
	ran := 0
	all := lanceRandomCases()
	for _, tc := range all {
		name := fmt.Sprintf("seed%d_storage%s", tc.seed, tc.opts.StorageVersion)
		if tc.opts.StorageVersion == "" {
			name = fmt.Sprintf("seed%d_storage2.0", tc.seed)
		}
		t.Run(name, func(t *testing.T) {
			if testing.Short() && !tc.short {
				t.Skip("-short: fewer seeds")
			}
			record(t, catLanceToUs)
			ran++
			ctx := peerContext(t)
			dir := filepath.Join(t.TempDir(), "rand.lance")
			ds, err := peerlance.MakeRandomDataset(ctx, p, dir, tc.seed, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ds.Steps {
				used[s.Args[0]]++
			}
			ag := agreeOnDataset(ctx, t, p, dir)
			if uint64(ag.versions) != ds.Latest {
				t.Errorf("compared %d versions, Lance built %d", ag.versions, ds.Latest)
			}
			// Every storage version decodes (legacy, 2.0, 2.1, 2.2): each
			// version's rows were compared with Lance's above.
			if len(ag.notDecodable) > 0 {
				t.Errorf("storage %q: versions %v were not decodable by our reader", tc.opts.StorageVersion, ag.notDecodable)
			}
			// Our rows of the latest version also match the generator's model,
			// except in legacy (0.1) files: that format keeps no validity for
			// primitive columns, so Lance 12 itself returns zeros and empty
			// strings for the model's nulls there (our rows equal Lance's, above).
			if tc.opts.StorageVersion != "legacy" {
				rows, _, err := readOurRows(ctx, dir, 0)
				if err != nil {
					t.Fatal(err)
				}
				checkAgainstModel(t, rows, ds.States[ds.Latest])
			}
			if t.Failed() {
				for _, s := range ds.Steps {
					t.Logf("step %s", s)
				}
			}
			t.Logf("seed %d: %d steps, %d versions agree; rows of %d versions (%d rows) identical", tc.seed, len(ds.Steps), ag.versions, ag.rowVersions, ag.rows)
		})
	}
	if ran < len(all) {
		return // -short or -run left seeds out
	}
	for _, op := range []string{"create", "append", "delete", "update", "tag-create", "tag-update", "tag-delete", "create-index", "drop-index", "restore", "optimize", "add-columns"} {
		if used[op] == 0 {
			t.Errorf("no seed ran %s (ran %v); choose other seeds", op, used)
		}
	}
}

// checkAgainstModel compares our rows (sorted by id) with the generator's
// model of the version.
func checkAgainstModel(t *testing.T, rows *ourRows, st *peerlance.State) {
	t.Helper()
	var names []string
	for _, c := range st.Columns {
		names = append(names, c.Name)
	}
	if !slices.Equal(rows.Columns, names) {
		t.Fatalf("columns: ours %v, model %v", rows.Columns, names)
	}
	got := slices.Clone(rows.Rows)
	slices.SortFunc(got, func(a, b []string) int { return compareCanonicalInt(a[0], b[0]) })
	model := st.SortedRows()
	if len(got) != len(model) {
		t.Fatalf("ours %d rows, model %d", len(got), len(model))
	}
	for i := range got {
		if !slices.Equal(got[i], model[i].Values) {
			t.Errorf("row id=%d:\n  ours  %v\n  model %v", model[i].ID, got[i], model[i].Values)
		}
	}
}

// compareCanonicalInt orders canonical int64 values ("\"-12\"").
func compareCanonicalInt(a, b string) int {
	x, y := canonicalInt(a), canonicalInt(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func canonicalInt(s string) int64 {
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
