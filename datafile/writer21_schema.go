package datafile

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancekeeper/lancekeeper/seedio"
)

// The 2.1/2.2/2.3 writer (spec lance-file-format-2.1.md §8). A 2.1+ file has
// one column per leaf (§3.1): every primitive, string or binary field and
// every fixed_size_list of primitives; structs, lists and maps contribute
// a layer to each leaf below them instead of a column.

// leafKind is the physical value form of a 2.1+ leaf column.
type leafKind uint8

const (
	lkFixed21 leafKind = iota // fixed width W bits (multiple of 8): flat(W)
	lkBool21                  // flat(1) bitmap
	lkVar21                   // variable(flat(32|64))
	lkFSL21                   // fixed_size_list{dim; flat(W)} (W = 1 for bool items)
	lkNull21                  // the null type: always an all-null page
)

// pathNode is one schema level on a leaf's path, outermost first.
type pathNode struct {
	list     bool // list, large_list or map (a LIST layer); else an ITEM layer
	child    int  // struct: index of the child on the path
	nullable bool // the field is nullable
}

// leaf21 is one column of a 2.1+ file and its pending rows.
type leaf21 struct {
	index  int        // column index
	field  int        // index of its Lance field in Writer.lance.Fields
	name   string     // dotted path, for errors
	top    int        // top-level arrow field
	path   []pathNode // outermost first; the last node is the leaf itself
	kind   leafKind
	width  int // bits per value (per item for FSL)
	dim    int // FSL items per value
	off64  bool
	nlists int // LIST layers on the path (= max_rep)
	// dict: an Arrow dictionary column; Lance 12 reads such a column only
	// from dictionary pages (spec 2.1 §4.5), so every page is one.
	dict bool
	// dictKey: bits of the Arrow dictionary's key type; the page indices
	// have this width (Lance 12: "dictionary indices use 32 bits but the
	// declared Int16 key type uses 16 bits").
	dictKey int
	// dictSigned: the key type is signed (an int8 key holds 128 distinct
	// values, a uint8 key 256).
	dictSigned bool

	// pending entries: rep (when nlists > 0) and the absent code of each
	// entry: 0 = valid, 2L+1 = null at layer L, 2L+2 = empty list at layer
	// L (layers numbered inner → outer). rowStart (lists only) is the
	// entry index at which each pending row starts.
	rep      []uint16
	code     []uint16
	rowStart []uint32
	anyCode  bool // some pending code != 0
	// pending value slots
	slots  int
	vals   []byte // fixed: W/8 bytes per slot; bool: bits; FSL: dim items per slot
	ivalid []byte // FSL item validity bits (dim per slot)
	// nested fixed_size_list (fixed_size_list of fixed_size_list …):
	// the dimension of each level, outer first (dim is their product),
	// and the validity of the lists of each level below the top, outer
	// first (lvalid[i] holds fslDims[0]·…·fslDims[i] bits per slot)
	fslDims []int
	lvalid  [][]byte
	inulls  bool     // some valid FSL row has a null item
	ends    []uint64 // variable: end offset of each slot in data
	data    []byte
	// segs are pending fixed-width values not copied yet: slices of the
	// caller's arrays (held retains them) that gather copies into vals
	// when the page is encoded — one copy into a buffer reused page after
	// page, instead of copying each batch into a growing one.
	segs     [][]byte
	held     []arrow.ArrayData
	segBytes int

	pages []Page
	encs  [][]byte
	rows  uint64 // rows flushed into pages
}

// valueBytes estimates the pending value bytes.
func (l *leaf21) valueBytes() int {
	return len(l.vals) + l.segBytes + len(l.data) + 8*len(l.ends) + 2*len(l.code) + 2*len(l.rep)
}

// logicalType21 is the Lance logical type of an Arrow type in a 2.1+ file.
func logicalType21(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.NullType:
		return "null", nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary:%d", t.ByteWidth), nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal:128:%d:%d", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal:256:%d:%d", t.Precision, t.Scale), nil
	case *arrow.ListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "list.struct", nil
		}
		return "list", nil
	case *arrow.LargeListType:
		if t.Elem().ID() == arrow.STRUCT {
			return "large_list.struct", nil
		}
		return "large_list", nil
	case *arrow.MapType:
		return "map", nil
	case *arrow.DictionaryType:
		if !arrow.IsInteger(t.IndexType.ID()) {
			return "", fmt.Errorf("dictionary index type %s", t.IndexType)
		}
		v, err := logicalType21(t.ValueType)
		if err != nil {
			return "", err
		}
		if _, nested := t.ValueType.(arrow.NestedType); nested {
			return "", fmt.Errorf("dictionary of %s is not supported (values must be primitive, string or binary)", t.ValueType)
		}
		k, _ := logicalType21(t.IndexType)
		return fmt.Sprintf("dict:%s:%s:%v", v, k, t.Ordered), nil
	case *arrow.FixedSizeListType:
		dims, item := fslLevels(t)
		if _, ok := fixedWidth21(item); !ok {
			return "", fmt.Errorf("fixed_size_list of %s is not supported (items must be fixed-width primitives or fixed_size_lists of them)", t.Elem())
		}
		for _, d := range dims {
			if d < 1 {
				return "", fmt.Errorf("fixed_size_list dimension %d", d)
			}
		}
		if fslItems(dims) > maxFSLItems {
			return "", fmt.Errorf("fixed_size_list of %v holds more than %d items per row", dims, maxFSLItems)
		}
		inner, err := logicalType21(t.Elem())
		if err != nil {
			return "", err
		}
		if t.Len() < 1 {
			return "", fmt.Errorf("fixed_size_list dimension %d", t.Len())
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", inner, t.Len()), nil
	}
	return logicalTypeOf(dt)
}

// maxFSLItems bounds the items of one (nested) fixed_size_list row.
const maxFSLItems = 1 << 24

// fslLevels returns the dimensions of a fixed_size_list and of the
// fixed_size_lists nested directly in it (outer first; at most
// maxEncodingDepth levels), and the type of the innermost items.
func fslLevels(t *arrow.FixedSizeListType) ([]int, arrow.DataType) {
	dims := []int{int(t.Len())}
	item := t.Elem()
	for len(dims) <= maxEncodingDepth {
		in, ok := item.(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		dims = append(dims, int(in.Len()))
		item = in.Elem()
	}
	return dims, item
}

// fslItems is the product of dims, saturating above maxFSLItems.
func fslItems(dims []int) int {
	n := 1
	for _, d := range dims {
		if d < 1 {
			return 0
		}
		n *= d
		if n > maxFSLItems {
			return maxFSLItems + 1
		}
	}
	return n
}

// fixedWidth21 is the flat bits per value of a fixed-width leaf type
// (fixed_size_binary and decimals included; 1 for bool).
func fixedWidth21(dt arrow.DataType) (int, bool) {
	switch t := dt.(type) {
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth < 1 {
			return 0, false
		}
		return 8 * t.ByteWidth, true
	case *arrow.Decimal128Type:
		return 128, true
	case *arrow.Decimal256Type:
		return 256, true
	}
	w, ok := flatWidth(dt)
	return w, ok && (w == 1 || w%8 == 0)
}

// storedType21 is the Arrow type a 2.1+ file stores for dt as a reader
// rebuilds it from the logical type: fixed_size_list children become a
// nullable "item" (what the seed's value type must be, R15).
func storedType21(dt arrow.DataType) arrow.DataType {
	if t, ok := dt.(*arrow.FixedSizeListType); ok {
		return arrow.FixedSizeListOf(t.Len(), storedType21(t.Elem()))
	}
	return dt
}

// buildSchema21 builds the Lance schema (every field, parents included,
// spec §8.3) and the leaf columns of a 2.1+ file.
func (w *Writer) buildSchema21(opts WriterOptions) error {
	md := map[string]string{}
	keys, vals := w.schema.Metadata().Keys(), w.schema.Metadata().Values()
	for i, k := range keys {
		if !strings.HasPrefix(k, seedio.LocatorKeyPrefix) {
			md[k] = vals[i]
		}
	}
	w.lance.Metadata = md
	var walk func(f arrow.Field, parent int32, top int, path []pathNode, name string, depth int) error
	walk = func(f arrow.Field, parent int32, top int, path []pathNode, name string, depth int) error {
		if depth > maxEncodingDepth {
			return fmt.Errorf("%w: field %q nests deeper than %d levels", ErrInvalidSchema, name, maxEncodingDepth)
		}
		lt, err := logicalType21(f.Type)
		if err != nil {
			return fmt.Errorf("%w: field %q: %v", ErrInvalidSchema, name, err)
		}
		idx := len(w.lance.Fields)
		id := opts.FirstFieldID + int32(idx)
		if opts.FieldIDs != nil {
			if idx >= len(opts.FieldIDs) {
				return fmt.Errorf("%w: %d field ids given, but the schema has more fields", ErrInvalidSchema, len(opts.FieldIDs))
			}
			id = opts.FieldIDs[idx]
		}
		fld := Field{Name: f.Name, ID: id, ParentID: parent, LogicalType: lt, Nullable: f.Nullable}
		if f.HasMetadata() {
			fld.Metadata = map[string]string{}
			for i, k := range f.Metadata.Keys() {
				fld.Metadata[k] = f.Metadata.Values()[i]
			}
		}
		var children []arrow.Field
		node := pathNode{nullable: f.Nullable}
		leaf := &leaf21{field: idx, name: name, top: top}
		vt := f.Type
		if d, ok := vt.(*arrow.DictionaryType); ok {
			if !dictValue20(d.ValueType) {
				// Lance 12 fails to write these in 2.1/2.2 as in 2.0.
				return fmt.Errorf("%w: field %q: a dictionary of %s cannot be written (Lance 12's dictionary encoder fails on dates, times, timestamps, durations, decimals and fixed_size_binary); store the values themselves", ErrInvalidSchema, name, d.ValueType)
			}
			vt = d.ValueType
			fld.Encoding = 3
			leaf.dict = true
			leaf.dictKey = d.IndexType.(arrow.FixedWidthDataType).BitWidth()
			leaf.dictSigned = arrow.IsSignedInteger(d.IndexType.ID())
		}
		switch t := vt.(type) {
		case *arrow.StructType:
			children = t.Fields()
			leaf = nil
		case *arrow.ListType:
			children, node.list, fld.Encoding, leaf = []arrow.Field{t.ElemField()}, true, 1, nil
		case *arrow.LargeListType:
			children, node.list, fld.Encoding, leaf = []arrow.Field{t.ElemField()}, true, 1, nil
		case *arrow.MapType:
			if w.version == V2_1 {
				// Lance 12: "Map data type is not enabled by the selected file format".
				return fmt.Errorf("%w: field %q: map columns need storage version 2.2 (Lance 12 refuses them in 2.1)", ErrInvalidSchema, name)
			}
			children, node.list, fld.Encoding, leaf = []arrow.Field{t.ElemField()}, true, 1, nil
		case *arrow.NullType:
			leaf.kind = lkNull21
			if fld.Encoding == 0 {
				fld.Encoding = 1
			}
		case *arrow.FixedSizeListType:
			dims, item := fslLevels(t)
			wd, _ := fixedWidth21(item)
			leaf.kind, leaf.width, leaf.dim = lkFSL21, wd, fslItems(dims)
			if len(dims) > 1 {
				leaf.fslDims, leaf.lvalid = dims, make([][]byte, len(dims)-1)
			}
			if fld.Encoding == 0 {
				fld.Encoding = 1
			}
		case *arrow.BooleanType:
			leaf.kind, leaf.width = lkBool21, 1
			if fld.Encoding == 0 {
				fld.Encoding = 1
			}
		default:
			if arrow.IsBaseBinary(vt.ID()) {
				leaf.kind = lkVar21
				leaf.off64 = vt.ID() == arrow.LARGE_STRING || vt.ID() == arrow.LARGE_BINARY
				if fld.Encoding == 0 {
					fld.Encoding = 2
				}
				break
			}
			wd, ok := fixedWidth21(vt)
			if !ok || wd == 1 {
				return fmt.Errorf("%w: field %q: type %s", ErrInvalidSchema, name, f.Type)
			}
			leaf.kind, leaf.width = lkFixed21, wd
			if fld.Encoding == 0 {
				fld.Encoding = 1
			}
		}
		w.lance.Fields = append(w.lance.Fields, fld)
		if leaf != nil {
			leaf.path = append(append([]pathNode(nil), path...), pathNode{nullable: f.Nullable})
			leaf.index = len(w.leaves)
			for _, p := range leaf.path {
				if p.list {
					leaf.nlists++
				}
			}
			w.leaves = append(w.leaves, leaf)
			return nil
		}
		for ci, c := range children {
			n := node
			n.child = ci
			if err := walk(c, id, top, append(path, n), name+"."+c.Name, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for i, f := range w.schema.Fields() {
		if err := walk(f, -1, i, nil, f.Name, 0); err != nil {
			return err
		}
	}
	if opts.FieldIDs != nil && len(opts.FieldIDs) != len(w.lance.Fields) {
		return fmt.Errorf("%w: %d field ids given for %d fields", ErrInvalidSchema, len(opts.FieldIDs), len(w.lance.Fields))
	}
	return checkFieldIDs(w.lance.Fields)
}

// checkFieldIDs refuses negative and duplicate field ids.
func checkFieldIDs(fields []Field) error {
	seen := map[int32]string{}
	for _, f := range fields {
		if f.ID < 0 {
			return fmt.Errorf("%w: field %q has negative id %d", ErrInvalidSchema, f.Name, f.ID)
		}
		if prev, dup := seen[f.ID]; dup {
			return fmt.Errorf("%w: fields %q and %q share id %d", ErrInvalidSchema, prev, f.Name, f.ID)
		}
		seen[f.ID] = f.Name
	}
	return nil
}

// sameArrowType is type equality including child field names and
// nullability (arrow.TypeEqual ignores them for lists).
func sameArrowType(a, b arrow.DataType) bool {
	return a.Fingerprint() == b.Fingerprint() && a.String() == b.String() && nestedNames(a) == nestedNames(b)
}

func nestedNames(dt arrow.DataType) string {
	nt, ok := dt.(arrow.NestedType)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, f := range nt.Fields() {
		fmt.Fprintf(&b, "%s:%v(%s);", f.Name, f.Nullable, nestedNames(f.Type))
	}
	return b.String()
}
