package arrowipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ipcStream writes an Arrow IPC stream with one int32 column and one
// dictionary-encoded string column, one record batch per vals slice.
func ipcStream(t testing.TB, opts []ipc.Option, batches ...[]int32) []byte {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "d", Type: dt, Nullable: true},
	}, nil)
	var out bytes.Buffer
	w := ipc.NewWriter(&out, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	for _, vals := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for _, v := range vals {
			b.Field(0).(*array.Int32Builder).Append(v)
			if err := b.Field(1).(*array.BinaryDictionaryBuilder).AppendString(string(rune('a' + v%3))); err != nil {
				t.Fatal(err)
			}
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// readAll reads every record of the stream through NewStreamReader and
// returns the first column's values.
func readAll(b []byte) ([]int32, error) {
	r, err := NewStreamReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	var out []int32
	for r.Next() {
		out = append(out, r.RecordBatch().Column(0).(*array.Int32).Int32Values()...)
	}
	return out, r.Err()
}

func TestGuardStream_PassesWhatArrowGoWrites(t *testing.T) {
	for name, opts := range map[string][]ipc.Option{
		"plain": nil,
		"zstd":  {ipc.WithZstd()},
		"lz4":   {ipc.WithLZ4()},
	} {
		t.Run(name, func(t *testing.T) {
			b := ipcStream(t, opts, []int32{1, 2, 3}, []int32{4, 5})
			got, err := io.ReadAll(GuardStream(bytes.NewReader(b), 1<<20))
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("guard changed the stream (%d of %d bytes, %v)", len(got), len(b), err)
			}
			vals, err := readAll(b)
			if err != nil || len(vals) != 5 || vals[4] != 5 {
				t.Fatalf("read %v, %v", vals, err)
			}
		})
	}
}

// TestGuardStream_HostileLengths: every length arrow-go allocates by is
// checked against the bytes first (the session 21 fuzz worker death: a
// schema claiming 2^31 fields made arrow-go allocate 63 GB and the
// process die with "runtime: out of memory").
func TestGuardStream_HostileLengths(t *testing.T) {
	good := ipcStream(t, nil, []int32{1, 2, 3})
	_, schemaLen, _ := MessagePrefix(good)
	schemaEnd := 8 + int(schemaLen)
	hostileSchema, err := os.ReadFile("testdata/stream/schema-field-count-2e31.arrows")
	if err != nil {
		t.Fatal(err)
	}
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"schema field count beyond the metadata", "schema", hostileSchema},
		{"metadata length beyond the stream", "metadata of 2147483647 bytes", cat(le32(0xFFFFFFFF), le32(0x7FFFFFFF), good[8:40])},
		{"legacy metadata length beyond the stream", "metadata of 687865855 bytes", cat(le32(0x28FFFFFF), good[8:40])},
		{"negative metadata length", "negative", cat(le32(0xFFFFFFFF), le32(0xFFFFFFF0), good[8:40])},
		{"body beyond the stream", "body of", good[:len(good)-8-4]},
		{"batch before the schema", "does not start with a schema", good[schemaEnd:]},
		{"second schema", "after the first message", cat(good[:schemaEnd], good)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := io.ReadAll(GuardStream(bytes.NewReader(tc.b), 1<<20))
			var se *StreamError
			if !errors.As(err, &se) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("guard: %v, want a *StreamError containing %q", err, tc.want)
			}
			if _, err := readAll(tc.b); !errors.As(err, &se) {
				t.Fatalf("NewStreamReader: %v, want a *StreamError", err)
			}
		})
	}
}

// FuzzGuardStream: GuardStream never panics, passes on a prefix of its
// input unchanged, and arrow-go behind it never allocates by a length the
// bytes do not back (a worker would die of it).
func FuzzGuardStream(f *testing.F) {
	f.Add(ipcStream(f, nil, []int32{1, 2, 3}, []int32{4}))
	f.Add(ipcStream(f, []ipc.Option{ipc.WithZstd()}, []int32{1, 2, 3}))
	f.Add(ipcStream(f, []ipc.Option{ipc.WithLZ4()}, []int32{7}))
	if b, err := os.ReadFile("testdata/stream/schema-field-count-2e31.arrows"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := io.ReadAll(GuardStream(bytes.NewReader(b), 1<<20))
		if !bytes.HasPrefix(b, got) {
			t.Fatalf("guard output is not a prefix of its input")
		}
		if err != nil {
			var se *StreamError
			if !errors.As(err, &se) {
				t.Fatalf("untyped guard error %T: %v", err, err)
			}
		}
		func() {
			defer func() { _ = recover() }() // arrow-go's own panics are not this target's subject
			r, err := ipc.NewReader(GuardStream(bytes.NewReader(b), 1<<20))
			if err != nil {
				return
			}
			defer r.Release()
			for r.Next() {
			}
		}()
	})
}
