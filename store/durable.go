package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Batched durability for commits on the local backend.
//
// Put, CreateIfAbsent and Writer.Close each make their object durable on
// their own: fsync of the file, then of its directory. A commit writes
// several objects (data files, deletion files, the transaction file) that
// need only be durable before the manifest naming them is, so the commit
// path defers their fsyncs (NewDeferredWriter, PutDeferred) and hands their
// keys to CreateIfAbsentAfter, which fsyncs them, their directories (each
// directory once) and the manifest's temporary file all in parallel, then
// links the manifest to its name and fsyncs its directory: two fsync
// latencies on the critical path instead of two per object.
//
// The order that matters for a crash: no manifest name can reach the disk
// before everything it names, because the link happens only after every
// prerequisite's content and directory entry were fsynced. A crash before
// that leaves at most unreferenced files (as an interrupted write always
// could). Other backends are durable as each write is acknowledged; the
// deferred forms are the ordinary ones there and SyncKeys does nothing.

// NewDeferredWriter is NewWriter whose Close does not fsync: on the local
// backend the file is renamed to its name unsynced. The object is durable
// only once its key went through SyncKeys or CreateIfAbsentAfter; use it
// only for objects nothing refers to before then (a new data file).
func (s *Store) NewDeferredWriter(ctx context.Context, key string) (*Writer, error) {
	w, err := s.NewWriter(ctx, key)
	if err == nil {
		w.deferSync = true
	}
	return w, err
}

// PutDeferred is Put without the fsyncs on the local backend (see
// NewDeferredWriter): for the transaction file before the commit's
// CreateIfAbsentAfter, and for the latest-version hint, which readers never
// trust and which therefore needs no durability at all.
func (s *Store) PutDeferred(ctx context.Context, key string, data []byte) error {
	if s.kind != KindLocal {
		return s.Put(ctx, key, data)
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	final := s.localPath(key)
	f, err := createTempDir(final)
	if err != nil {
		return s.wrap("put", key, err)
	}
	name := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(name, final)
	}
	if err != nil {
		_ = os.Remove(name)
		return s.wrap("put", key, err)
	}
	return nil
}

// SyncKeys makes the objects under keys durable: on the local backend it
// fsyncs every file and every distinct parent directory, all in parallel.
// A key that does not exist is skipped (nothing to make durable). Other
// backends: nothing to do.
func (s *Store) SyncKeys(ctx context.Context, keys []string) error {
	if s.kind != KindLocal || len(keys) == 0 {
		return nil
	}
	paths := make([]string, 0, len(keys))
	for _, k := range keys {
		if err := ValidateKey(k); err != nil {
			return err
		}
		paths = append(paths, s.localPath(k))
	}
	return s.wrap("sync", keys[0], syncParallel(ctx, paths, ""))
}

// syncParallel fsyncs files (missing ones skipped), their distinct parent
// directories, and extra (a file that must exist, "" for none), concurrently.
func syncParallel(ctx context.Context, files []string, extra string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type job struct {
		path string
		dir  bool
		must bool
	}
	var jobs []job
	dirs := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range files {
		if seen[p] {
			continue
		}
		seen[p] = true
		jobs = append(jobs, job{path: p})
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			jobs = append(jobs, job{path: d, dir: true})
		}
	}
	if extra != "" {
		jobs = append(jobs, job{path: extra, must: true})
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		run := func() {
			if j.dir {
				errs[i] = syncDir(j.path)
				return
			}
			errs[i] = syncFile(j.path, j.must)
		}
		if i == len(jobs)-1 {
			run() // the last one on this goroutine
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func syncFile(path string, must bool) error {
	f, err := os.Open(path)
	if err != nil {
		if !must && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// CreateIfAbsentAfter is CreateIfAbsent (the commit point) that first makes
// the objects under after durable. On the local backend the manifest's
// temporary file, the objects of after and their directories are fsynced
// in parallel, then the temporary file is linked to key (EEXIST: key
// exists) and key's directory fsynced. On other backends it is
// CreateIfAbsent: their writes were durable when acknowledged.
func (s *Store) CreateIfAbsentAfter(ctx context.Context, key string, data []byte, after []string) error {
	if s.kind != KindLocal {
		return s.CreateIfAbsent(ctx, key, data)
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	paths := make([]string, 0, len(after))
	for _, k := range after {
		if err := ValidateKey(k); err != nil {
			return err
		}
		paths = append(paths, s.localPath(k))
	}
	final := s.localPath(key)
	// A writer that lost the race already need not pay for the batch: the
	// link below still decides when the name appears in between.
	if _, err := os.Lstat(final); err == nil {
		return s.wrap("create", key, fmt.Errorf("%w: %s", ErrAlreadyExists, final))
	}
	f, err := createTempDir(final)
	if err != nil {
		return s.wrap("create", key, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncParallel(ctx, paths, tmp)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return s.wrap("create", key, err)
	}
	linkErr := os.Link(tmp, final)
	rmErr := os.Remove(tmp)
	if linkErr != nil {
		if errors.Is(linkErr, fs.ErrExist) {
			return s.wrap("create", key, fmt.Errorf("%w: %s", ErrAlreadyExists, final))
		}
		return s.wrap("create", key, fmt.Errorf("link %s to %s (the filesystem must support hard links for an atomic create): %w", tmp, final, linkErr))
	}
	if rmErr != nil {
		return s.wrap("create", key, fmt.Errorf("created %s but could not remove temporary %s: %w", final, tmp, rmErr))
	}
	return s.wrap("create", key, syncDir(filepath.Dir(final)))
}
