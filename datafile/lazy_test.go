package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob/fileblob"
)

// TestOpenLazyColumns_SameAnswersFewerBytes (lance-file-format.md §1.6
// steps 6–9, read on demand): a file opened with LazyColumns and a tiny
// first tail read reads no column metadata until a read needs it, then
// only the metadata of the requested fields' columns (2.1+); every field
// decodes to the same values as an eager Open, Column and FieldColumns
// agree, and the open itself reads fewer bytes than the eager default.
func TestOpenLazyColumns_SameAnswersFewerBytes(t *testing.T) {
	dir := needCorpus(t)
	var files []string
	for _, tbl := range []string{"storage_2_0", "storage_2_1", "all_types", "storage_2_3", "deletions"} {
		fs, _ := filepath.Glob(filepath.Join(dir, "lance12", tbl+".lance", "data", "*.lance"))
		if len(fs) == 0 {
			t.Fatalf("corpus table %s has no data file", tbl)
		}
		files = append(files, fs[0])
	}
	ctx := context.Background()
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(path))), func(t *testing.T) {
			bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer bucket.Close()
			var es, ls IOStats
			eager, err := Open(ctx, bucket, filepath.Base(path), OpenOptions{Stats: &es})
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := Open(ctx, bucket, filepath.Base(path), OpenOptions{Stats: &ls, TailSize: 64, LazyColumns: true})
			if err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(path)
			meta := st.Size() - int64(lazy.GlobalBuffers()[0].Pos)
			if got := ls.Bytes.Load(); got > meta {
				t.Errorf("lazy open read %d bytes, more than the %d of schema, tables and footer", got, meta)
			}
			for i, ok := range lazy.loaded {
				if ok {
					t.Errorf("column %d loaded by a lazy Open", i)
				}
			}
			top := lazy.Schema().TopLevel()
			if lazy.Version() != V2_0 && len(top) > 1 {
				// one field: only its columns' metadata is read
				rec, err := lazy.ReadRows(ctx, ReadRequest{Fields: top[len(top)-1:]})
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
				n := 0
				for _, ok := range lazy.loaded {
					if ok {
						n++
					}
				}
				if n == 0 || n == len(lazy.loaded) {
					t.Errorf("reading the last field loaded %d of %d columns", n, len(lazy.loaded))
				}
			}
			for _, fi := range top {
				a, err := eager.ReadRows(ctx, ReadRequest{Fields: []int{fi}})
				if err != nil {
					t.Fatal(err)
				}
				b, err := lazy.ReadRows(ctx, ReadRequest{Fields: []int{fi}})
				if err != nil {
					t.Fatal(err)
				}
				if !array.RecordEqual(a, b) && fmt.Sprint(a.Column(0)) != fmt.Sprint(b.Column(0)) { // NaNs: compare the printed values
					t.Errorf("field %q: lazy read differs from eager read", eager.Schema().Fields[fi].Name)
				}
				a.Release()
				b.Release()
			}
			for i := 0; i < eager.NumColumns(); i++ {
				if !reflect.DeepEqual(eager.Column(i), lazy.Column(i)) {
					t.Errorf("column %d metadata differs", i)
				}
			}
			fe, err1 := eager.FieldColumns()
			fl, err2 := lazy.FieldColumns()
			if err1 != nil || err2 != nil || !reflect.DeepEqual(fe, fl) {
				t.Errorf("FieldColumns: eager %v (%v), lazy %v (%v)", fe, err1, fl, err2)
			}
			if err := lazy.LoadColumns(ctx, []int{lazy.NumColumns()}); err == nil {
				t.Error("LoadColumns of a column past the end: no error")
			}
		})
	}
}

// FuzzOpenLazy: hostile bytes opened with LazyColumns and a tiny tail,
// then every column loaded and every field read: typed errors, no panic.
func FuzzOpenLazy(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.lance")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(fuzzSeedFile(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		file, err := openV2(ctx, readerAtSource{r: bytes.NewReader(b)}, int64(len(b)), 64, true)
		if err != nil {
			return
		}
		if err := file.LoadColumns(ctx, nil); err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if rec, err := file.ReadRows(ctx, ReadRequest{ReadOptions: ReadOptions{MaxDecodeBytes: 1 << 20}}); err == nil {
			rec.Release()
		}
	})
}
