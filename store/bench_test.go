package store_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

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

// BenchmarkLocalList compares, in one run, a shallow listing of a
// _versions/ directory of 2000 manifests through a local store's bucket
// (os.ReadDir, entries sorted, vanished entries skipped) with the same
// listing through gocloud's fileblob (the baseline), interleaved, and
// reports the ratio store/fileblob of the time per listing.
func BenchmarkLocalList(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := store.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for v := 1; v <= 2000; v++ {
		if err := s.Put(ctx, fmt.Sprintf("ds/_versions/%020d.manifest", v), []byte("m")); err != nil {
			b.Fatal(err)
		}
	}
	raw, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	list := func(bk *blob.Bucket) time.Duration {
		start := time.Now()
		it := bk.List(&blob.ListOptions{Prefix: "ds/_versions/", Delimiter: "/"})
		n := 0
		for {
			_, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 2000 {
			b.Fatalf("listed %d objects, want 2000", n)
		}
		return time.Since(start)
	}
	var ours, base time.Duration
	for b.Loop() {
		base += list(raw)
		ours += list(s.Bucket())
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "store-ns/list")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "fileblob-ns/list")
	b.ReportMetric(float64(ours)/float64(base), "store/fileblob")
}

// BenchmarkDeferredCommitSequence is the store's part of a one-file
// append on the local backend, without the encoding: a data file (1,258
// bytes) and a transaction file (124 bytes) written deferred, then the
// manifest (833 bytes) created after them with the hint written while
// _versions/ is fsynced — the sizes of the 10-row append of
// tests/bench commit/append-1writer. Its time is almost all sync latency
// (docs/benchmarks.md "commitio (session 24)"); compare commits A/B.
func BenchmarkDeferredCommitSequence(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	dataBytes, txnBytes, manBytes := make([]byte, 1258), make([]byte, 124), make([]byte, 833)
	put := func(key string, p []byte) {
		w, err := s.NewDeferredWriter(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(p); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; b.Loop(); i++ {
		data, txn := fmt.Sprintf("data/%d.lance", i), fmt.Sprintf("_transactions/%d-x.txn", i)
		put(data, dataBytes)
		put(txn, txnBytes)
		_, err := s.CreateIfAbsentAfterThen(ctx, fmt.Sprintf("_versions/%d.manifest", i), manBytes, []string{data, txn}, func() {
			_ = s.PutInPlace(ctx, "_versions/latest_version_hint.json", []byte(`{"version":`+strconv.Itoa(i)+`}`))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
