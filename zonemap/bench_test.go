package zonemap

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/commit"
	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/flags"
	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/store"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// benchRows is the table size of BenchmarkBuildFromSeeds (10 Mi rows;
// LANCEKEEPER_BENCH_ROWS overrides it for a quick run).
func benchRows(b *testing.B) int {
	if s := os.Getenv("LANCEKEEPER_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("LANCEKEEPER_BENCH_ROWS=%q", s)
		}
		return n
	}
	return 10 << 20
}

// benchTable writes rows rows of {id int64, f float64 (1 % nulls, 0.1 %
// NaNs of both signs)} as 1 Mi-row fragments with v1 seeds of f (8192
// rows per zone).
func benchTable(b *testing.B, dir string, rows int) *store.Store {
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	sch := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	rng := rand.New(rand.NewPCG(10, 10))
	const batch = 1 << 16
	var recs []arrow.RecordBatch
	for done := 0; done < rows; done += batch {
		n := min(batch, rows-done)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, sch)
		ib := bld.Field(0).(*array.Int64Builder)
		fb := bld.Field(1).(*array.Float64Builder)
		for i := 0; i < n; i++ {
			ib.Append(int64(done + i))
			switch r := rng.IntN(1000); {
			case r < 10:
				fb.AppendNull()
			case r == 10:
				fb.Append(math.Float64frombits(0x7FF8000000000000 | uint64(rng.IntN(2))<<63))
			default:
				fb.Append(rng.NormFloat64()*1000 + float64(done/batch))
			}
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	rdr, err := array.NewRecordReader(sch, recs)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := commit.WriteArrow(ctx, st, rdr, commit.WriteOptions{Mode: commit.ModeCreate, SeedColumns: []string{"f"},
		Commit: commit.Options{EnableZoneWriteSeeds: true}, RowsPerZone: DefaultRowsPerZone}); err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return st
}

// BenchmarkBuildFromSeeds: building the ZoneMap segment of a float64
// column of a 10 Mi-row table from its v1 seeds against building it by
// reading the column (same table, same process, alternating rounds), with
// the bytes each reads; Lance 12's BTree build on the same column (through
// the peer, on an unflagged copy) for scale.
//
//	go test -run '^$' -bench BenchmarkBuildFromSeeds -benchtime 1x ./zonemap/
func BenchmarkBuildFromSeeds(b *testing.B) {
	ctx := context.Background()
	rows := benchRows(b)
	dir := filepath.Join(b.TempDir(), "bench.lance")
	t0 := time.Now()
	st := benchTable(b, dir, rows)
	defer st.Close()
	b.Logf("table: %d rows written in %v", rows, time.Since(t0).Round(time.Millisecond))
	f, _, err := manifest.LoadLatest(ctx, st.Bucket(), st.KeyPrefix())
	if err != nil {
		b.Fatal(err)
	}
	m := f.Manifest
	col, err := FindColumn(m, "f")
	if err != nil {
		b.Fatal(err)
	}
	var colBytes uint64
	for _, fr := range m.GetFragments() {
		colBytes += fr.GetFiles()[0].GetFileSizeBytes()
	}
	run := func(noSeeds bool) (time.Duration, BuildStats) {
		var io datafile.IOStats
		start := time.Now()
		_, _, bs, err := BuildSegment(ctx, st, m, col, m.GetFragments(), BuildOptions{NoSeeds: noSeeds, Stats: &io})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start), bs
	}
	var seedTimes, dataTimes []time.Duration
	var seedStats, dataStats BuildStats
	b.ResetTimer()
	for i := 0; i < max(3, b.N); i++ { // A B A B …
		d, bs := run(false)
		seedTimes, seedStats = append(seedTimes, d), bs
		d, bs = run(true)
		dataTimes, dataStats = append(dataTimes, d), bs
	}
	b.StopTimer()
	if seedStats.FromSeeds != seedStats.Fragments || seedStats.PageBytesRead != 0 {
		b.Fatalf("seed build: %+v", seedStats)
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ms, md := med(seedTimes), med(dataTimes)
	b.ReportMetric(float64(ms.Microseconds())/1000, "seeds_ms")
	b.ReportMetric(float64(md.Microseconds())/1000, "data_ms")
	b.ReportMetric(float64(ms)/float64(md), "seeds/data")
	b.ReportMetric(float64(seedStats.DataBytesRead), "seeds_bytes_read")
	b.ReportMetric(float64(seedStats.PageBytesRead), "seeds_page_bytes")
	b.ReportMetric(float64(dataStats.DataBytesRead), "data_bytes_read")
	b.Logf("%d fragments, %d zones; data files %d bytes", seedStats.Fragments, seedStats.Zones, colBytes)
	b.Logf("from seeds: %v (rounds %v), read %d bytes, %d of data pages", ms, seedTimes, seedStats.DataBytesRead, seedStats.PageBytesRead)
	b.Logf("from data:  %v (rounds %v), read %d bytes, %d of data pages", md, dataTimes, dataStats.DataBytesRead, dataStats.PageBytesRead)
	b.Logf("seeds/data time ratio %.4f (target <= 0.1)", float64(ms)/float64(md))

	// Lance 12's BTree on the same column, on the same files: the table
	// is flagged (v1 seeds), which Lance 12 refuses, so the benchmark's
	// own temp table loses the flag first (test only, R57 forbids it).
	p, err := peerlance.Find()
	if err != nil {
		b.Logf("Lance 12 BTree: skipped (%v)", err)
		return
	}
	ents, err := os.ReadDir(filepath.Join(dir, "_versions"))
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".manifest") {
			continue
		}
		key := "_versions/" + e.Name()
		mf, err := manifest.ReadFile(ctx, st.Bucket(), st.BucketKey(key))
		if err != nil {
			b.Fatal(err)
		}
		mf.Manifest.ReaderFeatureFlags &^= flags.ZoneWriteSeeds
		mf.Manifest.WriterFeatureFlags &^= flags.ZoneWriteSeeds
		enc, err := manifest.EncodePrelude(mf.Prelude, mf.Manifest, mf.IndexSection, mf.Transaction)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Put(ctx, key, enc); err != nil {
			b.Fatal(err)
		}
	}
	var lance []float64
	for i := 0; i < 2; i++ {
		var out struct {
			Seconds float64 `json:"seconds"`
		}
		if err := p.RunJSON(ctx, &out, "time-btree", dir, "f"); err != nil {
			b.Fatal(err)
		}
		lance = append(lance, out.Seconds)
		d, _ := run(false) // keep alternating with ours
		seedTimes = append(seedTimes, d)
	}
	lb := slices.Min(lance)
	b.ReportMetric(lb*1000, "lance_btree_ms")
	b.Logf("Lance 12 BTree build on f: %v s (rounds %v); ours from seeds / Lance BTree = %.4f, from data / Lance BTree = %.4f",
		lb, lance, ms.Seconds()/lb, md.Seconds()/lb)
}
