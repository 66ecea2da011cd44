package commit

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/internal/arrowipc"
)

// ipcBytes encodes recs as an Arrow IPC stream.
func ipcBytes(t testing.TB, schema *arrow.Schema, recs ...arrow.RecordBatch) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzWriteIPCInput (issue 15 item 9) feeds hostile Arrow IPC streams —
// short buffers, wrong null counts, bad offsets, hostile lengths — through
// the input path of `write` (arrowipc.NewStreamReader: arrow-go's reader
// behind the bounds-checked GuardStream) and WriteFragments. Nothing may
// panic or allocate by a length the bytes do not back: a batch is written
// or refused with an error.
func FuzzWriteIPCInput(f *testing.F) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := range 20 {
		bld.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%3 == 0 {
			bld.Field(1).AppendNull()
			bld.Field(2).AppendNull()
			bld.Field(3).AppendNull()
		} else {
			bld.Field(1).(*array.BooleanBuilder).Append(i%2 == 0)
			bld.Field(2).(*array.StringBuilder).Append("v")
			lb := bld.Field(3).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(int32(i))
		}
	}
	rec := bld.NewRecordBatch()
	f.Add(ipcBytes(f, schema, rec))
	// The all-null bool with an empty values buffer of apache-arrow JS.
	validity := memory.NewBufferBytes(make([]byte, 3))
	bs := array.MakeFromData(array.NewData(arrow.FixedWidthTypes.Boolean, 20, []*memory.Buffer{validity, memory.NewBufferBytes(nil)}, nil, 20, 0))
	cols := []arrow.Array{rec.Column(0), bs, rec.Column(2), rec.Column(3)}
	f.Add(ipcBytes(f, schema, array.NewRecordBatch(schema, cols, 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		rdr, err := arrowipc.NewStreamReader(bytes.NewReader(data), ipc.WithAllocator(memory.DefaultAllocator))
		if err != nil {
			return
		}
		defer rdr.Release()
		st := memStore(t)
		w, err := WriteFragments(context.Background(), st, safeReader{rdr}, WriteOptions{Mode: ModeCreate, SeedAllColumns: true, RowsPerZone: 4,
			Commit: Options{EnableZoneWriteSeeds: true}})
		if err == nil {
			w.Cleanup(context.Background())
		}
	})
}

// safeReader turns a panic of arrow-go's IPC reader itself (outside this
// module) into the end of the stream, so the fuzz target exercises our
// code.
type safeReader struct{ *ipc.Reader }

func (r safeReader) Next() (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return r.Reader.Next()
}
