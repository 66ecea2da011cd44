//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Raw file descriptors for the local write path. os.OpenFile registers every
// descriptor with the runtime's poller (two fcntl calls to set O_NONBLOCK,
// an epoll_ctl that fails for regular files, two fcntl calls to clear it
// again) and os.Rename lstat's its target first; a commit opens a dozen files
// and directories, so those calls were a third of its system calls (strace of
// 10-row appends, docs/benchmarks.md "commits and requests (session 22)").
// Files here are plain blocking descriptors; nothing in this path needs the
// poller.

// rawFile is a file opened for writing with a plain blocking descriptor.
type rawFile struct {
	fd   int
	name string
}

func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// openRaw opens path with flags (O_CLOEXEC added) and mode 0666.
func openRaw(path string, flags int) (*rawFile, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o666)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, pathErr("open", path, err)
		}
		return &rawFile{fd: fd, name: path}, nil
	}
}

// createExcl creates path, failing with fs.ErrExist when it exists.
func createExcl(path string) (*rawFile, error) {
	return openRaw(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL)
}

func (f *rawFile) Name() string { return f.name }

// Write writes all of p.
func (f *rawFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(f.fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, pathErr("write", f.name, err)
		}
		if m == 0 {
			return n, pathErr("write", f.name, unix.EIO)
		}
		n += m
	}
	return n, nil
}

// Sync is fsync(2).
func (f *rawFile) Sync() error {
	return pathErr("fsync", f.name, ignoringEINTR(func() error { return unix.Fsync(f.fd) }))
}

// Datasync is fdatasync(2): the data and the metadata needed to read it
// (the size), enough for a new file whose name is made durable by a
// directory fsync.
func (f *rawFile) Datasync() error {
	return pathErr("fdatasync", f.name, ignoringEINTR(func() error { return fdatasync(f.fd) }))
}

func (f *rawFile) Close() error {
	return pathErr("close", f.name, unix.Close(f.fd))
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// renameRaw is rename(2) without os.Rename's lstat of the target.
func renameRaw(oldpath, newpath string) error {
	if err := ignoringEINTR(func() error { return unix.Rename(oldpath, newpath) }); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// syncPath makes the file or directory at path durable: fdatasync for a
// file (its data and size), fsync for a directory (its entries). A missing
// file is skipped unless must.
func syncPath(path string, dir, must bool) error {
	flags := unix.O_RDONLY
	if dir {
		flags |= unix.O_DIRECTORY
	}
	f, err := openRaw(path, flags)
	if err != nil {
		if !must && !dir && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if dir {
		err = f.Sync()
	} else {
		err = f.Datasync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errNoProcLink: an unnamed file cannot be linked here (no /proc).
var errNoProcLink = errors.New("cannot link an unnamed file without /proc")

// linkRaw is link(2) (os.Link, without its wrapper's extra work).
func linkRaw(oldpath, newpath string) error {
	if err := ignoringEINTR(func() error { return unix.Link(oldpath, newpath) }); err != nil {
		return &os.LinkError{Op: "link", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// readFileRaw reads the whole regular file at path: open, fstat, one read
// of the size fstat reported (more only if it fell short), close. A directory is
// fs.ErrNotExist, as fileblob reports it.
func readFileRaw(path string) ([]byte, error) {
	b, _, err := readFileRawTime(path)
	return b, err
}

// readFileRawTime is readFileRaw that also returns the file's modification
// time (from the same fstat).
func readFileRawTime(path string) ([]byte, time.Time, error) {
	b, st, err := readFileRawStat(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	return b, time.Unix(st.Mtim.Unix()), nil
}

// unlinkRaw removes the file at path with one unlink(2); a directory
// fails (EISDIR on Linux, EPERM elsewhere) instead of being removed.
func unlinkRaw(path string) error {
	return pathErr("unlink", path, ignoringEINTR(func() error { return unix.Unlink(path) }))
}

func readFileRawStat(path string) ([]byte, *unix.Stat_t, error) {
	f, err := openRaw(path, unix.O_RDONLY)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(f.fd)
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(f.fd, &st) }); err != nil {
		return nil, nil, pathErr("fstat", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil, nil, pathErr("open", path, fs.ErrNotExist)
	}
	buf := make([]byte, 0, st.Size+1) // +1: room to see a grown file
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(f.fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, pathErr("read", path, err)
		}
		if n == 0 {
			return buf, &st, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size {
			// The size fstat reported: the file as of the fstat, in
			// one read (a regular file's read never returns its EOF
			// with its last bytes, so waiting for it costs a call).
			return buf, &st, nil
		}
	}
}

// overwriteRaw writes data over the file at path in place (created when
// missing): open without O_TRUNC, one pwrite at offset 0, ftruncate to
// len(data), close. No temporary file, no rename: no inode is allocated and
// no directory changes, so the next fsync's journal commit carries none of
// it. A concurrent reader may see a mix of the old and new bytes.
func overwriteRaw(path string, data []byte) error {
	f, err := openRaw(path, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	n := 0
	for n < len(data) && err == nil {
		var m int
		m, err = unix.Pwrite(f.fd, data[n:], int64(n))
		switch {
		case err == unix.EINTR:
			err = nil
		case err != nil:
			err = pathErr("pwrite", path, err)
		case m == 0:
			err = pathErr("pwrite", path, unix.EIO)
		}
		n += m
	}
	if err == nil {
		err = pathErr("ftruncate", path, ignoringEINTR(func() error { return unix.Ftruncate(f.fd, int64(len(data))) }))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// localIdentity is Store.Identity of a local file: one lstat(2).
func localIdentity(path string) (string, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Lstat(path, &st) }); err != nil {
		return "", pathErr("lstat", path, err)
	}
	return identityString(uint64(st.Dev), uint64(st.Ino), st.Size, int64(st.Mtim.Sec), int64(st.Mtim.Nsec), int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), nil
}

// identityString is fmt.Sprintf("%d/%d/%d/%d.%d/%d.%d", …) of a local
// file's identity in one allocation (the memo checks one per commit).
func identityString(dev, ino uint64, size, msec, mnsec, csec, cnsec int64) string {
	var buf [7 * 21]byte
	b := strconv.AppendUint(buf[:0], dev, 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, ino, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, size, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, msec, 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, mnsec, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, csec, 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, cnsec, 10)
	return string(b)
}

// localExists is Store.Exists of a local file: one stat(2), no error
// value built for the common answer "missing" (fileblob's Exists wraps one
// and opens a trace span). Like fileblob, it follows symbolic links and a
// directory does not exist.
func localExists(path string) (bool, error) {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return unix.Stat(path, &st) })
	switch {
	case err == unix.ENOENT:
		return false, nil
	case err != nil:
		return false, pathErr("stat", path, err)
	}
	return st.Mode&unix.S_IFMT != unix.S_IFDIR, nil
}
