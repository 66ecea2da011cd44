package maint_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lancekeeper/lancekeeper/maint"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// copyTree copies src to dst keeping modification times (cleanup decides
// by them).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chtimes(target, info.ModTime(), info.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listTree returns every regular file under dir, relative, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestCleanupSameFilesAsLance12 (§8.4): on identical copies of a Lance 12
// table with overwrites, deletion files, a tag on an old version and
// versions on both sides of the cutoff, our Cleanup removes exactly the
// files Lance 12's cleanup (optimize with cleanup_older_than) removes; the
// latest version and the tag still read the same rows in Lance 12.
func TestCleanupSameFilesAsLance12(t *testing.T) {
	p := peerlance.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "t.lance")
	data := func(n, base int) string {
		f := filepath.Join(tmp, "d"+strconv.Itoa(base)+".json")
		s := "["
		for i := 0; i < n; i++ {
			if i > 0 {
				s += ","
			}
			s += `{"id":` + strconv.Itoa(base+i) + `,"s":"v` + strconv.Itoa(i) + `"}`
		}
		if err := os.WriteFile(f, []byte(s+"]"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	steps := [][]string{
		{"create", "--data", data(20, 0), "--storage-version", "2.0"},
		{"delete", "--where", "id < 3"},
		{"tag-create", "old", "2"},
		{"create", "--data", data(15, 100), "--overwrite"},
		{"delete", "--where", "id = 105"},
	}
	if _, err := p.Script(ctx, dir, steps); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(50 * time.Millisecond)
	if _, err := p.Script(ctx, dir, [][]string{
		{"delete", "--where", "id = 106"},
		{"create", "--data", data(10, 200), "--overwrite"},
	}); err != nil {
		t.Fatal(err)
	}
	lanceDir := filepath.Join(tmp, "lance.lance")
	oursDir := filepath.Join(tmp, "ours.lance")
	copyTree(t, dir, lanceDir)
	copyTree(t, dir, oursDir)
	before := listTree(t, dir)

	vBefore, _, err := p.Count(ctx, lanceDir)
	if err != nil {
		t.Fatal(err)
	}
	// A tag on a version the policy removes: both refuse, the same way.
	_, lerr := p.Exec(ctx, "optimize", lanceDir, "--cleanup-older-than-ms", strconv.FormatInt(cutoff.UnixMilli(), 10))
	st := openLocal(ctx, t, oursDir)
	_, oerr := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: cutoff})
	var le *peerlance.LanceError
	if !errors.As(lerr, &le) || !errors.Is(oerr, maint.ErrTaggedVersions) {
		t.Fatalf("tagged old version: Lance 12 %v, ours %v; want both to refuse", lerr, oerr)
	}
	if msg := strings.TrimPrefix(oerr.Error(), maint.ErrTaggedVersions.Error()+": "); !strings.Contains(le.Message, msg) {
		t.Errorf("refusal differs\nLance 12: %s\nours:     %s", le.Message, msg)
	}
	if !slices.Equal(listTree(t, oursDir), before) {
		t.Fatal("the refused cleanup deleted files")
	}
	for _, d := range []string{lanceDir, oursDir} {
		if err := p.TagDelete(ctx, d, "old"); err != nil {
			t.Fatal(err)
		}
	}
	res, err := p.Exec(ctx, "optimize", lanceDir, "--cleanup-older-than-ms", strconv.FormatInt(cutoff.UnixMilli(), 10))
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != vBefore {
		t.Fatalf("Lance's optimize committed version %d (was %d): the table was not compaction-neutral", res.Version, vBefore)
	}
	cr, err := maint.Cleanup(ctx, st, maint.CleanupOptions{Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	lanceLeft, oursLeft := listTree(t, lanceDir), listTree(t, oursDir)
	if !slices.Equal(lanceLeft, oursLeft) {
		t.Errorf("files left differ\nLance 12: %v\nours:     %v\nbefore:   %v\nwe removed %v", lanceLeft, oursLeft, before, cr.RemovedFiles)
	}
	if len(cr.RemovedVersions) == 0 {
		t.Errorf("nothing removed: %+v", cr)
	}
	want := readPeer(ctx, t, p, lanceDir)
	got := readPeer(ctx, t, p, oursDir)
	if !slices.Equal(want.rows, got.rows) {
		t.Errorf("latest rows differ after cleanup")
	}
}
