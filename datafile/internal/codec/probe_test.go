package codec_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// probeRecord holds data chosen so that Lance 12 picks each compression
// of spec §1.2's census: FSST text, bit-packing with nulls (out-of-line
// bit-packed def levels), a 64-bit dictionary (LZ4-framed flat), RLE runs,
// zstd + byte-stream split, lz4, full-zip FSST strings and full-zip
// fixed-size lists with validity.
func probeRecord(rows int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(11, 12))
	mem := memory.DefaultAllocator
	meta := func(k, v []string) arrow.Metadata { return arrow.NewMetadata(k, v) }
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i32_nulls", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64_lowcard", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
		{Name: "i32_runs", Type: arrow.PrimitiveTypes.Int32, Nullable: false},
		{Name: "f32_zstd", Type: arrow.PrimitiveTypes.Float32, Nullable: false,
			Metadata: meta([]string{"lance-encoding:compression", "lance-encoding:bss"}, []string{"zstd", "on"})},
		{Name: "i32_lz4", Type: arrow.PrimitiveTypes.Int32, Nullable: false,
			Metadata: meta([]string{"lance-encoding:compression"}, []string{"lz4"})},
		{Name: "long_text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "fsl_wide", Type: arrow.FixedSizeListOf(128, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "u8_small", Type: arrow.PrimitiveTypes.Uint8, Nullable: false},
		{Name: "u16_small", Type: arrow.PrimitiveTypes.Uint16, Nullable: false},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	words := []string{"index", "vector", "lance", "table", "zone", "seed", "page", "chunk", "héllo", "wörld"}
	for i := 0; i < rows; i++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s %s #%d", words[i%10], words[(i/10)%10], i)
		b.Field(0).(*array.StringBuilder).Append(sb.String())
		if i%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(r.IntN(5000)))
		}
		b.Field(2).(*array.Int64Builder).Append(int64(r.IntN(10)) * 1_000_000_007)
		b.Field(3).(*array.Int32Builder).Append(int32((i / 50) % 7))
		b.Field(4).(*array.Float32Builder).Append(float32(math.Sin(float64(i) / 100)))
		b.Field(5).(*array.Int32Builder).Append(int32(i % 300))
		if i%7 == 3 {
			b.Field(6).AppendNull()
		} else {
			n := 300 + r.IntN(700)
			var lb strings.Builder
			for lb.Len() < n {
				lb.WriteString(words[r.IntN(8)]) // ASCII words: cut anywhere
				lb.WriteByte(' ')
			}
			b.Field(6).(*array.StringBuilder).Append(lb.String()[:n])
		}
		fb := b.Field(7).(*array.FixedSizeListBuilder)
		if i%11 == 5 {
			fb.AppendNull()
		} else {
			fb.Append(true)
			vb := fb.ValueBuilder().(*array.Float32Builder)
			for k := 0; k < 128; k++ {
				if k == 7 && i%13 == 0 {
					vb.AppendNull()
				} else {
					vb.Append(float32(i*128 + k))
				}
			}
		}
		b.Field(8).(*array.Uint8Builder).Append(uint8(i % 8))
		b.Field(9).(*array.Uint16Builder).Append(uint16(i % 1000))
	}
	return b.NewRecordBatch()
}

// binaryRecord: 40 KB binary values, which Lance 12 writes full-zip with
// per-value zstd (§5.5 bin_huge).
func binaryRecord() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < 4; i++ {
		if i == 2 {
			b.Field(0).AppendNull()
			continue
		}
		b.Field(0).(*array.BinaryBuilder).Append(bytes.Repeat([]byte(fmt.Sprintf("blob %d payload; ", i)), 40000/16))
	}
	return b.NewRecordBatch()
}

// TestSpec10_ProbePagesDecodeToLance12Values: tables Lance 12 writes here
// at 2.2 and 2.1 with data that selects FSST, bit-packing, RLE, dictionary,
// zstd/lz4 framing, byte-stream split and full-zip (FSST, per-value zstd,
// fixed-size lists) decode to the values Lance returns.
func TestSpec10_ProbePagesDecodeToLance12Values(t *testing.T) {
	p := peerlance.ForTest(t)
	ctx := t.Context()
	for _, c := range []struct {
		name    string
		version string
		rec     func() arrow.RecordBatch
		want    []string // compressions that must have been seen
	}{
		{"probe22", "2.2", func() arrow.RecordBatch { return probeRecord(3000) }, []string{"Fsst", "InlineBitpacking", "OutOfLineBitpacking", "Rle", `"scheme":1`, `"scheme":2`, "ByteStreamSplit", "dict=", "full-zip"}},
		{"bin22", "2.2", binaryRecord, []string{"full-zip"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			rec := c.rec()
			defer rec.Release()
			file := filepath.Join(tmp, "in.arrow")
			if err := peerlance.WriteIPCFile(file, rec.Schema(), rec); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(tmp, c.name+".lance")
			if _, err := p.Create(ctx, dir, file, peerlance.CreateOptions{StorageVersion: c.version}); err != nil {
				t.Fatal(err)
			}
			checked, kinds := checkTable(t, p, dir)
			var all []string
			for k := range kinds {
				all = append(all, k)
			}
			joined := strings.Join(all, "\n")
			for _, w := range c.want {
				if !strings.Contains(joined, w) {
					t.Errorf("no page used %s; layouts:\n%s", w, joined)
				}
			}
			if checked < int(rec.NumRows()) {
				t.Fatalf("only %d values checked", checked)
			}
			t.Logf("%d values equal to Lance 12's; layouts:\n%s", checked, joined)
		})
	}
}
