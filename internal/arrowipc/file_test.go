package arrowipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// readAllFile reads every record of the Arrow IPC file b through
// NewFileReader and returns the first column's values.
func readAllFile(b []byte) ([]int32, error) {
	r, err := NewFileReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []int32
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return out, err
		}
		out = append(out, rec.Column(0).(*array.Int32).Int32Values()...)
	}
	return out, nil
}

func TestCheckFileAt_PassesWhatArrowGoWrites(t *testing.T) {
	for name, opts := range map[string][]ipc.Option{"plain": nil, "zstd": {ipc.WithZstd()}, "lz4": {ipc.WithLZ4()}} {
		t.Run(name, func(t *testing.T) {
			b := ipcFile(t, []int32{1, 2, 3}, opts...)
			vals, err := readAllFile(b)
			if err != nil || len(vals) != 3 || vals[2] != 3 {
				t.Fatalf("read %v, %v", vals, err)
			}
		})
	}
}

// TestCheckFileAt_HostileLengths: the file path of `write` checks what
// arrow-go's file reader would allocate by (issue 15 item 13, the same
// schema field count of 2^31 as the stream case, here in the footer).
func TestCheckFileAt_HostileLengths(t *testing.T) {
	good := ipcFile(t, []int32{1, 2, 3})
	f, err := ParseFile(good)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := f.RecordBatchBlocks()
	if err != nil || len(blocks) != 1 {
		t.Fatal(blocks, err)
	}
	patch := func(pos uint64, v uint64, n int) []byte {
		b := bytes.Clone(good)
		if n == 4 {
			binary.LittleEndian.PutUint32(b[pos:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(b[pos:], v)
		}
		return b
	}
	blk := f.FooterStart + blocks[0].Pos
	// The footer schema's fields vector: a hostile element count.
	st, _, _ := f.Schema()
	fstart, _, _, err := st.Vector(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	zstdFile := ipcFile(t, []int32{1, 2, 3}, ipc.WithZstd())
	zf, _ := ParseFile(zstdFile)
	zb, _ := zf.RecordBatchBlocks()
	zmeta := zstdFile[zb[0].Offset : zb[0].Offset+zb[0].MetaLen]
	p, l, _ := MessagePrefix(zmeta)
	zm, _ := ParseMessage(zmeta[p : p+l])
	zrb, _ := ParseRecordBatch(zm.Header)
	firstCompressed := -1
	for i, b := range zrb.Buffers {
		if b.Length > 0 {
			firstCompressed = int(zb[0].Offset + zb[0].MetaLen + b.Offset)
			break
		}
		_ = i
	}
	hugeClaim := bytes.Clone(zstdFile)
	binary.LittleEndian.PutUint64(hugeClaim[firstCompressed:], 1<<40)
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"schema field count beyond the footer", "footer schema", patch(f.FooterStart+fstart-4, 1<<31-1, 4)},
		{"block body beyond the file", "do not fit before the footer", patch(blk+16, 1<<40, 8)},
		{"block offset beyond the file", "do not fit before the footer", patch(blk, 1<<40, 8)},
		{"compressed buffer claims 1 TiB", "claims 1099511627776 uncompressed bytes", hugeClaim},
		{"truncated", "trailing magic", good[:len(good)-3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAllFile(tc.b)
			var fe *FramingError
			if !errors.As(err, &fe) || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Fatalf("%v, want a *FramingError containing %q", err, tc.want)
			}
		})
	}
}

// FuzzGuardFile: CheckFileAt never panics, and arrow-go's file reader
// behind it never allocates by a length the bytes do not back.
func FuzzGuardFile(f *testing.F) {
	f.Add(ipcFile(f, []int32{1, 2, 3}))
	f.Add(ipcFile(f, []int32{7}, ipc.WithZstd()))
	f.Add(ipcFile(f, []int32{7, 8}, ipc.WithLZ4()))
	if b, err := os.ReadFile("testdata/stream/schema-field-count-2e31.arrows"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := CheckFileAt(bytes.NewReader(b), int64(len(b)), 1<<20); err != nil {
			var fe *FramingError
			if !errors.As(err, &fe) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		func() {
			defer func() { _ = recover() }() // arrow-go's own panics are not this target's subject
			r, err := ipc.NewFileReader(bytes.NewReader(b))
			if err != nil {
				return
			}
			defer r.Close()
			for i := 0; i < r.NumRecords(); i++ {
				if _, err := r.RecordBatch(i); err != nil {
					return
				}
			}
		}()
	})
}
