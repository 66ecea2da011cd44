// Package arrowconcat concatenates arrow-go arrays keeping the bit patterns
// of float dictionary values (NaN payloads and signs, -0.0 vs +0.0), which
// array.Concatenate does not (issue 12 item 1: our reader returns exactly
// the values Lance 12 returns). Used by datafile and scan.
package arrowconcat

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Exact concatenates arrays like array.Concatenate but keeps the bit
// patterns of float dictionary values (NaN payloads and signs, -0.0 vs
// +0.0), as Lance 12 returns them (issue 12 item 1). array.Concatenate
// compares the parts' dictionaries with array.Equal (NaN != NaN, -0.0 ==
// +0.0) and unifies unequal ones through a memo table that treats every NaN
// as one, so the NaNs of pages or row ranges came back as the first NaN met.
// Here float dictionary values (also inside list, large_list,
// fixed_size_list and struct) travel as unsigned integers of their width,
// which compare and unify by bits, and get their type back afterwards.
// Dictionaries inside a map are not rewritten (Lance writes none).
func Exact(parts []arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	if len(parts) == 0 {
		return array.Concatenate(parts, mem)
	}
	dt := parts[0].DataType()
	bt, changed := floatDictsAsBits(dt)
	if !changed {
		return array.Concatenate(parts, mem)
	}
	asBits := make([]arrow.Array, len(parts))
	for i, p := range parts {
		d := withType(p.Data(), bt)
		asBits[i] = array.MakeFromData(d)
		d.Release()
	}
	defer func() {
		for _, a := range asBits {
			a.Release()
		}
	}()
	c, err := array.Concatenate(asBits, mem)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	d := withType(c.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// floatDictsAsBits returns dt with the float value types of its
// dictionaries replaced by unsigned integers of the same width, and whether
// anything was replaced.
func floatDictsAsBits(dt arrow.DataType) (arrow.DataType, bool) {
	field := func(f arrow.Field) (arrow.Field, bool) {
		t, ch := floatDictsAsBits(f.Type)
		f.Type = t
		return f, ch
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		var vt arrow.DataType
		switch t.ValueType.ID() {
		case arrow.FLOAT16:
			vt = arrow.PrimitiveTypes.Uint16
		case arrow.FLOAT32:
			vt = arrow.PrimitiveTypes.Uint32
		case arrow.FLOAT64:
			vt = arrow.PrimitiveTypes.Uint64
		default:
			return dt, false
		}
		return &arrow.DictionaryType{IndexType: t.IndexType, ValueType: vt, Ordered: t.Ordered}, true
	case *arrow.LargeListType:
		if f, ch := field(t.ElemField()); ch {
			return arrow.LargeListOfField(f), true
		}
	case *arrow.ListType:
		if f, ch := field(t.ElemField()); ch {
			return arrow.ListOfField(f), true
		}
	case *arrow.FixedSizeListType:
		if f, ch := field(t.ElemField()); ch {
			return arrow.FixedSizeListOfField(t.Len(), f), true
		}
	case *arrow.StructType:
		fs := t.Fields()
		changed := false
		for i := range fs {
			var ch bool
			fs[i], ch = field(fs[i])
			changed = changed || ch
		}
		if changed {
			return arrow.StructOf(fs...), true
		}
	}
	return dt, false
}

// withType returns d with type dt (same layout, same buffers): the
// children and dictionary take dt's child and value types.
func withType(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	if t, ok := dt.(*arrow.DictionaryType); ok && d.Dictionary() != nil {
		dict := withType(d.Dictionary(), t.ValueType)
		defer dict.Release()
		return array.NewDataWithDictionary(dt, d.Len(), d.Buffers(), d.NullN(), d.Offset(), dict.(*array.Data))
	}
	kids := d.Children()
	if nt, ok := dt.(arrow.NestedType); ok && len(kids) > 0 && len(nt.Fields()) == len(kids) {
		fs := nt.Fields()
		nk := make([]arrow.ArrayData, len(kids))
		for i, k := range kids {
			nk[i] = withType(k, fs[i].Type)
		}
		defer func() {
			for _, k := range nk {
				k.Release()
			}
		}()
		kids = nk
	}
	return array.NewData(dt, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
}
