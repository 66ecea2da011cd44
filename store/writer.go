package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// Writer streams a new object (e.g. a data file). Nothing is visible under
// the key until Close returns nil; Abort discards the write.
type Writer struct {
	s   *Store
	key string
	// local backend
	f      *rawFile
	final  string
	ctx    context.Context
	cancel context.CancelFunc
	// deferSync (NewDeferredWriter): f is the final name itself, created
	// with O_EXCL; Close neither renames nor fsyncs.
	deferSync bool
	// entry (deferSync): the fsync of the directory requested when the
	// file was created (earlysync.go; nil: none).
	entry *dirSync
	// other backends
	bw   *blob.Writer
	done bool
}

// NewWriter starts writing key; Close publishes it (replacing any existing
// object), Abort discards it.
func (s *Store) NewWriter(ctx context.Context, key string) (*Writer, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if s.kind == KindLocal {
		final := s.localPath(key)
		f, err := createTempDir(final)
		if err != nil {
			return nil, s.wrap("write", key, err)
		}
		return &Writer{s: s, key: key, f: f, final: final, ctx: ctx}, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	bw, err := s.bucket.NewWriter(wctx, s.prefix+key, nil)
	if err != nil {
		cancel()
		return nil, s.wrap("write", key, err)
	}
	return &Writer{s: s, key: key, bw: bw, ctx: wctx, cancel: cancel}, nil
}

// Write appends p to the object being written.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("store %s: write %q: writer already closed", w.s.display, w.key)
	}
	if w.f != nil {
		n, err := w.f.Write(p)
		return n, w.s.wrap("write", w.key, err)
	}
	n, err := w.bw.Write(p)
	return n, w.s.wrap("write", w.key, err)
}

// Close publishes the object. After an error nothing was published.
func (w *Writer) Close() error {
	if w.done {
		return fmt.Errorf("store %s: close %q: writer already closed", w.s.display, w.key)
	}
	w.done = true
	if w.f != nil {
		name := w.f.Name()
		err := w.ctx.Err()
		if err == nil && w.deferSync {
			// Final now: its sync starts while the commit goes on.
			return w.s.wrap("write", w.key, w.s.startSync(name, w.f, w.entry))
		}
		if err == nil && !w.deferSync {
			err = w.f.Sync()
		}
		if cerr := w.f.Close(); err == nil {
			err = cerr
		}
		if err == nil && !w.deferSync {
			err = renameRaw(name, w.final)
		}
		if err != nil {
			_ = os.Remove(name)
			return w.s.wrap("write", w.key, err)
		}
		if w.deferSync {
			return nil
		}
		return w.s.wrap("write", w.key, syncDir(filepath.Dir(w.final)))
	}
	defer w.cancel()
	return w.s.wrap("write", w.key, w.bw.Close())
}

// Abort discards the write; calling it after Close is a no-op.
func (w *Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.f != nil {
		name := w.f.Name()
		return errors.Join(w.f.Close(), os.Remove(name))
	}
	w.cancel() // a cancelled blob.Writer does not publish
	_ = w.bw.Close()
	return nil
}
