package scan

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/internal/arrowconcat"
)

// Reader returns a streaming reader of the scan's rows: fragments in
// manifest order, rows in physical order, deleted rows dropped, the
// filter evaluated exactly on decoded rows (pruning only decides what is
// read, never the answer). Up to readAhead fragments are planned and
// decoded ahead of the one returned (their kept rows of the read columns
// are held until returned).
// The reader stops at ctx's cancellation with ctx's error in Err.
func (s *Scanner) Reader(ctx context.Context) array.RecordReader {
	r := &reader{s: s, mem: memory.DefaultAllocator}
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.refs.Store(1)
	return r
}

// readAhead is how many fragments the reader plans and decodes ahead of
// the one it returns (each in its own goroutine, results in manifest
// order): reads of one fragment overlap the decoding of another.
const readAhead = 3

// fragOut is what one fragment yields: its batches, or an error.
type fragOut struct {
	recs []arrow.RecordBatch
	err  error
}

type reader struct {
	s      *Scanner
	ctx    context.Context
	cancel context.CancelFunc
	mem    memory.Allocator
	refs   atomic.Int64
	ahead  []chan fragOut // fragments in flight, in manifest order

	next    int // next fragment
	cur     arrow.RecordBatch
	pending []arrow.RecordBatch
	emitted int64
	err     error
	done    bool
	// presel, when set, is the filter's answer for the rows emit gets
	// (late materialization evaluated it on the chunk's filter columns)
	presel []bool
}

func (r *reader) Retain() { r.refs.Add(1) }
func (r *reader) Release() {
	if r.refs.Add(-1) == 0 {
		r.clear()
		for _, p := range r.pending {
			p.Release()
		}
		r.pending = nil
		r.stopAhead()
	}
}

// stopAhead cancels the fragments in flight and releases what they made.
func (r *reader) stopAhead() {
	r.cancel()
	for _, c := range r.ahead {
		for _, rec := range (<-c).recs {
			rec.Release()
		}
	}
	r.ahead = nil
}

// fill starts fragments until readAhead are in flight.
func (r *reader) fill() {
	frags := r.s.m.GetFragments()
	for len(r.ahead) < readAhead && r.next < len(frags) {
		f := frags[r.next]
		r.next++
		c := make(chan fragOut, 1)
		r.ahead = append(r.ahead, c)
		go func() {
			w := &reader{s: r.s, ctx: r.ctx, mem: r.mem}
			fr, err := r.s.prepare(r.ctx, f)
			if err == nil {
				err = w.readFragment(fr)
				fr.close()
			}
			if err != nil {
				for _, rec := range w.pending {
					rec.Release()
				}
				w.pending = nil
			}
			c <- fragOut{recs: w.pending, err: err}
		}()
	}
}

func (r *reader) Schema() *arrow.Schema          { return r.s.out }
func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *reader) Record() arrow.RecordBatch      { return r.cur }
func (r *reader) Err() error                     { return r.err }
func (r *reader) clear() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *reader) Next() bool {
	r.clear()
	for {
		if r.err != nil || r.done {
			return false
		}
		if err := r.ctx.Err(); err != nil {
			r.err = err
			return false
		}
		if r.s.opts.Limit > 0 && r.emitted >= r.s.opts.Limit {
			r.done = true
			r.stopAhead()
			return false
		}
		if len(r.pending) > 0 {
			rec := r.pending[0]
			r.pending = r.pending[1:]
			if r.s.opts.Limit > 0 && r.emitted+rec.NumRows() > r.s.opts.Limit {
				cut := rec.NewSlice(0, r.s.opts.Limit-r.emitted)
				rec.Release()
				rec = cut
			}
			r.emitted += rec.NumRows()
			r.cur = rec
			return true
		}
		r.fill()
		if len(r.ahead) == 0 {
			r.done = true
			r.cancel()
			return false
		}
		out := <-r.ahead[0]
		r.ahead = r.ahead[1:]
		if out.err != nil {
			r.err = out.err
			r.stopAhead()
			return false
		}
		r.pending = out.recs
		r.fill()
	}
}

// lanceBatch is the number of rows Lance 12 evaluates a filter on at a
// time (measured through the peer: a division by zero in the first row of
// a fragment fails "id >= 819 AND id / z > 1" and not "id >= 820 AND
// ...", DataFusion's one-fifth pre-selection of a 1,024-row batch).
const lanceBatch = 1024

// readFragment decodes the kept ranges of a fragment batch by batch and
// queues the selected rows.
func (r *reader) readFragment(fr *fragment) error {
	if len(fr.kept) == 0 {
		return nil
	}
	s := r.s
	var ids []uint64
	if s.opts.WithRowID {
		var err error
		ids, err = rowIDs(r.ctx, fr.f, fr.physRows, func(ctx context.Context, path string, off, size uint64) ([]byte, error) {
			return s.st.GetRange(ctx, path, int64(off), int64(size))
		})
		if err != nil {
			return err
		}
	}
	// Chunks of at most BatchSize rows within the kept ranges.
	bs := uint64(s.opts.BatchSize)
	var chunks [][]datafile.RowRange
	var cur []datafile.RowRange
	var n uint64
	if s.filter != nil && s.filter.MayFail() {
		// Lance 12's batches: lanceBatch rows that are not deleted, from
		// the fragment's start (whether a division by zero fails the
		// query depends on them, through AND/OR short-circuits).
		for _, kr := range fr.kept {
			st := kr.Start
			for o := kr.Start; o < kr.End; o++ {
				if fr.deleted == nil || !fr.deleted.Contains(uint32(o)) {
					n++
				}
				if n == lanceBatch {
					cur = append(cur, datafile.RowRange{Start: st, End: o + 1})
					chunks = append(chunks, cur)
					cur, n, st = nil, 0, o+1
				}
			}
			if st < kr.End {
				cur = append(cur, datafile.RowRange{Start: st, End: kr.End})
			}
		}
		bs = 0
	}
	for _, kr := range fr.kept {
		if bs == 0 {
			break
		}
		for st := kr.Start; st < kr.End; {
			e := min(kr.End, st+(bs-n))
			cur = append(cur, datafile.RowRange{Start: st, End: e})
			n += e - st
			st = e
			if n == bs {
				chunks = append(chunks, cur)
				cur, n = nil, 0
			}
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	// Which file holds which read column.
	type fileCols struct {
		fi     int
		fields []int
		names  []string
	}
	var plan []*fileCols
	byFile := map[int]*fileCols{}
	var missing []string
	for _, c := range s.read {
		fi := s.fileFor(fr.f, s.topIDs[c])
		if fi < 0 {
			missing = append(missing, c) // a column added later: all null
			continue
		}
		df, err := s.file(r.ctx, fr, fi)
		if err != nil {
			return err
		}
		idx := -1
		sch := df.Schema()
		for _, ti := range sch.TopLevel() {
			if sch.Fields[ti].ID == s.topIDs[c] {
				idx = ti
			}
		}
		if idx < 0 {
			return fmt.Errorf("fragment %d: data file %s does not hold column %q (field id %d) the manifest places there", fr.f.GetId(), df.Path(), c, s.topIDs[c])
		}
		fc := byFile[fi]
		if fc == nil {
			fc = &fileCols{fi: fi}
			byFile[fi] = fc
			plan = append(plan, fc)
		}
		fc.fields = append(fc.fields, idx)
		fc.names = append(fc.names, c)
	}
	// 2.0 files decode whole columns per request: read all kept ranges at
	// once and cut the result, instead of re-decoding per chunk.
	whole := false
	for _, fc := range plan {
		if fr.files[fc.fi].Version() == datafile.V2_0 {
			whole = true
		}
	}
	if whole && len(chunks) > 1 {
		var all []datafile.RowRange
		for _, c := range chunks {
			all = append(all, c...)
		}
		all = mergeRanges(all)
		rec, err := r.readChunk(fr, all, plan2(plan, func(fc *fileCols) (int, []int, []string) { return fc.fi, fc.fields, fc.names }), missing)
		if err != nil {
			return err
		}
		defer rec.Release()
		off := int64(0)
		for _, c := range chunks {
			var k int64
			for _, rg := range c {
				k += int64(rg.Len())
			}
			part := rec.NewSlice(off, off+k)
			err := r.emit(fr, part, c, ids)
			part.Release()
			if err != nil {
				return err
			}
			off += k
		}
		return nil
	}
	if lp := r.latePlan(fr, plan2(plan, func(fc *fileCols) (int, []int, []string) { return fc.fi, fc.fields, fc.names }), missing); lp != nil {
		return r.readLate(fr, chunks, lp, ids)
	}
	for _, c := range chunks {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		rec, err := r.readChunk(fr, c, plan2(plan, func(fc *fileCols) (int, []int, []string) { return fc.fi, fc.fields, fc.names }), missing)
		if err != nil {
			return err
		}
		err = r.emit(fr, rec, c, ids)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

type fileRead struct {
	fi     int
	fields []int
	names  []string
}

func plan2[T any](in []T, f func(T) (int, []int, []string)) []fileRead {
	out := make([]fileRead, len(in))
	for i, x := range in {
		out[i].fi, out[i].fields, out[i].names = f(x)
	}
	return out
}

func mergeRanges(rs []datafile.RowRange) []datafile.RowRange {
	var out []datafile.RowRange
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].End == r.Start {
			out[n-1].End = r.End
			continue
		}
		out = append(out, r)
	}
	return out
}

// readChunk reads the read columns for the row ranges into one record
// whose columns are named by their top-level names.
func (r *reader) readChunk(fr *fragment, ranges []datafile.RowRange, plan []fileRead, missing []string) (arrow.RecordBatch, error) {
	return r.readColumns(fr, ranges, plan, missing, r.s.read)
}

// readColumns is readChunk for the columns names (a subset of the read
// columns, which plan and missing cover), in that order.
func (r *reader) readColumns(fr *fragment, ranges []datafile.RowRange, plan []fileRead, missing []string, names []string) (arrow.RecordBatch, error) {
	s := r.s
	var rows int64
	for _, rg := range ranges {
		rows += int64(rg.Len())
	}
	cols := map[string]arrow.Array{}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, fc := range plan {
		df := fr.files[fc.fi]
		rec, err := df.ReadRows(r.ctx, datafile.ReadRequest{Fields: fc.fields, Ranges: ranges})
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", fr.f.GetId(), err)
		}
		if rec.NumRows() != rows {
			rec.Release()
			return nil, fmt.Errorf("fragment %d: %s returned %d rows for %d requested", fr.f.GetId(), df.Path(), rec.NumRows(), rows)
		}
		for i, name := range fc.names {
			c := rec.Column(i)
			c.Retain()
			f, _ := s.table.FieldsByName(name)
			if !arrow.TypeEqual(c.DataType(), f[0].Type) {
				// Schema evolution inside a struct (renamed or dropped
				// fields): match the file's children by field id.
				cc, err := s.conform(c, df.Schema(), fc.fields[i], s.topIDs[name], f[0].Type)
				c.Release()
				if err != nil {
					rec.Release()
					return nil, fmt.Errorf("fragment %d: column %q: %w", fr.f.GetId(), name, err)
				}
				c = cc
			}
			cols[name] = c
		}
		rec.Release()
	}
	for _, name := range missing {
		f, _ := s.table.FieldsByName(name)
		cols[name] = array.MakeArrayOfNull(r.mem, f[0].Type, int(rows))
	}
	fields := make([]arrow.Field, len(names))
	arrs := make([]arrow.Array, len(names))
	for i, name := range names {
		f, _ := s.table.FieldsByName(name)
		fields[i] = f[0]
		a := cols[name]
		if !arrow.TypeEqual(a.DataType(), f[0].Type) {
			return nil, fmt.Errorf("fragment %d: column %q decodes as %s, the schema says %s", fr.f.GetId(), name, a.DataType(), f[0].Type)
		}
		arrs[i] = a
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, rows), nil
}

// emit applies deletions and the filter to a decoded chunk and queues the
// projected rows.
func (r *reader) emit(fr *fragment, rec arrow.RecordBatch, ranges []datafile.RowRange, ids []uint64) error {
	s := r.s
	n := int(rec.NumRows())
	offsets := make([]uint64, 0, n)
	for _, rg := range ranges {
		for o := rg.Start; o < rg.End; o++ {
			offsets = append(offsets, o)
		}
	}
	sel := make([]bool, n)
	for i := range sel {
		sel[i] = fr.deleted == nil || !fr.deleted.Contains(uint32(offsets[i]))
	}
	if m := r.presel; m != nil {
		for i := range sel {
			sel[i] = sel[i] && m[i]
		}
	} else if s.filter != nil {
		m, err := s.filter.EvalLive(rec, sel)
		if err != nil {
			return fmt.Errorf("fragment %d: %w", fr.f.GetId(), err)
		}
		for i := range sel {
			sel[i] = sel[i] && m[i]
		}
	}
	// Runs of selected rows.
	type run struct{ s, e int }
	var runs []run
	count := 0
	for i := 0; i < n; i++ {
		if !sel[i] {
			continue
		}
		count++
		if k := len(runs); k > 0 && runs[k-1].e == i {
			runs[k-1].e++
		} else {
			runs = append(runs, run{i, i + 1})
		}
	}
	if count == 0 {
		return nil
	}
	var mask arrow.Array
	defer func() {
		if mask != nil {
			mask.Release()
		}
	}()
	take := func(a arrow.Array) (arrow.Array, error) {
		if len(runs) == 1 && runs[0].s == 0 && runs[0].e == n {
			a.Retain()
			return a, nil
		}
		if len(runs) > manyRuns && !hasBool(a.DataType()) {
			// scattered rows: one filter kernel pass instead of a slice per run
			if mask == nil {
				b := array.NewBooleanBuilder(r.mem)
				b.AppendValues(sel, nil)
				mask = b.NewArray()
				b.Release()
			}
			if out, err := compute.FilterArray(r.ctx, a, mask, *compute.DefaultFilterOptions()); err == nil {
				return out, nil
			}
			// a type the kernel does not take: slices below
		}
		parts := make([]arrow.Array, len(runs))
		for i, rn := range runs {
			parts[i] = array.NewSlice(a, int64(rn.s), int64(rn.e))
		}
		defer func() {
			for _, p := range parts {
				p.Release()
			}
		}()
		return arrowconcat.Exact(parts, r.mem)
	}
	out := make([]arrow.Array, 0, len(s.out.Fields()))
	release := func() {
		for _, a := range out {
			a.Release()
		}
	}
	for _, p := range s.proj {
		idx := rec.Schema().FieldIndices(p.path[0])
		a := rec.Column(idx[0])
		var col arrow.Array
		if len(p.path) > 1 {
			var err error
			col, err = nested(a, p.path[1:], r.mem)
			if err != nil {
				release()
				return err
			}
		} else {
			a.Retain()
			col = a
		}
		t, err := take(col)
		col.Release()
		if err != nil {
			release()
			return err
		}
		out = append(out, t)
	}
	addU64 := func(v func(off uint64) uint64) {
		b := array.NewUint64Builder(r.mem)
		defer b.Release()
		b.Reserve(count)
		for i := 0; i < n; i++ {
			if sel[i] {
				b.UnsafeAppend(v(offsets[i]))
			}
		}
		out = append(out, b.NewArray())
	}
	addr := func(off uint64) uint64 { return fr.f.GetId()<<32 | off }
	if s.opts.WithRowID {
		if ids != nil {
			addU64(func(off uint64) uint64 { return ids[off] })
		} else {
			addU64(addr)
		}
	}
	if s.opts.WithRowAddr {
		addU64(addr)
	}
	res := array.NewRecordBatch(s.out, out, int64(count))
	release()
	if bs := s.opts.BatchSize; count > bs { // a lanceBatch chunk: cut to BatchSize
		for o := 0; o < count; o += bs {
			r.pending = append(r.pending, res.NewSlice(int64(o), int64(min(o+bs, count))))
		}
		res.Release()
		return nil
	}
	r.pending = append(r.pending, res)
	return nil
}

// manyRuns: above this many runs of selected rows in a batch, emit uses
// the Arrow filter kernel rather than concatenating one slice per run.
const manyRuns = 16

// nested extracts a struct descendant, null where an ancestor is null.
func nested(a arrow.Array, path []string, mem memory.Allocator) (arrow.Array, error) {
	st, ok := a.(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("scan: %s is not a struct", a.DataType())
	}
	fi, ok := st.DataType().(*arrow.StructType).FieldIdx(path[0])
	if !ok {
		return nil, fmt.Errorf("scan: no field %q", path[0])
	}
	child := st.Field(fi)
	var out arrow.Array
	if st.NullN() == 0 {
		child.Retain()
		out = child
	} else {
		// AND the parent's validity into the child's.
		n := child.Len()
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		nulls := 0
		for i := 0; i < n; i++ {
			if st.IsValid(i) && child.IsValid(i) {
				bitutil.SetBit(bm, i)
			} else {
				nulls++
			}
		}
		cd := child.Data()
		bufs := append([]*memory.Buffer{memory.NewBufferBytes(bm)}, cd.Buffers()[1:]...)
		// The new bitmap starts at bit 0: rebase a sliced child first.
		if cd.Offset() != 0 {
			cc, err := arrowconcat.Exact([]arrow.Array{child}, mem)
			if err != nil {
				return nil, err
			}
			defer cc.Release()
			cd = cc.Data()
			bufs = append([]*memory.Buffer{memory.NewBufferBytes(bm)}, cd.Buffers()[1:]...)
		}
		d := array.NewData(cd.DataType(), n, bufs, cd.Children(), nulls, 0)
		if dict := cd.Dictionary(); dict != nil {
			d.SetDictionary(dict)
		}
		out = array.MakeFromData(d)
		d.Release()
	}
	if len(path) == 1 {
		return out, nil
	}
	defer out.Release()
	return nested(out, path[1:], mem)
}

var _ = filter.Range{}

// conform maps an array decoded with the file's field fi to the table's
// type want for field id id: struct children are matched by field id
// (renamed children take the table's name, dropped ones go, added ones
// are null).
func (s *Scanner) conform(a arrow.Array, fsch *datafile.Schema, fi int, id int32, want arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), want) {
		a.Retain()
		return a, nil
	}
	st, ok := a.(*array.Struct)
	wt, ok2 := want.(*arrow.StructType)
	if !ok || !ok2 || fi < 0 || fi >= len(fsch.Fields) {
		return nil, fmt.Errorf("decodes as %s, the schema says %s", a.DataType(), want)
	}
	if st.Data().Offset() != 0 {
		cc, err := arrowconcat.Exact([]arrow.Array{st}, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		defer cc.Release()
		st = cc.(*array.Struct)
	}
	kids := s.children[id]
	if len(kids) != wt.NumFields() {
		return nil, fmt.Errorf("the schema's struct has %d children, the manifest %d", wt.NumFields(), len(kids))
	}
	cols := make([]arrow.Array, len(kids))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, kid := range kids {
		wf := wt.Field(j)
		for k, ci := range fsch.Fields[fi].Children {
			if fsch.Fields[ci].ID == kid && k < st.NumField() {
				c, err := s.conform(st.Field(k), fsch, ci, kid, wf.Type)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", wf.Name, err)
				}
				cols[j] = c
			}
		}
		if cols[j] == nil {
			cols[j] = array.MakeArrayOfNull(memory.DefaultAllocator, wf.Type, st.Len())
		}
	}
	var nulls *memory.Buffer
	if st.NullN() > 0 {
		nulls = st.Data().Buffers()[0]
	}
	return array.NewStructArrayWithFieldsAndNulls(cols, wt.Fields(), nulls, st.NullN(), 0)
}

// hasBool reports whether dt is or holds a Boolean: arrow-go's filter
// kernel drops a Boolean array's validity (a selected true came out null:
// TestArrowFilterKernelLosesBooleanNulls), so such columns take the
// slice-and-concatenate path.
func hasBool(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return true
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if hasBool(f.Type) {
				return true
			}
		}
	case *arrow.DictionaryType:
		return hasBool(t.ValueType)
	}
	return false
}
