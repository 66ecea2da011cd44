package scan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

// benchRows is the table size of BenchmarkScan (LANCEKEEPER_SCAN_BENCH_ROWS
// overrides; the figure is 10 Mi rows).
func benchRows() int {
	if v, err := strconv.Atoi(os.Getenv("LANCEKEEPER_SCAN_BENCH_ROWS")); err == nil && v > 0 {
		return v
	}
	return 1 << 20
}

type sliceReader struct {
	sch  *arrow.Schema
	recs []arrow.RecordBatch
	i    int
	cur  arrow.RecordBatch
}

func (r *sliceReader) Retain()                        {}
func (r *sliceReader) Release()                       {}
func (r *sliceReader) Schema() *arrow.Schema          { return r.sch }
func (r *sliceReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *sliceReader) Record() arrow.RecordBatch      { return r.cur }
func (r *sliceReader) Err() error                     { return nil }
func (r *sliceReader) Next() bool {
	if r.i >= len(r.recs) {
		return false
	}
	r.cur = r.recs[r.i]
	r.i++
	return true
}

// benchTable writes n rows in 100 fragments with v1 seeds (8192 rows per
// zone): ts clustered (monotonic with noise), u unclustered (uniform),
// payload a float64.
// With LANCEKEEPER_BENCH_CACHE set the table is built once and kept there.
func benchTable(b *testing.B, n int) string {
	dir := filepath.Join(b.TempDir(), "bench.lance")
	cache := os.Getenv("LANCEKEEPER_BENCH_CACHE")
	if cache != "" {
		dir = filepath.Join(cache, fmt.Sprintf("scan-seeded-%d.lance", n))
		if _, err := os.Stat(dir + ".done"); err == nil {
			return dir
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	sch := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.PrimitiveTypes.Int64}, {Name: "u", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []arrow.RecordBatch
	const batch = 1 << 16
	for s := 0; s < n; s += batch {
		bl := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		for i := s; i < min(n, s+batch); i++ {
			bl.Field(0).(*array.Int64Builder).Append(int64(i)*10 + int64(rng.IntN(50)))
			bl.Field(1).(*array.Int64Builder).Append(int64(rng.IntN(n * 10)))
			bl.Field(2).(*array.Float64Builder).Append(rng.Float64())
		}
		recs = append(recs, bl.NewRecordBatch())
		bl.Release()
	}
	if _, err := commit.WriteArrow(ctx, st, &sliceReader{sch: sch, recs: recs}, commit.WriteOptions{Mode: commit.ModeCreate,
		MaxRowsPerFile: (n + 99) / 100, SeedAllColumns: true, RowsPerZone: 8192, Commit: commit.Options{EnableZoneWriteSeeds: true}}); err != nil {
		b.Fatal(err)
	}
	if cache != "" {
		if err := os.WriteFile(dir+".done", nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkScan measures, per predicate selectivity (0.1 %, 1 %, 10 %) on
// the clustered and the unclustered column, the pruned scan against the
// unpruned scan of the same table in the same run: wall-time ratio, bytes
// read and their ratio to the bytes of the zones that hold matches
// (bytes_pruned/matching_zones, see zoneBytes; session 22's estimate, the
// zones' share of their fragments' bytes, is bytes_pruned/zones_estimate),
// and the full-scan throughput.
func BenchmarkScan(b *testing.B) {
	n := benchRows()
	dir := benchTable(b, n)
	ctx := context.Background()
	run := func(b *testing.B, where string, noPrune bool) (rows int64, bytes int64, d time.Duration, addrs []uint64) {
		ds, err := snapshot.OpenDataset(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer ds.Close()
		start := time.Now()
		s, err := New(ctx, ds, Options{Filter: where, NoPrune: noPrune, WithRowAddr: true, BatchSize: 64 << 10})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		rd := s.Reader(ctx)
		defer rd.Release()
		for rd.Next() {
			rec := rd.RecordBatch()
			rows += rec.NumRows()
			a := rec.Column(int(rec.NumCols()) - 1).(*array.Uint64)
			if len(addrs) < 1<<22 {
				addrs = append(addrs, a.Uint64Values()...)
			}
		}
		if err := rd.Err(); err != nil {
			b.Fatal(err)
		}
		_, bytes = s.BytesRead()
		return rows, bytes, time.Since(start), addrs
	}
	total := int64(n) * 10
	for _, sel := range []float64{0.001, 0.01, 0.1} {
		for _, col := range []string{"ts", "u"} {
			lo := int64(float64(total) * 0.4)
			hi := lo + int64(float64(total)*sel)
			where := fmt.Sprintf("%s >= %d AND %s < %d", col, lo, col, hi)
			b.Run(fmt.Sprintf("%s/%.1f%%", col, sel*100), func(b *testing.B) {
				_, fullBytes, _, _ := run(b, "", true) // every byte a scan of all rows reads
				var pt, ft time.Duration
				var pb, fb int64
				var matchZoneBytes, estZoneBytes float64
				for i := 0; i < b.N; i++ {
					pr, pbytes, pd, _ := run(b, where, false)
					fr, fbytes, fd, addrs := run(b, where, true)
					if pr != fr {
						b.Fatalf("pruned %d rows, unpruned %d", pr, fr)
					}
					pt, ft, pb, fb = pt+pd, ft+fd, pb+pbytes, fb+fbytes
					zones := map[uint64]bool{}
					for _, a := range addrs {
						zones[(a>>32)<<32|(a&0xffffffff)/8192] = true
					}
					// session 22's estimate: each zone ≈ 8192/(rows per
					// fragment) of its fragment's bytes (too generous
					// for a fragment's short last zone)
					perFrag := float64(fullBytes) / 100
					zpf := float64((n+99)/100) / 8192
					estZoneBytes += float64(len(zones)) * perFrag / zpf
					matchZoneBytes += float64(zoneBytes(b, dir, zones))
				}
				b.ReportMetric(float64(pt)/float64(ft), "time_pruned/unpruned")
				b.ReportMetric(float64(pb)/float64(b.N), "bytes_pruned/op")
				b.ReportMetric(float64(fb)/float64(b.N), "bytes_full/op")
				if matchZoneBytes > 0 {
					b.ReportMetric(float64(pb)/matchZoneBytes, "bytes_pruned/matching_zones")
					b.ReportMetric(matchZoneBytes/float64(b.N), "bytes_matching_zones/op")
				}
				if estZoneBytes > 0 {
					b.ReportMetric(float64(pb)/estZoneBytes, "bytes_pruned/zones_estimate")
				}
			})
		}
	}
	b.Run("full", func(b *testing.B) {
		var d time.Duration
		var rows int64
		for i := 0; i < b.N; i++ {
			r, _, t, _ := run(b, "", false)
			rows, d = rows+r, d+t
		}
		b.ReportMetric(float64(rows)/d.Seconds(), "rows/s")
	})
}

// zoneBytes is the denominator, measured: for every zone holding
// a matching row (key fragment id << 32 | zone index, 8192 rows per zone),
// the bytes a reader that already holds the file's metadata reads for
// that zone's rows of every column (the mini-block chunks, or pages,
// holding them, with their chunk tables). Each zone is read on its own,
// so a chunk two matching zones share counts twice.
func zoneBytes(b *testing.B, dir string, zones map[uint64]bool) int64 {
	ctx := context.Background()
	ds, err := snapshot.OpenDataset(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ds.Close()
	s, err := New(ctx, ds, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	bucket, err := fileblob.OpenBucket(filepath.Join(dir, "data"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	var total int64
	for _, fr := range s.m.GetFragments() {
		var want []uint64
		for z := uint64(0); z<<13 < fr.GetPhysicalRows(); z++ {
			if zones[fr.GetId()<<32|z] {
				want = append(want, z)
			}
		}
		if len(want) == 0 {
			continue
		}
		if len(fr.GetFiles()) != 1 {
			b.Fatalf("fragment %d has %d data files", fr.GetId(), len(fr.GetFiles()))
		}
		var st datafile.IOStats
		// the smallest first read: no data byte comes from the tail
		f, err := datafile.Open(ctx, bucket, fr.GetFiles()[0].GetPath(), datafile.OpenOptions{Stats: &st, TailSize: datafile.FooterSize, LazyColumns: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := f.LoadColumns(ctx, nil); err != nil {
			b.Fatal(err)
		}
		meta := st.Bytes.Load()
		for _, z := range want {
			rec, err := f.ReadRows(ctx, datafile.ReadRequest{Fields: f.Schema().TopLevel(), Ranges: []datafile.RowRange{{Start: z << 13, End: min((z+1)<<13, f.NumRows())}}})
			if err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
		total += st.Bytes.Load() - meta
	}
	return total
}

// BenchmarkScanCost is the `Ours` side of tests/bench's scanfilter/ts-*
// workloads alone, with CPU time per scan (getrusage, load-independent
// enough for A/B runs of two builds on a busy machine): scan.New and the
// read of ts, u, v with the 0.1 % and 1 % predicates on ts. The table is
// LANCEKEEPER_SCAN_BENCH_DIR (for example tests/bench's cached
// scanfilter-10485760-seeded-zm.lance, with
// LANCEKEEPER_SCAN_BENCH_ROWS=10485760), else BenchmarkScan's table.
func BenchmarkScanCost(b *testing.B) {
	n := benchRows()
	dir := os.Getenv("LANCEKEEPER_SCAN_BENCH_DIR")
	if dir == "" {
		dir = benchTable(b, n)
	}
	ctx := context.Background()
	total := int64(n) * 10
	for _, sel := range []float64{0.001, 0.01} {
		lo := int64(float64(total) * 0.4)
		where := fmt.Sprintf("ts >= %d AND ts < %d", lo, lo+int64(float64(total)*sel))
		b.Run(fmt.Sprintf("ts/%.1f%%", sel*100), func(b *testing.B) {
			var bytes int64
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				d, err := snapshot.OpenDataset(ctx, dir)
				if err != nil {
					b.Fatal(err)
				}
				s, err := New(ctx, d, Options{Columns: []string{"ts", "u", "v"}, Filter: where, BatchSize: 64 << 10})
				if err != nil {
					b.Fatal(err)
				}
				rd := s.Reader(ctx)
				for rd.Next() {
				}
				if err := rd.Err(); err != nil {
					b.Fatal(err)
				}
				_, bytes = s.BytesRead()
				rd.Release()
				s.Close()
				d.Close()
			}
			b.ReportMetric(float64(bytes), "bytes_read/op")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu_us/op")
		})
	}
}
