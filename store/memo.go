package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
)

// memoTable is the per-Store cache behind Memo and SetMemo.
type memoTable struct {
	mu sync.Mutex
	m  map[string]any
}

// Memo returns what SetMemo last stored under name on this store (or a
// store Sub made from it, or the store it was made from), nil when
// nothing. It is a cache for the layers above, e.g. the commit path keeps
// the manifest this process just committed so that the next commit need
// not read it back; a user must validate what it gets (Identity) before
// trusting it, because other processes change the objects underneath.
func (s *Store) Memo(name string) any {
	if s.memo == nil {
		return nil
	}
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	return s.memo.m[name]
}

// SetMemo stores v under name for Memo (nil removes it). At most
// maxMemos names are kept; beyond that the table is cleared first, so a
// process touching many datasets through one store keeps a bounded cache.
func (s *Store) SetMemo(name string, v any) {
	if s.memo == nil {
		return
	}
	s.memo.mu.Lock()
	defer s.memo.mu.Unlock()
	if v == nil {
		delete(s.memo.m, name)
		return
	}
	if s.memo.m == nil || len(s.memo.m) >= maxMemos {
		s.memo.m = map[string]any{}
	}
	s.memo.m[name] = v
}

// maxMemos bounds the names a memo table keeps.
const maxMemos = 64

// Identity returns a string that changes whenever the object at key is
// replaced: on the local backend the device, inode, size, modification and
// change times of the file (one lstat(2)), elsewhere the size, modification
// time and ETag. A missing key is an error wrapping ErrNotFound. Two equal
// identities mean the same object, unchanged, as far as the backend can
// tell without reading it.
func (s *Store) Identity(ctx context.Context, key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if s.kind == KindLocal {
		id, err := localIdentity(s.localPath(key))
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return id, s.wrap("stat", key, err)
	}
	oi, err := s.Stat(ctx, key)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%d/%s", oi.Size, oi.ModTime.UnixNano(), oi.ETag), nil
}
