package maint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

// indexedRow is one row of the indexed-query test table.
type indexedRow struct {
	id int
}

func (r indexedRow) c() string { return fmt.Sprintf("c%d", r.id%3) }
func (r indexedRow) z() int    { return (r.id * 7) % 50 }
func (r indexedRow) tags() []string {
	return []string{fmt.Sprintf("t%d", r.id%4), fmt.Sprintf("u%d", r.id%2)}
}

func (r indexedRow) json() string {
	return fmt.Sprintf(`{"id":%d,"s":"v%d","c":%q,"z":%d,"tags":["%s","%s"]}`, r.id, r.id, r.c(), r.z(), r.tags()[0], r.tags()[1])
}

// TestCompactIndicesLance12 (§5.5 Rewrite, index fragment bitmaps): a
// table with a BTree (id), a bitmap (c), a label_list (tags) index built by
// Lance 12 and a ZoneMap index (z) built by lancekeeper, over fragments with
// deletions and an unindexed tail. After our compaction (no index files
// rewritten: without stable row ids the rewritten fragments leave the
// bitmaps, with stable row ids the bitmaps follow the rows as Lance 12's
// own compaction commits them) every indexed predicate returns in Lance 12
// exactly the live rows the predicate matches (the rows an unindexed scan
// returns); Lance 12 then appends, optimizes (compaction and index
// optimization) and still agrees.
func TestCompactIndicesLance12(t *testing.T) {
	p, err := peerlance.ForTest(t).Serve()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, stable := range []bool{false, true} {
		t.Run(fmt.Sprintf("stable%v", stable), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "t.lance")
			data := func(base int) string {
				f := filepath.Join(tmp, fmt.Sprintf("d%d.json", base))
				var parts []string
				for i := base; i < base+20; i++ {
					parts = append(parts, indexedRow{i}.json())
				}
				if err := os.WriteFile(f, []byte("["+strings.Join(parts, ",")+"]"), 0o644); err != nil {
					t.Fatal(err)
				}
				return f
			}
			create := []string{"create", "--data", data(0), "--storage-version", "2.2"}
			if stable {
				create = append(create, "--stable-row-ids")
			}
			if _, err := p.Script(ctx, dir, [][]string{
				create,
				{"append", "--data", data(20)},
				{"append", "--data", data(40)},
				{"create-index", "id", "--type", "btree", "--name", "id_idx"},
				{"create-index", "c", "--type", "bitmap", "--name", "c_idx"},
				{"create-index", "tags", "--type", "label_list", "--name", "tags_idx"},
			}); err != nil {
				t.Fatal(err)
			}
			st := openLocal(ctx, t, dir)
			if _, err := zonemap.Create(ctx, st, zonemap.CreateOptions{Column: "z", RowsPerZone: 8}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Script(ctx, dir, [][]string{
				{"delete", "--where", "id < 5 OR id = 45"},
				{"append", "--data", data(60)},
			}); err != nil {
				t.Fatal(err)
			}
			live := map[int]bool{}
			for i := 0; i < 80; i++ {
				live[i] = i >= 5 && i != 45
			}
			queries := []struct {
				pred, index string
				keep        func(indexedRow) bool
			}{
				{"id >= 3 AND id < 50", "id_idx", func(r indexedRow) bool { return r.id >= 3 && r.id < 50 }},
				{"id = 45", "id_idx", func(indexedRow) bool { return false }},
				{"id IN (2, 7, 45, 61)", "id_idx", func(r indexedRow) bool { return r.id == 7 || r.id == 61 }},
				{"c = 'c1'", "c_idx", func(r indexedRow) bool { return r.c() == "c1" }},
				{"array_has_any(tags, ['t1'])", "tags_idx", func(r indexedRow) bool { return r.tags()[0] == "t1" }},
				{"z >= 10 AND z < 30", "z_idx", func(r indexedRow) bool { return r.z() >= 10 && r.z() < 30 }},
			}
			check := func(stage string, mustUseIndex bool) {
				t.Helper()
				for _, q := range queries {
					var got, want []string
					for _, r := range readPeer(ctx, t, p, dir, peerlance.Where(q.pred)).rows {
						got = append(got, strings.Split(r, "|")[1])
					}
					for i := 0; i < 100; i++ {
						if live[i] && q.keep(indexedRow{i}) {
							want = append(want, fmt.Sprintf(`"v%d"`, i))
						}
					}
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Errorf("%s: where %s: Lance 12 returns %v, want %v", stage, q.pred, got, want)
					}
					var plan struct {
						PlanUses []struct{ Index string } `json:"plan_uses"`
					}
					if err := p.RunJSON(ctx, &plan, "filter", dir, "--where", q.pred); err != nil {
						t.Fatalf("%s: filter %s: %v", stage, q.pred, err)
					}
					t.Logf("%s: where %s: %d rows, plan uses %v", stage, q.pred, len(got), plan.PlanUses)
					// A ZoneMap index keys zones by fragment and offset: it never
					// follows the rows to the new fragments.
					use := mustUseIndex && (stage != "after our compaction" || q.index != "z_idx")
					if use && (len(plan.PlanUses) == 0 || plan.PlanUses[0].Index != q.index) {
						t.Errorf("%s: where %s: Lance 12's plan uses %v, want %s", stage, q.pred, plan.PlanUses, q.index)
					}
				}
			}
			check("before", true)
			res, err := maint.Compact(ctx, st, maint.CompactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Version == 0 {
				t.Fatal("nothing compacted")
			}
			// The bitmaps: no vanished fragment, and new fragments only with
			// stable row ids.
			head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
			if err != nil {
				t.Fatal(err)
			}
			have := map[uint32]bool{}
			for _, f := range head.Manifest.GetFragments() {
				have[uint32(f.GetId())] = true
			}
			for _, ix := range head.Indices() {
				bm := roaring.New()
				if _, err := bm.FromBuffer(ix.GetFragmentBitmap()); err != nil {
					t.Fatal(err)
				}
				for _, id := range bm.ToArray() {
					if !have[id] {
						t.Errorf("index %s still covers fragment %d, which compaction removed", ix.GetName(), id)
					}
				}
				if !stable && !bm.IsEmpty() && ix.GetName() != "z_idx" {
					t.Errorf("index %s covers %v after compaction without stable row ids; its files still hold the old row addresses", ix.GetName(), bm.ToArray())
				}
			}
			check("after our compaction", stable)
			// Lance 12 keeps writing: an append, then optimize (compaction
			// and index optimization), then a delete.
			if _, err := p.Script(ctx, dir, [][]string{
				{"append", "--data", data(80)},
				{"optimize"},
				{"delete", "--where", "id = 81"},
			}); err != nil {
				t.Fatalf("Lance 12 writing after our compaction: %v", err)
			}
			for i := 80; i < 100; i++ {
				live[i] = i != 81
			}
			check("after Lance 12 append/optimize/delete", true)
			if _, n, err := p.Count(ctx, dir); err != nil || n != 93 {
				t.Errorf("Lance 12 counts %d (%v), want 93", n, err)
			}
		})
	}
}
