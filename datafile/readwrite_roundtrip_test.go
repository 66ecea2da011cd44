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
)

// rewrite writes rec with our writer, keeping the field ids of schema (the
// file it was read from), and returns the new file's bytes; nil when the
// writer does not support the schema (ErrInvalidSchema: a type the 2.0
// writer does not write yet).
func rewrite(t testing.TB, schema *Schema, rec arrow.RecordBatch) []byte {
	t.Helper()
	ids := make([]int32, len(schema.Fields))
	for i, f := range schema.Fields {
		ids[i] = f.ID
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), WriterOptions{FieldIDs: ids, PageSize: 4096})
	if errors.Is(err, ErrInvalidSchema) {
		return nil
	}
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	if rec.NumRows() > 0 {
		if err := w.Write(rec); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// checkReadWriteRead is Pebble's checkRoundTrip for data files: what a 2.0
// file decodes to, written again by our writer, reads back equal (values,
// types, field ids, row count), and writing that again gives the same bytes
// (the writer is a function of the rows). It returns false when the file
// cannot be decoded at all (nothing to round-trip).
func checkReadWriteRead(t testing.TB, what string, raw []byte) bool {
	t.Helper()
	ctx := context.Background()
	f, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || f.Version() != V2_0 {
		return false
	}
	rec, err := f.ReadColumns(ctx, ReadOptions{MaxDecodeBytes: 1 << 26})
	if err != nil {
		return false
	}
	defer rec.Release()
	if rec.NumRows() == 0 {
		return false // the writer refuses empty files (ErrEmptyFile)
	}
	out := rewrite(t, f.Schema(), rec)
	if out == nil {
		return false
	}
	g, err := OpenReaderAt(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatalf("%s: our rewrite does not open: %v", what, err)
	}
	if g.NumRows() != f.NumRows() {
		t.Fatalf("%s: rewrite has %d rows, want %d", what, g.NumRows(), f.NumRows())
	}
	for i, fd := range f.Schema().Fields {
		gd := g.Schema().Fields[i]
		if gd.ID != fd.ID || gd.Name != fd.Name || gd.ParentID != fd.ParentID {
			t.Fatalf("%s: field %d is %q id %d parent %d, want %q id %d parent %d", what, i, gd.Name, gd.ID, gd.ParentID, fd.Name, fd.ID, fd.ParentID)
		}
	}
	again, err := g.ReadColumns(ctx, ReadOptions{MaxDecodeBytes: 1 << 26})
	if err != nil {
		t.Fatalf("%s: our rewrite does not decode: %v", what, err)
	}
	defer again.Release()
	assertRecordsEqual(t, rec, again)
	if twice := rewrite(t, g.Schema(), again); !bytes.Equal(twice, out) {
		t.Fatalf("%s: read → write → read → write gave %d bytes, the first write %d", what, len(twice), len(out))
	}
	return true
}

// TestRoundTrip_ReadWriteRead: every 2.0 file in testdata (real Lance
// writers from 0.13 to 12, and the spec example) and random files of our
// writer survive read → write → read.
func TestRoundTrip_ReadWriteRead(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.lance"))
	n := 0
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if checkReadWriteRead(t, filepath.Base(p), raw) {
			n++
		}
	}
	if n < 5 {
		t.Fatalf("only %d testdata files round-tripped, want the 2.0 ones (at least 5)", n)
	}
	full := allTypesSchema()
	iters := 30
	if testing.Short() {
		iters = 8
	}
	for it := 0; it < iters; it++ {
		r := newRand(uint64(7000 + it))
		var fields []arrow.Field
		for _, f := range full.Fields() {
			if r.IntN(2) == 0 {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			fields = full.Fields()[:1]
		}
		schema := arrow.NewSchema(fields, nil)
		rec := randomRecord(r, schema, 1+r.IntN(800))
		raw, _ := writeFile(t, schema, WriterOptions{PageSize: []int{64, 1000, 1 << 16}[r.IntN(3)]}, rec)
		rec.Release()
		if !checkReadWriteRead(t, fmt.Sprintf("random %d", it), raw) {
			t.Fatalf("random %d: our own file does not decode", it)
		}
	}
}

// FuzzReadWriteRead: whatever 2.0 file decodes survives read → write → read.
func FuzzReadWriteRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.lance"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(fuzzSeedFile(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkReadWriteRead(t, "fuzz", b)
	})
}

// TestCorpus_ReadWriteRead: every data file of the corpus that decodes as
// 2.0 (and whose schema the 2.0 writer supports) survives read → write →
// read.
func TestCorpus_ReadWriteRead(t *testing.T) {
	n := 0
	for path := range corpusDataFiles(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if checkReadWriteRead(t, path, raw) {
			n++
		}
	}
	t.Logf("%d corpus data files round-tripped", n)
	if n == 0 {
		t.Fatal("no corpus data file round-tripped")
	}
}
