package seedio

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestR24_LogicalNullRule: seedio's one null rule (isLogicalNull), used by
// the collector's counts and bitmap and by the decoder's bound check, per
// R24 and Q3.
func TestR24_LogicalNullRule(t *testing.T) {
	mem := memory.NewGoAllocator()
	i32 := func(vals []int32, valid []bool) arrow.Array {
		b := array.NewInt32Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		return b.NewArray()
	}
	// Dictionary: keys [0, null, 1] over values ["a", null].
	dict := func() arrow.Array {
		vb := array.NewStringBuilder(mem)
		vb.Append("a")
		vb.AppendNull()
		values := vb.NewArray()
		kb := array.NewInt32Builder(mem)
		kb.AppendValues([]int32{0, 0, 1}, []bool{true, false, true})
		keys := kb.NewArray()
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, keys, values)
	}
	// Run-end encoded: runs [0,2) = 7, [2,3) = null.
	ree := func() arrow.Array {
		return array.NewRunEndEncodedArray(i32([]int32{2, 3}, nil), i32([]int32{7, 0}, []bool{true, false}), 3, 0)
	}
	children := []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}
	sparse := func() arrow.Array {
		// Rows select child 0 whose rows are [1, null, 3].
		return array.NewSparseUnion(arrow.SparseUnionOf(children, []arrow.UnionTypeCode{0}), 3,
			[]arrow.Array{i32([]int32{1, 0, 3}, []bool{true, false, true})}, memory.NewBufferBytes([]byte{0, 0, 0}), 0)
	}
	dense := func() arrow.Array {
		// Rows 0, 1, 2 point at child rows 1, 0, 1 of [null, 5].
		offs := arrow.Int32Traits.CastToBytes([]int32{1, 0, 1})
		return array.NewDenseUnion(arrow.DenseUnionOf(children, []arrow.UnionTypeCode{0}), 3,
			[]arrow.Array{i32([]int32{0, 5}, []bool{false, true})}, memory.NewBufferBytes([]byte{0, 0, 0}), memory.NewBufferBytes(offs), 0)
	}
	for _, tc := range []struct {
		name string
		arr  arrow.Array
		want []bool
	}{
		{"validity bit", i32([]int32{1, 2, 3}, []bool{true, false, true}), []bool{false, true, false}},
		{"Null type: every row", array.NewNull(3), []bool{true, true, true}},
		{"dictionary: null key or key to a null entry", dict(), []bool{false, true, true}},
		{"run-end encoded: null run value", ree(), []bool{false, false, true}},
		{"sparse union (Q3): the selected child's row", sparse(), []bool{false, true, false}},
		{"dense union (Q3): the selected child's row at its offset", dense(), []bool{false, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.arr.Release()
			for i, w := range tc.want {
				if got := isLogicalNull(tc.arr, i); got != w {
					t.Errorf("row %d: null %v, want %v", i, got, w)
				}
			}
		})
	}
}

// TestQ3_UnionBoundIsNullBySelectedChild: in a seed Lance wrote for a union
// column (v0; we never seed unions), a bound row whose selected child is
// null is an unset bound; one whose child holds a value is a bound on a
// type without bounds (E17).
func TestQ3_UnionBoundIsNullBySelectedChild(t *testing.T) {
	u := arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, []arrow.UnionTypeCode{0})
	spec := seedSpec{version: 0, valueType: u, lens: []uint64{2, 2},
		mins: []any{unionRow{null: true}, unionRow{null: true}}, maxs: []any{unionRow{null: true}, unionRow{null: true}},
		nulls: []uint32{0, 0}}
	s := mustDecode(t, spec.bytes(t), decodeOpts(u, 2, 4))
	for i, z := range s.Zones {
		if z.Min != nil || z.Max != nil {
			t.Fatalf("zone %d bounds %v %v, want none", i, z.Min, z.Max)
		}
	}
	spec.mins = []any{unionRow{null: true}, unionRow{v: 1}}
	_, err := Decode(spec.bytes(t), decodeOpts(u, 2, 4))
	var se *SeedError
	if !errors.As(err, &se) || se.Code != "E17" {
		t.Fatalf("union bound with a non-null child: %v, want E17", err)
	}
}
