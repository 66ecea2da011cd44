// Package decodebench compares our data-file decoding with Lance 12's scan
// of the same Lance-written 2.2 file, in the same run (issue 12, "Speed and
// size"): MB/s of Arrow output per column for int64, float64, utf8 and
// list<int32>, both sides, and the ratio ours ÷ Lance.
//
//	go test -run '^$' -bench BenchmarkDecodeVsLance ./tests/decodebench/
//
// LANCEKEEPER_DECODE_BENCH_ROWS sets the table size (default 1 Mi rows);
// LANCEKEEPER_DECODE_BENCH_DIR keeps the Lance table in that directory
// (created on the first run) so our side can be profiled on its own.
package decodebench

import (
	"context"
	"encoding/json"
	"fmt"
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
	"gocloud.dev/blob/fileblob"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

func benchRows() int {
	if s := os.Getenv("LANCEKEEPER_DECODE_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1 << 20
}

// table has Lance 12 write {i int64, f float64, s utf8, l list<int32>} at
// storage 2.2 (Lance's default) into dir and returns its one data file.
func table(b *testing.B, p *peerlance.Peer, dir string, rows int) string {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	r := rand.New(rand.NewPCG(7, 11))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for k := 0; k < rows; k++ {
		if r.IntN(20) == 0 {
			for c := range 4 {
				bld.Field(c).AppendNull()
			}
			continue
		}
		bld.Field(0).(*array.Int64Builder).Append(int64(r.Uint64()))
		bld.Field(1).(*array.Float64Builder).Append(r.NormFloat64())
		n := r.IntN(32)
		st := r.IntN(len(letters) - n + 1)
		bld.Field(2).(*array.StringBuilder).Append(letters[st : st+n])
		lb := bld.Field(3).(*array.ListBuilder)
		lb.Append(true)
		for range r.IntN(5) {
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(r.Uint32()))
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	ipc := filepath.Join(b.TempDir(), "t.arrow")
	if err := peerlance.WriteIPCFile(ipc, schema, rec); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Create(ctx, dir, ipc, peerlance.CreateOptions{StorageVersion: "2.2"}); err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "*.lance"))
	if len(files) != 1 {
		b.Fatalf("Lance wrote %d data files, want 1", len(files))
	}
	return files[0]
}

// median is the middle duration (the mean of the two middle ones for an
// even count).
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func arrowBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += arrowBytes(c)
	}
	return n
}

// BenchmarkDecodeVsLance: for each column, our ReadColumn of the whole file
// and Lance 12's scan of the same column (peer bench-scan), alternated, in
// the same run. Metrics: MB/s of Arrow output for both (median round), and
// ours ÷ Lance. Both sides count opening the file: ours times Open (footer,
// column metadata) + ReadColumn; Lance's timed scan opens the data file
// through a table handle opened before its clock (manifest only), so its
// file footer and metadata are read inside the timed scan too. Both produce
// Arrow (Lance's batches are also serialized to IPC to leave the peer).
func BenchmarkDecodeVsLance(b *testing.B) {
	p := peerlance.ServeForTest(b)
	rows := benchRows()
	dir := filepath.Join(b.TempDir(), "t.lance")
	if keep := os.Getenv("LANCEKEEPER_DECODE_BENCH_DIR"); keep != "" {
		dir = keep // reuse (or create once) the table there, for profiling
	}
	var path string
	if files, _ := filepath.Glob(filepath.Join(dir, "data", "*.lance")); len(files) == 1 {
		path = files[0]
	} else {
		path = table(b, p, dir, rows)
	}
	bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	for _, col := range []string{"i", "f", "s", "l"} {
		b.Run(col, func(b *testing.B) {
			// One untimed round of each side first: Lance runs in the peer,
			// a warm long-lived process; ours warms its heap the same way.
			if f, err := datafile.Open(ctx, bucket, filepath.Base(path), datafile.OpenOptions{}); err == nil {
				if a, err := f.ReadColumn(ctx, col); err == nil {
					a.Release()
				}
			}
			if _, err := p.Run(ctx, "bench-scan", dir, "--column", col, "--n", "1"); err != nil {
				b.Fatal(err)
			}
			var oursT, lanceT []time.Duration
			var out int64
			for b.Loop() {
				t0 := time.Now()
				f, err := datafile.Open(ctx, bucket, filepath.Base(path), datafile.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				a, err := f.ReadColumn(ctx, col)
				if err != nil {
					b.Fatal(err)
				}
				oursT = append(oursT, time.Since(t0))
				out = arrowBytes(a.Data())
				a.Release()
				var res struct {
					NS string `json:"ns"`
				}
				raw, err := p.Run(ctx, "bench-scan", dir, "--column", col, "--n", "1")
				if err != nil {
					b.Fatal(err)
				}
				if err := json.Unmarshal(raw, &res); err != nil {
					b.Fatal(err)
				}
				ns, _ := strconv.ParseInt(strings.TrimSpace(res.NS), 10, 64)
				lanceT = append(lanceT, time.Duration(ns))
			}
			// Medians of the alternated rounds: one round disturbed by the
			// rest of a shared machine moves neither side's figure.
			ours, lance := median(oursT), median(lanceT)
			mb := float64(out) / 1e6
			b.ReportMetric(mb/ours.Seconds(), "MB/s-ours")
			b.ReportMetric(mb/lance.Seconds(), "MB/s-lance")
			b.ReportMetric(lance.Seconds()/ours.Seconds(), "x-lance-speed")
			fmt.Fprintf(os.Stderr, "decode %s: %d rows, %.1f MB Arrow out, %d rounds, median ours %.1f MB/s, Lance 12 %.1f MB/s, ratio %.2fx\n",
				col, rows, mb, len(oursT), mb/ours.Seconds(), mb/lance.Seconds(), lance.Seconds()/ours.Seconds())
		})
	}
}

// BenchmarkDecodeOurs is our side of BenchmarkDecodeVsLance alone (Open +
// ReadColumn per column), for CPU and memory profiles:
//
//	LANCEKEEPER_DECODE_BENCH_DIR=/tmp/t.lance go test -run '^$' -bench BenchmarkDecodeOurs \
//	  -benchmem -cpuprofile cpu.out -memprofile mem.out ./tests/decodebench/
//
// The table is made by Lance 12 through the peer when the directory has none.
func BenchmarkDecodeOurs(b *testing.B) {
	rows := benchRows()
	dir := filepath.Join(b.TempDir(), "t.lance")
	if keep := os.Getenv("LANCEKEEPER_DECODE_BENCH_DIR"); keep != "" {
		dir = keep
	}
	var path string
	if files, _ := filepath.Glob(filepath.Join(dir, "data", "*.lance")); len(files) == 1 {
		path = files[0]
	} else {
		path = table(b, peerlance.ServeForTest(b), dir, rows)
	}
	bucket, err := fileblob.OpenBucket(filepath.Dir(path), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	for _, col := range []string{"i", "f", "s", "l"} {
		b.Run(col, func(b *testing.B) {
			var out int64
			c0 := processCPU()
			for b.Loop() {
				f, err := datafile.Open(ctx, bucket, filepath.Base(path), datafile.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				a, err := f.ReadColumn(ctx, col)
				if err != nil {
					b.Fatal(err)
				}
				out = arrowBytes(a.Data())
				a.Release()
			}
			b.SetBytes(out)
			b.ReportMetric(float64((processCPU()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}
