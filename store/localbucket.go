package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// localBucket is the blob driver behind a local store's Bucket(). Reads,
// stats, raw writes, copies and deletes are gocloud fileblob's; listings are
// its own. fileblob lists with filepath.WalkDir and fails the whole listing
// when an entry vanishes between reading the directory and lstat'ing the
// entry (gocloud.dev v0.49.0 blob/fileblob/fileblob.go, ListPaged: the
// error of DirEntry.Info is returned). Concurrent writers make that happen
// all the time: every local write stages a temporary file next to its
// target (local.go) and removes or renames it, so a listing of _versions/
// during another process's commit reported "not found" for a dataset that
// exists. localBucket reads each directory with os.ReadDir and skips
// entries that are gone by the time they are lstat'ed (and directories
// that are gone by the time they are read) as well as the temporary files
// themselves, which never hold a key. Listing every manifest, the hint
// and the data files through the bucket (package manifest does) and
// through Store.List therefore never fails because another writer is busy.
type localBucket struct {
	fb  *blob.Bucket // fileblob bucket rooted at dir
	dir string
}

func newLocalBucket(fb *blob.Bucket, dir string) *blob.Bucket {
	return blob.NewBucket(&localBucket{fb: fb, dir: dir})
}

// innerError is an error of the inner fileblob bucket. Errors and codes
// still match through it (errors.Is, errors.As, gcerrors.Code); its
// message drops the inner "blob (key …) (code=…)" header, which the outer
// bucket adds again.
type innerError struct{ err error }

func (e innerError) Error() string {
	if mu, ok := e.err.(interface{ Unwrap() []error }); ok {
		if us := mu.Unwrap(); len(us) > 0 && us[0] != nil {
			return us[0].Error()
		}
	}
	return e.err.Error()
}

func (e innerError) Unwrap() error { return e.err }

// inner converts an error of the inner bucket for the outer one; io.EOF and
// context errors pass unchanged, as the blob package expects.
func inner(err error) error {
	if err == nil || err == io.EOF || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return innerError{err}
}

func (b *localBucket) ErrorCode(err error) gcerrors.ErrorCode {
	if c := gcerrors.Code(err); c != gcerrors.Unknown {
		return c
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return gcerrors.NotFound
	case errors.Is(err, fs.ErrPermission):
		return gcerrors.PermissionDenied
	}
	return gcerrors.Unknown
}

func (b *localBucket) As(i any) bool { return b.fb.As(i) }

// ErrorAs supports **fs.PathError, as fileblob's.
func (b *localBucket) ErrorAs(err error, i any) bool {
	if p, ok := i.(**fs.PathError); ok {
		return errors.As(err, p)
	}
	return false
}

func (b *localBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if ValidateKey(key) == nil {
		// A valid key is its own path (fileblob escapes nothing in it);
		// one stat, without fileblob's probe for a sidecar file, which
		// local stores never write (metadata=skip).
		fi, err := os.Stat(filepath.Join(b.dir, filepath.FromSlash(key)))
		if err == nil && fi.IsDir() {
			err = &fs.PathError{Op: "stat", Path: key, Err: fs.ErrNotExist}
		}
		if err != nil {
			return nil, err
		}
		return &driver.Attributes{
			ContentType: "application/octet-stream", ModTime: fi.ModTime(), Size: fi.Size(),
			ETag: fmt.Sprintf("\"%x-%x\"", fi.ModTime().UnixNano(), fi.Size()),
			AsFunc: func(i any) bool {
				p, ok := i.(*os.FileInfo)
				if ok {
					*p = fi
				}
				return ok
			},
		}, nil
	}
	a, err := b.fb.Attributes(ctx, key)
	if err != nil {
		return nil, inner(err)
	}
	return &driver.Attributes{
		CacheControl:       a.CacheControl,
		ContentDisposition: a.ContentDisposition,
		ContentEncoding:    a.ContentEncoding,
		ContentLanguage:    a.ContentLanguage,
		ContentType:        a.ContentType,
		Metadata:           a.Metadata,
		CreateTime:         a.CreateTime,
		ModTime:            a.ModTime,
		Size:               a.Size,
		MD5:                a.MD5,
		ETag:               a.ETag,
		AsFunc:             a.As,
	}, nil
}

func (b *localBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	if offset == 0 && length < 0 && opts.BeforeRead == nil && ValidateKey(key) == nil {
		// A whole-file read (Bucket.ReadAll: manifests, the hint,
		// transaction files) of a key that is its own path: one open,
		// fstat, read and close on a plain descriptor (readFileRawTime),
		// without fileblob's stat, sidecar probe and the poller
		// registration of os.Open (five fcntl/epoll_ctl calls).
		data, mt, err := readFileRawTime(filepath.Join(b.dir, filepath.FromSlash(key)))
		if err != nil {
			return nil, err
		}
		return &wholeFileReader{data: data, mt: mt}, nil
	}
	r, err := b.fb.NewRangeReader(ctx, key, offset, length, &blob.ReaderOptions{BeforeRead: opts.BeforeRead})
	if err != nil {
		return nil, inner(err)
	}
	return localReader{r}, nil
}

// wholeFileReader is a driver.Reader over a file read whole.
type wholeFileReader struct {
	data []byte
	off  int
	mt   time.Time
}

func (r *wholeFileReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p, r.data[r.off:])
	r.off += n
	return n, nil
}
func (r *wholeFileReader) Close() error { return nil }
func (r *wholeFileReader) As(any) bool  { return false }
func (r *wholeFileReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: "application/octet-stream", ModTime: r.mt, Size: int64(len(r.data))}
}

type localReader struct{ r *blob.Reader }

func (r localReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	return n, inner(err)
}
func (r localReader) Close() error  { return inner(r.r.Close()) }
func (r localReader) As(i any) bool { return r.r.As(i) }
func (r localReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (b *localBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	w, err := b.fb.NewWriter(ctx, key, &blob.WriterOptions{
		BufferSize:                  opts.BufferSize,
		MaxConcurrency:              opts.MaxConcurrency,
		CacheControl:                opts.CacheControl,
		ContentDisposition:          opts.ContentDisposition,
		ContentEncoding:             opts.ContentEncoding,
		ContentLanguage:             opts.ContentLanguage,
		ContentType:                 contentType,
		DisableContentTypeDetection: opts.DisableContentTypeDetection,
		ContentMD5:                  opts.ContentMD5,
		Metadata:                    opts.Metadata,
		BeforeWrite:                 opts.BeforeWrite,
		IfNotExist:                  opts.IfNotExist,
	})
	if err != nil {
		return nil, inner(err)
	}
	return localBlobWriter{w}, nil
}

type localBlobWriter struct{ w *blob.Writer }

func (w localBlobWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	return n, inner(err)
}
func (w localBlobWriter) Close() error { return inner(w.w.Close()) }

func (b *localBucket) Copy(ctx context.Context, dstKey, srcKey string, opts *driver.CopyOptions) error {
	return inner(b.fb.Copy(ctx, dstKey, srcKey, &blob.CopyOptions{BeforeCopy: opts.BeforeCopy}))
}

func (b *localBucket) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	var o *blob.DeleteOptions
	if opts != nil {
		o = &blob.DeleteOptions{BeforeDelete: opts.BeforeDelete}
	}
	return inner(b.fb.DeleteWithOptions(ctx, key, o))
}

func (b *localBucket) SignedURL(ctx context.Context, key string, opts *driver.SignedURLOptions) (string, error) {
	u, err := b.fb.SignedURL(ctx, key, &blob.SignedURLOptions{
		Expiry:                   opts.Expiry,
		Method:                   opts.Method,
		ContentType:              opts.ContentType,
		EnforceAbsentContentType: opts.EnforceAbsentContentType,
		BeforeSign:               opts.BeforeSign,
	})
	return u, inner(err)
}

func (b *localBucket) Close() error { return inner(b.fb.Close()) }

// defaultListPageSize is the page size when the caller sets none (as
// fileblob's).
const defaultListPageSize = 1000

// ListPaged lists the keys under opts.Prefix in key order, collapsing keys
// at opts.Delimiter into directory entries (only for directories holding at
// least one file, as fileblob). It visits each directory's entries sorted
// by key (a sub-directory sorts as its name plus '/'), which yields keys in
// global order, so a page ends as soon as it is full.
func (b *localBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if opts.BeforeList != nil {
		if err := opts.BeforeList(func(any) bool { return false }); err != nil {
			return nil, err
		}
	}
	l := &lister{
		ctx:      ctx,
		prefix:   opts.Prefix,
		delim:    opts.Delimiter,
		token:    string(opts.PageToken),
		pageSize: opts.PageSize,
	}
	if l.pageSize <= 0 {
		l.pageSize = defaultListPageSize
	}
	// Start at the deepest directory the prefix names, when its path needs
	// none of fileblob's key escaping; otherwise at the bucket root (the
	// prefix still filters every key).
	startDir, startKey := b.dir, ""
	if i := strings.LastIndexByte(opts.Prefix, '/'); i > 0 && plainDirKey(opts.Prefix[:i]) {
		startDir = filepath.Join(b.dir, filepath.FromSlash(opts.Prefix[:i]))
		startKey = opts.Prefix[:i+1]
	}
	err := l.walk(startDir, startKey)
	if err != nil && err != errPageFull {
		return nil, err
	}
	return &l.page, nil
}

// plainDirKey reports whether key names the same path with and without
// fileblob's escaping and cannot leave the bucket directory.
func plainDirKey(key string) bool {
	if strings.Contains(key, "__0x") || strings.Contains(key, `\`) {
		return false
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] < 0x20 {
				return false
			}
		}
	}
	return true
}

var errPageFull = errors.New("list page full")

type lister struct {
	ctx      context.Context
	prefix   string
	delim    string
	token    string // keys <= token were on earlier pages
	pageSize int
	page     driver.ListPage
	// lastDir is the last collapsed directory entry (emitted or before the
	// page token); every key under it belongs to it.
	lastDir string
}

type listEntry struct {
	name string
	key  string // key of the file, or of the directory with a trailing '/'
	dir  bool
}

// walk lists the directory at path, whose entries have keys key+name.
func (l *lister) walk(path, key string) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	des, err := os.ReadDir(path)
	if err != nil {
		// Removed since its parent was read (an emptied directory pruned
		// by another writer), never created, or not a directory: no keys.
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("list %s: %w", path, err)
	}
	entries := make([]listEntry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, tempPrefix) || strings.HasSuffix(name, attrsSuffix) {
			continue
		}
		e := listEntry{name: name, key: key + unescapeName(name), dir: de.IsDir()}
		if e.dir {
			e.key += "/"
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b listEntry) int { return strings.Compare(a.key, b.key) })
	for _, e := range entries {
		if e.dir {
			if l.skipDir(e.key) {
				continue
			}
			if err := l.walk(filepath.Join(path, e.name), e.key); err != nil {
				return err
			}
			continue
		}
		if !strings.HasPrefix(e.key, l.prefix) {
			continue
		}
		if l.lastDir != "" && strings.HasPrefix(e.key, l.lastDir) {
			continue
		}
		if l.token != "" && e.key <= l.token {
			// On an earlier page (and so is the directory entry it would
			// collapse into, a prefix of it): no stat, or page n of a
			// directory would stat every entry of pages 1…n again.
			continue
		}
		fi, err := os.Lstat(filepath.Join(path, e.name))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed or renamed away since the directory was read
			}
			return fmt.Errorf("list: %w", err)
		}
		if err := l.add(e.key, fi); err != nil {
			return err
		}
	}
	return nil
}

// skipDir reports whether no key under the directory dirKey can be listed.
func (l *lister) skipDir(dirKey string) bool {
	switch {
	case len(dirKey) <= len(l.prefix) && !strings.HasPrefix(l.prefix, dirKey),
		len(dirKey) > len(l.prefix) && !strings.HasPrefix(dirKey, l.prefix):
		return true // outside the prefix
	case l.lastDir != "" && strings.HasPrefix(dirKey, l.lastDir):
		return true // collapsed into a directory entry already
	case l.token != "" && dirKey <= l.token && !strings.HasPrefix(l.token, dirKey):
		return true // every key under it sorts before the page token
	}
	return false
}

// add appends the file key (or the directory entry it collapses into) to
// the page, in key order.
func (l *lister) add(key string, fi fs.FileInfo) error {
	obj := &driver.ListObject{
		Key:     key,
		ModTime: fi.ModTime(),
		Size:    fi.Size(),
		AsFunc: func(i any) bool {
			p, ok := i.(*os.FileInfo)
			if ok {
				*p = fi
			}
			return ok
		},
	}
	if l.delim != "" {
		if i := strings.Index(key[len(l.prefix):], l.delim); i >= 0 {
			l.lastDir = key[:len(l.prefix)+i+len(l.delim)]
			obj = &driver.ListObject{Key: l.lastDir, IsDir: true, AsFunc: obj.AsFunc}
		}
	}
	if l.token != "" && obj.Key <= l.token {
		return nil
	}
	if len(l.page.Objects) == l.pageSize {
		l.page.NextPageToken = []byte(l.page.Objects[l.pageSize-1].Key)
		return errPageFull
	}
	l.page.Objects = append(l.page.Objects, obj)
	return nil
}

// unescapeName reverses fileblob's escaping of a path segment: "__0x",
// hex digits and "__" stand for the character with that code (parsed as
// fileblob parses it: a signed 32-bit hex number; a code that is no
// character becomes U+FFFD). As fileblob's, it works on the name's runes,
// and a name with no escape is returned unchanged.
func unescapeName(name string) string {
	if !strings.Contains(name, "__0x") {
		return name
	}
	runes := []rune(name)
	out := make([]rune, 0, len(runes))
	escaped := false
	for i := 0; i < len(runes); i++ {
		if r, end, ok := unescapeAt(runes, i); ok {
			out = append(out, r)
			i = end
			escaped = true
			continue
		}
		out = append(out, runes[i])
	}
	if !escaped {
		return name
	}
	return string(out)
}

// unescapeAt decodes an escape starting at runes[i]; end is the index of
// its last rune.
func unescapeAt(runes []rune, i int) (r rune, end int, ok bool) {
	if i+4 > len(runes) || string(runes[i:i+4]) != "__0x" {
		return 0, 0, false
	}
	j := i + 4
	for j < len(runes) && runes[j] != '_' {
		j++
	}
	if j+1 >= len(runes) || runes[j+1] != '_' {
		return 0, 0, false
	}
	v, err := strconv.ParseInt(string(runes[i+4:j]), 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return rune(v), j + 1, true
}
