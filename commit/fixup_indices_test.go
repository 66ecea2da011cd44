package commit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// TestIndexBitmapSuspect_5_2e: which writer versions' index bitmaps Lance
// recomputes (none recorded, Lance before 0.8.15); other libraries' are
// trusted.
func TestIndexBitmapSuspect_5_2e(t *testing.T) {
	for _, tc := range []struct {
		wv   *pb.Manifest_WriterVersion
		want bool
	}{
		{nil, true},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "0.8.14"}, true},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "0.7.5"}, true},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "0.8.15"}, false},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "0.10.5"}, false},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "12.0.0"}, false},
		{&pb.Manifest_WriterVersion{Library: "lance", Version: "junk"}, true},
		{&pb.Manifest_WriterVersion{Library: "lancekeeper", Version: "0.1.0"}, false},
	} {
		if got := bitmapsSuspect(tc.wv); got != tc.want {
			t.Errorf("bitmapsSuspect(%v) = %v, want %v", tc.wv, got, tc.want)
		}
	}
	a, _ := roaring.BitmapOf(1, 2).ToBytes()
	b, _ := roaring.BitmapOf(2, 3).ToBytes()
	c, _ := roaring.BitmapOf(4).ToBytes()
	got := overlappingSegments([]*pb.IndexMetadata{{Name: "x", FragmentBitmap: a}, {Name: "x", FragmentBitmap: b}, {Name: "y", FragmentBitmap: a}, {Name: "y", FragmentBitmap: c}})
	if !got["x"] || got["y"] {
		t.Errorf("overlapping segments %v, want x only", got)
	}
}

// TestOldWriterFixup_IndexBitmap_5_2e: the Lance 0.8.14 corpus table whose
// vector index bitmap is wrong. Our commit would carry the bitmap over
// under this writer's version, which Lance then trusts, so it is refused
// with ErrIndexBitmap; once Lance 12 has committed on the table (and
// recomputed the bitmap), our commit goes through.
func TestOldWriterFixup_IndexBitmap_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, filepath.Join(corpus, "historical", "0.8.14", "corrupt_index"))
	if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, fi.Mode()|0o200)
	}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v := "x"
	cfg := func() error {
		head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Commit(ctx, st, NewUpdateConfig(head.Manifest.GetVersion(), UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: &v}}}), Options{})
		return err
	}
	if err := cfg(); !errors.Is(err, ErrIndexBitmap) {
		t.Fatalf("commit on a Lance 0.8.14 table with an index: %v, want ErrIndexBitmap", err)
	}
	p := peerlance.ForTest(t)
	if _, err := p.Delete(ctx, dir, "id = 1"); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "_versions", "6.manifest")); serr != nil {
			t.Fatalf("Lance 12 delete: %v", err)
		}
	}
	if err := cfg(); err != nil {
		t.Fatalf("commit after Lance 12 recomputed the bitmap: %v", err)
	}
}
