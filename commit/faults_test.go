package commit

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
)

// errInjected is the fault a faultStore injects.
var errInjected = errors.New("injected fault")

func noBackoff(int) time.Duration { return 0 }

// faultStore wraps a Store and calls before(op, key) ahead of every write
// ("put", "create", "writer", "delete") and after(op, key) once it
// succeeded; an error from either is returned in place of the operation's
// result (after: the write happened, then the "process" died). Once crash
// is set, every later write fails too, as it would in a dead process.
type faultStore struct {
	Store
	before func(op, key string) error
	after  func(op, key string) error

	mu      sync.Mutex
	crashed bool
}

// crashAt returns hooks that kill the "process" at the first write of op
// whose key starts with prefix: before it (when!afterOp) or after it.
func crashAt(st Store, op, prefix string, afterOp bool) *faultStore {
	f := &faultStore{Store: st}
	h := func(o, key string) error {
		if o == op && strings.HasPrefix(key, prefix) {
			f.mu.Lock()
			f.crashed = true
			f.mu.Unlock()
			return errInjected
		}
		return nil
	}
	if afterOp {
		f.after = h
	} else {
		f.before = h
	}
	return f
}

func (f *faultStore) hook(h func(op, key string) error, op, key string) error {
	f.mu.Lock()
	dead := f.crashed
	f.mu.Unlock()
	if dead {
		return errInjected
	}
	if h == nil {
		return nil
	}
	return h(op, key)
}

func (f *faultStore) Put(ctx context.Context, key string, data []byte) error {
	if err := f.hook(f.before, "put", key); err != nil {
		return err
	}
	if err := f.Store.Put(ctx, key, data); err != nil {
		return err
	}
	return f.hook(f.after, "put", key)
}

func (f *faultStore) CreateIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := f.hook(f.before, "create", key); err != nil {
		return err
	}
	if err := f.Store.CreateIfAbsent(ctx, key, data); err != nil {
		return err
	}
	return f.hook(f.after, "create", key)
}

func (f *faultStore) NewWriter(ctx context.Context, key string) (*store.Writer, error) {
	if err := f.hook(f.before, "writer", key); err != nil {
		return nil, err
	}
	return f.Store.NewWriter(ctx, key)
}

func (f *faultStore) Get(ctx context.Context, key string) ([]byte, error) {
	f.mu.Lock()
	dead := f.crashed
	f.mu.Unlock()
	if dead {
		return nil, errInjected
	}
	return f.Store.Get(ctx, key)
}

func (f *faultStore) Delete(ctx context.Context, key string) error {
	if err := f.hook(f.before, "delete", key); err != nil {
		return err
	}
	return f.Store.Delete(ctx, key)
}
