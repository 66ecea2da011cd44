package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"
)

// listed is a listed object: a file with its size or a directory entry.
type listed struct {
	key  string
	size int64
	dir  bool
}

func (l listed) String() string {
	if l.dir {
		return l.key
	}
	return fmt.Sprintf("%s (%d bytes)", l.key, l.size)
}

// listAll lists b under prefix page by page (pageSize 0: through the
// iterator with the driver's default page size).
func listAll(t *testing.T, b *blob.Bucket, prefix, delim string, pageSize int) []listed {
	t.Helper()
	ctx := context.Background()
	var out []listed
	if pageSize == 0 {
		it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: delim})
		for {
			obj, err := it.Next(ctx)
			if err == io.EOF {
				return out
			}
			must(t, err)
			out = append(out, render(obj))
		}
	}
	token := blob.FirstPageToken
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("prefix %q delimiter %q page size %d: no end of listing", prefix, delim, pageSize)
		}
		objs, next, err := b.ListPage(ctx, token, pageSize, &blob.ListOptions{Prefix: prefix, Delimiter: delim})
		must(t, err)
		if len(objs) > pageSize {
			t.Fatalf("page of %d objects, page size %d", len(objs), pageSize)
		}
		for _, obj := range objs {
			out = append(out, render(obj))
		}
		if next == nil {
			return out
		}
		token = next
	}
}

func render(obj *blob.ListObject) listed {
	return listed{key: obj.Key, size: obj.Size, dir: obj.IsDir}
}

// A local store's bucket lists what gocloud's fileblob lists for the same
// directory (same keys, sizes and directory entries, at every page size),
// except that it hides our temporary files, and in key order as the blob
// API promises (fileblob returns the files of directory "a/" before "a-b").
func TestLocalBucketListsLikeFileblob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	must(t, err)
	defer raw.Close()
	// Keys chosen so that directory order and key order differ ("a-b" and
	// "a.x/y" sort before "a/…"), with nesting, a key that needs
	// fileblob's escaping and an empty directory.
	for i, k := range []string{
		"a-b", "a/b0", "a/b/c", "a/b/d/e", "a/bc", "a.x/y", "a0", "b/c/d/e/f",
		"ds/_versions/1.manifest", "ds/_versions/2.manifest", "ds/_versions/latest_version_hint.json",
		"ds/_versions/sub/x", "ds/data/0-a.lance", "ds/data/1-b.lance", "ds/_transactions/1-x.txn",
		"esc/ctl\x01char", "z",
	} {
		must(t, raw.WriteAll(ctx, k, []byte(strings.Repeat("x", i)), nil))
	}
	must(t, os.MkdirAll(filepath.Join(dir, "empty", "deeper"), 0o777))

	s := openStore(t, dir)
	for _, prefix := range []string{"", "a", "a/", "a/b", "a/b/", "a-", "ds/", "ds/_versions/", "ds/_v", "esc/", "missing/", "z", "a/b/c/"} {
		for _, delim := range []string{"", "/", "-"} {
			want := listAll(t, raw, prefix, delim, 0)
			slices.SortFunc(want, func(a, b listed) int { return strings.Compare(a.key, b.key) })
			for _, pageSize := range []int{0, 1, 2, 3, 1000} {
				got := listAll(t, s.Bucket(), prefix, delim, pageSize)
				if !slices.Equal(got, want) {
					t.Errorf("prefix %q delimiter %q page size %d:\n got %v\nwant %v", prefix, delim, pageSize, got, want)
				}
			}
		}
	}

	// Temporary files (and directories) of the local writers are hidden.
	must(t, os.WriteFile(filepath.Join(dir, "ds", "_versions", ".lk-tmp-3.manifest-0011"), []byte("partial"), 0o666))
	must(t, os.Mkdir(filepath.Join(dir, "ds", ".lk-tmp-dir"), 0o777))
	must(t, os.WriteFile(filepath.Join(dir, "ds", ".lk-tmp-dir", "f"), nil, 0o666))
	for _, delim := range []string{"", "/"} {
		for _, obj := range listAll(t, s.Bucket(), "ds/", delim, 0) {
			if strings.Contains(obj.key, ".lk-tmp-") {
				t.Errorf("delimiter %q: temporary entry %q listed", delim, obj.key)
			}
		}
	}
}

// The bucket of a local store keeps fileblob's error codes, errors.Is
// matches and messages (without a doubled "blob (key …)" header).
func TestLocalBucketErrors(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	b := s.Bucket()
	_, err := b.ReadAll(ctx, "nope")
	if gcerrors.Code(err) != gcerrors.NotFound || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadAll of a missing key: %v (code %v)", err, gcerrors.Code(err))
	}
	if n := strings.Count(err.Error(), "blob"); n != 1 {
		t.Errorf("message %q repeats the blob header", err)
	}
	var pe *fs.PathError
	if !b.ErrorAs(err, &pe) || pe.Path == "" {
		t.Errorf("ErrorAs(*fs.PathError) = %v, %v", pe, err)
	}
	if _, err := b.Attributes(ctx, "nope"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("Attributes: %v", err)
	}
	if err := b.Delete(ctx, "nope"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("Delete: %v", err)
	}
	must(t, b.WriteAll(ctx, "k", []byte("0123456789"), nil))
	err = b.WriteAll(ctx, "k", []byte("x"), &blob.WriterOptions{IfNotExist: true})
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Errorf("IfNotExist write over an existing key: %v", err)
	}
	got, err := b.ReadAll(ctx, "k")
	if err != nil || string(got) != "0123456789" {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	r, err := b.NewRangeReader(ctx, "k", 3, 4, nil)
	must(t, err)
	part, err := io.ReadAll(r)
	must(t, err)
	must(t, r.Close())
	if string(part) != "3456" || r.Size() != 10 {
		t.Errorf("range read = %q (size %d)", part, r.Size())
	}
	must(t, b.Copy(ctx, "k2", "k", nil))
	if a, err := b.Attributes(ctx, "k2"); err != nil || a.Size != 10 {
		t.Errorf("Attributes after Copy = %+v, %v", a, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := b.ListPage(cctx, blob.FirstPageToken, 10, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("listing with a cancelled context: %v", err)
	}
}

// Listings of a local store never fail while other writers stage, link,
// rename and remove files in the listed directories: an entry that
// vanishes between the directory read and its lstat is skipped. Through
// gocloud's fileblob iterator this failed with "not found" within a few
// hundred listings.
func TestLocalListingWhileWritersChurn(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	must(t, s.Put(ctx, "ds/_versions/1.manifest", []byte("m")))
	const writers, rounds = 6, 150
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("ds/_versions/%d-%d.manifest", w, i)
				data := fmt.Sprintf("ds/data/%d/%d.lance", w, i)
				err := s.CreateIfAbsent(ctx, key, []byte("m"))
				if err == nil {
					err = s.Put(ctx, "ds/_versions/latest_version_hint.json", []byte("{}"))
				}
				if err == nil {
					err = s.Put(ctx, data, []byte("d"))
				}
				if err == nil && i%3 == 0 {
					err = errors.Join(s.Delete(ctx, key), s.Delete(ctx, data))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	listings := 0
	var listErr error
	for listErr == nil {
		select {
		case <-done:
			t.Logf("%d listings during the writes", listings)
			return
		default:
		}
		listings++
		if _, err := s.List(ctx, "ds/_versions/", store.ListOptions{Shallow: true}); err != nil {
			listErr = fmt.Errorf("shallow List: %w", err)
			break
		}
		if _, err := s.List(ctx, "ds/", store.ListOptions{}); err != nil {
			listErr = fmt.Errorf("deep List: %w", err)
			break
		}
		it := s.Bucket().List(&blob.ListOptions{Prefix: s.BucketKey("ds/_versions/"), Delimiter: "/"})
		for {
			_, err := it.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				listErr = fmt.Errorf("bucket listing: %w", err)
				break
			}
		}
	}
	close(stop)
	<-done
	t.Fatalf("listing %d: %v", listings, listErr)
}

// FuzzLocalBucketListName: for any file name in a local store's directory,
// the bucket lists the key fileblob lists for it (our reading of fileblob's
// "__0x…__" escapes agrees with fileblob's own), never panics, and hides
// exactly the temporary files.
func FuzzLocalBucketListName(f *testing.F) {
	for _, name := range []string{
		"1.manifest", "ctl__0x1__char", "__0x2f__", "__0x__", "__0xZZ__", "__0x110000__", "__0x7fffffff__",
		"a__0x41____0x42__", "__0x", "____0x41__", "ü", ".lk-tmp-x", "x.attrs", "__0x-1__",
	} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 200 {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o666); err != nil {
			return // not a valid file name here
		}
		raw, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
		must(t, err)
		defer raw.Close()
		s, err := store.Open(context.Background(), dir)
		must(t, err)
		defer s.Close()
		for _, delim := range []string{"", "/"} {
			want := listAll(t, raw, "", delim, 0)
			if strings.HasPrefix(name, ".lk-tmp-") {
				want = nil
			}
			got := listAll(t, s.Bucket(), "", delim, 0)
			if !slices.Equal(got, want) {
				t.Fatalf("file %q, delimiter %q: listed %v, fileblob lists %v", name, delim, got, want)
			}
		}
	})
}
