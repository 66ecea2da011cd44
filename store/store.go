package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// ObjectInfo describes a listed or stat'ed object. Key is relative to the
// store root. In a shallow listing, sub-"directories" appear with IsDir set
// and a Key ending in '/'.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
	ETag    string
	IsDir   bool
}

// ListOptions controls List.
type ListOptions struct {
	// Shallow lists one level: keys directly under prefix plus one IsDir
	// entry per sub-directory (e.g. listing "ds/_versions/"). Otherwise List
	// returns every key under prefix and no directories.
	Shallow bool
}

// wrap turns a driver error into an error naming op, key and store, wrapping
// ErrNotFound / ErrAlreadyExists where the gocloud error code says so.
func (s *Store) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("store %s: %s %q: %w: %w", s.display, op, key, ErrNotFound, err)
		}
	case gcerrors.FailedPrecondition, gcerrors.AlreadyExists:
		if !errors.Is(err, ErrAlreadyExists) {
			return fmt.Errorf("store %s: %s %q: %w: %w", s.display, op, key, ErrAlreadyExists, err)
		}
	}
	return fmt.Errorf("store %s: %s %q: %w", s.display, op, key, err)
}

// Get returns the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if s.kind == KindLocal {
		// One open, fstat and read of the exact size (readFileRaw) instead
		// of fileblob's stat, sidecar probe, poller registration and
		// doubling reads.
		b, err := readFileRaw(s.localPath(key))
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return b, s.wrap("get", key, err)
	}
	b, err := s.bucket.ReadAll(ctx, s.prefix+key)
	return b, s.wrap("get", key, err)
}

// GetRange returns length bytes at offset. A negative length reads to the
// end of the object. If the object ends before offset+length the error
// wraps ErrShortRead.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("store %s: range read %q: negative offset %d", s.display, key, offset)
	}
	if length == 0 {
		if _, err := s.Size(ctx, key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	r, err := s.bucket.NewRangeReader(ctx, s.prefix+key, offset, length, nil)
	if err != nil {
		return nil, s.wrap("range read", key, err)
	}
	defer r.Close()
	var buf []byte
	if length > 0 {
		// Never trust length for the allocation beyond what the object has.
		n := min(length, max(r.Size()-offset, 0))
		buf = make([]byte, 0, n)
	}
	w := bytes.NewBuffer(buf)
	if _, err := io.Copy(w, r); err != nil {
		return nil, s.wrap("range read", key, err)
	}
	if length > 0 && int64(w.Len()) < length {
		return nil, fmt.Errorf("store %s: range read %q at offset %d: %w: want %d bytes, got %d (object size %d)",
			s.display, key, offset, ErrShortRead, length, w.Len(), r.Size())
	}
	return w.Bytes(), nil
}

// Stat returns the object's size, modification time and ETag.
func (s *Store) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidateKey(key); err != nil {
		return ObjectInfo{}, err
	}
	a, err := s.bucket.Attributes(ctx, s.prefix+key)
	if err != nil {
		return ObjectInfo{}, s.wrap("stat", key, err)
	}
	return ObjectInfo{Key: key, Size: a.Size, ModTime: a.ModTime, ETag: a.ETag}, nil
}

// Size returns the object's size in bytes.
func (s *Store) Size(ctx context.Context, key string) (int64, error) {
	oi, err := s.Stat(ctx, key)
	return oi.Size, err
}

// Exists reports whether key exists.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	if s.kind == KindLocal {
		ok, err := localExists(s.localPath(key))
		return ok, s.wrap("exists", key, err)
	}
	ok, err := s.bucket.Exists(ctx, s.prefix+key)
	return ok, s.wrap("exists", key, err)
}

// List returns the objects under prefix (relative to the store root), sorted
// by key. A prefix naming a directory should end with '/'. On a local
// directory the temporary files of writers are not listed, and files that
// other writers remove while the listing runs are skipped, never an error.
func (s *Store) List(ctx context.Context, prefix string, opts ListOptions) ([]ObjectInfo, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	lo := &blob.ListOptions{Prefix: s.prefix + prefix}
	if opts.Shallow {
		lo.Delimiter = "/"
	}
	var out []ObjectInfo
	it := s.bucket.List(lo)
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, s.wrap("list", prefix, err)
		}
		key := strings.TrimPrefix(obj.Key, s.prefix)
		out = append(out, ObjectInfo{Key: key, Size: obj.Size, ModTime: obj.ModTime, IsDir: obj.IsDir})
	}
	slices.SortFunc(out, func(a, b ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Put writes data to key, replacing any existing object.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.kind == KindLocal {
		return s.wrap("put", key, s.localPut(ctx, key, data))
	}
	return s.wrap("put", key, s.bucket.WriteAll(ctx, s.prefix+key, data, nil))
}

// Delete removes key; an absent key gives an error wrapping ErrNotFound.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.kind == KindLocal {
		return s.wrap("delete", key, s.localDelete(key))
	}
	return s.wrap("delete", key, s.bucket.Delete(ctx, s.prefix+key))
}

// Copy copies src to dst (both in this store), replacing dst.
func (s *Store) Copy(ctx context.Context, dst, src string) error {
	if err := ValidateKey(dst); err != nil {
		return err
	}
	if err := ValidateKey(src); err != nil {
		return err
	}
	if s.kind == KindLocal {
		return s.wrap("copy from "+src+" to", dst, s.localCopy(ctx, dst, src))
	}
	return s.wrap("copy from "+src+" to", dst, s.bucket.Copy(ctx, s.prefix+dst, s.prefix+src, nil))
}

// conditionalConflictRetries bounds the retries of an S3 conditional put
// answered with 409 ConditionalRequestConflict (another conditional write
// of the key was in flight; the outcome of ours is "not written").
const conditionalConflictRetries = 8

// CreateIfAbsent writes data to key only if key does not exist. If it
// exists the error wraps ErrAlreadyExists and the object is unchanged.
// Whether concurrent calls from different writers have exactly one winner
// depends on the backend: see Guarantees and AtomicCreate.
func (s *Store) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if s.kind == KindLocal {
		return s.wrap("create", key, s.localCreate(ctx, key, data))
	}
	opts := &blob.WriterOptions{IfNotExist: true}
	if s.kind == KindS3 {
		// One PUT, never a multipart upload: the precondition must hold for
		// the single request that makes the object visible.
		opts.BufferSize = max(len(data)+1, 5<<20)
	}
	for attempt := 0; ; attempt++ {
		err := s.bucket.WriteAll(ctx, s.prefix+key, data, opts)
		if err == nil || !isConditionalConflict(err) || attempt >= conditionalConflictRetries {
			return s.wrap("create", key, err)
		}
		// Jittered backoff, bounded: 1ms..~256ms.
		d := time.Duration(rand.Int64N(int64(time.Millisecond)<<min(attempt, 8))) + time.Millisecond
		select {
		case <-ctx.Done():
			return s.wrap("create", key, ctx.Err())
		case <-time.After(d):
		}
	}
}

// isConditionalConflict: S3 answers 409 ConditionalRequestConflict when
// another conditional write of the key is in progress.
func isConditionalConflict(err error) bool {
	var ae interface{ ErrorCode() string }
	return errors.As(err, &ae) && ae.ErrorCode() == "ConditionalRequestConflict"
}
