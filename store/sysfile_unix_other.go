//go:build unix && !linux

package store

import "golang.org/x/sys/unix"

func fdatasync(fd int) error { return unix.Fsync(fd) }

// createAnon: O_TMPFILE is Linux-only; callers stage a named temporary file.
func createAnon(string) (*rawFile, bool, error) { return nil, false, nil }

func linkAnon(*rawFile, string) error { return errNoProcLink }
