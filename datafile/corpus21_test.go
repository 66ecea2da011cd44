package datafile

import (
	"context"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpus_Decode21EveryPage decodes every row of every 2.1/2.2/2.3 data
// file of the corpus (spec lance-file-format-2.1.md §4–§6), whole and in
// pieces, and checks that piecewise reads (ReadRows ranges crossing chunks and
// pages) equal the slices of the whole read. Values are compared with Lance
// 12 in tests/compat (TestLanceToUs_Corpus*); here: no error, no panic.
func TestCorpus_Decode21EveryPage(t *testing.T) {
	dir := needCorpus(t)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".lance") || !strings.Contains(p, "/data/") {
			return err
		}
		fh, err := os.Open(p)
		if err != nil {
			return err
		}
		defer fh.Close()
		st, _ := fh.Stat()
		f, err := OpenReaderAt(fh, st.Size())
		if err != nil || f.Version() == V2_0 {
			return nil
		}
		n++
		rec, err := f.ReadRows(context.Background(), ReadRequest{})
		if err != nil {
			t.Errorf("%s (%s): %v", p, f.Version(), err)
			return nil
		}
		defer rec.Release()
		if uint64(rec.NumRows()) != f.NumRows() {
			t.Errorf("%s: %d rows, want %d", p, rec.NumRows(), f.NumRows())
		}
		checkPiecewise(t, p, f, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no 2.1+ data file found in the corpus")
	}
	t.Logf("%d 2.1+ data files decoded", n)
}

// checkPiecewise reads rec's file again in a few row ranges and compares
// each column with the slice of the whole read.
func checkPiecewise(t *testing.T, name string, f *File, whole arrow.RecordBatch) {
	t.Helper()
	n := f.NumRows()
	if n < 3 {
		return
	}
	ranges := []RowRange{{0, 1}, {n / 3, n/3 + n/4 + 1}, {n - 1, n}}
	if ranges[1].End >= n-1 {
		ranges = []RowRange{{0, 1}, {n - 1, n}}
	}
	checkPiecewiseRanges(t, name, f, whole, ranges)
}

func checkPiecewiseRanges(t *testing.T, name string, f *File, whole arrow.RecordBatch, ranges []RowRange) {
	t.Helper()
	rec, err := f.ReadRows(context.Background(), ReadRequest{Ranges: ranges})
	if err != nil {
		t.Errorf("%s: ranges %v: %v", name, ranges, err)
		return
	}
	defer rec.Release()
	for c := 0; c < int(whole.NumCols()); c++ {
		var parts []arrow.Array
		for _, r := range ranges {
			parts = append(parts, array.NewSlice(whole.Column(c), int64(r.Start), int64(r.End)))
		}
		want, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		if i, ok := sameValues(want, rec.Column(c)); !ok {
			t.Errorf("%s: column %s: ranges %v: value %d differs: read %v, want %v", name, whole.ColumnName(c), ranges, i, rec.Column(c), want)
		}
		want.Release()
	}
}

// sameValues compares two arrays element by element through ValueStr (so
// NaNs compare equal and dictionaries compare by value).
func sameValues(a, b arrow.Array) (int, bool) {
	if a.Len() != b.Len() {
		return -1, false
	}
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) != b.IsNull(i) || a.ValueStr(i) != b.ValueStr(i) {
			return i, false
		}
	}
	return 0, true
}
