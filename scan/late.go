package scan

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/internal/arrowconcat"
)

// Late materialization: with a filter, a chunk's filter columns are read
// and evaluated first; the other read columns are then read only for the
// rows that pass (the mini-block chunks holding them), or not at all when
// none does. A kept zone with few matches then costs its filter column,
// not every projected column. The filter is still evaluated exactly by
// emit on the rows finally assembled.

// maxLateRuns: when the selected rows of a chunk form more runs than
// this, the other columns are read for the whole chunk (scattered matches
// touch most mini-block chunks anyway, and every run is a range to decode).
const maxLateRuns = 8

// minLateRows: with smaller batches the second read request per chunk
// (and its per-page setup) costs more than the rows it saves.
const minLateRows = 512

// lateRead splits the read columns of one fragment into those the filter
// needs and the others.
type lateRead struct {
	fplan, rplan       []fileRead
	fmissing, rmissing []string
	fnames, rnames     []string
}

// latePlan returns the split, or nil when late materialization does not
// apply: no filter, batches under minLateRows, no column outside the
// filter's, or a file whose reads
// decode whole columns (2.0, legacy) so that fewer rows would not cost
// less.
func (r *reader) latePlan(fr *fragment, plan []fileRead, missing []string) *lateRead {
	s := r.s
	// a filter that can fail is evaluated in Lance's batches by emit
	// (filter.MayFail), never ahead of them
	if s.filter == nil || s.opts.BatchSize < minLateRows || s.filter.MayFail() {
		return nil
	}
	for _, fc := range plan {
		if v := fr.files[fc.fi].Version(); v == datafile.V2_0 || v == datafile.V0_1 {
			return nil
		}
	}
	fcols := s.filter.Columns()
	lp := &lateRead{}
	for _, fc := range plan {
		var f, o fileRead
		f.fi, o.fi = fc.fi, fc.fi
		for i, name := range fc.names {
			if slices.Contains(fcols, name) {
				f.fields, f.names = append(f.fields, fc.fields[i]), append(f.names, name)
			} else {
				o.fields, o.names = append(o.fields, fc.fields[i]), append(o.names, name)
			}
		}
		if len(f.names) > 0 {
			lp.fplan = append(lp.fplan, f)
		}
		if len(o.names) > 0 {
			lp.rplan = append(lp.rplan, o)
		}
	}
	for _, name := range missing {
		if slices.Contains(fcols, name) {
			lp.fmissing = append(lp.fmissing, name)
		} else {
			lp.rmissing = append(lp.rmissing, name)
		}
	}
	for _, name := range s.read {
		if slices.Contains(fcols, name) {
			lp.fnames = append(lp.fnames, name)
		} else {
			lp.rnames = append(lp.rnames, name)
		}
	}
	if len(lp.rnames) == 0 || len(lp.fnames) == 0 {
		return nil
	}
	return lp
}

// readLate reads the chunks of a fragment with late materialization.
func (r *reader) readLate(fr *fragment, chunks [][]datafile.RowRange, lp *lateRead, ids []uint64) error {
	s := r.s
	for _, c := range chunks {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		frec, err := r.readColumns(fr, c, lp.fplan, lp.fmissing, lp.fnames)
		if err != nil {
			return err
		}
		sel, err := r.selection(fr, frec, c)
		if err != nil {
			frec.Release()
			return err
		}
		// the selected rows as physical row ranges, and as runs of frec
		var sub []datafile.RowRange
		type run struct{ s, e int64 }
		var runs []run
		i := 0
		for _, rg := range c {
			for o := rg.Start; o < rg.End; o, i = o+1, i+1 {
				if !sel[i] {
					continue
				}
				if k := len(sub); k > 0 && sub[k-1].End == o && runs[k-1].e == int64(i) {
					sub[k-1].End++
					runs[k-1].e++
				} else {
					sub = append(sub, datafile.RowRange{Start: o, End: o + 1})
					runs = append(runs, run{int64(i), int64(i) + 1})
				}
			}
		}
		if len(sub) == 0 {
			frec.Release()
			continue // no row passes: the other columns are not read
		}
		ranges, cut := c, false
		if len(sub) <= maxLateRuns {
			// keep only the selected rows of the filter columns
			parts := make([]arrow.RecordBatch, len(runs))
			for k, rn := range runs {
				parts[k] = frec.NewSlice(rn.s, rn.e)
			}
			var part arrow.RecordBatch
			if len(parts) == 1 {
				part = parts[0]
			} else {
				part, err = concatRecords(parts, frec.Schema(), r.mem)
				for _, p := range parts {
					p.Release()
				}
				if err != nil {
					frec.Release()
					return err
				}
			}
			frec.Release()
			frec, ranges, cut = part, sub, true
		}
		orec, err := r.readColumns(fr, ranges, lp.rplan, lp.rmissing, lp.rnames)
		if err != nil {
			frec.Release()
			return err
		}
		rec, err := joinColumns(s.read, frec, orec)
		frec.Release()
		orec.Release()
		if err != nil {
			return fmt.Errorf("fragment %d: %w", fr.f.GetId(), err)
		}
		// the filter's answer is known: every row of a cut chunk passed
		r.presel = sel
		if cut {
			r.presel = allTrue(int(rec.NumRows()))
		}
		err = r.emit(fr, rec, ranges, ids)
		r.presel = nil
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// selection is which rows of rec (the physical rows of ranges) are not
// deleted and pass the filter.
func (r *reader) selection(fr *fragment, rec arrow.RecordBatch, ranges []datafile.RowRange) ([]bool, error) {
	var live []bool
	if fr.deleted != nil {
		live = make([]bool, rec.NumRows())
		i := 0
		for _, rg := range ranges {
			for o := rg.Start; o < rg.End; o, i = o+1, i+1 {
				live[i] = !fr.deleted.Contains(uint32(o))
			}
		}
	}
	m, err := r.s.filter.EvalLive(rec, live)
	if err != nil {
		return nil, fmt.Errorf("fragment %d: %w", fr.f.GetId(), err)
	}
	for i := range live {
		if !live[i] {
			m[i] = false
		}
	}
	return m, nil
}

// concatRecords concatenates record batches of one schema.
func concatRecords(parts []arrow.RecordBatch, sch *arrow.Schema, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, sch.NumFields())
	var rows int64
	for _, p := range parts {
		rows += p.NumRows()
	}
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j := range cols {
		arrs := make([]arrow.Array, len(parts))
		for k, p := range parts {
			arrs[k] = p.Column(j)
		}
		c, err := arrowconcat.Exact(arrs, mem)
		if err != nil {
			return nil, err
		}
		cols[j] = c
	}
	return array.NewRecordBatch(sch, cols, rows), nil
}

// joinColumns assembles the columns names from a and b (same rows).
func joinColumns(names []string, a, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if a.NumRows() != b.NumRows() {
		return nil, fmt.Errorf("filter columns have %d rows, the other columns %d", a.NumRows(), b.NumRows())
	}
	fields := make([]arrow.Field, 0, len(names))
	cols := make([]arrow.Array, 0, len(names))
	for _, name := range names {
		src := a
		idx := a.Schema().FieldIndices(name)
		if len(idx) == 0 {
			src, idx = b, b.Schema().FieldIndices(name)
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("column %q was not read", name)
		}
		fields = append(fields, src.Schema().Field(idx[0]))
		cols = append(cols, src.Column(idx[0]))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, a.NumRows()), nil
}

func allTrue(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}
