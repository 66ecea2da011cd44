package seedio

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// seedSpec describes a hand-built seed IPC file for reader tests. It is
// independent of the Collector so that every malformed shape can be built.
type seedSpec struct {
	version   int            // 0: no version key, no negative_nan_count; 1: both
	valueType arrow.DataType // min/max type
	mins      []any          // per zone; nil = null bound; nonNullNested = a non-null nested value
	maxs      []any
	nulls     []uint32
	nans      []uint32
	negs      []uint32 // v1 only; nil = zeros
	lens      []uint64
	meta      [][2]string // nil = defaults (version "1" for v1, empty bitmap)
	fields    []arrow.Field
	batches   int // 0 = 1
	opts      []ipc.Option
	nullCount map[int]bool // zones whose null_count is written as null
}

type nonNullNestedT struct{}

var nonNullNested = nonNullNestedT{}

// unionRow is a row of a union bound column with one int32 child (type code
// 0): the union selects the child, whose row is null or v.
type unionRow struct {
	null bool
	v    int32
}

func f64bits(b uint64) float64 { return math.Float64frombits(b) }
func f32bits(b uint32) float32 { return math.Float32frombits(b) }

const (
	posNaN64   = 0x7FF8000000000000
	negNaN64   = 0xFFF8000000000000
	goNaN64    = 0x7FF8000000000001 // math.NaN()
	negZero64  = 0x8000000000000000
	posNaN32   = 0x7FC00000
	negNaN32   = 0xFFC00000
	negZero32  = 0x80000000
	f16PosNaN  = 0x7E00
	f16NegNaN  = 0xFE00
	f16SigNaN  = 0x7C01
	f16One     = 0x3C00
	f16NegZero = 0x8000
)

func (s seedSpec) zones() int { return len(s.lens) }

func (s seedSpec) schema() *arrow.Schema {
	fields := s.fields
	if fields == nil {
		fields = []arrow.Field{
			{Name: fieldMin, Type: s.valueType, Nullable: true},
			{Name: fieldMax, Type: s.valueType, Nullable: true},
			{Name: fieldNullCount, Type: arrow.PrimitiveTypes.Uint32},
			{Name: fieldNaNCount, Type: arrow.PrimitiveTypes.Uint32},
		}
		if s.version == 1 {
			fields = append(fields, arrow.Field{Name: fieldNegativeNaNCount, Type: arrow.PrimitiveTypes.Uint32})
		}
		fields = append(fields, arrow.Field{Name: fieldZoneLength, Type: arrow.PrimitiveTypes.Uint64})
	}
	meta := s.meta
	if meta == nil {
		if s.version == 1 {
			meta = [][2]string{{metaVersion, "1"}, {metaNullBitmap, emptyNullBitmapHex}}
		} else {
			meta = [][2]string{{metaNullBitmap, ""}}
		}
	}
	var keys, vals []string
	for _, kv := range meta {
		keys = append(keys, kv[0])
		vals = append(vals, kv[1])
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &md)
}

func appendValue(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	if _, ok := v.(nonNullNestedT); ok {
		switch bb := b.(type) {
		case *array.ListBuilder:
			bb.Append(true)
			bb.ValueBuilder().AppendNull()
		case *array.StructBuilder:
			bb.Append(true)
			for i := 0; i < bb.NumField(); i++ {
				bb.FieldBuilder(i).AppendNull()
			}
		case *array.MonthIntervalBuilder:
			bb.Append(1)
		default:
			t.Fatalf("nonNullNested for %T", b)
		}
		return
	}
	if u, ok := v.(unionRow); ok {
		ub := b.(array.UnionBuilder)
		ub.Append(0)
		child := ub.Child(0).(*array.Int32Builder)
		if u.null {
			child.AppendNull()
		} else {
			child.Append(u.v)
		}
		return
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.Int8Builder:
		bb.Append(v.(int8))
	case *array.Int16Builder:
		bb.Append(v.(int16))
	case *array.Int32Builder:
		bb.Append(v.(int32))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Uint8Builder:
		bb.Append(v.(uint8))
	case *array.Uint16Builder:
		bb.Append(v.(uint16))
	case *array.Uint32Builder:
		bb.Append(v.(uint32))
	case *array.Uint64Builder:
		bb.Append(v.(uint64))
	case *array.Float16Builder:
		bb.Append(v.(float16.Num))
	case *array.Float32Builder:
		bb.Append(v.(float32))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.Decimal32Builder:
		bb.Append(v.(decimal.Decimal32))
	case *array.Decimal64Builder:
		bb.Append(v.(decimal.Decimal64))
	case *array.Decimal128Builder:
		bb.Append(v.(decimal128.Num))
	case *array.Decimal256Builder:
		bb.Append(v.(decimal256.Num))
	case *array.Date32Builder:
		bb.Append(v.(arrow.Date32))
	case *array.Date64Builder:
		bb.Append(v.(arrow.Date64))
	case *array.Time32Builder:
		bb.Append(v.(arrow.Time32))
	case *array.Time64Builder:
		bb.Append(v.(arrow.Time64))
	case *array.TimestampBuilder:
		bb.Append(v.(arrow.Timestamp))
	case *array.DurationBuilder:
		bb.Append(v.(arrow.Duration))
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.LargeStringBuilder:
		bb.Append(v.(string))
	case *array.StringViewBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case string: // raw bytes into a string column (invalid UTF-8 tests)
			bb.AppendString(x)
		default:
			bb.Append(x.([]byte))
		}
	case *array.BinaryViewBuilder:
		bb.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		bb.Append(v.([]byte))
	case array.DictionaryBuilder:
		switch x := v.(type) {
		case string:
			if err := bb.(*array.BinaryDictionaryBuilder).AppendString(x); err != nil {
				t.Fatal(err)
			}
		case int32:
			if err := bb.(*array.Int32DictionaryBuilder).Append(x); err != nil {
				t.Fatal(err)
			}
		case float64:
			if err := bb.(*array.Float64DictionaryBuilder).Append(x); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("dictionary value %T", v)
		}
	default:
		t.Fatalf("appendValue: builder %T", b)
	}
}

// record builds one record batch of the spec.
func (s seedSpec) record(t testing.TB, schema *arrow.Schema) arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for fi, f := range schema.Fields() {
		b := rb.Field(fi)
		for z := 0; z < s.zones(); z++ {
			switch f.Name {
			case fieldMin:
				appendValue(t, b, at(s.mins, z))
			case fieldMax:
				appendValue(t, b, at(s.maxs, z))
			case fieldNullCount:
				if s.nullCount[z] {
					b.AppendNull()
				} else {
					appendCount(b, uint64(at32(s.nulls, z)))
				}
			case fieldNaNCount:
				appendCount(b, uint64(at32(s.nans, z)))
			case fieldNegativeNaNCount:
				appendCount(b, uint64(at32(s.negs, z)))
			case fieldZoneLength:
				appendCount(b, s.lens[z])
			default:
				b.AppendNull()
			}
		}
	}
	return rb.NewRecordBatch()
}

func at(vs []any, i int) any {
	if i < len(vs) {
		return vs[i]
	}
	return nil
}

func at32(vs []uint32, i int) uint32 {
	if i < len(vs) {
		return vs[i]
	}
	return 0
}

// bytes encodes the spec as an IPC file.
func (s seedSpec) bytes(t testing.TB) []byte {
	t.Helper()
	schema := s.schema()
	var buf bytes.Buffer
	opts := append([]ipc.Option{ipc.WithSchema(schema)}, s.opts...)
	w, err := ipc.NewFileWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := s.batches
	if n == 0 {
		n = 1
	}
	if n > 0 {
		rec := s.record(t, schema)
		for i := 0; i < n; i++ {
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// uniformLens returns zone lengths for n rows at rpz.
func uniformLens(n, rpz uint64) []uint64 {
	var out []uint64
	for n > 0 {
		l := min(n, rpz)
		out = append(out, l)
		n -= l
	}
	return out
}

// int64Spec is a valid v1 Int64 seed with the given zones of bounds.
func int64Spec(version int, rpz, n uint64, bounds ...[2]any) seedSpec {
	s := seedSpec{version: version, valueType: arrow.PrimitiveTypes.Int64, lens: uniformLens(n, rpz)}
	for _, b := range bounds {
		s.mins = append(s.mins, b[0])
		s.maxs = append(s.maxs, b[1])
	}
	return s
}

func decodeOpts(vt arrow.DataType, rpz, n uint64) DecodeOptions {
	return DecodeOptions{RowsPerZone: rpz, NumRows: n, ColumnType: vt, TableFlagged: true}
}

// mustDecode decodes and fails the test on error.
func mustDecode(t testing.TB, b []byte, o DecodeOptions) *Seed {
	t.Helper()
	s, err := Decode(b, o)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return s
}

// wantErr decodes and requires errors.Is(err, sentinel) and the code in the message.
func wantCode(t testing.TB, b []byte, o DecodeOptions, sentinel error) error {
	t.Helper()
	s, err := Decode(b, o)
	if err == nil {
		t.Fatalf("Decode succeeded (%d zones), want %v", len(s.Zones), sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("Decode error %v, want %v", err, sentinel)
	}
	return err
}

func appendCount(b array.Builder, v uint64) {
	switch bb := b.(type) {
	case *array.Uint32Builder:
		bb.Append(uint32(v))
	case *array.Uint64Builder:
		bb.Append(v)
	default:
		b.AppendNull()
	}
}
