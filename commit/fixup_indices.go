package commit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// checkIndexBitmaps is the index half of the §5.2 e fix-ups. Lance
// recomputes an index's fragment bitmap from the index's own row ids
// before it commits when the bitmap is absent, when the version the
// commit builds on was written by Lance older than 0.8.15 (whose bitmaps
// could be wrong — corpus historical/0.8.14/corrupt_index) or by a writer
// recording no version, or when segments of one index cover the same
// fragment. Another library's bitmaps are trusted. This build does not
// read index row ids, so such an index carried into the new manifest
// (same uuid as in prevIdx) refuses the commit with ErrIndexBitmap;
// system indices are exempt, as in Lance. Indices the transaction drops
// (Overwrite, CreateIndex replacing them) do not matter.
func checkIndexBitmaps(prev *pb.Manifest, prevIdx, next []*pb.IndexMetadata) error {
	old := map[string]bool{}
	for _, idx := range prevIdx {
		if u, err := manifest.IndexUUID(idx); err == nil {
			old[u] = true
		}
	}
	overlap := overlappingSegments(next)
	suspect := bitmapsSuspect(prev.GetWriterVersion())
	for _, idx := range next {
		u, err := manifest.IndexUUID(idx)
		if err != nil || !old[u] || systemIndex(idx) {
			continue
		}
		why := ""
		switch {
		case len(idx.GetFragmentBitmap()) == 0:
			why = "it records no fragment bitmap"
		case overlap[idx.GetName()]:
			why = "its segments cover the same fragment"
		case suspect:
			why = fmt.Sprintf("version %d was written by %s, whose bitmaps Lance recomputes", prev.GetVersion(), writerString(prev.GetWriterVersion()))
		default:
			continue
		}
		return fmt.Errorf("%w: index %q (%s): %s; commit once with Lance 12 (for example optimize) to recompute it, or drop the index", ErrIndexBitmap, idx.GetName(), u, why)
	}
	return nil
}

// bitmapsSuspect: no writer version, or Lance before 0.8.15 (an
// unparsable Lance version counts as old, as in Lance).
func bitmapsSuspect(wv *pb.Manifest_WriterVersion) bool {
	if wv == nil {
		return true
	}
	if wv.GetLibrary() != "lance" {
		return false
	}
	v := strings.TrimPrefix(wv.GetVersion(), "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return true
	}
	var n [3]uint64
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return true
		}
		n[i] = x
	}
	return n[0] == 0 && (n[1] < 8 || (n[1] == 8 && n[2] < 15))
}

func writerString(wv *pb.Manifest_WriterVersion) string {
	if wv == nil {
		return "a writer recording no version"
	}
	return wv.GetLibrary() + " " + wv.GetVersion()
}

// overlappingSegments returns the names of indices two of whose segments
// cover the same fragment.
func overlappingSegments(indices []*pb.IndexMetadata) map[string]bool {
	seen := map[string]*roaring.Bitmap{}
	bad := map[string]bool{}
	for _, idx := range indices {
		bm := roaring.New()
		if _, err := bm.FromUnsafeBytes(idx.GetFragmentBitmap()); err != nil || len(idx.GetFragmentBitmap()) == 0 {
			continue
		}
		if s := seen[idx.GetName()]; s != nil {
			if s.Intersects(bm) {
				bad[idx.GetName()] = true
			}
			s.Or(bm)
		} else {
			seen[idx.GetName()] = bm.Clone()
		}
	}
	return bad
}

// systemIndex: Lance's internal indices (fragment reuse, MemWAL), which it
// never recomputes.
func systemIndex(idx *pb.IndexMetadata) bool {
	u := idx.GetIndexDetails().GetTypeUrl()
	return strings.HasSuffix(u, "FragmentReuseIndexDetails") || strings.HasSuffix(u, "MemWalIndexDetails") ||
		idx.GetName() == "__lance_frag_reuse" || idx.GetName() == "__lance_mem_wal"
}
