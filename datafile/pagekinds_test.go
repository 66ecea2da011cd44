package datafile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPageKinds_Spec21_7_NamesLayoutsAndCompressions: Page.Kinds of the
// Lance 12 file written with encoding hints names each layout and
// compression Lance chose (lance-file-format-2.1.md §4–§7); a 2.0 page is
// ErrUnsupported.
func TestPageKinds_Spec21_7_NamesLayoutsAndCompressions(t *testing.T) {
	open := func(name string) *File {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := open("lance12_v2.2_encoding_hints.lance")
	seen := map[string]bool{}
	for c := range f.NumColumns() {
		for i := range f.Column(c).Pages {
			ks, err := f.Column(c).Pages[i].Kinds()
			if err != nil {
				t.Fatal(err)
			}
			if ks[0] != "mini-block" && ks[0] != "full-zip" && ks[0] != "constant" {
				t.Errorf("column %d page %d: kinds %v start with no layout", c, i, ks)
			}
			if !slices.IsSorted(ks[1:]) {
				t.Errorf("kinds %v not sorted", ks)
			}
			for _, k := range ks {
				seen[k] = true
			}
		}
	}
	for _, k := range []string{"mini-block", "full-zip", "byte_stream_split", "general:lz4", "general:zstd", "packed_struct", "variable_packed_struct", "mini-block-dictionary"} {
		if !seen[k] {
			t.Errorf("kind %q not found (seen %v)", k, seen)
		}
	}
	f20 := open("lance12_v2.0_all_types.lance")
	if _, err := f20.Column(0).Pages[0].Kinds(); !errors.Is(err, ErrUnsupported) {
		t.Errorf("2.0 page: %v, want ErrUnsupported", err)
	}
}
