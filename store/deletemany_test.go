package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
)

// TestDeleteMany_S3BatchesOf1000 checks DeleteMany on every backend: every
// key goes, a key already absent is not an error, and on S3 the keys go in
// DeleteObjects requests of at most 1,000 keys (1,050 keys, 2 requests),
// key by key elsewhere. Keys under other prefixes stay.
func TestDeleteMany_S3BatchesOf1000(t *testing.T) {
	ctx := context.Background()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			s := openStore(t, be.url(t))
			const n = 1050
			keys := make([]string, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			sem := make(chan struct{}, 16)
			for i := range keys {
				keys[i] = fmt.Sprintf("data/%04d.lance", i)
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					errs <- s.Put(ctx, keys[i], []byte{byte(i)})
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Put(ctx, "keep/x", []byte("x")); err != nil {
				t.Fatal(err)
			}
			reqs, err := s.DeleteMany(ctx, append(keys, "data/absent.lance"))
			if err != nil {
				t.Fatalf("DeleteMany: %v", err)
			}
			want := n + 1
			if s.Kind() == store.KindS3 {
				want = 2
			}
			if reqs != want {
				t.Errorf("DeleteMany made %d requests, want %d", reqs, want)
			}
			left, err := s.List(ctx, "data/", store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("%d keys left, first %s", len(left), left[0].Key)
			}
			if ok, err := s.Exists(ctx, "keep/x"); err != nil || !ok {
				t.Errorf("keep/x: exists %v, %v", ok, err)
			}
			if _, err := s.DeleteMany(ctx, []string{"../escape"}); err == nil {
				t.Error("DeleteMany accepted an invalid key")
			}
		})
	}
}
