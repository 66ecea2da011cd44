package snapshot

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// The §6.5 table and R57, one row at a time: every way snapshot derives a
// manifest (shallow clone, deep clone, branch creation, restore) carries
// the sticky paired bits 8 and 16 of its parent, recomputes the derived
// bits, and never rewrites a historical manifest (R58).

type stickyCase struct {
	name   string
	prep   func(t testing.TB, dir string) // adds the sticky bits to the head
	sticky uint64
}

func stickyCases() []stickyCase {
	return []stickyCase{
		{"bit16 FLAG_ZONE_WRITE_SEEDS", func(t testing.TB, dir string) { activateSeeds(t, dir) }, flags.ZoneWriteSeeds},
		{"bit8 MIXED_DATA_FILE_VERSIONS", func(t testing.TB, dir string) { withMixedVersionsBit(t, dir) }, flags.MixedDataFileVersions},
		{"bits 8 and 16", func(t testing.TB, dir string) { withMixedVersionsBit(t, dir); activateSeeds(t, dir) }, flags.MixedDataFileVersions | flags.ZoneWriteSeeds},
	}
}

// T71: shallow clone keeps both bits (R57).
// §6.5 row "Shallow clone": keeps sticky, gains bit 4 (R57).
func TestR57_ShallowCloneCarriesStickyBitsAndGainsBit4(t *testing.T) {
	for _, tc := range stickyCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			src := copyCorpus(t, "lance12/tags.lance")
			tc.prep(t, src)
			hist := manifestBytes(t, src)
			srcHead := latestFile(t, src).Manifest
			dst := filepath.Join(t.TempDir(), "clone.lance")
			res, err := Clone(ctx, src, dst, CloneOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Snapshot.Dataset.Close()
			m := res.Snapshot.Manifest()
			want := srcHead.GetReaderFeatureFlags() | flags.BasePaths
			if got := flagWords(m); got[0] != want || got[1]&want != want || !flags.Has(got[0], got[1], tc.sticky|flags.BasePaths) {
				t.Fatalf("clone flags %v, want reader %d with sticky %d and bit 4 in both", got, want, tc.sticky)
			}
			if m.GetVersion() != srcHead.GetVersion() {
				t.Errorf("clone version %d, want the source's %d", m.GetVersion(), srcHead.GetVersion())
			}
			assertHistoryUnchanged(t, hist, manifestBytes(t, src))
			if n := len(manifestBytes(t, src)); n != len(hist) {
				t.Errorf("clone wrote %d manifests into the source", n-len(hist))
			}
		})
	}
}

// T71: deep clone keeps both bits (R57).
// §6.5 row "Deep clone": base paths cleared ⇒ bit 4 dropped; sticky carried.
func TestR57_DeepCloneCarriesStickyBitsAndDropsBit4(t *testing.T) {
	for _, tc := range stickyCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			src := copyCorpus(t, "lance12/tags.lance")
			tc.prep(t, src)
			// Deep-clone a shallow clone, so the source itself has bit 4.
			mid := filepath.Join(t.TempDir(), "mid.lance")
			r1, err := Clone(ctx, src, mid, CloneOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r1.Snapshot.Dataset.Close()
			hist := manifestBytes(t, src)
			histMid := manifestBytes(t, mid)
			dst := filepath.Join(t.TempDir(), "deep.lance")
			res, err := Clone(ctx, mid, dst, CloneOptions{Deep: true})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Snapshot.Dataset.Close()
			m := res.Snapshot.Manifest()
			got := flagWords(m)
			if got[0]&flags.BasePaths != 0 || got[1]&flags.BasePaths != 0 {
				t.Errorf("deep clone kept bit 4: %v", got)
			}
			if !flags.Has(got[0], got[1], tc.sticky) {
				t.Errorf("deep clone flags %v lost sticky %d", got, tc.sticky)
			}
			if len(m.GetBasePaths()) != 0 || m.Branch != nil {
				t.Errorf("deep clone kept base paths %v / branch %v", m.GetBasePaths(), m.Branch)
			}
			assertHistoryUnchanged(t, hist, manifestBytes(t, src))
			assertHistoryUnchanged(t, histMid, manifestBytes(t, mid))
		})
	}
}

// §6.5 row "Shallow clone / branch": a branch's first manifest keeps the
// parent's sticky bits and gains bit 4 (R57 "tag/branch creation").
func TestR57_BranchCreationCarriesStickyBits(t *testing.T) {
	for _, tc := range stickyCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := copyCorpus(t, "lance12/tags.lance")
			tc.prep(t, dir)
			hist := manifestBytes(t, dir)
			d := openDS(t, dir)
			_, s, err := d.CreateBranch(ctx, "exp", Ref{}, BranchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := flagWords(s.Manifest())
			if !flags.Has(got[0], got[1], tc.sticky|flags.BasePaths) {
				t.Errorf("branch flags %v, want sticky %d and bit 4", got, tc.sticky)
			}
			// A branch of the branch still carries them.
			_, s2, err := d.CreateBranch(ctx, "exp/child", Ref{Branch: "exp"}, BranchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := flagWords(s2.Manifest()); !flags.Has(got[0], got[1], tc.sticky|flags.BasePaths) {
				t.Errorf("nested branch flags %v", got)
			}
			// A tag is a JSON file only: no manifest, no flag change (§6.5).
			before := manifestBytes(t, dir)
			if _, err := d.CreateTag(ctx, "t1", Ref{Branch: "exp"}, nil); err != nil {
				t.Fatal(err)
			}
			if after := manifestBytes(t, dir); len(after) != len(before) {
				t.Errorf("tag creation wrote a manifest")
			}
			assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
		})
	}
}

// T71: restore of a pre-flag version keeps both bits (R57).
// R57: "A restore of an older, unflagged version as the new head MUST OR
// the bits into the new manifest." Restoring the pre-activation version 1
// keeps both bits in both words, while content equals version 1.
func TestR57_RestoreOfPreActivationVersionKeepsBothBits(t *testing.T) {
	for _, tc := range stickyCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := copyCorpus(t, "lance12/tags.lance")
			tc.prep(t, dir)
			hist := manifestBytes(t, dir)
			d := openDS(t, dir)
			v1, err := d.Checkout(ctx, Options{Ref: Ref{Version: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if got := flagWords(v1.Manifest()); got[0]|got[1] != 0 {
				t.Fatalf("version 1 is not pre-activation: %v", got)
			}
			head := latestFile(t, dir).Manifest
			s, res, err := d.Restore(ctx, Ref{Version: 1}, RestoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m := s.Manifest()
			if s.Version != head.GetVersion()+1 || res.Version != s.Version {
				t.Errorf("restore made version %d, want %d", s.Version, head.GetVersion()+1)
			}
			if got := flagWords(m); got[0] != tc.sticky || got[1] != tc.sticky {
				t.Errorf("restored flags %v, want exactly the sticky bits %d in both words", got, tc.sticky)
			}
			assertSameContent(t, v1.Manifest(), m)
			assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
			// And the bits survive the next derived manifest too.
			s2, _, err := d.Restore(ctx, Ref{Version: 2}, RestoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := flagWords(s2.Manifest()); !flags.Has(got[0], got[1], tc.sticky) {
				t.Errorf("second restore lost sticky bits: %v", got)
			}
		})
	}
}

// §6.5 row "Restore": flags are recomputed from the restored content — a
// derived bit of the head (bit 0, deletion files) is not carried into a
// restored version that has no deletion files; one the target has is set.
func TestRestoreRecomputesDerivedBits(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance") // v4 has a deletion file (bit 0)
	d := openDS(t, dir)
	s, _, err := d.Restore(ctx, Ref{Version: 2}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(s.Manifest()); got != [2]uint64{0, 0} {
		t.Errorf("restore of v2: flags %v, want 0/0", got)
	}
	s, _, err = d.Restore(ctx, Ref{Version: 4}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(s.Manifest()); got != [2]uint64{1, 1} {
		t.Errorf("restore of v4: flags %v, want 1/1", got)
	}
}

// §6.5 "Restore: target manifest must pass read and write checks".
func TestRestoreRefusesTargetWithUnsupportedBits(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	bad := foreignCommit(t, dir, func(m *pb.Manifest) { m.WriterFeatureFlags |= 1 << 14 })
	foreignCommit(t, dir, func(m *pb.Manifest) { m.WriterFeatureFlags &^= 1 << 14 })
	hist := manifestBytes(t, dir)
	d := openDS(t, dir)
	if _, _, err := d.Restore(ctx, Ref{Version: bad}, RestoreOptions{}); !errors.Is(err, flags.ErrUnsupported) {
		t.Fatalf("restore of a version with writer bit 14: %v", err)
	}
	if after := manifestBytes(t, dir); len(after) != len(hist) {
		t.Error("refused restore wrote a manifest")
	}
}

// §6.6: restore refuses to turn stable row ids off, with the exact message.
func TestRestoreRefusesDroppingStableRowIDs(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	withStableRowIDs(t, dir)
	hist := manifestBytes(t, dir)
	d := openDS(t, dir)
	_, _, err := d.Restore(ctx, Ref{Version: 2}, RestoreOptions{})
	const msg = "Cannot restore version 2: stable row ids were enabled after it, and turning them back off would let row addresses collide with ids this table has already used"
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Fatalf("err = %v, want the §6.6 message", err)
	}
	assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
	if after := manifestBytes(t, dir); len(after) != len(hist) {
		t.Error("refused restore wrote a manifest")
	}
	// Restoring the stable-row-id version itself is fine.
	if _, _, err := d.Restore(ctx, Ref{Version: 5}, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
}

// §8.3: a restore by tag makes the tagged version the head, with the
// larger high-water marks and the target's writer_version.
func TestRestoreByTag(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, dir)
	target, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "first"}})
	if err != nil {
		t.Fatal(err)
	}
	head := latestFile(t, dir).Manifest
	s, res, err := d.Restore(ctx, Ref{Tag: "first"}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Manifest()
	assertSameContent(t, target.Manifest(), m)
	if m.GetMaxFragmentId() != max(head.GetMaxFragmentId(), target.Manifest().GetMaxFragmentId()) {
		t.Errorf("max_fragment_id %d", m.GetMaxFragmentId())
	}
	if !proto.Equal(m.GetWriterVersion(), target.Manifest().GetWriterVersion()) {
		t.Errorf("writer_version %v, want the target's %v", m.GetWriterVersion(), target.Manifest().GetWriterVersion())
	}
	if res.Transaction.GetRestore().GetVersion() != 1 || res.ReadVersion != head.GetVersion() {
		t.Errorf("transaction %v", res.Transaction)
	}
	if commit.KindOf(s.File.Transaction) != commit.OpRestore {
		t.Errorf("inline transaction is %v", commit.KindOf(s.File.Transaction))
	}
}

// assertSameContent compares what a restore must reproduce (§8.3): schema,
// fragments, config, metadata, data format, base paths, branch.
func assertSameContent(t testing.TB, want, got *pb.Manifest) {
	t.Helper()
	if len(got.GetFields()) != len(want.GetFields()) {
		t.Fatalf("fields: %d, want %d", len(got.GetFields()), len(want.GetFields()))
	}
	for i := range want.GetFields() {
		if !proto.Equal(got.GetFields()[i], want.GetFields()[i]) {
			t.Errorf("field %d differs", i)
		}
	}
	if len(got.GetFragments()) != len(want.GetFragments()) {
		t.Fatalf("fragments: %d, want %d", len(got.GetFragments()), len(want.GetFragments()))
	}
	for i := range want.GetFragments() {
		if !proto.Equal(got.GetFragments()[i], want.GetFragments()[i]) {
			t.Errorf("fragment %d differs", i)
		}
	}
	if !proto.Equal(got.GetDataFormat(), want.GetDataFormat()) || got.GetBranch() != want.GetBranch() ||
		len(got.GetConfig()) != len(want.GetConfig()) || len(got.GetBasePaths()) != len(want.GetBasePaths()) ||
		len(got.GetTableMetadata()) != len(want.GetTableMetadata()) || len(got.GetSchemaMetadata()) != len(want.GetSchemaMetadata()) {
		t.Errorf("restored manifest differs from the target outside fragments/fields")
	}
}

// withCoveringIndex adds a version (as Lance 12 would write it) whose index
// list has a segment with covering fields, so bit 7 is set in both words.
func withCoveringIndex(t testing.TB, dir string) uint64 {
	t.Helper()
	f := latestFile(t, dir)
	m := proto.Clone(f.Manifest).(*pb.Manifest)
	m.Version++
	m.ReaderFeatureFlags |= flags.CoveredIndexMetadata
	m.WriterFeatureFlags |= flags.CoveredIndexMetadata
	var frags []uint32
	for _, fr := range m.GetFragments() {
		frags = append(frags, uint32(fr.GetId()))
	}
	idx := &pb.IndexMetadata{
		Uuid:           &pb.UUID{Uuid: []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00}},
		Fields:         []int32{0, 1},
		CoveringFields: []int32{1},
		Name:           "covering_idx",
		DatasetVersion: m.Version,
	}
	writeVersion(t, dir, m, &pb.IndexSection{Indices: []*pb.IndexMetadata{idx}}, nil)
	return m.GetVersion()
}

// §6.5 row "Restore": bit 7 is kept only if the restored index list has
// covering fields — restoring a version without such an index clears it,
// restoring one with it sets it.
func TestRestoreBit7FollowsRestoredIndexList(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	cov := withCoveringIndex(t, dir)
	d := openDS(t, dir)
	s, _, err := d.Restore(ctx, Ref{Version: 2}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(s.Manifest()); got[0]&flags.CoveredIndexMetadata != 0 || got[1]&flags.CoveredIndexMetadata != 0 {
		t.Errorf("restore of a version without covering indices kept bit 7: %v", got)
	}
	s, _, err = d.Restore(ctx, Ref{Version: cov}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := flagWords(s.Manifest()); !flags.Has(got[0], got[1], flags.CoveredIndexMetadata) || len(s.Indices()) != 1 {
		t.Errorf("restore of the covering-index version: flags %v, %d indices", got, len(s.Indices()))
	}
}

// §6.5 rows "Shallow clone / branch" and "Deep clone": bit 7 of the source
// (its index list has covering fields) is kept by all three.
func TestCloneAndBranchKeepBit7(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	withCoveringIndex(t, dir)
	d := openDS(t, dir)
	check := func(what string, m *pb.Manifest) {
		t.Helper()
		if got := flagWords(m); !flags.Has(got[0], got[1], flags.CoveredIndexMetadata) {
			t.Errorf("%s lost bit 7: %v", what, got)
		}
	}
	sh, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "s")), CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("shallow clone", sh.Snapshot.Manifest())
	// The covering index has no files on disk; a deep clone lists its
	// (empty) directory and copies nothing for it.
	dp, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "d")), CloneOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	check("deep clone", dp.Snapshot.Manifest())
	_, bs, err := d.CreateBranch(ctx, "cov", Ref{}, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("branch", bs.Manifest())
}

// R56: "Activation is explicit, not triggered by opening a table." No
// snapshot operation on an unflagged dataset sets bit 16.
func TestR56_DerivedSnapshotsNeverActivateSeeds(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	d := openDS(t, dir)
	var ms []*pb.Manifest
	if s, err := d.Checkout(ctx, Options{ForWrite: true}); err == nil {
		ms = append(ms, s.Manifest())
	} else {
		t.Fatal(err)
	}
	sh, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "s")), CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dp, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "d")), CloneOptions{Deep: true, Source: Ref{Tag: "first"}})
	if err != nil {
		t.Fatal(err)
	}
	_, bs, err := d.CreateBranch(ctx, "b", Ref{}, BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := d.Restore(ctx, Ref{Version: 3}, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms = append(ms, sh.Snapshot.Manifest(), dp.Snapshot.Manifest(), bs.Manifest(), rs.Manifest())
	for i, m := range ms {
		if got := flagWords(m); got[0]&flags.ZoneWriteSeeds != 0 || got[1]&flags.ZoneWriteSeeds != 0 {
			t.Errorf("manifest %d (version %d) gained bit 16: %v", i, m.GetVersion(), got)
		}
	}
}

// R59: a manifest with a half-set pair is corrupt: nothing is derived from
// it (clone, branch, restore onto it, restore of it) and nothing half-set
// is ever produced.
func TestR59_NothingDerivedFromHalfSetManifest(t *testing.T) {
	ctx := context.Background()
	for _, half := range [][2]uint64{{flags.ZoneWriteSeeds, 0}, {0, flags.ZoneWriteSeeds}, {flags.MixedDataFileVersions, 0}} {
		dir := copyCorpus(t, "lance12/tags.lance")
		bad := foreignCommit(t, dir, func(m *pb.Manifest) { m.ReaderFeatureFlags |= half[0]; m.WriterFeatureFlags |= half[1] })
		hist := manifestBytes(t, dir)
		d := openDS(t, dir)
		if _, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "s")), CloneOptions{}); !errors.Is(err, flags.ErrHalfSet) {
			t.Errorf("%v: shallow clone: %v", half, err)
		}
		if _, err := d.CloneTo(ctx, openDS(t, filepath.Join(t.TempDir(), "d")), CloneOptions{Deep: true}); !errors.Is(err, flags.ErrHalfSet) {
			t.Errorf("%v: deep clone: %v", half, err)
		}
		if _, _, err := d.CreateBranch(ctx, "b", Ref{}, BranchOptions{}); !errors.Is(err, flags.ErrHalfSet) {
			t.Errorf("%v: branch: %v", half, err)
		}
		if _, _, err := d.Restore(ctx, Ref{Version: 1}, RestoreOptions{}); !errors.Is(err, flags.ErrHalfSet) {
			t.Errorf("%v: restore onto the half-set head: %v", half, err)
		}
		// Restoring the half-set version itself (after a clean head).
		foreignCommit(t, dir, func(m *pb.Manifest) { m.ReaderFeatureFlags, m.WriterFeatureFlags = 1, 1 })
		if _, _, err := d.Restore(ctx, Ref{Version: bad}, RestoreOptions{}); !errors.Is(err, flags.ErrHalfSet) {
			t.Errorf("%v: restore of the half-set version: %v", half, err)
		}
		after := manifestBytes(t, dir)
		assertHistoryUnchanged(t, hist, after)
		if len(after) != len(hist)+1 {
			t.Errorf("%v: refused operations wrote %d manifests", half, len(after)-len(hist)-1)
		}
	}
}
