package store

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Early syncs (sessions 23–24). A file written with NewDeferredWriter needs
// two things durable before a manifest may name it: its directory entry
// and its content. The entry exists as soon as the create returns, so the
// fsync of the directory starts right then, on a goroutine, while the
// caller writes the file (session 24; until then it ran after the file's
// fdatasync, in series, which put two sync latencies before the commit's
// link); the file is final when its Writer closes, and Close starts its
// fdatasync on the still-open descriptor on another goroutine. The commit
// point (CreateIfAbsentAfter) or SyncKeys waits for both instead of
// opening and syncing the file again. Nothing about the order changes: the
// manifest is still linked only after every one of those syncs returned.
// A file replaced under the same name (PutDeferred) forgets its early
// sync, so the batch syncs the new file and its directory.
//
// Directory fsyncs are shared: a file created in a directory whose fsync
// has been requested but not begun joins it (the fsync, when it begins,
// covers every entry made before), so several files created together in
// one directory cost one directory fsync; a file created after the fsync
// began gets a new one.

// syncJob is one early sync: done closes when err is set.
type syncJob struct {
	done chan struct{}
	err  error
}

// dirSync is one requested fsync of a directory. begun is set (under the
// table's lock) just before the fsync is issued: an entry created before
// that is covered by it; a later one needs another dirSync.
type dirSync struct {
	begun bool
	job   syncJob
}

// syncTable holds the early syncs of a store (shared by Sub copies).
type syncTable struct {
	mu sync.Mutex
	m  map[string]*syncJob
	// dirs: per directory, the newest requested fsync (begun or not).
	dirs map[string]*dirSync
	// stepSeq numbers syncs for the test hook (steps.go).
	stepSeq atomic.Uint64
}

// maxEarlySyncs bounds the table: syncs nobody waited for (a write whose
// commit never came) are forgotten beyond it, which costs only a second
// sync should a batch name them after all.
const maxEarlySyncs = 256

// syncEntry makes the directory entry of path, just created, durable: it
// joins the pending fsync of path's directory or requests one, on a
// goroutine. The result is nil without a table (the batch then syncs the
// directory itself).
func (s *Store) syncEntry(path string) *dirSync {
	t := s.syncs
	if t == nil {
		return nil
	}
	dir := filepath.Dir(path)
	t.mu.Lock()
	if d := t.dirs[dir]; d != nil && !d.begun {
		t.mu.Unlock()
		return d
	}
	d := &dirSync{job: syncJob{done: make(chan struct{})}}
	if t.dirs == nil || len(t.dirs) >= maxEarlySyncs {
		t.dirs = map[string]*dirSync{}
	}
	t.dirs[dir] = d
	t.mu.Unlock()
	go func() {
		t.mu.Lock()
		d.begun = true
		t.mu.Unlock()
		d.job.err = s.syncDirStep(dir)
		close(d.job.done)
		t.mu.Lock()
		if t.dirs[dir] == d {
			delete(t.dirs, dir)
		}
		t.mu.Unlock()
	}()
	return d
}

// startSync makes f (the file at path, written) durable on a goroutine
// and closes f; entry is the fsync of its directory requested when it was
// created (syncEntry; nil: the directory is fsynced after the file). A
// later batch naming path waits for both (takeSync). Without a table it
// only closes f: the batch does all the work later.
func (s *Store) startSync(path string, f *rawFile, entry *dirSync) error {
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
		err := s.datasyncStep(path, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if entry != nil {
			<-entry.job.done
			err = errors.Join(err, entry.job.err)
		} else if err == nil {
			err = s.syncDirStep(filepath.Dir(path))
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
