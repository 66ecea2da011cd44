package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// Store is a root prefix in a bucket. Keys passed to its methods are relative
// to that root and joined with '/'; they must pass ValidateKey. A Store is
// safe for concurrent use.
type Store struct {
	kind    Kind
	guar    Guarantees
	display string // URL (or path) the store was opened from, for messages
	bucket  *blob.Bucket
	prefix  string // key prefix in bucket: "" or ends with '/'
	owned   bool   // Close closes bucket
	// local backend only: filesystem directory that bucket key "" maps to.
	dir string
	// URL stores (s3, gs, azblob) only: the scheme, host (bucket) and
	// connection query parameters ("prefix" removed) the store was opened
	// with, which OpenBase gives base paths on the same scheme and host.
	scheme, host string
	conn         url.Values
	// memo is the cache of Memo/SetMemo, shared by the stores Sub makes
	// (nil: no cache).
	memo *memoTable
	// syncs are the early syncs of deferred writes (earlysync.go; nil:
	// none), shared by the stores Sub makes.
	syncs *syncTable
	// steps, when set (tests only), is called before and after each step
	// of the deferred durable write path (steps.go); an error before a
	// step fails it.
	steps func(step, path string, id uint64) error
}

// Open opens the store named by rawURL:
//
//	/abs/dir, rel/dir, file:///abs/dir      local directory (lancekeeper's link(2) committer)
//	mem://[name][/prefix]                     new process-local memory bucket
//	s3://bucket[/prefix]?endpoint=…&region=…&use_path_style=true
//	gs://bucket[/prefix]                      needs the gcsblob driver linked (store/drivers)
//	azblob://container[/prefix]               needs the azureblob driver linked (store/drivers)
//
// The URL path (and a "prefix" query parameter) become the store's root
// prefix. Other query parameters go to the gocloud driver (for s3: region,
// endpoint, use_path_style, disable_https, profile, anonymous, …; see
// docs/storage.md). The s3 driver is linked by this package; the gs and
// azblob drivers pull in large SDKs and are used when the program links
// them (a blank import of store/drivers in package main registers both with
// blob.DefaultURLMux; the lancekeeper command does). A local directory that does not exist yet is not created
// by Open; the first write creates it.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidURL)
	}
	if !strings.Contains(rawURL, "://") {
		return openLocal(rawURL, rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrInvalidURL, rawURL, err)
	}
	q := u.Query()
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w %q: file URLs name a local path, host %q is not allowed", ErrInvalidURL, rawURL, u.Host)
		}
		if len(q) > 0 {
			return nil, fmt.Errorf("%w %q: file URLs take no query parameters", ErrInvalidURL, rawURL)
		}
		if u.Path == "" {
			return nil, fmt.Errorf("%w %q: no path", ErrInvalidURL, rawURL)
		}
		return openLocal(filepath.FromSlash(u.Path), rawURL)
	case "mem":
		prefix, err := urlPrefix(u, q)
		if err != nil {
			return nil, err
		}
		if len(q) > 0 {
			return nil, fmt.Errorf("%w %q: mem URLs take no query parameters other than prefix", ErrInvalidURL, rawURL)
		}
		// The host, if any, is only a label: every Open is a new bucket.
		return newStore(KindMemory, rawURL, memblob.OpenBucket(nil), prefix), nil
	case "s3", "gs", "azblob":
		if u.Host == "" {
			return nil, fmt.Errorf("%w %q: no bucket name", ErrInvalidURL, rawURL)
		}
		prefix, err := urlPrefix(u, q)
		if err != nil {
			return nil, err
		}
		if u.Scheme == "s3" {
			b, err := openS3(ctx, u.Host, q)
			if err != nil {
				return nil, fmt.Errorf("store: open %s: %w", redact(rawURL), err)
			}
			return withConn(newStore(KindS3, rawURL, b, prefix), u, q), nil
		}
		kind := map[string]Kind{"gs": KindGCS, "azblob": KindAzure}[u.Scheme]
		mux := blob.DefaultURLMux()
		if !mux.ValidBucketScheme(u.Scheme) {
			driver := map[string]string{"gs": "gcsblob", "azblob": "azureblob"}[u.Scheme]
			return nil, fmt.Errorf("%w %q: the %s:// driver is not linked into this program (blank-import github.com/lancekeeper/lancekeeper/store/drivers, or gocloud.dev/blob/%s, in package main)",
				ErrInvalidURL, redact(rawURL), u.Scheme, driver)
		}
		du := &url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
		b, err := mux.OpenBucketURL(ctx, du)
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", redact(rawURL), err)
		}
		return withConn(newStore(kind, rawURL, b, prefix), u, q), nil
	}
	return nil, fmt.Errorf("%w %q: unknown scheme %q (want a local path, file, mem, s3, gs or azblob)", ErrInvalidURL, rawURL, u.Scheme)
}

// FromBucket wraps a bucket the caller opened. The store does not close it.
// atomicCreate declares whether the bucket's IfNotExist writes are atomic for
// every writer; a gocloud fileblob bucket is NOT (stat + rename under a
// process-local mutex), so wrap it with atomicCreate=false — or better, open
// the directory with Open, which uses lancekeeper's link(2) committer.
func FromBucket(b *blob.Bucket, prefix string, atomicCreate bool) (*Store, error) {
	if b == nil {
		return nil, errors.New("store: FromBucket: nil bucket")
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("store: FromBucket prefix: %w", err)
		}
		prefix += "/"
	}
	s := newStore(KindBucket, "bucket:"+prefix, b, prefix)
	s.owned = false
	s.guar.AtomicCreate = atomicCreate
	if atomicCreate {
		s.guar.Caveats = "atomicity declared by the caller of FromBucket, not verified"
	}
	return s, nil
}

func newStore(kind Kind, display string, b *blob.Bucket, prefix string) *Store {
	return &Store{kind: kind, guar: guaranteesFor(kind), display: redact(display), bucket: b, prefix: prefix, owned: true, memo: &memoTable{}, syncs: &syncTable{}}
}

// withConn records the scheme, host and connection query parameters of a
// URL store (see OpenBase).
func withConn(s *Store, u *url.URL, q url.Values) *Store {
	s.scheme, s.host = u.Scheme, u.Host
	if len(q) > 0 {
		s.conn = cloneValues(q)
	}
	return s
}

// urlPrefix returns the root prefix named by the URL path and the "prefix"
// query parameter (which is removed from q), normalised to "" or "p/".
func urlPrefix(u *url.URL, q url.Values) (string, error) {
	parts := []string{strings.Trim(u.Path, "/")}
	if p := q.Get("prefix"); p != "" {
		parts = append(parts, strings.Trim(p, "/"))
	}
	q.Del("prefix")
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	prefix := strings.Join(nonEmpty, "/")
	if prefix == "" {
		return "", nil
	}
	if err := ValidateKey(prefix); err != nil {
		return "", fmt.Errorf("%w %q: root prefix: %v", ErrInvalidURL, u.Redacted(), err)
	}
	return prefix + "/", nil
}

// openLocal opens a directory. fileblob needs an existing directory, so the
// bucket is rooted at the nearest existing ancestor and the missing tail
// becomes the key prefix; nothing is created until the first write.
func openLocal(path, display string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: local path %q: %w", path, err)
	}
	dir := abs
	var missing []string
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("store: local path %q: %s is not a directory", path, dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("store: local path %q: %w", path, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("store: local path %q: no existing ancestor directory", path)
		}
		missing = append([]string{filepath.Base(dir)}, missing...)
		dir = parent
	}
	prefix := ""
	if len(missing) > 0 {
		prefix = strings.Join(missing, "/")
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("store: local path %q: %w", path, err)
		}
		prefix += "/"
	}
	// metadata=skip: no *.attrs sidecar files next to Lance files.
	// NoTempDir: raw bucket writes stage next to the target, never across
	// filesystems (the Store itself writes through its own code, see local.go).
	fb, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite, NoTempDir: true})
	if err != nil {
		return nil, fmt.Errorf("store: local path %q: %w", path, err)
	}
	// Listings must survive concurrent writers (see localBucket).
	s := newStore(KindLocal, display, newLocalBucket(fb, dir), prefix)
	s.dir = dir
	return s, nil
}

// redact hides user info in URLs for messages.
func redact(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// Sub returns a store rooted at key (a "directory") of s, sharing its bucket;
// closing it does not close the bucket.
func (s *Store) Sub(key string) (*Store, error) {
	key = strings.TrimSuffix(key, "/")
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("store: sub-store: %w", err)
	}
	c := *s
	c.prefix = s.prefix + key + "/"
	c.owned = false
	c.display = strings.TrimSuffix(s.display, "/") + "/" + key
	return &c, nil
}

// Close releases the bucket (unless the store was made by Sub or FromBucket).
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.bucket.Close()
}

// Kind returns the backend kind.
func (s *Store) Kind() Kind { return s.kind }

// String returns the URL or path the store was opened from.
func (s *Store) String() string { return s.display }

// Bucket returns the underlying bucket, for range reads of data files by
// other packages. Keys in it are KeyPrefix()+key. Write through the Store
// (Put, NewWriter, CreateIfAbsent), not through the bucket: on a local
// directory the Store writes with fsync and link(2), the bucket does not.
func (s *Store) Bucket() *blob.Bucket { return s.bucket }

// KeyPrefix returns the store's root prefix in Bucket(): "" or ending in '/'.
func (s *Store) KeyPrefix() string { return s.prefix }

// BucketKey returns the bucket key of a store key.
func (s *Store) BucketKey(key string) string { return s.prefix + key }
