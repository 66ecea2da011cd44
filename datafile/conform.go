package datafile

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// ConformArray reshapes arr, read for top-level file field fi, to the table
// schema's view of that field (spec lance-file-format-2.1.md §8.3: readers
// map file columns to table fields by id). The table fields are the
// manifest's (Manifest.fields). Struct children follow the table: its names
// (a renamed field keeps its old name in old files), its order, a child the
// file lacks reads as null, a child the table dropped is left out. Lists,
// maps and fixed-size lists are conformed through their items. It returns
// arr itself (retained) when nothing changes.
func (f *File) ConformArray(fi int, arr arrow.Array, table []*pb.Field) (arrow.Array, error) {
	ts := Schema{}
	for _, pf := range table {
		ts.Fields = append(ts.Fields, Field{Name: pf.GetName(), ID: pf.GetId(), ParentID: pf.GetParentId(),
			LogicalType: pf.GetLogicalType(), Nullable: pf.GetNullable()})
	}
	if err := linkFields(&ts, -1); err != nil {
		return nil, withPath(err, f.path)
	}
	ti := -1
	for i := range ts.Fields {
		if ts.Fields[i].ID == f.schema.Fields[fi].ID {
			ti = i
			break
		}
	}
	if ti < 0 {
		return nil, fmt.Errorf("datafile: %s: field %q (id %d) is not in the table schema", f.path, f.schema.Fields[fi].Name, f.schema.Fields[fi].ID)
	}
	d, err := conform(&f.schema, fi, &ts, ti, arr.Data())
	if err != nil {
		return nil, withPath(err, f.path)
	}
	defer d.Release()
	return array.MakeFromData(d), nil
}

func conform(fs *Schema, fi int, ts *Schema, ti int, d arrow.ArrayData) (arrow.ArrayData, error) {
	tf := &ts.Fields[ti]
	af, err := ts.arrowField(ti, 0)
	if err != nil {
		return nil, err
	}
	switch dt := d.DataType().(type) {
	case *arrow.StructType:
		tst, ok := af.Type.(*arrow.StructType)
		if !ok {
			return nil, fmt.Errorf("datafile: field %q is a struct in the file but %s in the table: %w", tf.Name, af.Type, ErrMalformed)
		}
		kids := make([]arrow.ArrayData, len(tf.Children))
		defer func() {
			for _, k := range kids {
				if k != nil {
					k.Release()
				}
			}
		}()
		for k, tc := range tf.Children {
			fc := -1
			for j, c := range fs.Fields[fi].Children {
				if fs.Fields[c].ID == ts.Fields[tc].ID {
					fc = j
					break
				}
			}
			if fc < 0 {
				kids[k] = array.MakeArrayOfNull(memory.DefaultAllocator, tst.Field(k).Type, d.Len()).Data()
				kids[k].Retain()
				continue
			}
			child := array.NewSliceData(d.Children()[fc], int64(d.Offset()), int64(d.Offset()+d.Len()))
			cd, err := conform(fs, fs.Fields[fi].Children[fc], ts, tc, child)
			child.Release()
			if err != nil {
				return nil, err
			}
			kids[k] = cd
		}
		return array.NewData(tst, d.Len(), []*memory.Buffer{d.Buffers()[0]}, kids, d.NullN(), d.Offset()), nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		if len(fs.Fields[fi].Children) != 1 || len(tf.Children) != 1 || len(d.Children()) != 1 {
			break
		}
		cd, err := conform(fs, fs.Fields[fi].Children[0], ts, tf.Children[0], d.Children()[0])
		if err != nil {
			return nil, err
		}
		defer cd.Release()
		nt := af.Type
		if _, isMap := dt.(*arrow.MapType); isMap {
			nt = dt
		}
		return array.NewData(nt, d.Len(), d.Buffers(), []arrow.ArrayData{cd}, d.NullN(), d.Offset()), nil
	}
	d.Retain()
	return d, nil
}
