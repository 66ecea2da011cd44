package snapshot

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/store"
)

// activateSeeds commits the explicit FLAG_ZONE_WRITE_SEEDS activation
// (R56) on the main line of the dataset at dir and returns its version.
func activateSeeds(t testing.TB, dir string) uint64 {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := manifest.LatestVersion(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	res, err := commit.Commit(ctx, st, commit.NewEnableZoneWriteSeeds(info.Version), commit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !flags.Has(res.Manifest.GetReaderFeatureFlags(), res.Manifest.GetWriterFeatureFlags(), flags.ZoneWriteSeeds) {
		t.Fatalf("activation did not set bit 16: %d/%d", res.Manifest.GetReaderFeatureFlags(), res.Manifest.GetWriterFeatureFlags())
	}
	return res.Version
}

// latestFile returns the decoded latest manifest of the main line at dir.
func latestFile(t testing.TB, dir string) *manifest.File {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// foreignCommit writes a copy of the latest main manifest as the next
// version with edit applied, the way another (Lance) writer could have
// produced it; used to set bit 8 or stable row ids.
func foreignCommit(t testing.TB, dir string, edit func(m *pb.Manifest)) uint64 {
	t.Helper()
	f := latestFile(t, dir)
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version++
	edit(m)
	writeVersion(t, dir, m, f.IndexSection, nil)
	return m.GetVersion()
}

// withMixedVersionsBit adds a version carrying the sticky paired bit 8
// (MIXED_DATA_FILE_VERSIONS) in both words, as Lance 12 would.
func withMixedVersionsBit(t testing.TB, dir string) uint64 {
	return foreignCommit(t, dir, func(m *pb.Manifest) {
		m.ReaderFeatureFlags |= flags.MixedDataFileVersions
		m.WriterFeatureFlags |= flags.MixedDataFileVersions
	})
}

// withStableRowIDs adds a version in which every fragment has a row-id
// sequence and bit 1 is set (a table that uses stable row ids).
func withStableRowIDs(t testing.TB, dir string) uint64 {
	return foreignCommit(t, dir, func(m *pb.Manifest) {
		next := uint64(0)
		for _, f := range m.GetFragments() {
			seq := &pb.RowIdSequence{Segments: []*pb.U64Segment{{Segment: &pb.U64Segment_Range_{
				Range: &pb.U64Segment_Range{Start: next, End: next + f.GetPhysicalRows()}}}}}
			b, err := proto.Marshal(seq)
			if err != nil {
				t.Fatal(err)
			}
			f.RowIdSequence = &pb.DataFragment_InlineRowIds{InlineRowIds: b}
			next += f.GetPhysicalRows()
		}
		m.NextRowId = next
		m.ReaderFeatureFlags |= flags.StableRowIDs
		m.WriterFeatureFlags |= flags.StableRowIDs
	})
}

func flagWords(m *pb.Manifest) [2]uint64 {
	return [2]uint64{m.GetReaderFeatureFlags(), m.GetWriterFeatureFlags()}
}

// assertFilesResolve checks that every file a snapshot references resolves
// (through its base paths) to an existing object of the expected size.
func assertFilesResolve(t testing.TB, s *Snapshot) int {
	t.Helper()
	ctx := context.Background()
	own, err := s.Dataset.BranchStore(s.Branch)
	if err != nil {
		t.Fatal(err)
	}
	bases := store.NewBases(own)
	defer bases.Close()
	files, err := s.Dataset.referencedFiles(ctx, s, bases)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		n, err := f.from.Size(ctx, f.fromKey)
		if err != nil {
			t.Errorf("referenced file %s does not resolve: %v", f.fromKey, err)
			continue
		}
		if f.size >= 0 && n != f.size {
			t.Errorf("referenced file %s: %d bytes, manifest says %d", f.fromKey, n, f.size)
		}
	}
	return len(files)
}

func absPath(t testing.TB, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(a)
}

// commitActivation commits the explicit FLAG_ZONE_WRITE_SEEDS activation on
// st, read at version.
func commitActivation(t testing.TB, ctx context.Context, st *store.Store, version uint64) {
	t.Helper()
	if _, err := commit.Commit(ctx, st, commit.NewEnableZoneWriteSeeds(version), commit.Options{}); err != nil {
		t.Fatal(err)
	}
}
