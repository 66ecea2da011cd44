package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLocalExists_AgreesWithFileblob: the local fast path of Exists (one
// stat, no error value for a missing key) answers as fileblob's Exists
// does — a file and a symlink to one exist; a missing key, a directory and
// a dangling symlink do not.
func TestLocalExists_AgreesWithFileblob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, "ds/data/f.lance", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "ds", "data", "f.lance"), filepath.Join(dir, "ds", "data", "link.lance")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "ds", "data", "dangling.lance")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"ds/data/f.lance", true},
		{"ds/data/link.lance", true},
		{"ds/data/missing.lance", false},
		{"ds/missing/deeper/x", false},
		{"ds/data", false},
		{"ds/data/dangling.lance", false},
	} {
		got, err := s.Exists(ctx, tc.key)
		if err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		blob, err := s.bucket.Exists(ctx, s.prefix+tc.key)
		if err != nil {
			t.Fatalf("%s (fileblob): %v", tc.key, err)
		}
		if got != tc.want || blob != tc.want {
			t.Fatalf("%s: Exists %v, fileblob %v, want %v", tc.key, got, blob, tc.want)
		}
	}
	if _, err := s.Exists(ctx, "ds/data/f.lance/under-a-file"); err == nil {
		t.Fatal("a key under a file: no error (fileblob reports one too)")
	}
}
