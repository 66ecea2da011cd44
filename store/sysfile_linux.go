//go:build linux

package store

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

func fdatasync(fd int) error { return unix.Fdatasync(fd) }

// createAnon opens an unnamed regular file in dir (O_TMPFILE): it has no
// directory entry until linkAnon gives it one, so writing it changes no
// directory and a crash leaves nothing behind. ok is false when the
// filesystem (or kernel) does not support O_TMPFILE; the caller then
// stages a named temporary file instead.
func createAnon(dir string) (f *rawFile, ok bool, err error) {
	f, err = openRaw(dir, unix.O_WRONLY|unix.O_TMPFILE)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return nil, false, nil
		}
		return nil, true, err
	}
	return f, true, nil
}

// linkAnon gives the unnamed file f the name path with linkat(2), which
// fails with EEXIST (fs.ErrExist) when the name exists — atomically, for
// every process, exactly as link(2) of a named temporary file. It goes
// through /proc/self/fd (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH);
// without /proc mounted it reports errNoProcLink and the caller falls back.
func linkAnon(f *rawFile, path string) error {
	src := "/proc/self/fd/" + strconv.Itoa(f.fd)
	err := ignoringEINTR(func() error {
		return unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	})
	if err == nil {
		return nil
	}
	if err == unix.ENOENT {
		if serr := unix.Stat("/proc/self/fd", new(unix.Stat_t)); serr != nil {
			return errNoProcLink
		}
	}
	return pathErr("link", path, err)
}
