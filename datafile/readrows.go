package datafile

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/internal/arrowconcat"
)

// RowRange is the half-open range [Start, End) of row offsets in a file.
type RowRange struct{ Start, End uint64 }

// Len is the number of rows in the range (0 when End <= Start).
func (r RowRange) Len() uint64 {
	if r.End <= r.Start {
		return 0
	}
	return r.End - r.Start
}

// ReadRequest selects what ReadRows decodes.
type ReadRequest struct {
	// Fields are indexes into Schema().Fields of top-level fields, in the
	// order the output record holds them. Nil means every top-level field.
	// In 2.1+ files a field whose ancestors are all structs (e.g. "s.x")
	// may be given too: only its own columns are read, and the output
	// column has the rows of the file (null where an ancestor is null).
	Fields []int
	// Ranges are the rows to decode: sorted, non-overlapping, non-empty,
	// each inside [0, NumRows()). Nil means every row.
	Ranges []RowRange
	ReadOptions
}

// ReadRows decodes the requested fields for the requested rows into one
// record; its rows are those of Ranges, in order, concatenated. It reads
// only the storage that holds those rows: the pages (2.0) or the
// mini-block chunks and full-zip spans (2.1+) that overlap a range, plus
// the page metadata they need.
func (f *File) ReadRows(ctx context.Context, req ReadRequest) (arrow.RecordBatch, error) {
	top := f.schema.TopLevel()
	fields := req.Fields
	if fields == nil {
		fields = top
	}
	isTop := make(map[int]bool, len(top))
	for _, fi := range top {
		isTop[fi] = true
	}
	for _, fi := range fields {
		if !isTop[fi] && !f.structChild(fi) {
			return nil, fmt.Errorf("datafile: %s: ReadRows: field index %d is neither a top-level field nor (2.1+ files) a field below structs only", f.path, fi)
		}
	}
	ranges := req.Ranges
	if ranges == nil {
		ranges = []RowRange{{0, f.numRows}}
	}
	var total uint64
	for i, r := range ranges {
		if req.Ranges == nil && f.numRows == 0 {
			break // a file without rows: every row is no row
		}
		if r.End <= r.Start || r.End > f.numRows || (i > 0 && r.Start < ranges[i-1].End) {
			return nil, fmt.Errorf("datafile: %s: ReadRows: range %d [%d, %d) is empty, unsorted, overlapping or past the file's %d rows",
				f.path, i, r.Start, r.End, f.numRows)
		}
		total += r.Len()
	}
	if err := f.loadFieldColumns(ctx, fields); err != nil {
		return nil, err
	}
	if f.version != V2_0 {
		afs := make([]arrow.Field, len(fields))
		for i, fi := range fields {
			af, err := f.schema.arrowField(fi, 0)
			if err != nil {
				return nil, withPath(err, f.path)
			}
			afs[i] = af
		}
		var cols []arrow.Array
		var err error
		if f.version == V0_1 {
			cols, err = f.readRowsLegacy(ctx, fields, afs, ranges, req.ReadOptions)
		} else {
			cols, err = f.readRows21(ctx, fields, afs, ranges, total, req.ReadOptions)
		}
		if err != nil {
			return nil, err
		}
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		md := arrow.MetadataFrom(f.schema.Metadata)
		return array.NewRecordBatch(arrow.NewSchema(afs, &md), cols, int64(total)), nil
	}
	// 2.0: decode whole columns, then slice.
	d, err := f.newDecoder(ctx, req.ReadOptions)
	if err != nil {
		return nil, err
	}
	afs := make([]arrow.Field, len(fields))
	cols := make([]arrow.Array, len(fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, fi := range fields {
		af, err := f.schema.arrowField(fi, 0)
		if err != nil {
			return nil, withPath(err, f.path)
		}
		afs[i] = af
		whole, err := d.field(fi, af.Type)
		if err != nil {
			return nil, withPath(err, f.path)
		}
		if n := whole.Len(); uint64(n) != f.numRows {
			whole.Release()
			return nil, withPath(formatErr(ErrMalformed, "field "+f.schema.Fields[fi].Name, -1,
				"column holds %d rows but the file has %d", n, f.numRows), f.path)
		}
		if len(ranges) == 1 && ranges[0].Start == 0 && ranges[0].End == f.numRows {
			cols[i] = whole
			continue
		}
		parts := make([]arrow.Array, len(ranges))
		for j, r := range ranges {
			parts[j] = array.NewSlice(whole, int64(r.Start), int64(r.End))
		}
		cols[i], err = arrowconcat.Exact(parts, d.mem)
		for _, p := range parts {
			p.Release()
		}
		whole.Release()
		if err != nil {
			return nil, fmt.Errorf("datafile: %s: ReadRows: %w", f.path, err)
		}
	}
	md := arrow.MetadataFrom(f.schema.Metadata)
	sch := arrow.NewSchema(afs, &md)
	return array.NewRecordBatch(sch, cols, int64(total)), nil
}

// structChild reports whether field fi of a 2.1+ file lies below structs
// only (no list, map or fixed-size list above it).
func (f *File) structChild(fi int) bool {
	if f.version == V2_0 || f.version == V0_1 || fi < 0 || fi >= len(f.schema.Fields) {
		return false
	}
	byID := map[int32]int{}
	for i := range f.schema.Fields {
		byID[f.schema.Fields[i].ID] = i
	}
	cur := fi
	for depth := 0; f.schema.Fields[cur].ParentID != -1; depth++ {
		p, ok := byID[f.schema.Fields[cur].ParentID]
		if !ok || depth > maxLayers {
			return false
		}
		lt, err := parseLogicalType(f.schema.Fields[p].LogicalType)
		if err != nil || lt.kind != lkStruct {
			return false
		}
		cur = p
	}
	return true
}
