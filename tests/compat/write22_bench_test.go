package compat_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"

	mrand "math/rand/v2"
)

// write22Rows is 1 Mi rows of {int64, float64, utf8} (5 % nulls, ids
// ascending, strings of 0–31 letters) in 64 Ki-row batches.
func write22Rows() []arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rng := mrand.New(mrand.NewPCG(22, 22))
	letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var recs []arrow.RecordBatch
	id := int64(0)
	for done := 0; done < 1<<20; done += 1 << 16 {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		ib := bld.Field(0).(*array.Int64Builder)
		fb := bld.Field(1).(*array.Float64Builder)
		sb := bld.Field(2).(*array.StringBuilder)
		for range 1 << 16 {
			id++
			if rng.IntN(20) == 0 {
				ib.AppendNull()
				fb.AppendNull()
				sb.AppendNull()
				continue
			}
			ib.Append(id)
			fb.Append(rng.NormFloat64())
			n := rng.IntN(32)
			start := rng.IntN(len(letters) - n + 1)
			sb.Append(letters[start : start+n])
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	return recs
}

func dataBytes(t testing.TB, dir string) int64 {
	var n int64
	ents, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// BenchmarkWrite22VsLance writes the same 1 Mi rows {int64, float64, utf8}
// as a new 2.2 table with lancekeeper (commit.WriteArrow, seeds off) and
// with Lance 12 (the node peer's create from the same IPC file), in one
// run, and reports both throughputs, both data sizes and the ratios
// (goals: size ≤ 1.1× Lance's, throughput ≥ 1×). Lance's time includes the
// peer reading the IPC file; ours includes reading the same file.
func BenchmarkWrite22VsLance(b *testing.B) {
	p := peerlance.ServeForTest(b)
	ctx := b.Context()
	recs := write22Rows()
	ipc := filepath.Join(b.TempDir(), "rows.arrow")
	if err := peerlance.WriteIPCFile(ipc, recs[0].Schema(), recs...); err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	var ours, lance time.Duration
	var oursBytes, lanceBytes int64
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(b.TempDir(), "ours.lance")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		st, err := store.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(ipc)
		if err != nil {
			b.Fatal(err)
		}
		rdr, err := ipcReader(f)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, DataStorageVersion: "2.2"}); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(t0)
		rdr.Release()
		f.Close()
		st.Close()
		oursBytes = dataBytes(b, dir)
		ldir := filepath.Join(b.TempDir(), "lance.lance")
		t0 = time.Now()
		if _, err := p.Create(ctx, ldir, ipc, peerlance.CreateOptions{StorageVersion: "2.2"}); err != nil {
			b.Fatal(err)
		}
		lance += time.Since(t0)
		lanceBytes = dataBytes(b, ldir)
		if i == 0 {
			// Lance reads our table: same row count.
			if _, n, err := p.Count(ctx, dir); err != nil || n != 1<<20 {
				b.Fatalf("Lance counts %d rows in our table (%v)", n, err)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(ours.Seconds()/n, "s/op-ours")
	b.ReportMetric(lance.Seconds()/n, "s/op-lance")
	b.ReportMetric(lance.Seconds()/ours.Seconds(), "x-throughput-vs-lance")
	b.ReportMetric(float64(oursBytes), "bytes-ours")
	b.ReportMetric(float64(lanceBytes), "bytes-lance")
	b.ReportMetric(float64(oursBytes)/float64(lanceBytes), "x-size-vs-lance")
}

// ipcReader reads an Arrow IPC file as a RecordReader.
func ipcReader(f *os.File) (array.RecordReader, error) {
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, err
	}
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return array.NewRecordReader(r.Schema(), recs)
}
