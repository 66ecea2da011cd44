package main

import (
	"fmt"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// tripleSchema is the {int64, float64, utf8} schema of the commit and write
// workloads.
var tripleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// tripleBatches returns rows {id, x, s} from start in batches of at most
// batch rows: ~5 % nulls in x and s, s of 0–31 bytes.
func tripleBatches(start, rows, batch int) []arrow.RecordBatch {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var out []arrow.RecordBatch
	for off := 0; off < rows; off += batch {
		n := min(batch, rows-off)
		b := array.NewRecordBuilder(memory.DefaultAllocator, tripleSchema)
		ids := b.Field(0).(*array.Int64Builder)
		xs := b.Field(1).(*array.Float64Builder)
		ss := b.Field(2).(*array.StringBuilder)
		ids.Reserve(n)
		xs.Reserve(n)
		ss.Reserve(n)
		for i := range n {
			v := int64(start + off + i)
			ids.UnsafeAppend(v)
			h := uint64(v) * 0x9E3779B97F4A7C15
			if h%20 == 7 {
				xs.AppendNull()
			} else {
				xs.UnsafeAppend(float64(h>>11) / (1 << 53))
			}
			if h%20 == 11 {
				ss.AppendNull()
			} else {
				p := int(h>>7) % 32
				l := int(h>>13) % 32
				ss.Append(alphabet[p : p+min(l, len(alphabet)-p)])
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// reader returns a RecordReader over recs (the caller keeps them).
func reader(recs []arrow.RecordBatch) (array.RecordReader, error) {
	return array.NewRecordReader(tripleSchema, recs)
}

// writeIPC writes recs to dir/name as an Arrow IPC file and returns its path.
func writeIPC(dir, name string, recs []arrow.RecordBatch) (string, error) {
	p := filepath.Join(dir, name)
	if err := peerlance.WriteIPCFile(p, tripleSchema, recs...); err != nil {
		return "", fmt.Errorf("bench: writing %s: %w", p, err)
	}
	return p, nil
}
