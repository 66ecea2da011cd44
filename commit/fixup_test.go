package commit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestOldWriterFixup_5_2e: a commit on a table whose latest manifest has no
// writer_version (Lance 0.7.5, legacy storage, physical_rows and
// num_deleted_rows left 0) writes the statistics Lance 12 computes for the
// same table: the data file's row count, the deletion file's cardinality
// and the data file's size; Lance 12 then counts the same live rows.
func TestOldWriterFixup_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, filepath.Join(corpus, "historical", "0.7.5", "with_deletions"))
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if head.Manifest.GetWriterVersion() != nil || head.Manifest.GetFragments()[0].GetPhysicalRows() != 0 {
		t.Fatal("corpus table changed: want no writer_version and physical_rows 0")
	}
	v := "x"
	res, err := Commit(ctx, st, NewUpdateConfig(head.Manifest.GetVersion(), UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: &v}}}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Manifest.GetFragments()[0]
	info, err := os.Stat(filepath.Join(dir, "data", f.GetFiles()[0].GetPath()))
	if err != nil {
		t.Fatal(err)
	}
	if f.GetPhysicalRows() != 100 || f.GetDeletionFile().GetNumDeletedRows() != 10 || f.GetFiles()[0].GetFileSizeBytes() != uint64(info.Size()) {
		t.Fatalf("fixed statistics: physical_rows %d, num_deleted_rows %d, file_size_bytes %d (file %d bytes); want 100, 10, file size",
			f.GetPhysicalRows(), f.GetDeletionFile().GetNumDeletedRows(), f.GetFiles()[0].GetFileSizeBytes(), info.Size())
	}
	p := peerlance.ForTest(t)
	if _, n, err := p.Count(ctx, dir); err != nil || n != 90 {
		t.Fatalf("Lance 12 counts %d rows (%v), want 90", n, err)
	}
}

// TestOldWriterFixup_FieldIDs_5_2e (§5.2 e, colliding field ids): the Lance
// 0.10.5 corpus table whose add/drop-column history gave two columns the
// ids of existing ones. Lance 12 deleting a row on one copy and our commit
// of the same Delete on an identical copy give the same schema ids, the
// same data files per fragment (with the same field ids; the file no
// field of the schema is left in dropped), and Lance 12 reads the same rows
// from both.
func TestOldWriterFixup_FieldIDs_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(corpus, "historical", "0.10.5", "corrupt_schema")
	ours, theirs := copyDir(t, src), copyDir(t, src)
	for _, d := range []string{ours, theirs} {
		if err := filepath.Walk(d, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chmod(p, fi.Mode()|0o200)
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := peerlance.ForTest(t)
	// The peer's re-open after the write (checkoutLatest) fails on this
	// V1-named table after Lance 12 committed version 7; the commit is
	// what is compared.
	if _, err := p.Delete(ctx, theirs, "x = 1"); err != nil {
		if _, serr := os.Stat(filepath.Join(theirs, "_versions", "7.manifest")); !strings.Contains(err.Error(), "checkoutLatest") || serr != nil {
			t.Fatalf("Lance 12 delete: %v", err)
		}
	}
	st, err := store.Open(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	// x = 1 is row 1 of fragment 0 (Lance 12 reads it at row address 1).
	del, err := NewDelete(ctx, st, head, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(1)}, "x = 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, st, del, Options{}); err != nil {
		t.Fatal(err)
	}
	describe := func(dir string) string {
		s, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f, _, err := manifest.LoadLatest(ctx, s.Bucket(), s.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, fl := range f.Manifest.GetFields() {
			fmt.Fprintf(&b, "field %s id %d parent %d\n", fl.GetName(), fl.GetId(), fl.GetParentId())
		}
		for _, fr := range f.Manifest.GetFragments() {
			for _, df := range fr.GetFiles() {
				fmt.Fprintf(&b, "fragment %d file %s fields %v\n", fr.GetId(), df.GetPath(), df.GetFields())
			}
		}
		return b.String()
	}
	if got, want := describe(ours), describe(theirs); got != want {
		t.Errorf("after our Delete:\n%s\nafter Lance 12's:\n%s", got, want)
	}
	if !strings.Contains(describe(ours), "field b id 4") {
		t.Errorf("the colliding ids were not renumbered:\n%s", describe(ours))
	}
	a, err := p.Rows(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Rows(ctx, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || a.NumRows != 3 {
		t.Errorf("Lance 12 reads %d rows %s from our table, %s from its own", a.NumRows, fmt.Sprint(a.Rows), fmt.Sprint(b.Rows))
	}
}

// TestOldWriterFixup_SameStatisticsAsLance12 (§5.2 e): on identical copies
// of the Lance 0.7.5 table (no writer_version, statistics left 0), Lance 12
// deleting x = 50 and our commit of the same Delete write the same
// physical_rows, num_deleted_rows and file_size_bytes, and Lance 12 counts
// the same rows on both.
func TestOldWriterFixup_SameStatisticsAsLance12(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(corpus, "historical", "0.7.5", "with_deletions")
	ours, theirs := copyDir(t, src), copyDir(t, src)
	for _, d := range []string{ours, theirs} {
		if err := filepath.Walk(d, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chmod(p, fi.Mode()|0o200)
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := peerlance.ForTest(t)
	if _, err := p.Delete(ctx, theirs, "x = 50"); err != nil {
		if _, serr := os.Stat(filepath.Join(theirs, "_versions", "3.manifest")); !strings.Contains(err.Error(), "checkoutLatest") || serr != nil {
			t.Fatalf("Lance 12 delete: %v", err)
		}
	}
	st, err := store.Open(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	// x = 50 is row 50 of fragment 0 (x counts the rows).
	del, err := NewDelete(ctx, st, head, map[uint64]*roaring.Bitmap{0: roaring.BitmapOf(50)}, "x = 50")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, st, del, Options{}); err != nil {
		t.Fatal(err)
	}
	stats := func(dir string) string {
		s, err := store.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f, _, err := manifest.LoadLatest(ctx, s.Bucket(), s.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, fr := range f.Manifest.GetFragments() {
			fmt.Fprintf(&b, "fragment %d physical_rows %d num_deleted_rows %d", fr.GetId(), fr.GetPhysicalRows(), fr.GetDeletionFile().GetNumDeletedRows())
			for _, df := range fr.GetFiles() {
				fmt.Fprintf(&b, " %s %d bytes", df.GetPath(), df.GetFileSizeBytes())
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	if got, want := stats(ours), stats(theirs); got != want || !strings.Contains(got, "num_deleted_rows 11") {
		t.Errorf("statistics after our Delete:\n%safter Lance 12's:\n%s", got, want)
	}
	for _, d := range []string{ours, theirs} {
		if _, n, err := p.Count(ctx, d); err != nil || n != 89 {
			t.Errorf("Lance 12 counts %d rows (%v) in %s, want 89", n, err, d)
		}
	}
}
