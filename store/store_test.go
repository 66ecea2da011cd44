package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lancekeeper/lancekeeper/store"
	"gocloud.dev/blob/fileblob"
)

func TestValidateKey(t *testing.T) {
	long := strings.Repeat("a", store.MaxKeyLen+1)
	tests := []struct {
		key string
		ok  bool
	}{
		{"ds/_versions/18446744073709551614.manifest", true},
		{"_refs/branches/feat%2Fx.json", true},
		{"data/0101-abc.lance", true},
		{"a", true},
		{"", false},
		{"/abs", false},
		{"trailing/", false},
		{"double//slash", false},
		{"dot/./seg", false},
		{"up/../seg", false},
		{"0../0", false},
		{"name..", true},
		{"..", false},
		{"ctl\x01char", false},
		{"new\nline", false},
		{`back\slash`, false},
		{"x/meta.attrs", false},
		{"esc__0x2F__aped", false},
		{"d/.lk-tmp-manifest-0011", false},
		{"bad\xffutf8", false},
		{long, false},
	}
	for _, tc := range tests {
		err := store.ValidateKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		if err != nil && !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) error %v does not wrap ErrInvalidKey", tc.key, err)
		}
	}
}

func TestOpenURLForms(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		url    string
		kind   store.Kind
		prefix string // for non-local kinds
		err    error
		errSub string
	}{
		{url: dir, kind: store.KindLocal},
		{url: "file://" + dir, kind: store.KindLocal},
		{url: "file://localhost" + dir, kind: store.KindLocal},
		{url: "mem://", kind: store.KindMemory, prefix: ""},
		{url: "mem://label/a/b", kind: store.KindMemory, prefix: "a/b/"},
		{url: "mem://label/a?prefix=b/", kind: store.KindMemory, prefix: "a/b/"},
		{url: "s3://bucket/root/ds?endpoint=http://127.0.0.1:1&region=us-east-1&use_path_style=true", kind: store.KindS3, prefix: "root/ds/"},
		{url: "s3://bucket?region=us-east-1&anonymous=true", kind: store.KindS3, prefix: ""},
		{url: "", err: store.ErrInvalidURL},
		{url: "file://otherhost/x", err: store.ErrInvalidURL, errSub: "host"},
		{url: "file://" + dir + "?metadata=skip", err: store.ErrInvalidURL, errSub: "query"},
		{url: "mem://x?nomd5", err: store.ErrInvalidURL, errSub: "query"},
		{url: "s3:///nobucket", err: store.ErrInvalidURL, errSub: "bucket"},
		{url: "s3://bucket/a/../b", err: store.ErrInvalidURL, errSub: "prefix"},
		{url: "ftp://host/x", err: store.ErrInvalidURL, errSub: "unknown scheme"},
		{url: "azblob://container/x", err: store.ErrInvalidURL, errSub: "not linked"},
		{url: "gs://bucket/x", err: store.ErrInvalidURL, errSub: "not linked"},
		{url: "s3://bucket?no_such_param=1", errSub: "unknown query parameter"},
		{url: "s3://bucket/p?region=us-east-1&ssetype=aes256&kmskeyid=k&accelerate=false&disable_https=true&s3ForcePathStyle=true", kind: store.KindS3, prefix: "p/"},
		{url: "s3://bucket?region=us-east-1&ssetype=rot13", errSub: `"rot13" is not a valid value for "ssetype"`},
		{url: "s3://bucket?region=us-east-1&use_path_style=maybe", errSub: `invalid value for "use_path_style"`},
		{url: "s3://bucket?region=us-east-1&disable_https=2", errSub: `invalid value for "disable_https"`},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			s, err := store.Open(context.Background(), tc.url)
			if tc.err != nil || tc.errSub != "" {
				if err == nil {
					s.Close()
					t.Fatalf("Open(%q) succeeded, want error", tc.url)
				}
				if tc.err != nil && !errors.Is(err, tc.err) {
					t.Errorf("error %v does not wrap %v", err, tc.err)
				}
				if !strings.Contains(err.Error(), tc.errSub) {
					t.Errorf("error %q does not mention %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Kind() != tc.kind {
				t.Errorf("kind %s, want %s", s.Kind(), tc.kind)
			}
			if tc.kind != store.KindLocal && s.KeyPrefix() != tc.prefix {
				t.Errorf("prefix %q, want %q", s.KeyPrefix(), tc.prefix)
			}
		})
	}
}

// Every operation on every backend, with the same expectations.
func TestStoreOperations(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.url(t))
			data := []byte("0123456789abcdef")

			// Absent keys.
			if _, err := s.Get(ctx, "ds/missing"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get missing: %v, want ErrNotFound", err)
			}
			if _, err := s.Stat(ctx, "ds/missing"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Stat missing: %v, want ErrNotFound", err)
			}
			if ok, err := s.Exists(ctx, "ds/missing"); ok || err != nil {
				t.Errorf("Exists missing = %v, %v", ok, err)
			}
			if err := s.Delete(ctx, "ds/missing"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Delete missing: %v, want ErrNotFound", err)
			}
			if objs, err := s.List(ctx, "ds/", store.ListOptions{}); err != nil || len(objs) != 0 {
				t.Errorf("List of empty store = %v, %v", objs, err)
			}

			// Put, Get, Stat, Exists.
			if err := s.Put(ctx, "ds/data/f1.lance", data); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(ctx, "ds/data/f1.lance"); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Get = %q, %v", got, err)
			}
			if n, err := s.Size(ctx, "ds/data/f1.lance"); err != nil || n != int64(len(data)) {
				t.Errorf("Size = %d, %v", n, err)
			}
			if ok, err := s.Exists(ctx, "ds/data/f1.lance"); !ok || err != nil {
				t.Errorf("Exists = %v, %v", ok, err)
			}
			// Put overwrites.
			if err := s.Put(ctx, "ds/data/f1.lance", data[:4]); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, "ds/data/f1.lance"); !bytes.Equal(got, data[:4]) {
				t.Errorf("after overwrite Get = %q", got)
			}
			if err := s.Put(ctx, "ds/data/f1.lance", data); err != nil {
				t.Fatal(err)
			}

			// Range reads.
			for _, r := range []struct{ off, n int64 }{{0, 1}, {3, 5}, {15, 1}, {4, -1}, {0, 16}, {7, 0}} {
				got, err := s.GetRange(ctx, "ds/data/f1.lance", r.off, r.n)
				end := int64(len(data))
				if r.n >= 0 {
					end = r.off + r.n
				}
				if err != nil || !bytes.Equal(got, data[r.off:end]) {
					t.Errorf("GetRange(%d,%d) = %q, %v; want %q", r.off, r.n, got, err, data[r.off:end])
				}
			}
			if _, err := s.GetRange(ctx, "ds/data/f1.lance", 10, 10); !errors.Is(err, store.ErrShortRead) {
				t.Errorf("GetRange past end: %v, want ErrShortRead", err)
			}
			if _, err := s.GetRange(ctx, "ds/missing", 0, 1); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetRange missing: %v, want ErrNotFound", err)
			}

			// CreateIfAbsent.
			if err := s.CreateIfAbsent(ctx, "ds/_versions/1.manifest", []byte("v1-a")); err != nil {
				t.Fatal(err)
			}
			err := s.CreateIfAbsent(ctx, "ds/_versions/1.manifest", []byte("v1-b"))
			if !errors.Is(err, store.ErrAlreadyExists) {
				t.Fatalf("second CreateIfAbsent: %v, want ErrAlreadyExists", err)
			}
			if got, _ := s.Get(ctx, "ds/_versions/1.manifest"); string(got) != "v1-a" {
				t.Errorf("after refused create the key holds %q", got)
			}
			if err := s.CreateIfAbsent(ctx, "ds/data/f1.lance", []byte("x")); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("CreateIfAbsent over a put key: %v, want ErrAlreadyExists", err)
			}

			// Copy.
			if err := s.Copy(ctx, "ds/_versions/2.manifest", "ds/_versions/1.manifest"); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, "ds/_versions/2.manifest"); string(got) != "v1-a" {
				t.Errorf("copy holds %q", got)
			}
			if err := s.Copy(ctx, "ds/x", "ds/missing"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Copy of missing source: %v, want ErrNotFound", err)
			}

			// Streaming writer: invisible until Close; Abort publishes nothing.
			w, err := s.NewWriter(ctx, "ds/data/f2.lance")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Exists(ctx, "ds/data/f2.lance"); ok {
				t.Error("writer's object visible before Close")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, "ds/data/f2.lance"); !bytes.Equal(got, data) {
				t.Errorf("written object holds %q", got)
			}
			w, err = s.NewWriter(ctx, "ds/data/aborted.lance")
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data)
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Exists(ctx, "ds/data/aborted.lance"); ok {
				t.Error("aborted write is visible")
			}

			// Listings: sorted, recursive or one level.
			if err := s.Put(ctx, "ds/_versions/latest_version_hint.json", []byte(`{"version":2}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, "ds/_versions/sub/ignored", []byte("x")); err != nil {
				t.Fatal(err)
			}
			all, err := s.List(ctx, "ds/", store.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantAll := []string{"ds/_versions/1.manifest", "ds/_versions/2.manifest", "ds/_versions/latest_version_hint.json",
				"ds/_versions/sub/ignored", "ds/data/f1.lance", "ds/data/f2.lance"}
			if got := keys(all); !slices.Equal(got, wantAll) {
				t.Errorf("recursive List = %v\nwant %v", got, wantAll)
			}
			for _, o := range all {
				if o.IsDir {
					t.Errorf("recursive listing returned directory %s", o.Key)
				}
			}
			shallow, err := s.List(ctx, "ds/_versions/", store.ListOptions{Shallow: true})
			if err != nil {
				t.Fatal(err)
			}
			wantShallow := []string{"ds/_versions/1.manifest", "ds/_versions/2.manifest", "ds/_versions/latest_version_hint.json", "ds/_versions/sub/"}
			if got := keys(shallow); !slices.Equal(got, wantShallow) {
				t.Errorf("shallow List = %v\nwant %v", got, wantShallow)
			}
			if !shallow[3].IsDir || shallow[0].IsDir || shallow[0].Size != 4 {
				t.Errorf("shallow entries: %+v", shallow)
			}
			top, err := s.List(ctx, "", store.ListOptions{Shallow: true})
			if err != nil || !slices.Equal(keys(top), []string{"ds/"}) {
				t.Errorf("shallow List of root = %v, %v", keys(top), err)
			}

			// Sub-store.
			sub, err := s.Sub("ds")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := sub.Get(ctx, "_versions/1.manifest"); err != nil || string(got) != "v1-a" {
				t.Errorf("Sub Get = %q, %v", got, err)
			}
			if sub.BucketKey("x") != s.KeyPrefix()+"ds/x" {
				t.Errorf("Sub BucketKey = %q", sub.BucketKey("x"))
			}
			// The exposed bucket reads the same bytes at BucketKey.
			if got, err := s.Bucket().ReadAll(ctx, s.BucketKey("ds/data/f1.lance")); err != nil || !bytes.Equal(got, data) {
				t.Errorf("Bucket().ReadAll = %q, %v", got, err)
			}

			// Delete.
			if err := s.Delete(ctx, "ds/_versions/2.manifest"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Exists(ctx, "ds/_versions/2.manifest"); ok {
				t.Error("deleted key still exists")
			}

			// Invalid keys are refused before any I/O.
			for _, k := range []string{"", "/x", "a//b", "../x"} {
				if err := s.Put(ctx, k, data); !errors.Is(err, store.ErrInvalidKey) {
					t.Errorf("Put(%q): %v, want ErrInvalidKey", k, err)
				}
			}
		})
	}
}

func keys(objs []store.ObjectInfo) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// Concurrent creates of one key through independent handles: exactly one
// winner per round, and the key holds the winner's bytes. On S3 SeaweedFS
// serialises conditional PUTs of one key with a filer lock whose waiters
// poll once a second, so a round takes ~2.5s there; this test runs 10 S3
// rounds and TestDoctorPassesOnS3 the full 8 x 50.
func TestCreateIfAbsentOneWinnerPerRound(t *testing.T) {
	const contenders = 8
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			url := b.url(t)
			rounds := 50
			if strings.HasPrefix(url, "s3://") {
				rounds = 10
			}
			handles := make([]*store.Store, contenders)
			for i := range handles {
				handles[i] = openStore(t, url)
			}
			if strings.HasPrefix(url, "mem://") {
				for i := range handles { // each Open of mem:// is a new bucket
					handles[i] = handles[0]
				}
			}
			for r := range rounds {
				key := fmt.Sprintf("race/%d.manifest", r)
				errs := make([]error, contenders)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for c := range contenders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[c] = handles[c].CreateIfAbsent(ctx, key, fmt.Appendf(nil, "round %d contender %d", r, c))
					}()
				}
				close(start)
				wg.Wait()
				winner := -1
				for c, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("round %d: contenders %d and %d both won", r, winner, c)
					case err == nil:
						winner = c
					case !errors.Is(err, store.ErrAlreadyExists):
						t.Fatalf("round %d contender %d: %v", r, c, err)
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: no winner", r)
				}
				got, err := handles[0].Get(ctx, key)
				if want := fmt.Sprintf("round %d contender %d", r, winner); err != nil || string(got) != want {
					t.Fatalf("round %d: key holds %q (%v), want %q", r, got, err, want)
				}
			}
		})
	}
}

// Lance datasets on local disk must not get fileblob's *.attrs sidecar
// files, and our temporary files must never be left behind or listed.
func TestLocalWritesLeaveNoSidecarOrTempFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	must(t, s.Put(ctx, "ds/a", []byte("a")))
	must(t, s.CreateIfAbsent(ctx, "ds/_versions/1.manifest", []byte("m")))
	_ = s.CreateIfAbsent(ctx, "ds/_versions/1.manifest", []byte("m2"))
	must(t, s.Copy(ctx, "ds/b", "ds/a"))
	w, err := s.NewWriter(ctx, "ds/c")
	must(t, err)
	w.Write([]byte("c"))
	must(t, w.Close())
	// Writes through the raw bucket (metadata=skip) add no sidecar either.
	must(t, s.Bucket().WriteAll(ctx, s.BucketKey("ds/raw"), []byte("r"), nil))

	var names []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	}))
	want := []string{"ds/_versions/1.manifest", "ds/a", "ds/b", "ds/c", "ds/raw"}
	if !slices.Equal(names, want) {
		t.Fatalf("files on disk %v, want %v", names, want)
	}
	// A temp file left by a crash is not listed.
	must(t, os.WriteFile(filepath.Join(dir, "ds", ".lk-tmp-a-0123"), []byte("partial"), 0o666))
	objs, err := s.List(ctx, "ds/", store.ListOptions{Shallow: true})
	must(t, err)
	if got := keys(objs); !slices.Equal(got, []string{"ds/_versions/", "ds/a", "ds/b", "ds/c", "ds/raw"}) {
		t.Fatalf("listing shows %v", got)
	}
}

// Opening (reading) never writes: a missing directory is created by the
// first write, not by Open.
func TestLocalOpenDoesNotCreateDirectory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "ds")
	s := openStore(t, dir)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open created %s (stat: %v)", dir, err)
	}
	if objs, err := s.List(ctx, "", store.ListOptions{}); err != nil || len(objs) != 0 {
		t.Fatalf("List = %v, %v", objs, err)
	}
	if _, err := s.Get(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get: %v", err)
	}
	must(t, s.CreateIfAbsent(ctx, "_versions/1.manifest", []byte("m")))
	if b, err := os.ReadFile(filepath.Join(dir, "_versions", "1.manifest")); err != nil || string(b) != "m" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if _, err := store.Open(ctx, filepath.Join(dir, "_versions", "1.manifest")); err == nil {
		t.Fatal("Open of a regular file succeeded")
	}
}

// The commit gate: stores with an atomic create pass; a raw fileblob bucket
// (stat + rename IfNotExist) is refused unless the caller accepts the risk.
func TestRequireAtomicCreate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, url := range []string{dir, "mem://"} {
		s := openStore(t, url)
		if !s.AtomicCreate() || s.RequireAtomicCreate(false) != nil {
			t.Errorf("%s: AtomicCreate=%v RequireAtomicCreate=%v", url, s.AtomicCreate(), s.RequireAtomicCreate(false))
		}
	}
	raw, err := fileblob.OpenBucket(dir, nil)
	must(t, err)
	defer raw.Close()
	s, err := store.FromBucket(raw, "ds", false)
	must(t, err)
	if s.AtomicCreate() {
		t.Fatal("raw fileblob store claims an atomic create")
	}
	err = s.RequireAtomicCreate(false)
	if !errors.Is(err, store.ErrNoAtomicCreate) {
		t.Fatalf("RequireAtomicCreate(false) = %v, want ErrNoAtomicCreate", err)
	}
	if err := s.RequireAtomicCreate(true); err != nil {
		t.Fatalf("RequireAtomicCreate(true) = %v", err)
	}
	// It still works as a store (single process).
	must(t, s.CreateIfAbsent(ctx, "k", []byte("1")))
	if err := s.CreateIfAbsent(ctx, "k", []byte("2")); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
}

func TestPruneEmptyDirs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	must(t, s.Put(ctx, "p/a/b/c", []byte("x")))
	must(t, s.Put(ctx, "p/keep/d", []byte("x")))
	must(t, s.Delete(ctx, "p/a/b/c"))
	must(t, s.PruneEmptyDirs(ctx, "p/"))
	if _, err := os.Stat(filepath.Join(dir, "p", "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty p/a not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "keep", "d")); err != nil {
		t.Errorf("p/keep/d removed: %v", err)
	}
	// Writing into a pruned directory recreates it.
	must(t, s.CreateIfAbsent(ctx, "p/a/b/c", []byte("y")))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
