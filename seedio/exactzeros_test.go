package seedio

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestR39_CollectorExactZerosOption: by default the collector widens zero
// bounds (R39: T26, T27); with CollectorOptions.ExactZeros (what seeds
// verify uses) it returns the exact totalOrder extrema, for Float16/32/64
// and for a dictionary of Float64 values.
func TestR39_CollectorExactZerosOption(t *testing.T) {
	n0 := math.Copysign(0, -1)
	// zones of 2 rows: [+0, 1] [-1, -0] [-0, +0] [+0, +0]
	vals := []float64{0, 1, -1, n0, n0, 0, 0, 0}
	exactMin := []float64{0, -1, n0, 0}
	exactMax := []float64{1, n0, 0, 0}
	widenedMin := []float64{n0, -1, n0, n0}
	widenedMax := []float64{1, 0, 0, 0}
	mem := memory.NewGoAllocator()
	arrays := map[string]arrow.Array{}
	b16, b32, b64 := array.NewFloat16Builder(mem), array.NewFloat32Builder(mem), array.NewFloat64Builder(mem)
	for _, v := range vals {
		b16.Append(float16.New(float32(v)))
		b32.Append(float32(v))
		b64.Append(v)
	}
	arrays["float16"], arrays["float32"], arrays["float64"] = b16.NewArray(), b32.NewArray(), b64.NewArray()
	db := array.NewDictionaryBuilder(mem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float64}).(*array.Float64DictionaryBuilder)
	for _, v := range vals {
		if err := db.Append(v); err != nil {
			t.Fatal(err)
		}
	}
	arrays["dictionary<float64>"] = db.NewArray()
	asF64 := func(v any) float64 {
		switch x := v.(type) {
		case float16.Num:
			return float64(x.Float32())
		case float32:
			return float64(x)
		case float64:
			return x
		}
		panic(fmt.Sprintf("%T", v))
	}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for name, arr := range arrays {
		for _, exact := range []bool{false, true} {
			c, err := NewCollector(arrow.Field{Name: "x", Type: arr.DataType(), Nullable: true}, CollectorOptions{RowsPerZone: 2, ExactZeros: exact})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Observe(arr); err != nil {
				t.Fatal(err)
			}
			s, err := c.Finish()
			if err != nil {
				t.Fatal(err)
			}
			wantMin, wantMax := widenedMin, widenedMax
			if exact {
				wantMin, wantMax = exactMin, exactMax
			}
			for i, z := range s.Zones {
				if !same(asF64(z.Min), wantMin[i]) || !same(asF64(z.Max), wantMax[i]) {
					t.Errorf("%s ExactZeros=%v zone %d: [%v, %v], want [%v, %v]", name, exact, i, asF64(z.Min), asF64(z.Max), wantMin[i], wantMax[i])
				}
			}
		}
		arr.Release()
	}
}
