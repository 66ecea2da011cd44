package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// deleteBatch is the most keys one S3 DeleteObjects request takes.
const deleteBatch = 1000

// deleteConcurrency bounds the delete requests DeleteMany keeps in flight.
const deleteConcurrency = 32

// DeleteMany deletes every key; keys already absent are not an error. It
// returns the number of delete requests it sent.
// gocloud's blob API deletes one object per call; on S3 DeleteMany sends
// DeleteObjects requests of up to 1,000 keys instead (one request where
// Delete would make a thousand), several in flight. Other stores delete
// key by key, deleteConcurrency at a time. The keys are deleted in no
// particular order, and an error leaves some of them deleted: a caller
// that needs an order (cleanup: manifests before the files they name)
// calls DeleteMany once per step.
func (s *Store) DeleteMany(ctx context.Context, keys []string) (int, error) {
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return 0, err
		}
	}
	var client *s3.Client
	if s.kind == KindS3 && s.bucket.As(&client) && client != nil {
		return (len(keys) + deleteBatch - 1) / deleteBatch, s.deleteObjects(ctx, client, keys)
	}
	errs := make([]error, len(keys))
	parallel(ctx, len(keys), func(i int) {
		if err := s.Delete(ctx, keys[i]); err != nil && !errors.Is(err, ErrNotFound) {
			errs[i] = err
		}
	})
	if err := errors.Join(errs...); err != nil {
		return len(keys), err
	}
	return len(keys), ctx.Err()
}

// deleteObjects deletes keys with DeleteObjects requests (quiet mode: the
// answer lists only the keys that failed; S3 reports a missing key as
// deleted).
func (s *Store) deleteObjects(ctx context.Context, client *s3.Client, keys []string) error {
	n := (len(keys) + deleteBatch - 1) / deleteBatch
	errs := make([]error, n)
	parallel(ctx, n, func(i int) {
		batch := keys[i*deleteBatch : min(len(keys), (i+1)*deleteBatch)]
		objs := make([]types.ObjectIdentifier, len(batch))
		for j, k := range batch {
			objs[j] = types.ObjectIdentifier{Key: ptr(s.prefix + k)}
		}
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: ptr(s.host),
			Delete: &types.Delete{Objects: objs, Quiet: ptr(true)},
		})
		if err != nil {
			errs[i] = s.wrap("delete", fmt.Sprintf("%s … (%d keys)", batch[0], len(batch)), err)
			return
		}
		var failed []error
		for _, e := range out.Errors {
			if deref(e.Code) == "NoSuchKey" {
				continue
			}
			failed = append(failed, fmt.Errorf("delete %s: %s: %s", deref(e.Key), deref(e.Code), deref(e.Message)))
		}
		errs[i] = errors.Join(failed...)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// parallel calls fn(0…n-1) from min(n, deleteConcurrency) workers; after
// ctx is cancelled no further call starts.
func parallel(ctx context.Context, n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, deleteConcurrency) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func ptr[T any](v T) *T { return &v }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
