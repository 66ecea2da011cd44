package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Local backend writes. Reads go through fileblob (opened with
// metadata=skip, so no *.attrs files), listings through localBucket
// (localbucket.go); every write goes through this file so
// that it is durable (fsync of file and directory) and so that
// CreateIfAbsent is atomic across processes (link(2) fails with EEXIST when
// the target name exists). gocloud's fileblob IfNotExist is not: in
// gocloud.dev v0.49.0 blob/fileblob/fileblob.go, writer.Close (lines 909-923)
// and writerWithSidecar.Close (lines 854-873) do os.Stat(path) and then
// os.Rename(temp, path) while holding ifNotExistLock, a package-level
// sync.Mutex (line 102) that only excludes goroutines of the same process;
// rename(2) replaces an existing target, so a second process that passed its
// Stat before the first one's Rename silently overwrites the winner.

func (s *Store) localPath(key string) string {
	return filepath.Join(s.dir, filepath.FromSlash(s.prefix+key))
}

// mkdirAll creates dir and its missing parents, fsyncing each parent after
// a child was created in it so the new entries survive a crash.
func mkdirAll(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // created concurrently
		}
		return err
	}
	return syncDir(parent)
}

// syncDir fsyncs a directory so renames, links and creates in it are durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be fsynced there; NTFS journals metadata
	}
	if err := syncPath(dir, true, true); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// createTemp creates an empty temporary file next to final.
func createTemp(final string) (*rawFile, error) {
	dir, base := filepath.Split(final)
	var rnd [8]byte
	for range 100 {
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, tempPrefix+base+"-"+hex.EncodeToString(rnd[:]))
		f, err := createExcl(name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a unique temporary file next to %s", final)
}

// inDir runs create, a create of a file in final's directory; when that
// directory does not exist (never made, or removed concurrently by
// PruneEmptyDirs) it creates it (mkdirAll) and tries again. The directory is
// not stat'ed first: it exists on every write but the first.
func inDir(final string, create func() (*rawFile, error)) (*rawFile, error) {
	for attempt := 0; ; attempt++ {
		f, err := create()
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			return f, err
		}
		if err := mkdirAll(filepath.Dir(final)); err != nil {
			return nil, err
		}
	}
}

// createTempDir creates the directory of final if needed and a temporary
// file in it.
func createTempDir(final string) (*rawFile, error) {
	return inDir(final, func() (*rawFile, error) { return createTemp(final) })
}

// writeTemp writes a complete, fsynced temporary file next to final from r
// and returns its name. On error nothing is left behind.
func writeTemp(ctx context.Context, final string, r io.Reader) (string, error) {
	f, err := createTempDir(final)
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = io.Copy(f, r)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// localCreate: temp file, fsync, link(2) to the final name, remove the temp
// name, fsync the directory.
func (s *Store) localCreate(ctx context.Context, key string, data []byte) error {
	final := s.localPath(key)
	tmp, err := writeTemp(ctx, final, bytesReader(data))
	if err != nil {
		return err
	}
	return s.linkTemp(tmp, final)
}

// localPut: temp file, fsync, rename over the final name, fsync directory.
func (s *Store) localPut(ctx context.Context, key string, data []byte) error {
	return s.localPutFrom(ctx, key, bytesReader(data))
}

func (s *Store) localPutFrom(ctx context.Context, key string, r io.Reader) error {
	final := s.localPath(key)
	tmp, err := writeTemp(ctx, final, r)
	if err != nil {
		return err
	}
	if err := renameRaw(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(final))
}

func (s *Store) localCopy(ctx context.Context, dst, src string) error {
	f, err := os.Open(s.localPath(src))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: source %q", ErrNotFound, src)
		}
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: source %q is a directory", ErrNotFound, src)
	}
	return s.localPutFrom(ctx, dst, f)
}

func (s *Store) localDelete(key string) error {
	p := s.localPath(key)
	// One unlink; the lstat that tells a directory apart only on failure
	// (cleanup deletes thousands of files: strace of
	// tests/bench/syscalls.sh).
	err := unlinkRaw(p)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	if fi, serr := os.Lstat(p); serr == nil && fi.IsDir() {
		return fmt.Errorf("%w: %s is a directory", ErrNotFound, p)
	}
	return err
}

// PruneEmptyDirs removes empty directories under prefix (a "directory" key
// ending in '/', or "" for the whole store), deepest first, including the
// prefix directory itself. Only the local backend has directories; for
// other backends it does nothing. Writers that race with it recreate the
// directories they need.
func (s *Store) PruneEmptyDirs(ctx context.Context, prefix string) error {
	if s.kind != KindLocal {
		return nil
	}
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	root := filepath.Join(s.dir, filepath.FromSlash(s.prefix+strings.TrimSuffix(prefix, "/")))
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return ctx.Err()
	})
	if err != nil {
		return s.wrap("prune", prefix, err)
	}
	storeRoot := filepath.Join(s.dir, filepath.FromSlash(s.prefix))
	for i := len(dirs) - 1; i >= 0; i-- {
		if dirs[i] == storeRoot || dirs[i] == s.dir {
			continue
		}
		// Fails (and is ignored) when the directory is not empty.
		_ = os.Remove(dirs[i])
	}
	return nil
}

// CheckNoSymlinks refuses a key of a local store whose path below the
// store's directory goes through a symbolic link (any component of the
// store's prefix and of key), with an error wrapping ErrSymlink: a link
// could lead reads and writes out of the directory a server was told to
// serve. Missing components are fine (nothing to follow). Stores of other
// backends have no links; for them it returns nil.
func (s *Store) CheckNoSymlinks(key string) error {
	if s.kind != KindLocal {
		return nil
	}
	rel := strings.Trim(s.prefix+key, "/")
	if rel == "" {
		return nil
	}
	p := s.dir
	for _, seg := range strings.Split(rel, "/") {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("store: %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("store: %s: %w (refusing to follow it out of %s)", p, ErrSymlink, s.dir)
		}
	}
	return nil
}
