package main

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// countingBucket is a blob driver over another bucket that counts the
// object-store requests made through it: reads (one per range reader),
// stats and list pages — what each would cost on an object store. It is
// for read paths (the open workloads); writes pass through uncounted.
type countingBucket struct {
	b                   *blob.Bucket
	reads, stats, lists atomic.Int64
	// deletes counts Delete calls (not in total: the read-path workloads
	// never delete; the cleanup workload adds them).
	deletes atomic.Int64
}

func newCountingBucket(b *blob.Bucket) (*countingBucket, *blob.Bucket) {
	c := &countingBucket{b: b}
	return c, blob.NewBucket(c)
}

func (c *countingBucket) total() int64 { return c.reads.Load() + c.stats.Load() + c.lists.Load() }

func (c *countingBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (c *countingBucket) As(any) bool                            { return false }
func (c *countingBucket) ErrorAs(err error, target any) bool     { return errors.As(err, target) }
func (c *countingBucket) Close() error                           { return nil }

func (c *countingBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	c.stats.Add(1)
	a, err := c.b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{Size: a.Size, ModTime: a.ModTime, ETag: a.ETag, MD5: a.MD5, ContentType: a.ContentType, Metadata: a.Metadata}, nil
}

func (c *countingBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	c.lists.Add(1)
	size := opts.PageSize
	if size <= 0 {
		size = 1000
	}
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	objs, next, err := c.b.ListPage(ctx, token, size, &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

type countingReader struct {
	r *blob.Reader
}

func (r countingReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r countingReader) Close() error               { return r.r.Close() }
func (r countingReader) As(any) bool                { return false }
func (r countingReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (c *countingBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	c.reads.Add(1)
	r, err := c.b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return countingReader{r}, nil
}

func (c *countingBucket) NewTypedWriter(ctx context.Context, key, contentType string, _ *driver.WriterOptions) (driver.Writer, error) {
	return c.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
}

func (c *countingBucket) Copy(ctx context.Context, dst, src string, _ *driver.CopyOptions) error {
	return c.b.Copy(ctx, dst, src, nil)
}

func (c *countingBucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	c.deletes.Add(1)
	return c.b.Delete(ctx, key)
}

func (c *countingBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("countingBucket: no signed URLs")
}
