package compat_test

// Old-writer index fragment bitmaps (lance-table-format.md §5.2 e, issue
// 14 item 5): on the Lance 0.8.14 table whose vector index bitmap is
// wrong, Lance 12 recomputes the bitmap from the index's row ids on its
// next commit; so does ours, and the two agree value by value.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/lancekeeper/lancekeeper"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// indexSection returns the latest version of dir and its index entries as
// text, each with its fragment bitmap decoded.
func indexSection(t *testing.T, ctx context.Context, dir string) (uint64, string) {
	t.Helper()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, idx := range f.Indices() {
		frags := "unknown"
		if raw := idx.GetFragmentBitmap(); len(raw) > 0 {
			bm := roaring.New()
			if _, err := bm.FromUnsafeBytes(raw); err != nil {
				t.Fatalf("%s: index %q: fragment bitmap: %v", dir, idx.GetName(), err)
			}
			frags = fmt.Sprint(bm.ToArray())
		}
		fmt.Fprintf(&b, "fragments %s: %s\n", frags, prototext.MarshalOptions{}.Format(idx))
	}
	return f.Manifest.GetVersion(), b.String()
}

// lanceDelete has Lance 12 delete where in dir, committing version want.
// The peer re-opens the dataset after the commit through a path that Lance
// 12 cannot check out for V1-named tables of old writers
// ("checkoutLatest"); the commit itself is judged by its manifest.
func lanceDelete(t *testing.T, ctx context.Context, p *peerlance.Peer, dir, where string, want uint64) {
	t.Helper()
	if _, err := p.Delete(ctx, dir, where); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "_versions", fmt.Sprintf("%d.manifest", want))); !strings.Contains(err.Error(), "checkoutLatest") || serr != nil {
			t.Fatalf("Lance 12 delete %q on %s: %v", where, dir, err)
		}
	}
}

type nearest struct {
	NumRows   int      `json:"num_rows"`
	RowIDs    []string `json:"row_ids"`
	Distances []string `json:"distances"`
	Plan      string   `json:"plan"`
}

// TestOldWriterIndexBitmap_SameAsLance12_5_2e: identical copies of
// historical/0.8.14/corrupt_index (its index's bitmap leaves out fragment
// 0, whose rows the index still holds); Lance 12 deletes id = 150 on one,
// lancekeeper on the other. Both commits recompute the bitmap from the
// legacy IVF_PQ file's row ids — fragments 0 to 10, fragment 0 included
// although the version no longer has it, as Lance's own test of this
// table expects — and write byte-identical index entries. Lance 12 then
// answers the same indexed vector query (through the IVF_PQ index) the
// same on both, counts the same rows, and keeps writing on ours with the
// bitmap left as it is.
func TestOldWriterIndexBitmap_SameAsLance12_5_2e(t *testing.T) {
	ctx := peerContext(t)
	p := peerlance.ForTest(t)
	ours := lanceCopy(t, "historical/0.8.14/corrupt_index")
	theirs := lanceCopy(t, "historical/0.8.14/corrupt_index")
	_, stored := indexSection(t, ctx, ours)
	if !strings.HasPrefix(stored, "fragments [1 2 3 4 5 6 7 8 9 10]") {
		t.Fatalf("the corpus table's stored bitmap changed: %s", stored)
	}
	lanceDelete(t, ctx, p, theirs, "id = 150", 6)
	ds, err := lancekeeper.Open(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := ds.Delete(ctx, "id = 150"); err != nil || n != 1 {
		t.Fatalf("our delete: %d rows, %v", n, err)
	}
	vo, a := indexSection(t, ctx, ours)
	vt, b := indexSection(t, ctx, theirs)
	if vo != 6 || vt != 6 || a != b || !strings.HasPrefix(a, "fragments [0 1 2 3 4 5 6 7 8 9 10]") {
		t.Fatalf("index entries after our delete (version %d):\n%s\nafter Lance 12's (version %d):\n%s", vo, a, vt, b)
	}
	query := func(dir string) nearest {
		var out nearest
		if err := p.RunJSON(ctx, &out, "nearest", dir, "--column", "vector", "--dim", "128", "--k", "20"); err != nil {
			t.Fatalf("Lance 12 vector query on %s: %v", dir, err)
		}
		return out
	}
	qa, qb := query(ours), query(theirs)
	if !strings.Contains(qa.Plan, "ANNIvfPartition") || qa.NumRows != 20 ||
		!slices.Equal(qa.RowIDs, qb.RowIDs) || !slices.Equal(qa.Distances, qb.Distances) {
		t.Errorf("Lance 12's indexed query on our table: %v %v\non its own: %v %v\nplan:\n%s", qa.RowIDs, qa.Distances, qb.RowIDs, qb.Distances, qa.Plan)
	}
	for _, d := range []string{ours, theirs} {
		if _, n, err := p.Count(ctx, d); err != nil || n != 1899 {
			t.Errorf("Lance 12 counts %d rows (%v) in %s, want 1899", n, err, d)
		}
		lanceDelete(t, ctx, p, d, "id = 151", 7)
	}
	_, a = indexSection(t, ctx, ours)
	_, b = indexSection(t, ctx, theirs)
	if a != b {
		t.Errorf("after Lance 12's next delete, ours:\n%s\ntheirs:\n%s", a, b)
	}
}

// TestOldWriterIndexBitmap_UnreadableIndexAsLance12_5_2e: the same table
// with its index file cut to its first 1000 bytes. Lance 12 cannot
// recompute the bitmap nor infer the details, logs it and commits anyway,
// dropping the bitmap it no longer trusts (coverage unknown) and listing
// the file as it now is; our commit writes the same index entry.
func TestOldWriterIndexBitmap_UnreadableIndexAsLance12_5_2e(t *testing.T) {
	ctx := peerContext(t)
	p := peerlance.ForTest(t)
	var dirs [2]string
	for i := range dirs {
		dirs[i] = lanceCopy(t, "historical/0.8.14/corrupt_index")
		f := filepath.Join(dirs[i], "_indices", "f358a219-95e8-4956-be35-0835f2bed10f", "index.idx")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b[:1000], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ours, theirs := dirs[0], dirs[1]
	lanceDelete(t, ctx, p, theirs, "id = 150", 6)
	ds, err := lancekeeper.Open(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := ds.Delete(ctx, "id = 150"); err != nil || n != 1 {
		t.Fatalf("our delete: %d rows, %v", n, err)
	}
	_, a := indexSection(t, ctx, ours)
	_, b := indexSection(t, ctx, theirs)
	if a != b || !strings.HasPrefix(a, "fragments unknown") {
		t.Fatalf("index entries after our delete:\n%s\nafter Lance 12's:\n%s", a, b)
	}
}

// TestIndexDetailsInferredAsLance12_V2Format: Lance 12's commit also
// infers the details of a vector index recorded without them, whatever
// the writer — here the Lance 0.29 table whose v2-format IVF_PQ index has
// an empty /lance.table.VectorIndexDetails — and lists the index's files.
// Lance 12 and we each restore version 2 on an identical copy (a commit
// that reads no data file: the table's data files are not in the corpus)
// and write byte-identical index entries (pq 8 bits × 4 sub-vectors,
// auxiliary.idx and index.idx with their sizes; the bitmap, trusted, is
// left alone).
func TestIndexDetailsInferredAsLance12_V2Format(t *testing.T) {
	ctx := peerContext(t)
	p := peerlance.ForTest(t)
	ours := lanceCopy(t, "historical/0.29.0/index_without_created_at")
	theirs := lanceCopy(t, "historical/0.29.0/index_without_created_at")
	if _, err := p.Restore(ctx, theirs, 2); err != nil {
		t.Fatalf("Lance 12 restore: %v", err)
	}
	ds, err := lancekeeper.Open(ctx, ours, lancekeeper.AtVersion(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Restore(ctx); err != nil {
		t.Fatalf("our restore: %v", err)
	}
	vo, a := indexSection(t, ctx, ours)
	vt, b := indexSection(t, ctx, theirs)
	if vo != 3 || vt != 3 || a != b || !strings.Contains(a, `value:"\"\x04\x08\x08\x10\x04"`) {
		t.Fatalf("index entries after our restore (version %d):\n%s\nafter Lance 12's (version %d):\n%s", vo, a, vt, b)
	}
}
