package compat_test

// Scan exactness against Lance 12 (issue 13, "How it is checked"): on
// random tables Lance 12 wrote (storage versions 2.0, 2.1, 2.2; several fragments, nulls, NaNs of both
// signs, ±0, ±Inf, empty and multi-byte strings, deletions, stable row ids
// on half of them), our pruned scan with --where P returns the same rows —
// same row addresses, same values, same row ids — as Lance 12's
// query().where(P), for a generated predicate suite with AND / OR / NOT
// combinations. All queries go through one serving peer process.
// LANCEKEEPER_SCAN_FULL=1 runs the long suite (50 tables, ≥ 1,000
// predicates); the default is a 12-table sample.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/scan"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

type scanResult struct {
	addrs []uint64
	ids   []uint64
	rows  [][]string
}

func ourScan(ctx context.Context, dir, where string, noPrune bool) (*scanResult, error) {
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	s, err := scan.New(ctx, d, scan.Options{Filter: where, WithRowID: true, WithRowAddr: true, NoPrune: noPrune, BatchSize: 37})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rd := s.Reader(ctx)
	defer rd.Release()
	out := &scanResult{}
	for rd.Next() {
		rec := rd.RecordBatch()
		nc := int(rec.NumCols())
		ids := rec.Column(nc - 2).(*array.Uint64)
		addrs := rec.Column(nc - 1).(*array.Uint64)
		for i := 0; i < int(rec.NumRows()); i++ {
			out.ids = append(out.ids, ids.Value(i))
			out.addrs = append(out.addrs, addrs.Value(i))
			row := make([]string, nc-2)
			for j := 0; j < nc-2; j++ {
				if row[j], err = peerlance.Value(rec.Column(j), i); err != nil {
					return nil, err
				}
			}
			out.rows = append(out.rows, row)
		}
	}
	return out, rd.Err()
}

func lanceScan(ctx context.Context, p *peerlance.Peer, dir, where string) (*scanResult, error) {
	opts := []peerlance.ReadOption{peerlance.OrderByRowAddr()}
	if where != "" {
		opts = append(opts, peerlance.Where(where))
	}
	r, err := p.Rows(ctx, dir, opts...)
	if err != nil {
		return nil, err
	}
	out := &scanResult{}
	for i := range r.Rows {
		a, err := r.RowAddr(i)
		if err != nil {
			return nil, err
		}
		id, err := strconv.ParseUint(r.RowIDs[i], 10, 64)
		if err != nil {
			return nil, err
		}
		row, err := r.CanonicalRow(i)
		if err != nil {
			return nil, err
		}
		out.addrs, out.ids, out.rows = append(out.addrs, a), append(out.ids, id), append(out.rows, row)
	}
	return out, nil
}

func diffScan(a, b *scanResult) string {
	if !slices.Equal(a.addrs, b.addrs) {
		return fmt.Sprintf("row addresses differ: ours %d rows %v, Lance %d rows %v", len(a.addrs), head(a.addrs), len(b.addrs), head(b.addrs))
	}
	if !slices.Equal(a.ids, b.ids) {
		return fmt.Sprintf("row ids differ: ours %v, Lance %v", head(a.ids), head(b.ids))
	}
	for i := range a.rows {
		if !slices.Equal(a.rows[i], b.rows[i]) {
			return fmt.Sprintf("row %d (address %d): ours %v, Lance %v", i, a.addrs[i], a.rows[i], b.rows[i])
		}
	}
	return ""
}

func head(v []uint64) []uint64 { return v[:min(len(v), 12)] }

// scanPredicates builds n predicates over the table's columns: single
// terms of the zonemap suite and AND / OR / NOT combinations of them.
func scanPredicates(rng *mrand.Rand, recs []arrow.RecordBatch, n int) []string {
	sch := zmSchema()
	var singles []string
	for ci, f := range sch.Fields() {
		if ci == 0 || f.Type.ID() == arrow.BINARY {
			continue
		}
		var lits []string
		for _, r := range recs {
			lits = append(lits, zmLiterals(r, ci)...)
		}
		for _, p := range zmPredicates(rng, f.Name, f.Type, lits) {
			singles = append(singles, p)
		}
	}
	singles = append(singles, "s NOT LIKE 'b%'", "i32 NOT IN (7, 8, 9)", "i32 != 3", "NOT (f64 > 0.0)", "b", "NOT b", "b IS NOT TRUE", "u64 NOT BETWEEN 10 AND 400")
	out := make([]string, 0, n)
	for len(out) < n {
		a, b := singles[rng.IntN(len(singles))], singles[rng.IntN(len(singles))]
		switch rng.IntN(5) {
		case 0, 1:
			out = append(out, a)
		case 2:
			out = append(out, "("+a+") AND ("+b+")")
		case 3:
			out = append(out, "("+a+") OR ("+b+")")
		case 4:
			out = append(out, "NOT ("+a+")")
		}
	}
	return out
}

func TestScan_MatchesLance12Where_RandomTables(t *testing.T) {
	p := peerlance.ServeForTest(t)
	ctx := context.Background()
	tables, preds := 12, 20
	if os.Getenv("LANCEKEEPER_SCAN_FULL") == "1" {
		tables, preds = 50, 24
	}
	total, unsupported := 0, 0
	for ti := 0; ti < tables; ti++ {
		seed := uint64(1000 + ti)
		rng := mrand.New(mrand.NewPCG(seed, 13))
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("t%d.lance", ti))
		var recs []arrow.RecordBatch
		first := int64(0)
		frags := 1 + rng.IntN(3)
		for fi := 0; fi < frags; fi++ {
			n := 20 + rng.IntN(60)
			rec := zmBatch(rng, first, n)
			first += int64(n)
			recs = append(recs, rec)
			ipc := filepath.Join(t.TempDir(), fmt.Sprintf("b%d.arrow", fi))
			if err := peerlance.WriteIPCFile(ipc, rec.Schema(), rec); err != nil {
				t.Fatal(err)
			}
			var err error
			if fi == 0 {
				_, err = p.Create(ctx, dir, ipc, peerlance.CreateOptions{StorageVersion: []string{"2.0", "2.1", "2.2"}[ti%3], StableRowIDs: ti%2 == 1})
			} else {
				_, err = p.Append(ctx, dir, ipc)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(3) > 0 {
			if _, err := p.Delete(ctx, dir, fmt.Sprintf("id %% %d = %d", 3+rng.IntN(5), rng.IntN(3))); err != nil {
				t.Fatal(err)
			}
		}
		for _, pred := range append([]string{""}, scanPredicates(rng, recs, preds)...) {
			want, err := lanceScan(ctx, p, dir, pred)
			var le *peerlance.LanceError
			if errors.As(err, &le) {
				// Lance refuses the predicate: so must we, or the predicate
				// uses something only our grammar has.
				if _, ferr := ourScan(ctx, dir, pred, false); ferr == nil {
					t.Logf("table %d: Lance 12 refuses %q (%v), we accept it", ti, pred, le)
				}
				unsupported++
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := ourScan(ctx, dir, pred, false)
			if errors.Is(err, filter.ErrSyntax) || errors.Is(err, filter.ErrType) {
				t.Errorf("table %d: %q: Lance 12 accepts it, we refuse: %v", ti, pred, err)
				continue
			}
			if err != nil {
				t.Fatalf("table %d: %q: %v", ti, pred, err)
			}
			total++
			if d := diffScan(got, want); d != "" {
				t.Errorf("table %d (seed %d, %s): --where %q: %s", ti, seed, dir, pred, d)
			}
		}
	}
	t.Logf("%d predicates compared over %d tables (%d refused by Lance 12)", total, tables, unsupported)
}
