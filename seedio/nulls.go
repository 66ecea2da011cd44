package seedio

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// isLogicalNull is seedio's one rule for whether row i of arr is null: the
// logical nulls of R24 that the collector counts and records in the null
// bitmap, and that the decoder uses to tell a set bound from an unset one.
//
//   - an ordinary array: its validity bit;
//   - the Null type: every row (arrow-go reports IsNull(i) == false);
//   - a dictionary: a null key, or a key pointing at a null entry;
//   - run-end encoded: a null run value;
//   - a union (sparse or dense): the selected child's row is null — unions
//     have no validity of their own, "null" is defined by the selected
//     child (zone-seeds.md Q3). The collector never sees a union (Q3: no
//     seed); the decoder meets them in v0 seeds Lance wrote;
//   - an extension array: its storage's rule.
//
// Nested types (struct, list, map) use their outer validity (R24).
func isLogicalNull(arr arrow.Array, i int) bool {
	switch a := arr.(type) {
	case *array.Null:
		return true
	case *array.Dictionary:
		if a.IsNull(i) {
			return true
		}
		return isLogicalNull(a.Dictionary(), a.GetValueIndex(i))
	case *array.RunEndEncoded:
		return isLogicalNull(a.Values(), a.GetPhysicalIndex(i))
	case *array.SparseUnion:
		return isLogicalNull(a.Field(a.ChildID(i)), i)
	case *array.DenseUnion:
		return isLogicalNull(a.Field(a.ChildID(i)), int(a.ValueOffset(i)))
	case array.ExtensionArray:
		return isLogicalNull(a.Storage(), i)
	}
	return arr.IsNull(i)
}
