package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

// TestOpenLocalFile: a local store's object opens for positional reads
// (the bytes Put wrote); other kinds answer (nil, nil) so callers fall
// back to range reads.
func TestOpenLocalFile(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "d"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(ctx, "data/x.bin", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	f, err := st.OpenLocalFile("data/x.bin")
	if err != nil || f == nil {
		t.Fatalf("OpenLocalFile: %v, %v", f, err)
	}
	defer f.Close()
	b := make([]byte, 3)
	if _, err := f.ReadAt(b, 4); err != nil || string(b) != "456" {
		t.Fatalf("ReadAt: %q, %v", b, err)
	}
	if _, err := st.OpenLocalFile("data/missing.bin"); err == nil {
		t.Error("a missing object opened")
	}
	mem, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if f, err := mem.OpenLocalFile("data/x.bin"); f != nil || err != nil {
		t.Errorf("mem store: %v, %v; want nil, nil", f, err)
	}
}
