package datafile

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchBatches builds 1M rows of {int64, float64, utf8} in 64Ki-row batches
// (nullable, ~5% nulls, strings of 0–31 bytes).
func benchBatches(b *testing.B) ([]arrow.RecordBatch, int64) {
	b.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	r := newRand(42)
	const rows, batch = 1 << 20, 1 << 16
	var recs []arrow.RecordBatch
	var size int64
	letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for done := 0; done < rows; done += batch {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		ib := bld.Field(0).(*array.Int64Builder)
		fb := bld.Field(1).(*array.Float64Builder)
		sb := bld.Field(2).(*array.StringBuilder)
		for range batch {
			if r.IntN(20) == 0 {
				ib.AppendNull()
				fb.AppendNull()
				sb.AppendNull()
				continue
			}
			ib.Append(int64(r.Uint64()))
			fb.Append(r.NormFloat64())
			n := r.IntN(32)
			start := r.IntN(len(letters) - n + 1)
			sb.Append(letters[start : start+n])
			size += int64(n)
		}
		rec := bld.NewRecordBatch()
		bld.Release()
		recs = append(recs, rec)
	}
	size += rows * (8 + 8 + 4) // values and string offsets
	return recs, size
}

func writeBench(b *testing.B, recs []arrow.RecordBatch, seeds bool) {
	writeBenchV(b, recs, seeds, V2_0)
}

func writeBenchV(b *testing.B, recs []arrow.RecordBatch, seeds bool, v FileVersion) {
	w, err := NewWriter(io.Discard, recs[0].Schema(), WriterOptions{SeedAllColumns: seeds, Version: v})
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			b.Fatal(err)
		}
	}
	res, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	if seeds && (len(res.Seeds) != 3 || res.Seeds[2].Err != nil) {
		b.Fatalf("seeds: %+v", res.Seeds)
	}
}

// BenchmarkWrite1M measures write throughput of a 1M-row file (int64,
// float64, utf8) without seeds (the baseline) and with seeds on every
// column, in the same run. The overhead sub-benchmark alternates the two in
// every iteration and reports seed overhead as ratios (target ≤ 3 %): wall
// clock (collectors run concurrently with page encoding, so idle cores hide
// their cost) and process CPU time (the work the seeds add).
func BenchmarkWrite1M(b *testing.B) {
	recs, size := benchBatches(b)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, seeds := range []bool{false, true} {
		b.Run(fmt.Sprintf("seeds=%v", seeds), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				writeBench(b, recs, seeds)
			}
		})
	}
	b.Run("overhead", func(b *testing.B) {
		b.SetBytes(2 * size)
		var off, on, offCPU, onCPU time.Duration
		i := 0
		for b.Loop() {
			// alternate the order to cancel warm-up effects
			for k := 0; k < 2; k++ {
				seeds := (k+i)%2 == 0
				t0, c0 := time.Now(), processCPU()
				writeBench(b, recs, seeds)
				wall, cpu := time.Since(t0), processCPU()-c0
				if seeds {
					on, onCPU = on+wall, onCPU+cpu
				} else {
					off, offCPU = off+wall, offCPU+cpu
				}
			}
			i++
		}
		b.ReportMetric(float64(size)*float64(i)/off.Seconds()/1e6, "MB/s-seeds-off")
		b.ReportMetric(float64(size)*float64(i)/on.Seconds()/1e6, "MB/s-seeds-on")
		b.ReportMetric(100*(on.Seconds()/off.Seconds()-1), "%wall-overhead")
		if offCPU > 0 {
			b.ReportMetric(100*(onCPU.Seconds()/offCPU.Seconds()-1), "%cpu-overhead")
		}
	})
}

// BenchmarkWrite1M22 is BenchmarkWrite1M for 2.2 files (mini-block pages,
// bit-packing and FSST where smaller): seeds on vs off in one run.
func BenchmarkWrite1M22(b *testing.B) {
	recs, size := benchBatches(b)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	b.SetBytes(2 * size)
	var off, on, offCPU, onCPU time.Duration
	i := 0
	for b.Loop() {
		for k := 0; k < 2; k++ {
			seeds := (k+i)%2 == 0
			t0, c0 := time.Now(), processCPU()
			writeBenchV(b, recs, seeds, V2_2)
			wall, cpu := time.Since(t0), processCPU()-c0
			if seeds {
				on, onCPU = on+wall, onCPU+cpu
			} else {
				off, offCPU = off+wall, offCPU+cpu
			}
		}
		i++
	}
	b.ReportMetric(float64(size)*float64(i)/off.Seconds()/1e6, "MB/s-seeds-off")
	b.ReportMetric(float64(size)*float64(i)/on.Seconds()/1e6, "MB/s-seeds-on")
	b.ReportMetric(100*(on.Seconds()/off.Seconds()-1), "%wall-overhead")
	if offCPU > 0 {
		b.ReportMetric(100*(onCPU.Seconds()/offCPU.Seconds()-1), "%cpu-overhead")
	}
}

// tripleBenchBatches is the data of tests/bench's write/seeds-overhead (1 Mi
// rows in 64 Ki-row batches: int64 without nulls, float64 and utf8 with 5 %
// nulls each, strings 0–31-byte slices of one alphabet).
func tripleBenchBatches() []arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const rows, batch = 1 << 20, 1 << 16
	var out []arrow.RecordBatch
	for off := 0; off < rows; off += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		ids := b.Field(0).(*array.Int64Builder)
		xs := b.Field(1).(*array.Float64Builder)
		ss := b.Field(2).(*array.StringBuilder)
		for i := range batch {
			v := int64(off + i)
			ids.Append(v)
			h := uint64(v) * 0x9E3779B97F4A7C15
			if h%20 == 7 {
				xs.AppendNull()
			} else {
				xs.Append(float64(h>>11) / (1 << 53))
			}
			if h%20 == 11 {
				ss.AppendNull()
			} else {
				p, l := int(h>>7)%32, int(h>>13)%32
				ss.Append(alphabet[p : p+min(l, len(alphabet)-p)])
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

// BenchmarkSeedsOverhead22 writes tests/bench's write/seeds-overhead rows
// as one 2.2 file with v1 seeds on every column and without, as separate
// sub-benchmarks, so that each can be profiled on its own (-cpuprofile) and
// their allocations compared (-benchmem):
//
//	go test -run '^$' -bench SeedsOverhead22 -benchmem -count 5 ./datafile/
func BenchmarkSeedsOverhead22(b *testing.B) {
	recs := tripleBenchBatches()
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, seeds := range []bool{false, true} {
		b.Run(fmt.Sprintf("seeds=%v", seeds), func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				c0 := processCPU()
				writeBenchV(b, recs, seeds, V2_2)
				cpu += processCPU() - c0
			}
			b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}
