package datafile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestSpec4_4_DictionaryEncodedStrings decodes a Lance 12 storage-2.0 file
// whose low-cardinality utf8 columns Lance dictionary-encoded (spec §4.4):
// index 0 is a null row, index k selects item k-1, with and without nulls.
// Found by the tests/compat suite: our reader refused these pages.
func TestSpec4_4_DictionaryEncodedStrings(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "lance12_v2.0_dict_strings.lance"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for i := 0; i < f.NumColumns(); i++ {
		ae, err := decodeArrayEncoding(f.Column(i).Pages[0].Encoding.Value, -1, "")
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ae.kind.String())
	}
	if kinds[0] != "dictionary" || kinds[1] != "binary" || kinds[2] != "dictionary" {
		t.Fatalf("page encodings %v: the sample no longer has dictionary-encoded strings", kinds)
	}
	rec, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	// The rows Lance was given (tests/compat generated them): s and b are
	// null when i%7 == 3, else vals[i%4]; t is "x" there, else
	// {"x","y","wörd"}[i%3].
	vals := []string{"", "a", "héllo", "zz"}
	s, b, tt := rec.Column(0).(*array.String), rec.Column(1).(*array.Binary), rec.Column(2).(*array.String)
	if rec.NumRows() != 100 || s.NullN() != 14 || tt.NullN() != 0 {
		t.Fatalf("%d rows, %d/%d nulls", rec.NumRows(), s.NullN(), tt.NullN())
	}
	for i := 0; i < 100; i++ {
		wantT := []string{"x", "y", "wörd"}[i%3]
		if i%7 == 3 {
			wantT = "x"
			if !s.IsNull(i) || !b.IsNull(i) {
				t.Errorf("row %d: want nulls", i)
			}
		} else if s.IsNull(i) || s.Value(i) != vals[i%4] || string(b.Value(i)) != vals[i%4] {
			t.Errorf("row %d: s=%q b=%q, want %q", i, s.Value(i), b.Value(i), vals[i%4])
		}
		if tt.Value(i) != wantT {
			t.Errorf("row %d: t=%q, want %q", i, tt.Value(i), wantT)
		}
	}
	// An index beyond the items is malformed, not a panic.
	bad := bytes.Clone(raw)
	bad[f.Column(2).Pages[0].Buffers[0].Pos] = 9
	fb, err := OpenReaderAt(bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fb.ReadColumns(context.Background(), ReadOptions{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("index 9 of 3 items: %v, want ErrMalformed", err)
	}
}
