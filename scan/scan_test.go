package scan

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/filter"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// smallTable: 1000 rows (id 0..999, p struct{x = id % 7, x null when id %
// 10 == 0}) in 4 fragments with v1 seeds of 50 rows per zone, flagged.
func smallTable(t *testing.T) *snapshot.Dataset {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t.lance")
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pt := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "p", Type: pt, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < 1000; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		sb := b.Field(1).(*array.StructBuilder)
		sb.Append(true) // 2.0 files cannot store struct validity
		if i%10 == 0 {
			sb.FieldBuilder(0).AppendNull()
		} else {
			sb.FieldBuilder(0).(*array.Int64Builder).Append(int64(i % 7))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate,
		MaxRowsPerFile: 250, SeedColumns: []string{"id"}, RowsPerZone: 50, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func collect(t *testing.T, s *Scanner, ctx context.Context) ([]arrow.RecordBatch, error) {
	t.Helper()
	rd := s.Reader(ctx)
	defer rd.Release()
	var out []arrow.RecordBatch
	for rd.Next() {
		r := rd.RecordBatch()
		r.Retain()
		out = append(out, r)
	}
	return out, rd.Err()
}

// TestScan_ProjectionLimitNestedAndPlan: nested projection, limit across fragments, row addresses, and the
// plan's fragment and zone counts (R61: v1 seeds usable on the flagged
// table).
func TestScan_ProjectionLimitNestedAndPlan(t *testing.T) {
	d := smallTable(t)
	ctx := context.Background()
	s, err := New(ctx, d, Options{Columns: []string{"p.x"}, Filter: "id >= 240 AND id < 265", WithRowAddr: true, BatchSize: 7, Limit: 21})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := collect(t, s, ctx)
	if err != nil {
		t.Fatal(err)
	}
	var xs []any
	var addrs []uint64
	for _, r := range recs {
		x := r.Column(0).(*array.Int64)
		a := r.Column(1).(*array.Uint64)
		for i := 0; i < int(r.NumRows()); i++ {
			if x.IsNull(i) {
				xs = append(xs, nil)
			} else {
				xs = append(xs, x.Value(i))
			}
			addrs = append(addrs, a.Value(i))
		}
		r.Release()
	}
	if len(xs) != 21 || xs[0] != nil || xs[1] != int64(241%7) || xs[10] != nil || addrs[10] != 1<<32|0 || addrs[20] != 1<<32|10 {
		t.Fatalf("rows %v addrs %v", xs, addrs)
	}
	p, err := s.Explain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.FragmentsPruned != 2 || p.FragmentsKept != 2 || p.RowsKept != 100 || !p.Flagged {
		t.Fatalf("plan %+v", p)
	}
}

// TestScan_CancelAndBadOptions: a cancelled context stops the reader with
// the context's error; unknown columns and bad predicates are typed errors.
func TestScan_CancelAndBadOptions(t *testing.T) {
	d := smallTable(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := New(ctx, d, Options{BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rd := s.Reader(ctx)
	if !rd.Next() {
		t.Fatal(rd.Err())
	}
	cancel()
	for rd.Next() {
	}
	if !errors.Is(rd.Err(), context.Canceled) {
		t.Fatalf("err %v", rd.Err())
	}
	rd.Release()
	if _, err := New(context.Background(), d, Options{Columns: []string{"nope"}}); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("err %v", err)
	}
	if _, err := New(context.Background(), d, Options{Filter: "id = 'x'"}); !errors.Is(err, filter.ErrType) {
		t.Fatalf("err %v", err)
	}
	if _, err := New(context.Background(), d, Options{Ref: snapshot.Ref{Version: 99}}); err == nil {
		t.Fatal("version 99 opened")
	}
}

// TestScan_MemStore: the scan reads through the store abstraction, here an
// in-memory bucket (S3 goes through the same store.Store; see tests/s3).
func TestScan_MemStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://scan-test")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := 0; i < 100; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: []arrow.RecordBatch{rec}}, commit.WriteOptions{Mode: commit.ModeCreate}); err != nil {
		t.Fatal(err)
	}
	d := snapshot.NewDataset("mem://scan-test", st)
	s, err := New(ctx, d, Options{Filter: "id BETWEEN 10 AND 14 OR id = 99"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := collect(t, s, ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, r := range recs {
		n += r.NumRows()
		r.Release()
	}
	if n != 6 {
		t.Fatalf("%d rows", n)
	}
}

// TestScan_ShallowCloneReadsThroughBasePath: a shallow clone's data and
// deletion files live under the source's root (a base path); the scan of
// the clone returns the source's rows, and a delete on the clone writes its
// deletion file under the clone.
func TestScan_ShallowCloneReadsThroughBasePath(t *testing.T) {
	src := smallTable(t)
	ctx := context.Background()
	if _, err := Delete(ctx, src, "", "id < 5", commit.Options{}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "clone.lance")
	if _, err := snapshot.Clone(ctx, src.URI(), dst, snapshot.CloneOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := snapshot.OpenDataset(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	count := func(where string) int64 {
		s, err := New(ctx, d, Options{Filter: where, Columns: []string{"id"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		recs, err := collect(t, s, ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for _, r := range recs {
			n += r.NumRows()
			r.Release()
		}
		return n
	}
	if n := count("id < 20"); n != 15 {
		t.Fatalf("clone: %d rows", n)
	}
	if _, err := Delete(ctx, d, "", "id BETWEEN 5 AND 9", commit.Options{}); err != nil {
		t.Fatal(err)
	}
	if n := count("id < 20"); n != 10 {
		t.Fatalf("clone after delete: %d rows", n)
	}
}
