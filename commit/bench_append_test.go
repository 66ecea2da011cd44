package commit

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/store"
)

// appendBenchSchema is the {int64, float64, utf8} schema of tests/bench's
// commit workloads.
var appendBenchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// appendBenchBatch is 10 rows of appendBenchSchema, ~5 % nulls, as
// tests/bench's tripleBatches makes them.
func appendBenchBatch() arrow.RecordBatch {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := array.NewRecordBuilder(memory.DefaultAllocator, appendBenchSchema)
	defer b.Release()
	for i := range 10 {
		v := int64(i)
		h := uint64(v) * 0x9E3779B97F4A7C15
		b.Field(0).(*array.Int64Builder).Append(v)
		if h%20 == 7 {
			b.Field(1).(*array.Float64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(float64(h>>11) / (1 << 53))
		}
		p, l := int(h>>7)%32, int(h>>13)%32
		b.Field(2).(*array.StringBuilder).Append(alphabet[p : p+min(l, len(alphabet)-p)])
	}
	return b.NewRecordBatch()
}

// appendBenchRound is the number of appends per fresh table, as
// tests/bench's commit/append-1writer (the manifest grows to ~300
// fragments).
const appendBenchRound = 300

// BenchmarkWriteArrowAppend10Rows is the in-process form of tests/bench's
// commit/append-1writer: one op is one durable WriteArrow append of 10 rows
// (data file + commit) into a 2.2 table on the local filesystem that grows
// to 300 fragments per round. It exists for CPU and allocation profiles
// (-cpuprofile, -benchmem); the ratio against Lance 12 is tests/bench's.
func BenchmarkWriteArrowAppend10Rows(b *testing.B) {
	ctx := context.Background()
	rec := appendBenchBatch()
	defer rec.Release()
	var st *store.Store
	n := 0
	fresh := func() {
		if st != nil {
			st.Close()
		}
		st = localStoreAt(b, b.TempDir())
		rdr, err := array.NewRecordReader(appendBenchSchema, []arrow.RecordBatch{rec})
		if err != nil {
			b.Fatal(err)
		}
		defer rdr.Release()
		if _, err := WriteArrow(ctx, st, rdr, WriteOptions{Mode: ModeCreate, DataStorageVersion: "2.2"}); err != nil {
			b.Fatal(err)
		}
		n = 0
	}
	fresh()
	b.ReportAllocs()
	b.ResetTimer()
	u0, s0 := processCPU()
	var setupU, setupS time.Duration
	for i := 0; i < b.N; i++ {
		if n == appendBenchRound {
			b.StopTimer()
			u1, s1 := processCPU()
			fresh()
			u2, s2 := processCPU()
			setupU, setupS = setupU+u2-u1, setupS+s2-s1
			b.StartTimer()
		}
		rdr, err := array.NewRecordReader(appendBenchSchema, []arrow.RecordBatch{rec})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WriteArrow(ctx, st, rdr, WriteOptions{Mode: ModeAppend, Commit: Options{MaxRetries: 1000}}); err != nil {
			b.Fatal(err)
		}
		rdr.Release()
		n++
	}
	b.StopTimer()
	u1, s1 := processCPU()
	// user-ns/op, sys-ns/op: this process's CPU (the kernel's work for the
	// writes and fsyncs is sys), robust on a loaded machine where ns/op is
	// not; a fresh table's creation every 300 ops is excluded.
	b.ReportMetric(float64(u1-u0-setupU)/float64(b.N), "user-ns/op")
	b.ReportMetric(float64(s1-s0-setupS)/float64(b.N), "sys-ns/op")
	st.Close()
}
