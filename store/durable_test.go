package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCreateIfAbsentAfter_Sequence checks the local commit point: the
// prerequisites written deferred (created under their own names, O_EXCL)
// and the manifest (an unnamed O_TMPFILE file, or a named temporary where
// unsupported) are synced in one batch, the manifest is linked to its name,
// nothing temporary remains, a second create of the name is refused before
// any batch (synced=false) and one writer of many wins.
func TestCreateIfAbsentAfter_Sequence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := s.NewDeferredWriter(ctx, "data/a.lance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("rows")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewDeferredWriter(ctx, "data/a.lance"); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("a deferred writer over an existing key: %v, want ErrAlreadyExists", err)
	}
	synced, err := s.CreateIfAbsentAfter(ctx, "_versions/1.manifest", []byte("m1"), []string{"data/a.lance"})
	if err != nil || !synced {
		t.Fatalf("create: synced %v err %v", synced, err)
	}
	if got, err := s.Get(ctx, "_versions/1.manifest"); err != nil || string(got) != "m1" {
		t.Fatalf("manifest %q %v", got, err)
	}
	synced, err = s.CreateIfAbsentAfter(ctx, "_versions/1.manifest", []byte("m2"), []string{"data/a.lance"})
	if !errors.Is(err, ErrAlreadyExists) || synced {
		t.Fatalf("second create: synced %v err %v, want ErrAlreadyExists before the batch", synced, err)
	}
	// Many writers, one name: exactly one wins (linkat is the arbiter even
	// when every writer passed the existence pre-check).
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.CreateIfAbsentAfter(ctx, "_versions/2.manifest", []byte{byte(i)}, nil)
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, ErrAlreadyExists) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), tempPrefix) {
			t.Errorf("temporary file left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEarlySync_StartedAtCloseAndConsumedByTheBatch: a deferred write's
// Close starts its sync (earlysync.go); the commit point waits for it and
// forgets it; a file replaced under the same name (PutDeferred) forgets
// its early sync, so the batch syncs the replacement; the manifest is
// linked and every file reads back complete.
func TestEarlySync_StartedAtCloseAndConsumedByTheBatch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(key, body string) {
		t.Helper()
		w, err := s.NewDeferredWriter(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put("data/a.lance", "aaaa")
	put("_transactions/1-x.txn", "old")
	early := func(key string) bool {
		s.syncs.mu.Lock()
		defer s.syncs.mu.Unlock()
		return s.syncs.m[s.localPath(key)] != nil
	}
	if !early("data/a.lance") || !early("_transactions/1-x.txn") {
		t.Fatal("Close of a deferred write did not start its sync")
	}
	if err := s.PutDeferred(ctx, "_transactions/1-x.txn", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if early("_transactions/1-x.txn") {
		t.Fatal("a replaced file kept the early sync of the file it replaced")
	}
	synced, err := s.CreateIfAbsentAfter(ctx, "_versions/1.manifest", []byte("m"), []string{"data/a.lance", "_transactions/1-x.txn"})
	if err != nil || !synced {
		t.Fatalf("synced %v, %v", synced, err)
	}
	if early("data/a.lance") {
		t.Fatal("the batch did not consume the early sync")
	}
	for key, want := range map[string]string{"data/a.lance": "aaaa", "_transactions/1-x.txn": "new", "_versions/1.manifest": "m"} {
		got, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil || string(got) != want {
			t.Fatalf("%s: %q, %v", key, got, err)
		}
	}
}

// TestCreateIfAbsentAfterThen_RunsOnceTheNameExists: then runs after the
// link (the manifest is readable under its name when it runs) and not at
// all when the name was taken.
func TestCreateIfAbsentAfterThen_RunsOnceTheNameExists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ran := 0
	then := func() {
		ran++
		if got, err := os.ReadFile(filepath.Join(dir, "_versions", "1.manifest")); err != nil || string(got) != "m" {
			t.Errorf("then ran before the manifest was in place: %q, %v", got, err)
		}
	}
	if _, err := s.CreateIfAbsentAfterThen(ctx, "_versions/1.manifest", []byte("m"), nil, then); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateIfAbsentAfterThen(ctx, "_versions/1.manifest", []byte("x"), nil, then); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if ran != 1 {
		t.Fatalf("then ran %d times, want 1", ran)
	}
}
