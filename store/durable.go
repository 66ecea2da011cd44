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

// NewDeferredWriter is NewWriter for a new object nothing refers to yet
// (a data file, a transaction or deletion file under a fresh random name).
// On the local backend the file is created under its final name with
// O_EXCL (an existing key is an error wrapping ErrAlreadyExists) and
// written there; Close neither renames nor fsyncs, and Abort removes it.
// Until Close the key may be visible with partial content, which is
// harmless for a name no manifest references. The object is durable only
// once its key went through SyncKeys or CreateIfAbsentAfter.
func (s *Store) NewDeferredWriter(ctx context.Context, key string) (*Writer, error) {
	if s.kind != KindLocal {
		return s.NewWriter(ctx, key)
	}
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	final := s.localPath(key)
	if err := s.step(stepCreate, final); err != nil {
		return nil, s.wrap("write", key, err)
	}
	f, err := inDir(final, func() (*rawFile, error) { return createExcl(final) })
	if err == nil {
		err = s.step(stepCreated, final)
		if err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%w: %w", ErrAlreadyExists, err)
		}
		return nil, s.wrap("write", key, err)
	}
	// The entry exists: its directory's fsync can run while the file is
	// written (earlysync.go).
	return &Writer{s: s, key: key, f: f, final: final, ctx: ctx, deferSync: true, entry: s.syncEntry(final)}, nil
}

// PutDeferred is Put without the fsyncs on the local backend (see
// NewDeferredWriter): the bytes go to a temporary file renamed over key,
// so readers see the old or the new object, never a partial one. For the
// latest-version hint, which readers never trust and which therefore needs
// no durability at all, and for an object that must be replaced (a
// transaction file rewritten after a rebase) before a CreateIfAbsentAfter.
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
		err = s.step(stepCreate, final)
	}
	if err == nil {
		err = renameRaw(name, final)
		if err == nil {
			err = s.step(stepCreated, final)
		}
	}
	if err != nil {
		_ = os.Remove(name)
		return s.wrap("put", key, err)
	}
	s.dropSync(final)
	return nil
}

// PutInPlace writes an object that needs neither atomicity nor durability
// — the latest-version hint, which readers never trust (they check that the
// next version is missing, and fall back to listing on a garbage hint). On
// the local backend the bytes are written over the existing file in place
// (created when missing): no temporary file, no rename, no fsync, so the
// write adds no inode or directory change to the next journal commit. A
// concurrent reader may see a torn mix of old and new bytes; a crash may
// leave any prefix. Other backends: Put.
func (s *Store) PutInPlace(ctx context.Context, key string, data []byte) error {
	if s.kind != KindLocal {
		return s.Put(ctx, key, data)
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	final := s.localPath(key)
	_, err := inDir(final, func() (*rawFile, error) { return nil, overwriteRaw(final, data) })
	return s.wrap("put", key, err)
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
	return s.wrap("sync", keys[0], s.syncParallel(ctx, paths, nil, ""))
}

// syncParallel makes files (missing ones skipped; fdatasync), their
// distinct parent directories (fsync) and extra (an open file, nil for
// none; fdatasync) durable, concurrently: on a journaling filesystem the
// fsyncs issued together share one journal commit. A file whose early
// sync is running or done (earlysync.go) is waited for, not synced again;
// that sync covers its directory too.
func (s *Store) syncParallel(ctx context.Context, files []string, extra *rawFile, extraPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type job struct {
		path  string
		dir   bool
		early *syncJob
	}
	var jobs []job
	dirs := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range files {
		if seen[p] {
			continue
		}
		seen[p] = true
		if e := s.takeSync(p); e != nil {
			jobs = append(jobs, job{path: p, early: e})
			continue
		}
		jobs = append(jobs, job{path: p})
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			jobs = append(jobs, job{path: d, dir: true})
		}
	}
	errs := make([]error, len(jobs)+1)
	var wg sync.WaitGroup
	for i, j := range jobs {
		if j.early != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if j.dir {
				errs[i] = s.syncDirStep(j.path)
				return
			}
			id := s.newStepID()
			if errs[i] = s.stepN(stepDatasync, j.path, id); errs[i] == nil {
				errs[i] = syncPath(j.path, false, false)
				errs[i] = errors.Join(errs[i], s.stepDone(stepDatasynced, j.path, id, errs[i]))
			}
		}()
	}
	if extra != nil {
		// On this goroutine: data and size, all a new file needs.
		errs[len(jobs)] = s.datasyncStep(extraPath, extra)
	}
	for i, j := range jobs {
		if j.early != nil {
			<-j.early.done
			errs[i] = j.early.err
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CreateIfAbsentAfter is CreateIfAbsent (the commit point) that first makes
// the objects under after durable. On the local backend the manifest is
// written to an unnamed file in key's directory (O_TMPFILE; a named
// temporary file where that is not supported), which is fsynced in
// parallel with the objects of after (fdatasync) and their directories;
// then it is linked to key with linkat(2) (EEXIST: key exists) and key's
// directory fsynced. synced reports that the objects of after are durable
// (the batch ran), also when the link then lost the race — a retry need
// not sync them again. A key that exists before the batch is reported at
// once, without it (synced false). On other backends it is CreateIfAbsent
// and synced is true: their writes were durable when acknowledged.
func (s *Store) CreateIfAbsentAfter(ctx context.Context, key string, data []byte, after []string) (synced bool, err error) {
	return s.CreateIfAbsentAfterThen(ctx, key, data, after, nil)
}

// CreateIfAbsentAfterThen is CreateIfAbsentAfter that runs then (unless
// nil) once the object exists under key: on the local backend on the
// calling goroutine right after the link, while the fsync of key's
// directory runs on another, so that work the caller does after a
// successful create anyway (the latest-version hint, which needs no
// durability) overlaps that fsync; the method still returns only after
// the fsync. then does not run when the create failed before the link (the
// name existed, a sync of the batch failed); elsewhere it runs after the
// create succeeded.
func (s *Store) CreateIfAbsentAfterThen(ctx context.Context, key string, data []byte, after []string, then func()) (synced bool, err error) {
	if s.kind != KindLocal {
		if err := s.CreateIfAbsent(ctx, key, data); err != nil {
			return true, err
		}
		if then != nil {
			then()
		}
		return true, nil
	}
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	paths := make([]string, 0, len(after))
	for _, k := range after {
		if err := ValidateKey(k); err != nil {
			return false, err
		}
		paths = append(paths, s.localPath(k))
	}
	final := s.localPath(key)
	// A writer that lost the race already need not pay for the batch: the
	// link below still decides when the name appears in between.
	if _, err := os.Lstat(final); err == nil {
		return false, s.wrap("create", key, fmt.Errorf("%w: %s", ErrAlreadyExists, final))
	}
	dir := filepath.Dir(final)
	anon := true
	f, err := inDir(final, func() (*rawFile, error) {
		f, ok, err := createAnon(dir)
		if !ok {
			anon = false
			return createTemp(final)
		}
		return f, err
	})
	if err != nil {
		return false, s.wrap("create", key, err)
	}
	tmp := f.Name()
	discard := func() {
		_ = f.Close()
		if !anon {
			_ = os.Remove(tmp)
		}
	}
	if _, err := f.Write(data); err != nil {
		discard()
		return false, s.wrap("create", key, err)
	}
	if err := s.syncParallel(ctx, paths, f, final); err != nil {
		discard()
		return false, s.wrap("create", key, err)
	}
	var linkErr error
	if anon {
		if linkErr = s.step(stepLink, final); linkErr == nil {
			linkErr = linkAnon(f, final)
			if linkErr == nil {
				linkErr = s.step(stepLinked, final)
			}
		}
		if errors.Is(linkErr, errNoProcLink) {
			// No /proc: stage the bytes under a temporary name after all.
			_ = f.Close()
			tmp, err := writeTemp(ctx, final, bytesReader(data))
			if err != nil {
				return true, s.wrap("create", key, err)
			}
			return true, s.wrap("create", key, s.linkTempThen(tmp, final, then))
		}
		if cerr := f.Close(); linkErr == nil && cerr != nil {
			linkErr = cerr
		}
	} else {
		_ = f.Close()
		return true, s.wrap("create", key, s.linkTempThen(tmp, final, then))
	}
	if linkErr != nil {
		if errors.Is(linkErr, fs.ErrExist) {
			return true, s.wrap("create", key, fmt.Errorf("%w: %s", ErrAlreadyExists, final))
		}
		return true, s.wrap("create", key, fmt.Errorf("link %s (the filesystem must support hard links for an atomic create): %w", final, linkErr))
	}
	if then == nil {
		return true, s.wrap("create", key, notDurable(s.syncDirStep(dir)))
	}
	done := make(chan error, 1)
	go func() { done <- s.syncDirStep(dir) }()
	then()
	return true, s.wrap("create", key, notDurable(<-done))
}

// notDurable marks the failure of the fsync after a successful link.
func notDurable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrNotDurable, err)
}

// linkTempThen is linkTemp that runs then (unless nil) once final exists.
func (s *Store) linkTempThen(tmp, final string, then func()) error {
	err := s.linkTemp(tmp, final)
	if then != nil && (err == nil || errors.Is(err, ErrNotDurable)) {
		then()
	}
	return err
}

// linkTemp links the durable temporary file tmp to final (EEXIST: final
// exists), removes tmp and fsyncs final's directory.
func (s *Store) linkTemp(tmp, final string) error {
	linkErr := s.step(stepLink, final)
	if linkErr == nil {
		if linkErr = linkRaw(tmp, final); linkErr == nil {
			linkErr = s.step(stepLinked, final)
		}
	}
	rmErr := os.Remove(tmp)
	if linkErr != nil {
		if errors.Is(linkErr, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrAlreadyExists, final)
		}
		return fmt.Errorf("link %s to %s (the filesystem must support hard links for an atomic create): %w", tmp, final, linkErr)
	}
	if rmErr != nil {
		return fmt.Errorf("created %s but could not remove temporary %s: %w", final, tmp, rmErr)
	}
	return notDurable(s.syncDirStep(filepath.Dir(final)))
}
