package peerlance

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestRandomTableDeterministicAndCoversTypes: the same seed gives the same
// record, and 200 seeds together draw every type family the generator
// promises (no peer needed).
func TestRandomTableDeterministicAndCoversTypes(t *testing.T) {
	seen := map[arrow.Type]bool{}
	var walk func(dt arrow.DataType)
	walk = func(dt arrow.DataType) {
		seen[dt.ID()] = true
		switch t := dt.(type) {
		case arrow.NestedType:
			for _, f := range t.Fields() {
				walk(f.Type)
			}
		}
	}
	for seed := uint64(1); seed <= 200; seed++ {
		a := RandomTable(seed, RandomTableOptions{StorageVersion: "2.2"})
		b := RandomTable(seed, RandomTableOptions{StorageVersion: "2.2"})
		if !array.RecordApproxEqual(a, b, array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("seed %d: two records differ", seed)
		}
		for _, f := range a.Schema().Fields() {
			walk(f.Type)
		}
		a.Release()
		b.Release()
	}
	for _, id := range []arrow.Type{arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.UINT64, arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY,
		arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY, arrow.DECIMAL128, arrow.DECIMAL256, arrow.DATE32, arrow.DATE64,
		arrow.TIME32, arrow.TIME64, arrow.TIMESTAMP, arrow.DURATION, arrow.NULL, arrow.DICTIONARY, arrow.LIST,
		arrow.FIXED_SIZE_LIST, arrow.STRUCT, arrow.MAP} {
		if !seen[id] {
			t.Errorf("no seed drew %s", id)
		}
	}
}
