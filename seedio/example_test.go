package seedio_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// A writer collects one column's seed batch by batch, appends the seed's
// bytes to its output (here a buffer) and names the buffer in the schema
// metadata; a reader decodes the seed and prunes zones with it.
func ExampleCollector_AppendFinish() {
	field := arrow.Field{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	c, err := seedio.NewCollector(field, seedio.CollectorOptions{RowsPerZone: 2})
	if err != nil {
		panic(err)
	}
	b := array.NewFloat64Builder(memory.NewGoAllocator())
	b.AppendValues([]float64{3.5, -1, 7}, nil)
	b.AppendNull()
	batch := b.NewArray()
	defer batch.Release()
	if err := c.Observe(batch); err != nil {
		panic(err)
	}
	buf, err := c.AppendFinish(nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(seedio.LocatorKey(field.Name), "=", seedio.FormatLocator(1, c.RowsPerZone()))

	s, err := seedio.Decode(buf, seedio.DecodeOptions{RowsPerZone: 2, NumRows: 4, ColumnType: field.Type, TableFlagged: true})
	if err != nil {
		panic(err)
	}
	for _, z := range s.Zones {
		fmt.Printf("zone %d: rows %d, nulls %d, min %v, max %v\n", z.Index, z.Rows, z.NullCount, z.Min, z.Max)
	}
	// Output:
	// lance.seed.price = 1:2
	// zone 0: rows 2, nulls 0, min -1, max 3.5
	// zone 1: rows 2, nulls 1, min 7, max 7
}
