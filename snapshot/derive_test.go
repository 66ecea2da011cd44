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
