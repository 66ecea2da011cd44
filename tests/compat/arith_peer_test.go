package compat_test

// Filter arithmetic exactness against Lance 12 (issue 13, session 23):
// UInt64 mixed with signed integers (Decimal128 in Lance 12), Decimal128
// arithmetic and its precision/scale rules, IN / BETWEEN / IS [NOT] NULL
// on arithmetic, and division by zero: whether the query fails (Lance 12
// evaluates every non-deleted row in 1,024-row batches with DataFusion's
// AND/OR short-circuits; we must fail exactly then) and, when it does
// not, the same rows, values and row ids. Small random tables (several
// fragments, nulls, deletions, a zero divisor in some rows), one peer
// request per table.

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
	"github.com/lancekeeper/lancekeeper/zonemap"
)

func arSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "z", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, // zero in a few rows
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "dec2", Type: &arrow.Decimal128Type{Precision: 5, Scale: 3}, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "ts2", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "dur", Type: &arrow.DurationType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "dur2", Type: &arrow.DurationType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d32b", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "tms", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "dms", Type: &arrow.DurationType{Unit: arrow.Millisecond}, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
	}, nil)
}

func arBatch(rng *mrand.Rand, first int64, n int, zeroAt map[int64]bool) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), arSchema())
	defer b.Release()
	null := func() bool { return rng.IntN(9) == 0 }
	for r := 0; r < n; r++ {
		id := first + int64(r)
		b.Field(0).(*array.Int64Builder).Append(id)
		if null() {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int8Builder).Append([]int8{-128, 127, -1, 0, 1, 5, -7}[rng.IntN(7)])
		}
		if null() {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append([]int32{-2147483648, 2147483647, -3, 0, 1, 2, 40, int32(rng.IntN(2000) - 1000)}[rng.IntN(8)])
		}
		if null() {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append([]int64{-9223372036854775808, 9223372036854775807, -1, 0, 3, int64(rng.IntN(1e6)) - 5e5}[rng.IntN(6)])
		}
		if null() {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Uint8Builder).Append(uint8(rng.IntN(256)))
		}
		if null() {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Uint64Builder).Append([]uint64{0, 1, 18446744073709551615, 9223372036854775808, 9223372036854775807, uint64(rng.IntN(1000))}[rng.IntN(6)])
		}
		switch {
		case zeroAt[id]:
			b.Field(6).(*array.Int32Builder).Append(0)
		case null():
			b.Field(6).AppendNull()
		default:
			b.Field(6).(*array.Int32Builder).Append(int32(1 + rng.IntN(9)))
		}
		if null() {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.Float64Builder).Append(float64(rng.IntN(400)-200) / 8)
		}
		if null() {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Decimal128Builder).Append(decimal128.FromI64([]int64{0, 1, -1, 99999999999, -99999999999, int64(rng.IntN(200000) - 100000)}[rng.IntN(6)]))
		}
		if null() {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(rng.IntN(199999) - 99999)))
		}
		for c := 10; c <= 11; c++ { // around 2023-11-14 22:13:20 UTC, seconds apart
			if null() {
				b.Field(c).AppendNull()
			} else {
				v := 1700000000000000 + int64(rng.IntN(40)-20)*1000000 + int64(rng.IntN(3000)-1500)
				if rng.IntN(5) == 0 {
					v = int64(rng.IntN(6001) - 3000) // around the epoch, negative too
				}
				b.Field(c).(*array.TimestampBuilder).Append(arrow.Timestamp(v))
			}
		}
		for c := 12; c <= 13; c++ {
			switch {
			case null():
				b.Field(c).AppendNull()
			case rng.IntN(40) == 0: // overflows when added to a timestamp
				b.Field(c).(*array.DurationBuilder).Append(arrow.Duration(9223372036854000000))
			default:
				b.Field(c).(*array.DurationBuilder).Append(arrow.Duration(int64(rng.IntN(30)-10) * 1000000))
			}
		}
		for c := 14; c <= 15; c++ { // around 2022-01-08
			if null() {
				b.Field(c).AppendNull()
			} else {
				b.Field(c).(*array.Date32Builder).Append(arrow.Date32(19000 + rng.IntN(60) - 30))
			}
		}
		// tms: milliseconds without a zone, near ts (or near 0, where
		// truncating ts's negative microseconds matters)
		switch {
		case null():
			b.Field(16).AppendNull()
		case rng.IntN(4) == 0:
			b.Field(16).(*array.TimestampBuilder).Append(arrow.Timestamp(rng.IntN(7) - 3))
		default:
			b.Field(16).(*array.TimestampBuilder).Append(arrow.Timestamp(1700000000000 + int64(rng.IntN(40000)-20000)))
		}
		if null() {
			b.Field(17).AppendNull()
		} else {
			b.Field(17).(*array.DurationBuilder).Append(arrow.Duration(rng.IntN(9) - 4))
		}
		if null() {
			b.Field(18).AppendNull()
		} else {
			b.Field(18).(*array.Date64Builder).Append(arrow.Date64(int64(19000+rng.IntN(60)-30) * 86400000))
		}
	}
	return b.NewRecordBatch()
}

// arPredicates are the forms this test compares; %d takes a small random
// constant.
func arPredicates(rng *mrand.Rand) []string {
	k := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	return []string{
		// UInt64 with signed integers: Decimal128(20, 0), exact
		fmt.Sprintf("u64 + i32 > %d", k(-5, 50)), "u64 - 1 < 0", "u64 - i64 > 0", "u64 + i8 < 0",
		"u64 * i64 > 0", "u64 * i32 < 100", fmt.Sprintf("u64 %% (i32 + %d) > 0", k(2147483647-5, 2147483647)),
		"u64 / (i8 + 200) > 1000", "u64 - i64 = 18446744073709551615", "(u64 + i32) * 2 > u64",
		"u64 + i32 + i64 < 0", "u8 - 1 < 0", "u8 + 1 = 256", "u64 * u64 < u64",
		"u64 * i64 * i64 > 0", // 128-bit overflow: both fail
		// Decimal128 columns
		fmt.Sprintf("dec * 2 > %d", k(-100, 100)), "dec + 0.5 > 1", "dec + dec2 > 0", "dec - dec2 < dec",
		"dec * dec2 > 1", "dec / 3 > 0.33", "dec % 3 = 1", "-dec > dec", "dec + i32 > 0", "dec + u64 > 100",
		"dec / dec2 > 2", "dec % dec2 > 0", "dec = dec2", "dec > dec2", "dec + i64 < 0", "dec * 100000 > i64",
		"dec / 7 = 0", "dec * dec * dec > 0",
		// IN / BETWEEN / IS NULL on arithmetic
		fmt.Sprintf("id * 2 BETWEEN %d AND %d", k(0, 40), k(40, 120)), fmt.Sprintf("id %% 5 IN (%d, %d)", k(0, 4), k(0, 4)),
		"i32 + 1 NOT IN (1, 3, 41)", "i32 - id IS NULL", "(i8 * 2) IS NOT NULL", "id + 1 IN (1.5, 2, 7)",
		"u64 + i32 IN (0, 1, 41)", "dec * 2 BETWEEN -1 AND 2", "id - 3 NOT BETWEEN 0 AND 10", "id + 1 IN (NULL, 3)",
		"NOT (id % 4 IN (1, 2))", "f64 * 2 IN (1, 3, -5)",
		"i32 IN (i8, 2, id)", "i32 NOT IN (i8 * 2, 0)", "id BETWEEN i8 AND i32", "id NOT BETWEEN 3 AND i32 + 10",
		"i8 + 1 IN (i32, u8)", "ts IN (ts2, TIMESTAMP '2023-11-14 22:13:20')", "i32 BETWEEN i8 AND i8 * 100",
		"i8 IN (i8 * 2, 127)", "i8 BETWEEN -5 AND i8 + 100",
		// IN / BETWEEN literals Lance 12 cannot give the column's type: refused by both
		"ts IN (ts2, '2023-11-14 22:13:20')", "d32 BETWEEN d32b AND d32b + 5", "ts IN ('2023-11-14 22:13:20')",
		"d32 BETWEEN '2022-01-01' AND '2022-02-01'", "dec IN (1.5)", "dur IN (1000000)", "u8 IN (300)", "u8 IN (u8 + 300)",
		"id IN (1, 2.5)", "i32 BETWEEN 0 AND i32 + 1.5",
		// division by zero and the short-circuits
		"id / z > 1", "id % z = 0", fmt.Sprintf("id >= %d AND id / z > 1", k(0, 150)),
		fmt.Sprintf("id = %d AND id / z > 1", k(0, 60)), fmt.Sprintf("id < %d OR id / z > 1", k(0, 150)),
		"id >= 0 OR id / z > 1", "z IS NULL AND id / z > 1", "id / 0 > 1", "id > 100000 AND id / 0 > 1",
		"i32 / -1 > 0", "i8 / i8 > 0", "dec / z > 1", "(id > 100000 AND id / z > 1) OR id = 3",
		"i32 > 100000 AND id / z > 1", "i32 < 100000 OR id / z > 1", // NULLs on the left: no short-circuit
		"NOT (id < 100000) AND id % z = 0", "id = 1 AND (id < 0 OR id / z > 1)",
		// dates and times
		"ts - ts2 > dur", "ts - ts2 < dur", "ts - ts2 = dur2", "ts + dur > ts2", "ts - dur <= ts2", "dur + ts = ts2",
		"dur + dur2 > dur", "dur - dur2 < dur2", fmt.Sprintf("ts + dur > '2023-11-14 22:13:%02d'", k(0, 40)),
		fmt.Sprintf("ts - TIMESTAMP '2023-11-14 22:13:%02d' > dur", k(0, 40)), "ts + dur BETWEEN '2023-11-14 22:13:10' AND '2023-11-14 22:13:30'",
		"ts - dur IN ('2023-11-14 22:13:20', '2023-11-14 22:13:25')", "(ts - ts2) IS NULL", "ts - ts2 >= dur AND id > 3",
		fmt.Sprintf("d32 + %d = d32b", k(-5, 5)), "d32 - 30 < d32b", "1 + d32 > d32b", fmt.Sprintf("d32 - d32b > %d", k(-10, 10)),
		"d32 - d32b = 0", "d32 - DATE '2022-01-01' > 5", "d32 + (2 * 3) > '2022-01-20'", "d32 + 1 IN ('2022-01-09', '2022-01-20')",
		"d32 - d32b BETWEEN -3 AND 3",
		// timestamps of different units: the coarser one, truncated
		"ts > tms", "ts = tms", "ts <= tms", "tms < ts2", "ts - tms > dms", "tms - ts < dms", "ts - tms = dms",
		"ts + dms > ts2", "tms + dms > tms", "dms + ts <= ts", "(ts - tms) IS NULL", "ts - tms BETWEEN dms AND dms",
		// Date64: n days, date64 - date64 in days
		fmt.Sprintf("d64 + %d = DATE '2022-01-%02d'", k(-3, 3), k(5, 12)), "d64 - 1 < d64", "2 + d64 > d64", fmt.Sprintf("d64 - d64 = %d", k(0, 1)),
		"d64 + 30 > '2022-02-01'", "d64 - 3 IN ('2022-01-05', '2022-01-06')",
		// refused by both
		"ts + 1 > ts2", "dur * 2 > dur", "-ts < ts2", "d32 * 2 > d32b", "ts - ts2 > 5", "dur > 3000000 + dur2",
	}
}

func TestScan_ArithMatchesLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	ctx := context.Background()
	total, failed := 0, 0
	for ti := 0; ti < 4; ti++ { // storage versions 2.0, 2.1, 2.2; zeros and deletions vary
		rng := mrand.New(mrand.NewPCG(uint64(2300+ti), 23))
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("a%d.lance", ti))
		zeroAt := map[int64]bool{}
		if ti%3 != 2 {
			zeroAt[int64(rng.IntN(120))] = true
		}
		first := int64(0)
		for fi := 0; fi < 1+ti%3; fi++ {
			n := 30 + rng.IntN(60)
			rec := arBatch(rng, first, n, zeroAt)
			first += int64(n)
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
		if ti%2 == 0 { // deletions, sometimes of the zero divisor's row
			for id := range zeroAt {
				if _, err := p.Delete(ctx, dir, fmt.Sprintf("id = %d OR id %% 7 = 3", id)); err != nil {
					t.Fatal(err)
				}
			}
		}
		preds := arPredicates(rng)
		wants, lerrs, err := lanceScanMany(ctx, p, dir, preds)
		if err != nil {
			t.Fatal(err)
		}
		for pi, pred := range preds {
			got, ferr := ourScan(ctx, dir, pred, false)
			le := lerrs[pi]
			var pe *peerlance.LanceError
			lanceRefused := le != nil && (!errors.As(le, &pe) || isPlanError(pe.Message))
			switch {
			case lanceRefused:
				if ferr == nil {
					t.Errorf("table %d: %q: Lance 12 refuses it (%v), we accept it", ti, pred, le)
				}
			case le != nil: // Lance fails while reading (division by zero, overflow)
				failed++
				if !errors.Is(ferr, filter.ErrArithmetic) {
					t.Errorf("table %d: %q: Lance 12 fails (%v); we: %v", ti, pred, le, ferr)
				}
			case ferr != nil:
				t.Errorf("table %d: %q: Lance 12 returns %d rows, we fail: %v", ti, pred, len(wants[pi].addrs), ferr)
			default:
				total++
				if d := diffScan(got, wants[pi]); d != "" {
					t.Errorf("table %d (%s): --where %q: %s", ti, dir, pred, d)
				}
			}
		}
	}
	t.Logf("%d predicates compared, %d failing in both", total, failed)
}

// isPlanError tells Lance's refusals of a predicate (planning) from
// failures while reading rows.
func isPlanError(msg string) bool {
	for _, s := range []string{"Failed to get next batch", "Error applying filter expression"} {
		if strings.Contains(msg, s) {
			return false
		}
	}
	return true
}

// divTable is id 0..n-1 and z = 1 except 0 at the given ids.
func divTable(first, n int, zeros ...int) arrow.RecordBatch {
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "z", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.NewGoAllocator(), sch)
	defer b.Release()
	for i := first; i < first+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		z := int32(1)
		for _, k := range zeros {
			if k == i {
				z = 0
			}
		}
		b.Field(1).(*array.Int32Builder).Append(z)
	}
	return b.NewRecordBatch()
}

// divOutcomes compares, predicate by predicate, whether Lance 12 (on
// lanceDir) and we (on ourDir) fail, and the rows when neither does.
func divOutcomes(ctx context.Context, t *testing.T, p *peerlance.Peer, ourDir, lanceDir string, preds []string) {
	t.Helper()
	wants, lerrs, err := lanceScanMany(ctx, p, lanceDir, preds)
	if err != nil {
		t.Fatal(err)
	}
	for i, pred := range preds {
		got, ferr := ourScan(ctx, ourDir, pred, false)
		switch {
		case lerrs[i] != nil:
			if !errors.Is(ferr, filter.ErrArithmetic) {
				t.Errorf("%s: %q: Lance 12 fails (%v); we: %v", filepath.Base(ourDir), pred, lerrs[i], ferr)
			}
		case ferr != nil:
			t.Errorf("%s: %q: Lance 12 returns %d rows, we fail: %v", filepath.Base(ourDir), pred, len(wants[i].addrs), ferr)
		default:
			if d := diffScan(got, wants[i]); d != "" {
				t.Errorf("%s: %q: %s", filepath.Base(ourDir), pred, d)
			}
		}
	}
}

// TestScan_DivisionByZeroBatchesMatchLance12: Lance 12 evaluates a filter
// on 1,024 non-deleted rows at a time from each fragment's start, with
// DataFusion's short-circuits (AND: all false skips the right side, at
// most a fifth true evaluates it on those rows only); a zero divisor at
// row 0 with ids 1..100 deleted fails "id >= 919 AND id / z > 1" and not
// "id >= 920 AND ..." (peer-measured thresholds). On a table we write
// with v1 seeds and a ZoneMap index on id, the seeds must not skip the
// zone of the zero divisor (Lance 12 cannot read them) while the index
// does, for Lance 12 as for us (compared on the unflagged copy).
func TestScan_DivisionByZeroBatchesMatchLance12(t *testing.T) {
	p := peerlance.ServeForTest(t)
	ctx := context.Background()
	// Lance-written: two fragments of 1,500 rows, zeros at rows 0 and
	// 1,600 (the second fragment's row 100), ids 1..100 deleted.
	dir := filepath.Join(t.TempDir(), "lw.lance")
	for fi := 0; fi < 2; fi++ {
		rec := divTable(fi*1500, 1500, 0, 1600)
		ipc := filepath.Join(t.TempDir(), "d.arrow")
		if err := peerlance.WriteIPCFile(ipc, rec.Schema(), rec); err != nil {
			t.Fatal(err)
		}
		var err error
		if fi == 0 {
			_, err = p.Create(ctx, dir, ipc, peerlance.CreateOptions{StorageVersion: "2.2"})
		} else {
			_, err = p.Append(ctx, dir, ipc)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Delete(ctx, dir, "id >= 1 AND id <= 100"); err != nil {
		t.Fatal(err)
	}
	divOutcomes(ctx, t, p, dir, dir, []string{
		"id / z > 1", "id >= 919 AND id / z > 1", "id >= 920 AND id / z > 1", "id >= 840 AND id / z > 1",
		"(id < 1500 OR id >= 1700) AND id / z > 1", "(id < 1500 OR id >= 2319) AND id / z > 1", "(id < 1500 OR id >= 2320) AND id / z > 1",
		"id = 5 AND id / z > 1", "id < 3000 OR id / z > 1", "id < 2999 OR id / z > 1", "id % z = 0 AND id > 5000",
	})

	// Ours, flagged, seeds on every column, a ZoneMap index on id.
	ours := filepath.Join(t.TempDir(), "ours.lance")
	st, err := store.Open(ctx, ours)
	if err != nil {
		t.Fatal(err)
	}
	rec := divTable(0, 600, 0, 300)
	if _, err := commit.WriteArrow(ctx, st, mustRecordReader(t, rec), commit.WriteOptions{Mode: commit.ModeCreate, MaxRowsPerFile: 300,
		SeedAllColumns: true, Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: 64}); err != nil {
		t.Fatal(err)
	}
	noIndex := filepath.Join(t.TempDir(), "noindex.lance")
	if err := peerlance.CopyDir(ours, noIndex); err != nil {
		t.Fatal(err)
	}
	if _, err := zonemap.Create(ctx, st, zonemap.CreateOptions{Column: "id", RowsPerZone: 64}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, d := range []string{ours, noIndex} {
		unflagged := filepath.Join(t.TempDir(), "unflagged-"+filepath.Base(d))
		if err := peerlance.CopyDir(d, unflagged); err != nil {
			t.Fatal(err)
		}
		zmClearFlagEverywhere(ctx, t, unflagged)
		divOutcomes(ctx, t, p, d, unflagged, []string{
			"id >= 64 AND id / z > 1", "id / z > 1 AND id >= 64", "id >= 64 AND id < 300 AND id / z > 1",
			"(id >= 64 AND id < 300) OR (id >= 364 AND id / z > 1)", "id >= 250 AND id / z > 1", "id < 64 AND id / z > 1",
		})
	}
}
