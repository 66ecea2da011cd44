package snapshot

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/manifest"
)

func fixedClock(ts ...time.Time) func() time.Time {
	i := 0
	return func() time.Time {
		t := ts[min(i, len(ts)-1)]
		i++
		return t
	}
}

// §7.1: a tag created by us on Lance 12's tags.lance, at the same instant,
// is byte-identical to the tag file Lance 12 wrote.
func TestTagCreateMatchesLance12Bytes(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	want, err := os.ReadFile(filepath.Join(dir, "_refs", "tags", "first.json"))
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := time.Parse(time.RFC3339Nano, "2026-11-30T19:57:05.768693133Z")
	d := openDS(t, dir)
	d.SetClock(fixedClock(ts))
	if _, err := d.CreateTag(ctx, "first2", Ref{Version: 1}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "_refs", "tags", "first2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// §7.1: create is put-if-absent, update keeps createdAt and metadata and
// moves updatedAt/manifestSize, delete removes, list is sorted; checkout by
// tag follows the update. No manifest is written (§6.5 "JSON files only").
func TestTagLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/tags.lance")
	hist := manifestBytes(t, dir)
	t1 := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	t2 := t1.Add(time.Hour)
	d := openDS(t, dir)
	d.SetClock(fixedClock(t1, t2))

	tag, err := d.CreateTag(ctx, "v-2", Ref{Version: 2}, map[string]string{"who": "me"})
	if err != nil {
		t.Fatal(err)
	}
	if tag.Version != 2 || tag.Branch != "" || !tag.CreatedAt.Equal(t1) || !tag.UpdatedAt.Equal(t1) {
		t.Fatalf("created %+v", tag)
	}
	if _, err := d.CreateTag(ctx, "v-2", Ref{Version: 3}, nil); !errors.Is(err, manifest.ErrRefExists) || err.Error() != "ref already exists: tag v-2 already exists" {
		t.Fatalf("duplicate create: %v", err)
	}
	if got, _ := d.GetTag(ctx, "v-2"); got.Version != 2 {
		t.Fatalf("duplicate create changed the tag: %+v", got)
	}
	up, err := d.UpdateTag(ctx, "v-2", Ref{})
	if err != nil {
		t.Fatal(err)
	}
	if up.Version != 4 || !up.CreatedAt.Equal(t1) || !up.UpdatedAt.Equal(t2) || up.Metadata["who"] != "me" {
		t.Fatalf("updated %+v", up)
	}
	st, _ := os.Stat(filepath.Join(dir, "_versions", "18446744073709551611.manifest"))
	if up.ManifestSize != uint64(st.Size()) {
		t.Errorf("manifestSize %d, want %d", up.ManifestSize, st.Size())
	}
	s, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "v-2"}})
	if err != nil || s.Version != 4 {
		t.Fatalf("checkout updated tag: %v %v", s, err)
	}
	tags, err := d.ListTags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range tags {
		names = append(names, tg.Name)
	}
	if want := "first,release,v-2"; joinNames(names) != want {
		t.Errorf("list = %s, want %s", joinNames(names), want)
	}
	if err := d.DeleteTag(ctx, "v-2"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteTag(ctx, "v-2"); !errors.Is(err, manifest.ErrRefNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := d.UpdateTag(ctx, "nope", Ref{Version: 1}); !errors.Is(err, manifest.ErrRefNotFound) {
		t.Errorf("update missing: %v", err)
	}
	if _, err := d.CreateTag(ctx, "bad..name", Ref{}, nil); !errors.Is(err, ErrInvalidRef) {
		t.Errorf("bad name: %v", err)
	}
	if _, err := d.CreateTag(ctx, "far", Ref{Version: 40}, nil); err == nil {
		t.Error("tag of a missing version created")
	}
	assertHistoryUnchanged(t, hist, manifestBytes(t, dir))
	if after := manifestBytes(t, dir); len(after) != len(hist) {
		t.Errorf("tag operations wrote manifests: %d before, %d after", len(hist), len(after))
	}
}

// §7.1: a tag of a branch version lives at the MAIN root and records the
// branch; checkout by that tag opens the branch's version.
func TestTagOfBranchVersionLivesAtMainRoot(t *testing.T) {
	ctx := context.Background()
	dir := copyCorpus(t, "lance12/branches.lance")
	d := openDS(t, dir)
	tag, err := d.CreateTag(ctx, "dev3", Ref{Branch: "dev", Version: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tag.Branch != "dev" || tag.Version != 3 || tag.ManifestSize != 752 {
		t.Fatalf("tag %+v", tag)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "_refs", "tags", "dev3.json"))
	if err != nil {
		t.Fatalf("tag file not at the main root: %v", err)
	}
	if !bytes.Contains(raw, []byte(`"branch": "dev",`)) {
		t.Errorf("tag file:\n%s", raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "tree", "dev", "_refs")); !os.IsNotExist(err) {
		t.Errorf("tag written under the branch root: %v", err)
	}
	s, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "dev3"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Branch != "dev" || s.Version != 3 || s.Manifest().GetBranch() != "dev" {
		t.Fatalf("checkout: branch %q version %d", s.Branch, s.Version)
	}
	if _, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "dev3", Branch: "main"}}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("tag on dev opened as main: %v", err)
	}
	if _, err := d.Checkout(ctx, Options{Ref: Ref{Tag: "dev3", Branch: "dev"}}); err != nil {
		t.Errorf("tag with its own branch: %v", err)
	}
}

func joinNames(n []string) string {
	var b bytes.Buffer
	for i, s := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s)
	}
	return b.String()
}
