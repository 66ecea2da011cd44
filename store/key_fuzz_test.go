package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

// FuzzValidateKey: ValidateKey never panics, and every key it accepts maps to
// the same file for our local writer and for fileblob's reader (so reads
// through Bucket() see what the Store wrote), inside the store directory.
func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{
		"ds/_versions/18446744073709551614.manifest", "_refs/branches/feat%2Fx.json",
		"data/0101-abc.lance", "a b/c", "ü/ñ", "a/../b", "a//b", "x.attrs", "__0x41__", "..", ".hidden/.x",
		"_transactions/0-2c7c2b9a-2f0b-4e4f-9a47-1b8f0c2d3e4f.txn", "a/.lk-tmp-b", "ends/",
	} {
		f.Add(k)
	}
	dir := f.TempDir()
	s, err := store.Open(context.Background(), dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if err := store.ValidateKey(key); err != nil {
			return
		}
		ctx := context.Background()
		data := []byte("k=" + key)
		if err := s.Put(ctx, key, data); err != nil {
			// The OS may refuse long names or a file where a directory is
			// needed; that is an error, never a mismatch.
			return
		}
		defer s.Delete(ctx, key)
		p := filepath.Join(dir, filepath.FromSlash(key))
		if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("key %q maps outside the store: %s", key, p)
		}
		onDisk, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(onDisk, data) {
			t.Fatalf("key %q: file %s holds %q (%v)", key, p, onDisk, err)
		}
		viaBucket, err := s.Bucket().ReadAll(ctx, s.BucketKey(key))
		if err != nil || !bytes.Equal(viaBucket, data) {
			t.Fatalf("key %q: fileblob reads %q (%v)", key, viaBucket, err)
		}
	})
}
