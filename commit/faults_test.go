package commit

import (
	"context"
	"errors"
	"time"

	"github.com/lancekeeper/lancekeeper/store"
)

// errInjected is the fault a faultStore injects.
var errInjected = errors.New("injected fault")

func noBackoff(int) time.Duration { return 0 }

// faultStore wraps a Store and calls before(op, key) ahead of every write
// ("put", "create", "writer") and after(op, key) once it succeeded; an
// error from either is returned in place of the operation's result (after:
// the write happened, then the "process" dies).
type faultStore struct {
	Store
	before func(op, key string) error
	after  func(op, key string) error
}

func (f *faultStore) hook(h func(op, key string) error, op, key string) error {
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
