package arrowipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
)

// ipcFile writes an Arrow IPC file with one int32 column holding vals in
// one record batch, with the given writer options.
func ipcFile(t testing.TB, vals []int32, opts ...ipc.Option) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Int32}},
		func() *arrow.Metadata { m := arrow.NewMetadata([]string{"k"}, []string{"v"}); return &m }())
	b := array.NewInt32Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(vals, nil)
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(len(vals)))
	defer rec.Release()
	var out bytes.Buffer
	w, err := ipc.NewFileWriter(&out, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// walk reads everything this package can read from b, and returns the
// values of the first column of every record batch (uncompressed bodies
// only) so tests can compare them.
func walk(b []byte) ([][]int32, error) {
	f, err := ParseFile(b)
	if err != nil {
		return nil, err
	}
	st, ok, err := f.Schema()
	if err != nil || !ok {
		return nil, errors.Join(err, errors.New("no schema"))
	}
	if err := CheckSchema(st); err != nil {
		return nil, err
	}
	if _, err := SchemaBigEndian(st); err != nil {
		return nil, err
	}
	if _, _, err := SchemaMetadata(st); err != nil {
		return nil, err
	}
	if _, err := SchemaFields(st); err != nil {
		return nil, err
	}
	if _, err := f.DictionaryBlocks(); err != nil {
		return nil, err
	}
	blocks, err := f.RecordBatchBlocks()
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for _, blk := range blocks {
		if blk.Offset < 0 || blk.MetaLen < 0 || blk.BodyLen < 0 || uint64(blk.Offset) > f.FooterStart ||
			uint64(blk.MetaLen) > f.FooterStart-uint64(blk.Offset) || uint64(blk.BodyLen) > f.FooterStart-uint64(blk.Offset)-uint64(blk.MetaLen) {
			return nil, errors.New("block outside the file")
		}
		meta := b[blk.Offset : blk.Offset+blk.MetaLen]
		body := b[blk.Offset+blk.MetaLen : blk.Offset+blk.MetaLen+blk.BodyLen]
		p, l, err := MessagePrefix(meta)
		if err != nil {
			return nil, err
		}
		if l > uint64(len(meta))-p {
			return nil, errors.New("metadata past its block")
		}
		m, err := ParseMessage(meta[p : p+l])
		if err != nil {
			return nil, err
		}
		if m.HeaderType != HeaderRecordBatch {
			continue
		}
		rb, err := ParseRecordBatch(m.Header)
		if err != nil {
			return nil, err
		}
		var col []int32
		for i := range rb.Buffers {
			buf, err := rb.Slice(i, body)
			if err != nil {
				return nil, err
			}
			if i == 1 && !rb.Compressed {
				for j := 0; j+4 <= len(buf) && int64(len(col)) < rb.Length; j += 4 {
					col = append(col, int32(binary.LittleEndian.Uint32(buf[j:])))
				}
			}
			if rb.Compressed && len(buf) > 0 {
				n, err := UncompressedLength(buf)
				if err != nil {
					return nil, err
				}
				if n > 0 && n < 1<<20 {
					if _, err := Decompress(rb.Codec, buf[8:], uint64(n), 1<<20); err != nil {
						return nil, err
					}
				}
			}
		}
		out = append(out, col)
	}
	return out, nil
}

func TestParseFile_ReadsWhatArrowGoWrites(t *testing.T) {
	for name, opts := range map[string][]ipc.Option{"plain": nil, "zstd": {ipc.WithZstd()}, "lz4": {ipc.WithLZ4()}} {
		t.Run(name, func(t *testing.T) {
			cols, err := walk(ipcFile(t, []int32{1, 2, 3}, opts...))
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) != 1 {
				t.Fatalf("%d batches, want 1", len(cols))
			}
			if name == "plain" && (len(cols[0]) != 3 || cols[0][2] != 3) {
				t.Fatalf("values %v", cols[0])
			}
		})
	}
}

func TestParseFile_FramingErrors(t *testing.T) {
	good := ipcFile(t, []int32{1})
	n := len(good)
	cases := map[string]struct {
		b   []byte
		off uint64
	}{
		"empty":          {nil, 0},
		"too short":      {[]byte("ARROW1ARROW1"), 0},
		"leading magic":  {append([]byte("ARROW2"), good[6:]...), 0},
		"trailing magic": {append(bytes.Clone(good[:n-1]), 'X'), uint64(n - 6)},
		"footer length":  {func() []byte { b := bytes.Clone(good); binary.LittleEndian.PutUint32(b[n-10:], 1<<30); return b }(), uint64(n - 10)},
		"zero footer":    {func() []byte { b := bytes.Clone(good); binary.LittleEndian.PutUint32(b[n-10:], 0); return b }(), uint64(n - 10)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseFile(c.b)
			var fe *FramingError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FramingError", err)
			}
			if fe.Offset != c.off {
				t.Fatalf("offset %d, want %d (%v)", fe.Offset, c.off, err)
			}
		})
	}
}

func TestFlatbuf_MalformedOffsetsAreErrors(t *testing.T) {
	good := ipcFile(t, []int32{1, 2})
	f, err := ParseFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// Every single-byte corruption of the footer either parses or fails
	// with an error: never a panic.
	foot := good[f.FooterStart : len(good)-10]
	for i := range foot {
		for _, v := range []byte{0, 0x7f, 0xff} {
			b := bytes.Clone(good)
			b[int(f.FooterStart)+i] = v
			_, _ = walk(b)
		}
	}
	if _, err := flatbuf.Root([]byte{1, 2}); !errors.Is(err, flatbuf.ErrMalformed) {
		t.Fatalf("short root: %v", err)
	}
	if _, err := flatbuf.TableAt([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0}, 0); !errors.Is(err, flatbuf.ErrMalformed) {
		t.Fatalf("vtable out of range: %v", err)
	}
}

func TestCheckSchema_DepthLimit(t *testing.T) {
	// A struct nested deeper than MaxSchemaDepth is refused.
	typ := arrow.DataType(arrow.PrimitiveTypes.Int32)
	for range MaxSchemaDepth + 1 {
		typ = arrow.StructOf(arrow.Field{Name: "c", Type: typ, Nullable: true})
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: typ, Nullable: true}}, nil)
	var out bytes.Buffer
	w, err := ipc.NewFileWriter(&out, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := f.Schema()
	if err := CheckSchema(st); !errors.Is(err, flatbuf.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed (too deep)", err)
	}
}

// FuzzWalk: no input makes the walker panic or read out of bounds.
func FuzzWalk(f *testing.F) {
	f.Add(ipcFile(f, []int32{1, 2, 3}))
	f.Add(ipcFile(f, []int32{7}, ipc.WithZstd()))
	f.Add(ipcFile(f, []int32{7, 8}, ipc.WithLZ4()))
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = walk(b)
	})
}

// TestWriteFuzzCorpus regenerates testdata/fuzz/FuzzWalk when
// LANCEKEEPER_WRITE_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("LANCEKEEPER_WRITE_CORPUS") != "1" {
		t.Skip("set LANCEKEEPER_WRITE_CORPUS=1 to regenerate the fuzz seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzWalk")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"plain": ipcFile(t, []int32{1, 2, 3}),
		"zstd":  ipcFile(t, []int32{4, 5}, ipc.WithZstd()),
		"lz4":   ipcFile(t, []int32{6}, ipc.WithLZ4()),
	} {
		data := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
