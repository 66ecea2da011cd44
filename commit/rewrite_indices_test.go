package commit

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// TestRewriteBitmaps_5_5 (§5.5 Rewrite, index fragment bitmaps, no
// rewritten indices): without stable row ids the rewritten fragments leave
// every bitmap and the new ones stay out (unindexed); with stable row ids a
// bitmap covering a whole group follows its rows to the new fragments, as
// Lance 12 commits it; a partly covered group makes the new fragments
// unindexed either way; bitmaps not touching a group are unchanged.
func TestRewriteBitmaps_5_5(t *testing.T) {
	frags := func(ids ...uint64) []*pb.DataFragment {
		var out []*pb.DataFragment
		for _, id := range ids {
			out = append(out, &pb.DataFragment{Id: id})
		}
		return out
	}
	groups := []*pb.Transaction_RewriteGroup{
		{OldFragments: frags(0, 1, 2), NewFragments: frags(10)},
		{OldFragments: frags(5, 6), NewFragments: frags(11, 12)},
	}
	newIDs := [][]uint64{{10}, {11, 12}}
	for _, tc := range []struct {
		before []uint32
		stable bool
		want   string
	}{
		{[]uint32{0, 1, 2, 3}, false, "[3]"},
		{[]uint32{0, 1, 2, 3}, true, "[3 10]"},
		{[]uint32{0, 1, 2, 5, 6}, true, "[10 11 12]"},
		{[]uint32{0, 1, 5, 6}, true, "[11 12]"}, // group 1 only partly covered
		{[]uint32{0, 1, 2, 5, 6}, false, "[]"},
		{[]uint32{3, 4}, false, "[3 4]"},
		{[]uint32{3, 4}, true, "[3 4]"},
	} {
		t.Run(fmt.Sprintf("%v_stable%v", tc.before, tc.stable), func(t *testing.T) {
			raw, err := roaring.BitmapOf(tc.before...).ToBytes()
			if err != nil {
				t.Fatal(err)
			}
			idx := &pb.IndexMetadata{Name: "i", FragmentBitmap: raw, IndexDetails: &anypb.Any{TypeUrl: "/lance.table.BTreeIndexDetails"}}
			if err := remapRewriteBitmaps([]*pb.IndexMetadata{idx}, groups, newIDs, tc.stable); err != nil {
				t.Fatal(err)
			}
			bm := roaring.New()
			if _, err := bm.FromBuffer(idx.GetFragmentBitmap()); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(bm.ToArray()); got != tc.want {
				t.Errorf("bitmap after rewrite %s, want %s", got, tc.want)
			}
		})
	}
	// Zone-based and unknown indices never follow the rows.
	for _, u := range []string{"/lance.table.ZoneMapIndexDetails", "/lance.table.BloomFilterIndexDetails", "", "/x.Unknown"} {
		raw, _ := roaring.BitmapOf(0, 1, 2, 3).ToBytes()
		idx := &pb.IndexMetadata{Name: "z", FragmentBitmap: raw}
		if u != "" {
			idx.IndexDetails = &anypb.Any{TypeUrl: u}
		}
		if err := remapRewriteBitmaps([]*pb.IndexMetadata{idx}, groups, newIDs, true); err != nil {
			t.Fatal(err)
		}
		bm := roaring.New()
		_, _ = bm.FromBuffer(idx.GetFragmentBitmap())
		if got := fmt.Sprint(bm.ToArray()); got != "[3]" {
			t.Errorf("%q index with stable row ids: bitmap %s after rewrite, want [3]", u, got)
		}
	}
	// A bitmap that is not a roaring bitmap is refused, not ignored.
	bad := &pb.IndexMetadata{Name: "bad", FragmentBitmap: []byte{1, 2, 3}}
	if err := remapRewriteBitmaps([]*pb.IndexMetadata{bad}, groups, newIDs, false); err == nil {
		t.Error("a corrupt fragment bitmap was accepted")
	}
}
