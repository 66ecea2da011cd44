package store

import (
	"context"
	"net/url"
	"strings"
	"sync"
)

// Base paths (lance-table-format.md §3.2 field 4) name other roots a
// dataset's files live in — a shallow clone's source, an external data
// directory — as a plain absolute path or a URL without any connection
// option. OpenBase is the one way to open them: a base URL on the same
// scheme and host (bucket) as the dataset's own store gets the query
// parameters the dataset was opened with (endpoint, region,
// use_path_style, …; not "prefix"), so an S3 shallow clone on a custom
// endpoint reads its source's files through that endpoint. A base on
// another host, or with a query of its own, is opened as recorded (its
// SDK configuration then comes from the environment, docs/storage.md).

// BaseURL returns the URL OpenBase opens for base.
func (s *Store) BaseURL(base string) string {
	if s.scheme == "" || !strings.Contains(base, "://") {
		return base
	}
	bu, err := url.Parse(base)
	if err != nil || bu.Scheme != s.scheme || bu.Host != s.host || bu.RawQuery != "" || len(s.conn) == 0 {
		return base
	}
	bu.RawQuery = s.conn.Encode()
	return bu.String()
}

// OpenBase opens the store of a base path of the dataset rooted in s (see
// BaseURL). The caller closes it.
func (s *Store) OpenBase(ctx context.Context, base string) (*Store, error) {
	return Open(ctx, s.BaseURL(base))
}

// Bases opens, once each, the stores of the base paths a dataset's files
// live in, through OpenBase on the dataset's own store. It is safe for
// concurrent use; Close closes the stores it opened (not the root).
type Bases struct {
	root   *Store
	mu     sync.Mutex
	opened map[string]*Store
}

// NewBases returns a Bases for the dataset rooted in root.
func NewBases(root *Store) *Bases {
	return &Bases{root: root, opened: map[string]*Store{}}
}

// Store returns the store of base: the root for "", else the base path's
// store, opened on first use. Errors are those of Open, unwrapped.
func (b *Bases) Store(ctx context.Context, base string) (*Store, error) {
	if base == "" {
		return b.root, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.opened[base]; ok {
		return st, nil
	}
	st, err := b.root.OpenBase(ctx, base)
	if err != nil {
		return nil, err
	}
	b.opened[base] = st
	return st, nil
}

// Close closes every base store opened so far.
func (b *Bases) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var first error
	for k, st := range b.opened {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
		delete(b.opened, k)
	}
	return first
}
