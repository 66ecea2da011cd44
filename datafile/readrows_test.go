package datafile

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestReadRows_RangesAndProjection checks ReadRows against slices of
// ReadColumns: projected fields in request order, ranges concatenated.
func TestReadRows_RangesAndProjection(t *testing.T) {
	r := newRand(7)
	schema := allTypesSchema()
	rec := randomRecord(r, schema, 3000)
	defer rec.Release()
	data, _ := writeFile(t, schema, WriterOptions{PageSize: 4096}, rec)
	f, err := OpenReaderAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	all, err := f.ReadColumns(context.Background(), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Release()
	top := f.Schema().TopLevel()
	fields := []int{top[len(top)-1], top[0]}
	ranges := []RowRange{{0, 1}, {100, 900}, {2999, 3000}}
	got, err := f.ReadRows(context.Background(), ReadRequest{Fields: fields, Ranges: ranges})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 802 || got.NumCols() != 2 {
		t.Fatalf("got %d rows, %d columns; want 802, 2", got.NumRows(), got.NumCols())
	}
	for i, col := range []int{len(top) - 1, 0} {
		var parts []arrow.Array
		for _, rg := range ranges {
			parts = append(parts, array.NewSlice(all.Column(col), int64(rg.Start), int64(rg.End)))
		}
		want, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		assertArraysEqual(t, all.ColumnName(col), want, got.Column(i))
		want.Release()
	}
	for _, bad := range [][]RowRange{{{5, 5}}, {{10, 20}, {15, 30}}, {{0, 3001}}} {
		if _, err := f.ReadRows(context.Background(), ReadRequest{Ranges: bad}); err == nil {
			t.Errorf("ranges %v accepted", bad)
		}
	}
	if _, err := f.ReadRows(context.Background(), ReadRequest{Fields: []int{-1}}); err == nil {
		t.Error("field -1 accepted")
	}
}
