package store

import (
	"path/filepath"
	"sync"
)

// Early syncs (session 23). A file written with NewDeferredWriter is
// final when its Writer closes: nothing writes to it again. Close then
// starts its fdatasync on the still-open descriptor, and the fsync of its
// directory, on a goroutine, so that they run while the commit encodes and
// writes the transaction and the manifest; the commit point
// (CreateIfAbsentAfter) or SyncKeys waits for them instead of opening and
// syncing the file again. Nothing about the order changes: the manifest is
// still linked only after every one of those syncs returned. A file
// replaced under the same name (PutDeferred) forgets its early sync, so
// the batch syncs the new file.

// syncJob is one early sync: done closes when err is set.
type syncJob struct {
	done chan struct{}
	err  error
}

// syncTable holds the early syncs of a store (shared by Sub copies).
type syncTable struct {
	mu sync.Mutex
	m  map[string]*syncJob
}

// maxEarlySyncs bounds the table: syncs nobody waited for (a write whose
// commit never came) are forgotten beyond it, which costs only a second
// sync should a batch name them after all.
const maxEarlySyncs = 256

// startSync makes f (the file at path, written) durable with its
// directory on a goroutine and closes f; a later batch naming path waits
// for it (takeSync). Without a table it does the work now, which is what a
// batch would do later.
func (s *Store) startSync(path string, f *rawFile) error {
	if s.syncs == nil {
		return f.Close()
	}
	job := &syncJob{done: make(chan struct{})}
	t := s.syncs
	t.mu.Lock()
	if t.m == nil || len(t.m) >= maxEarlySyncs {
		t.m = map[string]*syncJob{}
	}
	t.m[path] = job
	t.mu.Unlock()
	go func() {
		err := f.Datasync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = syncDir(filepath.Dir(path))
		}
		job.err = err
		close(job.done)
	}()
	return nil
}

// takeSync removes and returns the early sync of path (nil: none).
func (s *Store) takeSync(path string) *syncJob {
	if s.syncs == nil {
		return nil
	}
	s.syncs.mu.Lock()
	defer s.syncs.mu.Unlock()
	j := s.syncs.m[path]
	delete(s.syncs.m, path)
	return j
}

// dropSync forgets the early sync of path: the file under the name was
// replaced, the sync covers the old one.
func (s *Store) dropSync(path string) { _ = s.takeSync(path) }
