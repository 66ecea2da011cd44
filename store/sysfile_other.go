//go:build !unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// rawFile wraps *os.File where raw descriptors are not available.
type rawFile struct{ *os.File }

func openRaw(path string, flags int) (*rawFile, error) {
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, err
	}
	return &rawFile{f}, nil
}

func createExcl(path string) (*rawFile, error) {
	return openRaw(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
}

func (f *rawFile) Datasync() error { return f.Sync() }

func renameRaw(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func syncPath(path string, dir, must bool) error {
	if dir {
		return syncDir(path)
	}
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
	return err
}

func createAnon(string) (*rawFile, bool, error) { return nil, false, nil }

func linkAnon(*rawFile, string) error { return errNoProcLink }

var errNoProcLink = errors.New("cannot link an unnamed file here")

func linkRaw(oldpath, newpath string) error { return os.Link(oldpath, newpath) }

func readFileRawTime(path string) ([]byte, time.Time, error) {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, time.Time{}, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	b, err := os.ReadFile(path)
	return b, fi.ModTime(), err
}

// unlinkRaw removes the file at path, never a directory.
func unlinkRaw(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.IsDir() {
		return &fs.PathError{Op: "unlink", Path: path, Err: errors.New("is a directory")}
	}
	return os.Remove(path)
}

func readFileRaw(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return os.ReadFile(path)
}

func overwriteRaw(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func localIdentity(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%d/%v", fi.Size(), fi.ModTime().UnixNano(), fi.Mode()), nil
}

// localExists is Store.Exists of a local file (os.Stat; a directory does
// not exist, as fileblob reports it).
func localExists(path string) (bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !fi.IsDir(), nil
}
