package scan

import (
	"context"
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/snapshot"
)

// DeleteResult reports a delete by predicate.
type DeleteResult struct {
	// ReadVersion is the version the rows were found in.
	ReadVersion uint64
	// Rows is the number of rows the predicate matched (live rows only).
	Rows uint64
	// Fragments is the number of fragments touched.
	Fragments int
	// Commit is the committed version; nil when nothing matched (nothing
	// is committed then).
	Commit *commit.Result
}

// MatchRows runs the pruned scan of s's version for the filter and returns
// the matching live rows as local row offsets per fragment id, the input
// of commit.NewDelete. Zones pruning rules out are never read.
func MatchRows(ctx context.Context, d *snapshot.Dataset, ref snapshot.Ref, where string) (map[uint64]*roaring.Bitmap, *snapshot.Snapshot, error) {
	if where == "" {
		return nil, nil, fmt.Errorf("%w: a delete needs a predicate", ErrBadOptions)
	}
	s, err := New(ctx, d, Options{Ref: ref, Columns: []string{}, Filter: where, WithRowAddr: true, BatchSize: 64 << 10})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	rd := s.Reader(ctx)
	defer rd.Release()
	rows := map[uint64]*roaring.Bitmap{}
	for rd.Next() {
		rec := rd.RecordBatch()
		addrs := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
		for i := 0; i < addrs.Len(); i++ {
			a := addrs.Value(i)
			bm := rows[a>>32]
			if bm == nil {
				bm = roaring.New()
				rows[a>>32] = bm
			}
			bm.Add(uint32(a))
		}
	}
	if err := rd.Err(); err != nil {
		return nil, nil, err
	}
	return rows, s.snap, nil
}

// Delete deletes the rows of the latest version of branch ("" for main)
// that match the predicate: it finds them with the pruned scan, writes one
// new deletion file per touched fragment (.arrow or .bin, as
// manifest.EncodeDeletionFile chooses; a fragment whose rows all go is
// removed) and commits a Delete transaction through commit, which rebases
// it over concurrent commits as the conflict matrix allows (a concurrent
// delete of the same fragment is merged, a rewrite of it is a conflict).
func Delete(ctx context.Context, d *snapshot.Dataset, branch, where string, opts commit.Options) (*DeleteResult, error) {
	rows, snap, err := MatchRows(ctx, d, snapshot.Ref{Branch: branch}, where)
	if err != nil {
		return nil, err
	}
	if _, err := d.Checkout(ctx, snapshot.Options{Ref: snapshot.Ref{Branch: branch, Version: snap.Version}, ForWrite: true}); err != nil {
		return nil, err
	}
	res := &DeleteResult{ReadVersion: snap.Version, Fragments: len(rows)}
	for _, bm := range rows {
		res.Rows += bm.GetCardinality()
	}
	if res.Rows == 0 {
		return res, nil
	}
	st, err := d.BranchStore(snap.Branch)
	if err != nil {
		return nil, err
	}
	txn, err := commit.NewDelete(ctx, st, snap.File, rows, where)
	if err != nil {
		return nil, err
	}
	if res.Commit, err = commit.Commit(ctx, st, txn, opts); err != nil {
		return nil, err
	}
	return res, nil
}

var _ = errors.New
