package seedio

// T68: golden v1 seeds from our writer. testdata/golden_v1 holds, per case,
// the seed bytes (<name>.arrow, a complete Arrow IPC file) and what they
// mean (<name>.json: value type, rows_per_zone, N, bitmap hex and every
// zone's counts and bounds), so that another implementation can compare
// semantically (Q16). The test rebuilds every seed from its input and checks
// both files; run with -seedio.update-golden-v1 to rewrite them after a
// deliberate format change.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

var wUpdateGolden = flag.Bool("seedio.update-golden-v1", false, "rewrite testdata/golden_v1 from the current writer")

type wGoldenZone struct {
	Start            uint64 `json:"start"`
	Length           uint64 `json:"zone_length"`
	NullCount        uint32 `json:"null_count"`
	NaNCount         uint32 `json:"nan_count"`
	NegativeNaNCount uint32 `json:"negative_nan_count"`
	Min              any    `json:"min"`
	Max              any    `json:"max"`
}

type wGolden struct {
	Description   string        `json:"description"`
	ValueType     string        `json:"value_type"`
	RowsPerZone   uint64        `json:"rows_per_zone"`
	NumRows       uint64        `json:"num_rows"`
	Metadata      [][2]string   `json:"schema_metadata"`
	NullOffsets   []uint32      `json:"null_offsets"`
	Zones         []wGoldenZone `json:"zones"`
	LocatorSample string        `json:"locator_value_if_buffer_1"`
}

// wGoldenValue renders a bound for JSON without loss: floats as their bit
// pattern plus the value, strings as UTF-8, bytes as hex.
func wGoldenValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		return fmt.Sprintf("f64:0x%016x (%v)", math.Float64bits(x), x)
	case float32:
		return fmt.Sprintf("f32:0x%08x (%v)", math.Float32bits(x), x)
	case float16.Num:
		return fmt.Sprintf("f16:0x%04x (%v)", x.Uint16(), x.Float32())
	case string:
		return x
	case []byte:
		return "hex:" + hex.EncodeToString(x)
	case decimal128.Num:
		return "dec128:" + x.BigInt().String()
	case bool:
		return x
	}
	return fmt.Sprintf("%T:%v", v, v)
}

type wGoldenCase struct {
	name, desc string
	dt         arrow.DataType
	opts       CollectorOptions
	input      func(t *testing.T) []arrow.Array
}

func wGoldenCases() []wGoldenCase {
	one := func(dt arrow.DataType, vals ...any) func(t *testing.T) []arrow.Array {
		return func(t *testing.T) []arrow.Array { return []arrow.Array{wArr(t, dt, vals...)} }
	}
	dictT := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	structT := wStructArrType()
	return []wGoldenCase{
		{"int64_nulls_extremes", "int64 with nulls, MinInt64, MaxInt64; rpz 4", arrow.PrimitiveTypes.Int64, CollectorOptions{RowsPerZone: 4},
			one(arrow.PrimitiveTypes.Int64, int64(5), nil, int64(math.MinInt64), int64(math.MaxInt64), int64(0), nil, nil, nil, int64(-7))},
		{"float64_nan_signed_zero", "float64: NaNs of both signs and payloads (excluded, counted by sign), ±0 widened (R39), ±Inf; rpz 3",
			arrow.PrimitiveTypes.Float64, CollectorOptions{RowsPerZone: 3},
			one(arrow.PrimitiveTypes.Float64, wF64(wPosNaN64), wF64(wNegNaN64), 1.5, wF64(wNegZero), 0.0, nil, math.Inf(1), math.Inf(-1), wF64(wGoNaN64))},
		{"float16_nan_only_zone", "float16: a zone of NaNs only has null bounds; rpz 2", arrow.FixedWidthTypes.Float16, CollectorOptions{RowsPerZone: 2},
			one(arrow.FixedWidthTypes.Float16, wF16(0x7E00), wF16(0xFE00), wF16(0x3C00), wF16(0xC000))},
		{"utf8_truncation_L8", "utf8 with L = 8: long values cut on a char boundary for min; a U+10FFFF-only max (80 bytes, no character can be incremented) is written exactly because it is <= H = 4096; rpz 2",
			arrow.BinaryTypes.String, CollectorOptions{RowsPerZone: 2, MaxBoundBytes: 8},
			one(arrow.BinaryTypes.String, strings.Repeat("a", 100), "é", "", nil, strings.Repeat("\U0010FFFF", 20), "日本語テキスト")},
		{"binary_ff_fallback", "binary with L = 4: all-0xFF max falls back to the exact value", arrow.BinaryTypes.Binary, CollectorOptions{MaxBoundBytes: 4},
			one(arrow.BinaryTypes.Binary, bytes.Repeat([]byte{0xFF}, 10), []byte("ab\xff\xff\xff\xff"), []byte{0})},
		{"dictionary_null_entry", "dictionary<int8, utf8> whose null entry counts as null (R24, T18)", dictT, CollectorOptions{RowsPerZone: 3},
			func(t *testing.T) []arrow.Array { return []arrow.Array{wDictArr(t)} }},
		{"struct_outer_nulls", "struct: outer nulls only, null bounds (R47, T20)", structT, CollectorOptions{RowsPerZone: 4},
			func(t *testing.T) []arrow.Array { return []arrow.Array{wStructArr(t)} }},
		{"bool", "boolean; rpz 2", arrow.FixedWidthTypes.Boolean, CollectorOptions{RowsPerZone: 2},
			one(arrow.FixedWidthTypes.Boolean, true, false, nil, true, nil)},
		{"timestamp_tz", "timestamp(us, Europe/Paris): tz string kept in the value type", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"},
			CollectorOptions{}, one(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, arrow.Timestamp(1), arrow.Timestamp(-1), nil)},
		{"decimal128", "decimal128(38, 2)", &arrow.Decimal128Type{Precision: 38, Scale: 2}, CollectorOptions{},
			one(&arrow.Decimal128Type{Precision: 38, Scale: 2}, decimal128.FromI64(-5), decimal128.FromI64(3), nil)},
		{"null_type", "Null type: every row null (R24, T17); rpz 3", arrow.Null, CollectorOptions{RowsPerZone: 3},
			func(t *testing.T) []arrow.Array { return []arrow.Array{array.NewNull(5)} }},
	}
}

func wStructArrType() arrow.DataType {
	return arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "y", Type: arrow.BinaryTypes.String, Nullable: true})
}

func TestWriterT68_GoldenV1Seeds(t *testing.T) {
	dir := filepath.Join("testdata", "golden_v1")
	if *wUpdateGolden {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range wGoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			s := wCollect(t, wField(c.dt), c.opts, c.input(t)...)
			rpz := s.RowsPerZone
			schema, zones := wReadIPC(t, s.IPC, rpz)
			g := wGolden{
				Description:   c.desc,
				ValueType:     schema.Field(0).Type.String(),
				RowsPerZone:   rpz,
				NumRows:       s.NumRows,
				NullOffsets:   s.NullBitmap.ToArray(),
				LocatorSample: FormatLocator(1, rpz),
			}
			if g.NullOffsets == nil {
				g.NullOffsets = []uint32{}
			}
			md := schema.Metadata()
			for i, k := range md.Keys() {
				g.Metadata = append(g.Metadata, [2]string{k, md.Values()[i]})
			}
			for _, z := range zones {
				g.Zones = append(g.Zones, wGoldenZone{z.Start, z.Rows, uint32(z.NullCount), uint32(z.NaNCount), uint32(z.NegativeNaNCount),
					wGoldenValue(z.Min), wGoldenValue(z.Max)})
			}
			js, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			js = append(js, '\n')
			seedPath := filepath.Join(dir, c.name+".arrow")
			jsonPath := filepath.Join(dir, c.name+".json")
			if *wUpdateGolden {
				if err := os.WriteFile(seedPath, s.IPC, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(jsonPath, js, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSeed, err := os.ReadFile(seedPath)
			if err != nil {
				t.Fatalf("golden seed missing (run with -seedio.update-golden-v1): %v", err)
			}
			wantJSON, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(js, wantJSON) {
				t.Errorf("decoded meaning differs from %s:\n%s", jsonPath, js)
			}
			if !bytes.Equal(s.IPC, wantSeed) {
				t.Errorf("seed bytes differ from %s (%d vs %d bytes)", seedPath, len(s.IPC), len(wantSeed))
			}
			// The golden bytes themselves read back to the same meaning, and
			// pass the reader's full validation (spec §5.1).
			_, gz := wReadIPC(t, wantSeed, rpz)
			wSameZones(t, "golden file", gz, zones)
			if _, err := Decode(wantSeed, DecodeOptions{RowsPerZone: rpz, NumRows: s.NumRows, ColumnType: c.dt, TableFlagged: true}); err != nil {
				t.Errorf("reader-side Decode rejects the golden seed: %v", err)
			}
		})
	}
}
