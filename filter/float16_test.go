package filter

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestR65_Float16Subnormals: issue 15 item 7 for the filter. arrow-go's
// float16.Num.Float32 reads the subnormal 0x0001 as ~1.1e-41 and
// float16.New flushes subnormal literals to zero; with either, a predicate
// between subnormals kept no row although rows match (a wrong answer,
// R65). Values and literals go through internal/floatorder's exact
// conversions. Fails without the fix: `x > 5e-8` kept no row.
func TestR65_Float16Subnormals(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.FixedWidthTypes.Float16, Nullable: true}}, nil)
	b := array.NewFloat16Builder(memory.DefaultAllocator)
	defer b.Release()
	// 2^-24 (smallest subnormal), 3·2^-24, -2^-24, +0, 2^-14 (smallest normal)
	for _, bits := range []uint16{0x0001, 0x0003, 0x8001, 0x0000, 0x0400} {
		b.Append(float16.FromBits(bits))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()

	cases := []struct {
		pred string
		want []bool
	}{
		{"x > 5e-8", []bool{true, true, false, false, true}},                 // 2^-24 ≈ 5.96e-8
		{"x > 1e-7", []bool{false, true, false, false, true}},                // 3·2^-24 ≈ 1.79e-7
		{"x < 0", []bool{false, false, true, false, false}},                  // -2^-24
		{"x BETWEEN 1e-8 AND 1e-6", []bool{true, true, false, false, false}}, // subnormals only
		{"x = 0", []bool{false, false, false, true, false}},
	}
	for _, c := range cases {
		f, err := Compile(c.pred, schema)
		if err != nil {
			t.Fatalf("%s: %v", c.pred, err)
		}
		got, err := f.Eval(rec)
		if err != nil {
			t.Fatalf("%s: %v", c.pred, err)
		}
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s: row %d (bits %#04x) = %v, want %v", c.pred, i, col.(*array.Float16).Value(i).Uint16(), got[i], c.want[i])
			}
		}
	}
}
