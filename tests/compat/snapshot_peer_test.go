package compat_test

// Real Lance 12 (through the node peer, tests/peerlance) reads what the
// snapshot package writes: tags, branches, shallow and deep clones and
// restores of Lance-written datasets give the same rows and tags in Lance —
// unless they carry FLAG_ZONE_WRITE_SEEDS (bit 16), which Lance 12 must
// refuse with its unsupported-flags error (zone-seeds.md R55, R57).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

func peerContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// lanceCopy copies a Lance 12 corpus dataset into a writable temp dir.
func lanceCopy(t *testing.T, rel string) string {
	t.Helper()
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		t.Skipf("!!! LANCE CORPUS NOT FOUND (%v): snapshot peer tests did not run !!!", err)
	}
	src := filepath.Join(corpus, rel)
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	err = filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, r)
		if de.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// rowsOf returns Lance's rows (ordered by row address) as canonical
// strings.
func rowsOf(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, opts ...peerlance.ReadOption) []string {
	t.Helper()
	r, err := p.Rows(ctx, dir, append(opts, peerlance.OrderByRowAddr())...)
	if err != nil {
		t.Fatalf("Lance rows of %s: %v", dir, err)
	}
	out := make([]string, len(r.Rows))
	for i := range r.Rows {
		row, err := r.CanonicalRow(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = strings.Join(row, "|")
	}
	return out
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: Lance reads %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d = %s, want %s", what, i, got[i], want[i])
		}
	}
}

// activate commits the explicit FLAG_ZONE_WRITE_SEEDS activation (R56).
func activate(ctx context.Context, t *testing.T, dir string) uint64 {
	t.Helper()
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
	return res.Version
}

// requireLanceRefusesBit16 checks that Lance 12 refuses to read the latest
// version with its unsupported-flags error naming the reader word.
func requireLanceRefusesBit16(ctx context.Context, t *testing.T, p *peerlance.Peer, dir string, readerFlags uint64) {
	t.Helper()
	if readerFlags&flags.ZoneWriteSeeds == 0 {
		t.Fatalf("%s: reader flags %d lack bit 16", dir, readerFlags)
	}
	_, _, err := p.Count(ctx, dir)
	var le *peerlance.LanceError
	if !errors.As(err, &le) {
		t.Fatalf("Lance 12 opened %s (reader flags %d): err = %v", dir, readerFlags, err)
	}
	want := fmt.Sprintf("This dataset cannot be read by this version of Lance. Please upgrade Lance to read this dataset. Flags: %d", readerFlags)
	if !strings.Contains(le.Message, want) {
		t.Fatalf("Lance refused with %q, want it to contain %q", le.Message, want)
	}
}

// §7.1: tags we create, update and delete on a Lance dataset are what Lance
// lists, with the same versions and manifest sizes; Lance checks out ours.
func TestPeerSnapshotTagsReadByLance(t *testing.T) {
	record(t, catSnapshots)
	p := peerlance.ForTest(t)
	ctx := peerContext(t)
	dir := lanceCopy(t, "lance12/tags.lance")
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.CreateTag(ctx, "ours", snapshot.Ref{Version: 2}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.UpdateTag(ctx, "release", snapshot.Ref{}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteTag(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	lance, err := p.Tags(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := d.ListTags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(lance) != len(ours) {
		t.Fatalf("Lance lists %v, we list %v", lance, ours)
	}
	for _, tag := range ours {
		l, ok := lance[tag.Name]
		if !ok || l.Version != tag.Version || uint64(l.ManifestSize) != tag.ManifestSize {
			t.Errorf("tag %s: Lance %+v, ours v%d size %d", tag.Name, l, tag.Version, tag.ManifestSize)
		}
	}
	v, n, err := p.Count(ctx, dir, peerlance.AtTag("ours"))
	if err != nil || v != 2 || n != 20 {
		t.Errorf("Lance checkout of our tag: version %d rows %d err %v", v, n, err)
	}
	// And Lance's own tag operations interoperate with ours.
	if err := p.TagCreate(ctx, dir, "lance-made", 1); err != nil {
		t.Fatal(err)
	}
	tag, err := d.GetTag(ctx, "lance-made")
	if err != nil || tag.Version != 1 || tag.CreatedAt.IsZero() {
		t.Errorf("Lance's tag read by us: %+v %v", tag, err)
	}
	if _, err := d.UpdateTag(ctx, "lance-made", snapshot.Ref{Version: 3}); err != nil {
		t.Fatal(err)
	}
	if v, _, err := p.Count(ctx, dir, peerlance.AtTag("lance-made")); err != nil || v != 3 {
		t.Errorf("Lance after our update: version %d err %v", v, err)
	}
}

// §8.1/§8.2/§8.3: our shallow clone, deep clone and restore of a Lance
// dataset read in Lance with the same rows; Lance can write to them.
func TestPeerSnapshotClonesAndRestoreReadByLance(t *testing.T) {
	record(t, catSnapshots)
	p := peerlance.ForTest(t)
	ctx := peerContext(t)
	src := lanceCopy(t, "lance12/scalar_indices.lance")
	info, err := p.Info(ctx, src, peerlance.Brief())
	if err != nil {
		t.Fatal(err)
	}
	latest := info.LatestVersion
	want := rowsOf(ctx, t, p, src)
	wantV2 := rowsOf(ctx, t, p, src, peerlance.AtVersion(2))

	shallow := filepath.Join(t.TempDir(), "shallow.lance")
	if _, err := snapshot.Clone(ctx, src, shallow, snapshot.CloneOptions{}); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "shallow clone", rowsOf(ctx, t, p, shallow), want)
	sinfo, err := p.Info(ctx, shallow, peerlance.Brief())
	if err != nil {
		t.Fatal(err)
	}
	if sinfo.LatestVersion != latest || len(sinfo.CheckedOut.Indices) != len(info.CheckedOut.Indices) {
		t.Errorf("shallow clone in Lance: version %d, %d indices; source %d, %d", sinfo.LatestVersion, len(sinfo.CheckedOut.Indices), latest, len(info.CheckedOut.Indices))
	}
	// Lance writes to our clone: its deletion file lands under the clone.
	if _, err := p.Delete(ctx, shallow, "id < 5"); err != nil {
		t.Fatalf("Lance delete on our shallow clone: %v", err)
	}
	_, srcRows, err := p.Count(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, n, err := p.Count(ctx, shallow); err != nil || n != srcRows-5 {
		t.Errorf("after Lance delete: %d rows (source %d), err %v", n, srcRows, err)
	}

	deep := filepath.Join(t.TempDir(), "deep.lance")
	if _, err := snapshot.Clone(ctx, src, deep, snapshot.CloneOptions{Deep: true, Source: snapshot.Ref{Version: 2}}); err != nil {
		t.Fatal(err)
	}
	// The source stays untouched by Lance's delete on the shallow clone.
	sameRows(t, "source after writes to the clone", rowsOf(ctx, t, p, src), want)
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "deep clone without its source", rowsOf(ctx, t, p, deep), wantV2)

	// Restore: on a fresh copy, make version 1 the head.
	rdir := lanceCopy(t, "lance12/restore.lance")
	want1 := rowsOf(ctx, t, p, rdir, peerlance.AtVersion(1))
	before, err := p.Info(ctx, rdir, peerlance.Brief())
	if err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, rdir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, _, err := d.Restore(ctx, snapshot.Ref{Version: 1}, snapshot.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := p.Info(ctx, rdir, peerlance.Brief())
	if err != nil {
		t.Fatal(err)
	}
	if after.LatestVersion != before.LatestVersion+1 || after.LatestVersion != s.Version {
		t.Errorf("Lance sees latest %d after our restore (before %d, ours %d)", after.LatestVersion, before.LatestVersion, s.Version)
	}
	sameRows(t, "restored head", rowsOf(ctx, t, p, rdir), want1)
	if _, err := p.Delete(ctx, rdir, "id < 1"); err != nil {
		t.Fatalf("Lance delete after our restore: %v", err)
	}
}

// §7.2: a branch we create is listed by Lance with its parent version and
// manifest size, and Lance reads its rows.
func TestPeerSnapshotBranchReadByLance(t *testing.T) {
	record(t, catSnapshots)
	p := peerlance.ForTest(t)
	ctx := peerContext(t)
	dir := lanceCopy(t, "lance12/branches.lance")
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	br, _, err := d.CreateBranch(ctx, "feat", snapshot.Ref{Version: 2}, snapshot.BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.Info(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	lb, ok := info.Branches["feat"]
	if !ok {
		t.Fatalf("Lance does not list our branch: %v", info.Branches)
	}
	if lb.ParentBranch != nil || lb.ParentVersion != 2 || uint64(lb.ManifestSize) != br.ManifestSize || lb.LatestVersion != 2 {
		t.Errorf("Lance's view of our branch: %+v", lb)
	}
	v2, _ := info.Version(2)
	if len(lb.Versions) != 1 || lb.Versions[0].RowCount == nil || v2.RowCount == nil || *lb.Versions[0].RowCount != *v2.RowCount {
		t.Errorf("branch versions in Lance: %+v (main v2 rows %v)", lb.Versions, v2.RowCount)
	}
	if _, ok := info.Branches["dev"]; !ok {
		t.Errorf("Lance lost its own branch dev")
	}
}

// R55/R57 against real Lance: clones and restores that carry bit 16 —
// including the restore of a version from before the activation — are
// refused by Lance 12 with its unsupported-flags error.
func TestPeerSnapshotBit16DerivedSnapshotsRefusedByLance(t *testing.T) {
	record(t, catSnapshots)
	p := peerlance.ForTest(t)
	ctx := peerContext(t)
	dir := lanceCopy(t, "lance12/tags.lance")
	// Before activation Lance reads it.
	if _, _, err := p.Count(ctx, dir); err != nil {
		t.Fatal(err)
	}
	activate(ctx, t, dir)
	sh := filepath.Join(t.TempDir(), "shallow.lance")
	r1, err := snapshot.Clone(ctx, dir, sh, snapshot.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	requireLanceRefusesBit16(ctx, t, p, sh, r1.Snapshot.Manifest().GetReaderFeatureFlags())
	dp := filepath.Join(t.TempDir(), "deep.lance")
	r2, err := snapshot.Clone(ctx, dir, dp, snapshot.CloneOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	requireLanceRefusesBit16(ctx, t, p, dp, r2.Snapshot.Manifest().GetReaderFeatureFlags())
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, _, err := d.Restore(ctx, snapshot.Ref{Version: 1}, snapshot.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, w := s.Manifest().GetReaderFeatureFlags(), s.Manifest().GetWriterFeatureFlags(); r != flags.ZoneWriteSeeds || w != flags.ZoneWriteSeeds {
		t.Fatalf("restored pre-activation version: flags %d/%d", r, w)
	}
	requireLanceRefusesBit16(ctx, t, p, dir, s.Manifest().GetReaderFeatureFlags())
	// A branch of the flagged head is refused too (Lance lists branches by
	// checking them out).
	_, bs, err := d.CreateBranch(ctx, "b16", snapshot.Ref{}, snapshot.BranchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bs.Manifest().GetReaderFeatureFlags()&flags.ZoneWriteSeeds == 0 {
		t.Errorf("branch lost bit 16")
	}
}
