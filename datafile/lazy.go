package datafile

import (
	"context"
	"slices"
)

// lazyReadGap: column metadata blocks closer than this are fetched in one
// range read by LoadColumns.
const lazyReadGap = 4 << 10

// LoadColumns reads and decodes the metadata of the given physical columns
// (nil: every column) of a file opened with OpenOptions.LazyColumns, in as
// few range reads as the blocks' positions allow (blocks closer than 4 KiB
// are read together; bytes Open already holds are not read again). It is a
// no-op for columns already loaded and for files opened eagerly. A column
// index out of range is an error.
func (f *File) LoadColumns(ctx context.Context, cols []int) error {
	if f.loaded == nil {
		return nil
	}
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	if cols == nil {
		cols = make([]int, len(f.columns))
		for i := range cols {
			cols[i] = i
		}
	}
	var todo []int
	for _, c := range cols {
		if c < 0 || c >= len(f.columns) {
			return withPath(formatErr(ErrMalformed, "column metadata", -1, "column %d does not exist (file has %d)", c, len(f.columns)), f.path)
		}
		if !f.loaded[c] {
			todo = append(todo, c)
		}
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	slices.SortFunc(todo, func(a, b int) int {
		pa, pb := f.columnBlocks[a].Pos, f.columnBlocks[b].Pos
		switch {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	for len(todo) > 0 {
		start := f.columnBlocks[todo[0]].Pos
		end, _ := f.columnBlocks[todo[0]].End() // checked by Open
		n := 1
		for n < len(todo) {
			r := f.columnBlocks[todo[n]]
			e, _ := r.End()
			if r.Pos > end+lazyReadGap {
				break
			}
			end = max(end, e)
			n++
		}
		b, err := f.readRange(ctx, int64(start), int64(end-start))
		if err != nil {
			return withPath(err, f.path)
		}
		for _, c := range todo[:n] {
			r := f.columnBlocks[c]
			off := r.Pos - start
			cm, err := decodeColumnMetadata(b[off:off+r.Len:off+r.Len], int64(r.Pos), c, f.version, uint64(f.size))
			if err != nil {
				return withPath(err, f.path)
			}
			f.columns[c] = cm
			f.loaded[c] = true
		}
		todo = todo[n:]
	}
	return nil
}

// loadFieldColumns loads the column metadata a read of the given fields
// needs: in 2.1+ files the leaf columns below each field, else every
// column (2.0 assigns columns from the pages of earlier columns).
func (f *File) loadFieldColumns(ctx context.Context, fields []int) error {
	if f.loaded == nil {
		return nil
	}
	if f.version == V2_0 {
		return f.LoadColumns(ctx, nil)
	}
	// leaf column of every field, numbered in pre-order of the top-level
	// fields (as newReader21 numbers them)
	first := map[int]int{}
	last := map[int]int{}
	next := 0
	var walk func(fi, depth int)
	walk = func(fi, depth int) {
		if depth > 64 || fi < 0 || fi >= len(f.schema.Fields) {
			return
		}
		fld := &f.schema.Fields[fi]
		first[fi] = next
		if isLeaf21(fld) {
			next++
		} else {
			for _, c := range fld.Children {
				walk(c, depth+1)
			}
		}
		last[fi] = next
	}
	for _, fi := range f.schema.TopLevel() {
		walk(fi, 0)
	}
	if next != len(f.columns) {
		return f.LoadColumns(ctx, nil) // the reader reports the mismatch
	}
	var cols []int
	for _, fi := range fields {
		for c := first[fi]; c < last[fi]; c++ {
			cols = append(cols, c)
		}
	}
	if cols == nil {
		return nil
	}
	return f.LoadColumns(ctx, cols)
}
