package lancekeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/scan"
)

// scanner prepares a scan of this exact version; filter errors match
// ErrInvalidPredicate as well as filter's sentinels.
func (d *Dataset) scanner(ctx context.Context, o scan.Options) (*scan.Scanner, error) {
	o.Ref = d.ref()
	sc, err := scan.New(ctx, d.h.ds, o)
	if err != nil {
		return nil, predicateErr(err)
	}
	return sc, nil
}

// predicateErr makes the filter package's errors match ErrInvalidPredicate
// too.
func predicateErr(err error) error {
	if errors.Is(err, filter.ErrSyntax) || errors.Is(err, filter.ErrType) {
		return fmt.Errorf("%w: %w", ErrInvalidPredicate, err)
	}
	return err
}

// Scan reads this version's rows as a stream of record batches, with
// bounded memory: fragments in manifest order, rows in physical order,
// deleted rows dropped. Options: Where (a predicate evaluated exactly on
// the decoded rows; zones and fragments its Pruning rules out are not
// read), WithColumns (projection, "a.b" for nested fields), WithLimit,
// WithRowID (adds _rowid, the stable row id or else the row address, as
// Lance names it). Base paths are resolved inside. Release the reader when
// done; a read error is in its Err.
func (d *Dataset) Scan(ctx context.Context, opts ...Option) (array.RecordReader, error) {
	s, err := collect("Scan", useScan, opts)
	if err != nil {
		return nil, err
	}
	sc, err := d.scanner(ctx, scan.Options{Filter: s.where, Columns: s.columns, Limit: s.limit, WithRowID: s.rowID})
	if err != nil {
		return nil, err
	}
	r := &scanReader{RecordReader: sc.Reader(ctx), sc: sc}
	r.refs.Store(1)
	return r, nil
}

// scanReader closes the scanner when its last reference is released.
type scanReader struct {
	array.RecordReader
	sc    *scan.Scanner
	refs  atomic.Int64
	close sync.Once
}

func (r *scanReader) Retain() {
	r.refs.Add(1)
	r.RecordReader.Retain()
}

func (r *scanReader) Release() {
	r.RecordReader.Release()
	if r.refs.Add(-1) == 0 {
		r.close.Do(func() { r.sc.Close() })
	}
}

// Where filters Scan with a Lance/DataFusion SQL predicate (see Prune).
func Where(predicate string) Option {
	return Option{name: "Where", use: useScan, set: func(s *settings) { s.where = predicate }}
}

// WithColumns projects Scan on these columns ("a.b" for a nested field,
// output under that name); by default every top-level column.
func WithColumns(columns ...string) Option {
	cols := slices.Clone(columns)
	return Option{name: "WithColumns", use: useScan, set: func(s *settings) { s.columns = cols }}
}

// WithLimit stops Scan after n rows.
func WithLimit(n int64) Option {
	return Option{name: "WithLimit", use: useScan, set: func(s *settings) { s.limit = n }}
}

// WithRowID adds the _rowid column to Scan's output.
func WithRowID() Option {
	return Option{name: "WithRowID", use: useScan, set: func(s *settings) { s.rowID = true }}
}
