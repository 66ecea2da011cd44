package store_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// BenchmarkCreate compares the cost of a manifest-sized create-if-absent
// with its baselines in the same run: a durable local Put (temp + fsync +
// rename + dir fsync) and fileblob's own (non-atomic, non-fsyncing)
// IfNotExist write. Report ratios of ns/op against local-put.
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	data := make([]byte, 4096)
	b.Run("local-put", func(b *testing.B) {
		s, _ := store.Open(ctx, b.TempDir())
		for i := 0; b.Loop(); i++ {
			if err := s.Put(ctx, "v/"+strconv.Itoa(i), data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local-create-if-absent", func(b *testing.B) {
		s, _ := store.Open(ctx, b.TempDir())
		for i := 0; b.Loop(); i++ {
			if err := s.CreateIfAbsent(ctx, "v/"+strconv.Itoa(i), data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fileblob-ifnotexist", func(b *testing.B) {
		bk, err := fileblob.OpenBucket(b.TempDir(), &fileblob.Options{Metadata: fileblob.MetadataDontWrite, NoTempDir: true})
		if err != nil {
			b.Fatal(err)
		}
		defer bk.Close()
		for i := 0; b.Loop(); i++ {
			if err := bk.WriteAll(ctx, "v/"+strconv.Itoa(i), data, &blob.WriterOptions{IfNotExist: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mem-create-if-absent", func(b *testing.B) {
		s, _ := store.Open(ctx, "mem://")
		for i := 0; b.Loop(); i++ {
			if err := s.CreateIfAbsent(ctx, "v/"+strconv.Itoa(i), data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
