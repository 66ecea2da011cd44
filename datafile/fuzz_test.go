package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// TestTestdata_RealFiles decodes the real Lance files kept in testdata
// (copied from the corpus, see testdata/README.md), so these checks run even
// without the corpus: old 2.0 writers (unaligned schema §6 trap 22, strings
// spread over two columns), a legacy v1 file, a 2.2 file.
func TestTestdata_RealFiles(t *testing.T) {
	cases := []struct {
		file    string
		version FileVersion
		want    map[string]string // column -> fmt of the decoded array
		err     error
	}{
		{file: "lance0.13_v2.0_two_column_strings.lance", version: V2_0, want: map[string]string{
			"numbers": "[1 2 3]", "strings": `["foo" "bar" "baz"]`, "bins": `["foo" "bar" "baz"]`, "more_numbers": "[4 5 6]"}},
		{file: "lance0.16_v2.0_unaligned_schema.lance", version: V2_0, want: map[string]string{"foo": "[1]"}},
		{file: "lance0.27_v2.0_string.lance", version: V2_0, want: map[string]string{
			"text": `["frodo was a puppy" "frodo was a happy puppy" "frodo was a puppy with a tail"]`}},
		{file: "spec_1_8_example.lance", version: V2_0, want: map[string]string{"id": "[1 2 3]", "x": "[1.5 (null) -0]", "s": `["a" (null) "ccc"]`}},
		{file: "lance12_v2.0_all_types.lance", version: V2_0},
		{file: "lance12_v2.2_small.lance", version: V2_2},
		{file: "lance12_v2.2_encoding_hints.lance", version: V2_2},
		{file: "lance0.15_legacy_v1.lance", err: ErrLegacyFormat},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("got %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Version() != c.version {
				t.Fatalf("version %s, want %s", f.Version(), c.version)
			}
			rec, err := f.ReadColumns(context.Background(), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			for col, want := range c.want {
				a, err := f.ReadColumn(context.Background(), col)
				if err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(a); got != want {
					t.Errorf("column %q = %s, want %s", col, got, want)
				}
				a.Release()
			}
		})
	}
}

// fuzzSeedFile is a small file of our writer with seeds, for the fuzz corpus.
func fuzzSeedFile(t testing.TB) []byte {
	rec := randomRecord(newRand(99), arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "v", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true})},
	}, nil), 40)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), WriterOptions{PageSize: 64, SeedAllColumns: true, Seed: seedio.CollectorOptions{RowsPerZone: 16}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzOpen feeds hostile bytes to Open and, when a file opens, to every
// accessor that reads from it: no panic, typed errors, bounded memory.
func FuzzOpen(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.lance")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(fuzzSeedFile(f))
	f.Add([]byte("LANC"))
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			var fe *FormatError
			var le *LegacyFileError
			var ve *VersionError
			if !errors.As(err, &fe) && !errors.As(err, &le) && !errors.As(err, &ve) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		_, _ = file.FieldColumns()
		_, _ = file.Schema().ArrowSchema()
		ctx := context.Background()
		if _, err := file.Seeds(ctx, seedio.DecodeOptions{TableFlagged: true, MaxDecodedBytes: 1 << 24}); err != nil {
			t.Fatalf("Seeds failed as a whole: %v", err)
		}
		for i := range file.GlobalBuffers() {
			_, _ = file.GlobalBuffer(ctx, i)
		}
		{
			rec, err := file.ReadColumns(ctx, ReadOptions{MaxDecodeBytes: 1 << 26})
			if err == nil {
				if uint64(rec.NumRows()) != file.NumRows() {
					t.Fatalf("decoded %d rows, file says %d", rec.NumRows(), file.NumRows())
				}
				for _, c := range rec.Columns() {
					if v, ok := c.(interface{ ValidateFull() error }); ok {
						if err := v.ValidateFull(); err != nil {
							t.Fatalf("decoded invalid array: %v", err)
						}
					}
				}
				rec.Release()
			}
		}
	})
}
