package commit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

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
// vector index bitmap is wrong (fragments 1-10; the index holds fragment
// 0's rows too). Our commit builds on a version Lance 0.8.14 wrote, so it
// recomputes the bitmap from the legacy IVF_PQ file's row ids (0-10), and,
// as Lance 12 does on every commit, infers the index's missing vector
// details from the file (L2, PQ 8 bits, 16 sub-vectors), lists its files
// and writes index_version. The next commit (our writer version, trusted)
// leaves all of it alone. tests/compat's
// TestOldWriterIndexBitmap_SameAsLance12_5_2e checks the bytes against
// Lance 12's own commit.
func TestOldWriterFixup_IndexBitmap_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := writableCopy(t, filepath.Join(corpus, "historical", "0.8.14", "corrupt_index"))
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v := "x"
	cfg := func() *pb.IndexMetadata {
		head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if _, err = Commit(ctx, st, NewUpdateConfig(head.Manifest.GetVersion(), UpdateConfigSpec{Config: []ConfigChange{{Key: "k", Value: &v}}}), Options{}); err != nil {
			t.Fatalf("commit on the Lance 0.8.14 table: %v", err)
		}
		head, _, err = manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(head.Indices()); n != 1 {
			t.Fatalf("%d indices", n)
		}
		return head.Indices()[0]
	}
	idx := cfg()
	bm := roaring.New()
	if _, err := bm.FromUnsafeBytes(idx.GetFragmentBitmap()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(bm.ToArray()) != "[0 1 2 3 4 5 6 7 8 9 10]" {
		t.Errorf("recomputed bitmap %v, want fragments 0-10", bm.ToArray())
	}
	if d := idx.GetIndexDetails(); d.GetTypeUrl() != "/lance.index.pb.VectorIndexDetails" || string(d.GetValue()) != "\x22\x04\x08\x08\x10\x10" {
		t.Errorf("inferred details %v", d)
	}
	if len(idx.GetFiles()) != 1 || idx.GetFiles()[0].GetPath() != "index.idx" || idx.GetFiles()[0].GetSizeBytes() != 181230 || idx.IndexVersion == nil {
		t.Errorf("files %v, index_version %v", idx.GetFiles(), idx.IndexVersion)
	}
	if again := cfg(); !proto.Equal(again, idx) {
		t.Errorf("the next commit changed the index entry:\n%v\n%v", idx, again)
	}
}

// writableCopy copies a corpus table into a temporary directory, writable.
func writableCopy(t *testing.T, src string) string {
	t.Helper()
	dir := copyDir(t, src)
	if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, fi.Mode()|0o200)
	}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestIndexFixup_RecomputeClasses_5_2e: what a commit does with an index
// whose bitmap Lance recomputes, by kind (on a version Lance 0.8.14 wrote,
// files absent): Bitmap, LabelList (a list column without details),
// Inverted and v2-format vector indices fail with ErrIndexBitmap because
// Lance 12's recompute panics on them; NGram, a system index in an
// overlap, an index under another base path and any index of a dataset
// with a fragment-reuse index fail with ErrIndexBitmap because this build
// does not read them; a BTree whose page file is missing is what Lance 12
// logs and commits past: its bitmap, trusted only by the old writer's
// word, is dropped; one that had none stays without.
func TestIndexFixup_RecomputeClasses_5_2e(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := uint32(1)
	prev := &pb.Manifest{
		Version:       3,
		WriterVersion: &pb.Manifest_WriterVersion{Library: "lance", Version: "0.8.14"},
		Fields: []*pb.Field{
			{Id: 0, Name: "x", LogicalType: "int64"},
			{Id: 1, Name: "tags", LogicalType: "list"},
			{Id: 2, Name: "v", LogicalType: "fixed_size_list:float:4"},
		},
		BasePaths: []*pb.BasePath{{Id: 1, Path: "/elsewhere"}},
	}
	some, _ := roaring.BitmapOf(0, 1).ToBytes()
	entry := func(name string, field int32, url string, bm []byte) *pb.IndexMetadata {
		idx := &pb.IndexMetadata{Uuid: &pb.UUID{Uuid: []byte(fmt.Sprintf("%-16s", name))[:16]}, Name: name, Fields: []int32{field}, FragmentBitmap: bm}
		if url != "" {
			idx.IndexDetails = &anypb.Any{TypeUrl: url}
		}
		return idx
	}
	// A v2-format vector index file: only its footer (version 0.3) matters.
	v3 := entry("vec", 2, "/lance.index.pb.VectorIndexDetails", some)
	u, _ := manifest.IndexUUID(v3)
	foot := make([]byte, 16)
	binary.LittleEndian.PutUint16(foot[10:], 3)
	copy(foot[12:], "LANC")
	if err := st.Put(ctx, "_indices/"+u+"/index.idx", foot); err != nil {
		t.Fatal(err)
	}
	other := entry("b", 0, "/lance.table.BTreeIndexDetails", some)
	other.BaseId = &base
	for _, tc := range []struct {
		name    string
		indices []*pb.IndexMetadata
		want    error  // nil: the commit goes on
		bitmap  string // of the first index when want is nil
	}{
		{"Bitmap", []*pb.IndexMetadata{entry("b", 0, "/lance.table.BitmapIndexDetails", some)}, errLanceCannot, ""},
		{"LabelList inferred", []*pb.IndexMetadata{entry("l", 1, "", some)}, errLanceCannot, ""},
		{"Inverted", []*pb.IndexMetadata{entry("f", 0, "/lance.table.InvertedIndexDetails", nil)}, errLanceCannot, ""},
		{"v2 vector index", []*pb.IndexMetadata{v3}, errLanceCannot, ""},
		{"field not in schema", []*pb.IndexMetadata{entry("g", 9, "/lance.table.BTreeIndexDetails", some)}, errLanceCannot, ""},
		{"NGram", []*pb.IndexMetadata{entry("n", 0, "/lance.table.NGramIndexDetails", some)}, errNotImplemented, ""},
		{"other base", []*pb.IndexMetadata{other}, errNotImplemented, ""},
		{"fragment reuse", []*pb.IndexMetadata{entry("b", 0, "/lance.table.BTreeIndexDetails", some), entry("__lance_frag_reuse", 0, "", some)}, errNotImplemented, ""},
		{"BTree unreadable, old writer's bitmap", []*pb.IndexMetadata{entry("b", 0, "/lance.table.BTreeIndexDetails", some)}, nil, "unknown"},
		{"BTree unreadable, no bitmap", []*pb.IndexMetadata{entry("b", 0, "/lance.table.BTreeIndexDetails", nil)}, nil, "unknown"},
	} {
		out, err := fixIndices(ctx, st, prev, tc.indices)
		if tc.want != nil {
			if !errors.Is(err, ErrIndexBitmap) || !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want ErrIndexBitmap (%v)", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := "unknown"
		if raw := out[0].GetFragmentBitmap(); len(raw) > 0 {
			got = fmt.Sprint(raw)
		}
		if got != tc.bitmap || out[0].IndexVersion == nil || tc.indices[0].IndexVersion != nil {
			t.Errorf("%s: bitmap %s (want %s), index_version %v; input modified: %v", tc.name, got, tc.bitmap, out[0].IndexVersion, tc.indices[0].IndexVersion != nil)
		}
	}
}

// TestIndexFixup_ScalarFragmentsAsStored_5_2e: the BTree recompute (row
// ids of page_data.lance) gives, on the corpus tables whose BTree indices
// Lance wrote (0.36, Lance 12), exactly the fragment bitmaps Lance
// recorded when it built them; the Bitmap and LabelList indices of the
// same tables are the kinds Lance 12 cannot recompute; the 0.20 BTree,
// whose pages are a legacy v1 file, is one this build does not read.
func TestIndexFixup_ScalarFragmentsAsStored_5_2e(t *testing.T) {
	ctx := context.Background()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, rel := range []string{"historical/0.20.0/old_btree_bitmap_indices.lance", "historical/0.36.0/btree_in_index_pkg.lance", "lance12/scalar_indices.lance"} {
		st, err := store.Open(ctx, filepath.Join(corpus, rel))
		if err != nil {
			t.Fatal(err)
		}
		head, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, idx := range head.Indices() {
			bm, err := readIndexFragments(ctx, st, head.Manifest, idx, nil)
			switch {
			case idx.GetName() == "bitmap_idx" || idx.GetName() == "tags_idx":
				if !errors.Is(err, errLanceCannot) {
					t.Errorf("%s %s: %v, want errLanceCannot", rel, idx.GetName(), err)
				}
				continue
			case strings.HasPrefix(rel, "historical/0.20.0"):
				if !errors.Is(err, errNotImplemented) {
					t.Errorf("%s %s: %v, want errNotImplemented", rel, idx.GetName(), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", rel, idx.GetName(), err)
				continue
			}
			stored := roaring.New()
			if _, err := stored.FromUnsafeBytes(idx.GetFragmentBitmap()); err != nil {
				t.Fatal(err)
			}
			if !bm.Equals(stored) {
				t.Errorf("%s %s: recomputed %v, Lance recorded %v", rel, idx.GetName(), bm.ToArray(), stored.ToArray())
			}
			checked++
		}
		st.Close()
	}
	if checked != 3 {
		t.Errorf("%d BTree indices checked, want 3", checked)
	}
}
