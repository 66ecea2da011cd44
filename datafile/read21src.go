package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Reads into a caller's buffer, so that the 2.1+ page decoder can reuse one
// scratch buffer for the chunk bytes of every mini-block page of a read
// (their values and levels are copied out before the next page is read).

// intoSource is a source that can fill a caller's buffer.
type intoSource interface {
	readRangeInto(ctx context.Context, off int64, dst []byte) error
}

func (s bucketSource) readRangeInto(ctx context.Context, off int64, dst []byte) error {
	r, err := s.bucket.NewRangeReader(ctx, s.path, off, int64(len(dst)), nil)
	if err != nil {
		return fmt.Errorf("datafile: read %s [%d, +%d): %w", s.path, off, len(dst), err)
	}
	defer r.Close()
	if _, err := io.ReadFull(r, dst); err != nil {
		return fmt.Errorf("datafile: read %s [%d, +%d): %w", s.path, off, len(dst), err)
	}
	return nil
}

func (s readerAtSource) readRangeInto(ctx context.Context, off int64, dst []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m, err := s.r.ReadAt(dst, off)
	if m == len(dst) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("datafile: read [%d, +%d): %w", off, len(dst), err)
}

func (s countingSource) readRangeInto(ctx context.Context, off int64, dst []byte) error {
	into, ok := s.src.(intoSource)
	if !ok {
		b, err := s.readRange(ctx, off, int64(len(dst)))
		copy(dst, b)
		return err
	}
	err := into.readRangeInto(ctx, off, dst)
	s.stats.Requests.Add(1)
	if err == nil {
		s.stats.Bytes.Add(int64(len(dst)))
	}
	return err
}

// readRangeScratch returns file bytes [off, off+n): from the tail when
// possible, else read into *scratch (grown when too small). The result is
// valid until the next call with the same scratch.
func (f *File) readRangeScratch(ctx context.Context, off, n int64, scratch *[]byte) ([]byte, error) {
	if off >= f.tailStart && off+n <= f.size {
		return f.cached(off, n), nil
	}
	into, ok := f.src.(intoSource)
	if !ok {
		return f.src.readRange(ctx, off, n)
	}
	if int64(cap(*scratch)) < n {
		*scratch = make([]byte, n)
	}
	dst := (*scratch)[:n:n]
	if err := into.readRangeInto(ctx, off, dst); err != nil {
		return nil, err
	}
	return dst, nil
}
