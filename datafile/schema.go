package datafile

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field is one lance.file.Field of a file schema (spec §3.2). Fields are kept
// flat, in the depth-first pre-order in which they are stored; the tree is
// given by ParentID (-1 for top-level fields) and by Children.
type Field struct {
	Name        string
	ID          int32
	ParentID    int32
	LogicalType string
	Nullable    bool
	// Metadata is the field metadata (map<string, bytes>, treated as text).
	Metadata map[string]string
	// Encoding is the deprecated v1 encoding enum (1 PLAIN, 2 VAR_BINARY).
	Encoding int32
	// ExtensionName is the deprecated field 9.
	ExtensionName                string
	UnenforcedPrimaryKey         bool
	UnenforcedPrimaryKeyPosition uint32
	// Children holds the indexes (into Schema.Fields) of this field's
	// children, in order. Filled in by the reader.
	Children []int
}

// Schema is the schema of a Lance file: its fields in pre-order and its
// schema-level metadata (FileDescriptor.schema.metadata).
type Schema struct {
	Fields   []Field
	Metadata map[string]string
}

// TopLevel returns the indexes of the top-level fields.
func (s *Schema) TopLevel() []int {
	var out []int
	for i := range s.Fields {
		if s.Fields[i].ParentID == -1 {
			out = append(out, i)
		}
	}
	return out
}

// FieldByName returns the index of the top-level field with that exact name, or -1.
func (s *Schema) FieldByName(name string) int {
	for i := range s.Fields {
		if s.Fields[i].ParentID == -1 && s.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// fileDescriptor is lance.file.FileDescriptor.
type fileDescriptor struct {
	schema Schema
	length uint64
}

// decodeFileDescriptor parses global buffer 0 (spec §3.1) and links the field
// tree. base is the buffer's file offset.
func decodeFileDescriptor(b []byte, base int64) (*fileDescriptor, error) {
	const sec = "FileDescriptor"
	fd := &fileDescriptor{}
	haveSchema := false
	err := pbWalk(b, base, sec, func(f pbField) error {
		switch f.num {
		case 1:
			if err := f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			haveSchema = true
			// Concatenated sub-messages merge, as in any protobuf parser.
			return decodeSchemaInto(&fd.schema, f.buf, f.payloadAt(base))
		case 2:
			if err := f.expect(base, sec, protowire.VarintType); err != nil {
				return err
			}
			fd.length = f.val
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !haveSchema {
		return nil, formatErr(ErrMalformed, sec, base, "no schema")
	}
	if err := linkFields(&fd.schema, base); err != nil {
		return nil, err
	}
	return fd, nil
}

func decodeSchemaInto(s *Schema, b []byte, base int64) error {
	const sec = "FileDescriptor schema"
	return pbWalk(b, base, sec, func(f pbField) error {
		switch f.num {
		case 1:
			if err := f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			fld, err := decodeField(f.buf, f.payloadAt(base))
			if err != nil {
				return err
			}
			s.Fields = append(s.Fields, fld)
		case 5:
			if err := f.expect(base, sec, protowire.BytesType); err != nil {
				return err
			}
			k, v, err := pbMapEntry(f.buf, f.payloadAt(base), sec+" metadata")
			if err != nil {
				return err
			}
			if s.Metadata == nil {
				s.Metadata = map[string]string{}
			}
			s.Metadata[k] = v
		}
		return nil
	})
}

func decodeField(b []byte, base int64) (Field, error) {
	const sec = "schema field"
	var fld Field
	err := pbWalk(b, base, sec, func(f pbField) error {
		var want protowire.Type = protowire.VarintType
		switch f.num {
		case 2, 5, 9, 10:
			want = protowire.BytesType
		case 1, 3, 4, 6, 7, 12, 13:
		default:
			return nil // unknown or retired (e.g. #11 storage_class): skip
		}
		if err := f.expect(base, sec, want); err != nil {
			return err
		}
		switch f.num {
		case 2:
			fld.Name = string(f.buf)
		case 3:
			fld.ID = int32(f.val) // int32 varints are sign-extended to 64 bits
		case 4:
			fld.ParentID = int32(f.val)
		case 5:
			fld.LogicalType = string(f.buf)
		case 6:
			fld.Nullable = f.val != 0
		case 7:
			fld.Encoding = int32(f.val)
		case 9:
			fld.ExtensionName = string(f.buf)
		case 10:
			k, v, err := pbMapEntry(f.buf, f.payloadAt(base), sec+" metadata")
			if err != nil {
				return err
			}
			if fld.Metadata == nil {
				fld.Metadata = map[string]string{}
			}
			fld.Metadata[k] = v
		case 12:
			fld.UnenforcedPrimaryKey = f.val != 0
		case 13:
			fld.UnenforcedPrimaryKeyPosition = uint32(f.val)
		}
		return nil
	})
	return fld, err
}

// linkFields checks that every field's parent appears before it (spec §3.3)
// and that every logical type is known, and fills in Children.
func linkFields(s *Schema, base int64) error {
	const sec = "FileDescriptor schema"
	last := map[int32]int{} // field id -> index of the latest field with that id
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.ParentID != -1 {
			p, ok := last[f.ParentID]
			if !ok {
				return formatErr(ErrMalformed, sec, base, "field %d %q (id %d) names parent id %d, which does not appear before it",
					i, f.Name, f.ID, f.ParentID)
			}
			s.Fields[p].Children = append(s.Fields[p].Children, i)
		}
		last[f.ID] = i
	}
	for i := range s.Fields {
		if _, err := parseLogicalType(s.Fields[i].LogicalType); err != nil {
			return formatErr(ErrUnsupported, sec, base, "field %d %q (id %d): %v", i, s.Fields[i].Name, s.Fields[i].ID, err)
		}
	}
	return nil
}

// encodeFileDescriptor serializes a FileDescriptor the way Lance does.
func encodeFileDescriptor(s *Schema, length uint64) []byte {
	var sb []byte
	for i := range s.Fields {
		sb = pbAppendBytesField(sb, 1, encodeField(&s.Fields[i]))
	}
	sb = pbAppendMap(sb, 5, slices.Sorted(maps.Keys(s.Metadata)), s.Metadata)
	var b []byte
	b = pbAppendBytesField(b, 1, sb)
	b = pbAppendVarintFieldNZ(b, 2, length)
	return b
}

func encodeField(f *Field) []byte {
	var b []byte
	if f.Name != "" {
		b = pbAppendStringField(b, 2, f.Name)
	}
	b = pbAppendVarintFieldNZ(b, 3, uint64(int64(f.ID)))
	b = pbAppendVarintFieldNZ(b, 4, uint64(int64(f.ParentID))) // -1 becomes a 10-byte varint
	if f.LogicalType != "" {
		b = pbAppendStringField(b, 5, f.LogicalType)
	}
	if f.Nullable {
		b = pbAppendVarintField(b, 6, 1)
	}
	b = pbAppendVarintFieldNZ(b, 7, uint64(int64(f.Encoding)))
	if f.Encoding == fieldEncodingDictionary {
		// Lance 12 writes an empty (deprecated) Dictionary message for
		// dictionary fields, in 2.0 and 2.1+ files alike.
		b = pbAppendBytesField(b, 8, nil)
	}
	if f.ExtensionName != "" {
		b = pbAppendStringField(b, 9, f.ExtensionName)
	}
	b = pbAppendMap(b, 10, slices.Sorted(maps.Keys(f.Metadata)), f.Metadata)
	if f.UnenforcedPrimaryKey {
		b = pbAppendVarintField(b, 12, 1)
	}
	b = pbAppendVarintFieldNZ(b, 13, uint64(f.UnenforcedPrimaryKeyPosition))
	return b
}

// --- logical types ----------------------------------------------------------

// logicalKind classifies a parsed logical type.
type logicalKind uint8

const (
	lkPrimitive logicalKind = iota // fixed width or null: Arrow type complete
	lkBinary                       // string / binary / large variants
	lkFixedSizeList
	lkStruct
	lkList // list or large_list; child field gives the item type
	lkMap  // map; child field is the entries struct
	lkDictionary
)

type logicalType struct {
	kind  logicalKind
	dt    arrow.DataType // complete for primitive, binary, fsl, dictionary
	large bool           // large_list
}

func timeUnitFromLance(s string) (arrow.TimeUnit, bool) {
	switch s {
	case "s":
		return arrow.Second, true
	case "ms":
		return arrow.Millisecond, true
	case "us":
		return arrow.Microsecond, true
	case "ns":
		return arrow.Nanosecond, true
	}
	return 0, false
}

func timeUnitToLance(u arrow.TimeUnit) string {
	switch u {
	case arrow.Second:
		return "s"
	case arrow.Millisecond:
		return "ms"
	case arrow.Microsecond:
		return "us"
	}
	return "ns"
}

// parseLogicalType maps a Lance logical type string (spec §3.4) to Arrow.
func parseLogicalType(s string) (logicalType, error) {
	simple := map[string]arrow.DataType{
		"null":         arrow.Null,
		"bool":         arrow.FixedWidthTypes.Boolean,
		"int8":         arrow.PrimitiveTypes.Int8,
		"uint8":        arrow.PrimitiveTypes.Uint8,
		"int16":        arrow.PrimitiveTypes.Int16,
		"uint16":       arrow.PrimitiveTypes.Uint16,
		"int32":        arrow.PrimitiveTypes.Int32,
		"uint32":       arrow.PrimitiveTypes.Uint32,
		"int64":        arrow.PrimitiveTypes.Int64,
		"uint64":       arrow.PrimitiveTypes.Uint64,
		"halffloat":    arrow.FixedWidthTypes.Float16,
		"float":        arrow.PrimitiveTypes.Float32,
		"double":       arrow.PrimitiveTypes.Float64,
		"date32:day":   arrow.FixedWidthTypes.Date32,
		"date64:ms":    arrow.FixedWidthTypes.Date64,
		"time32:s":     arrow.FixedWidthTypes.Time32s,
		"time32:ms":    arrow.FixedWidthTypes.Time32ms,
		"time64:us":    arrow.FixedWidthTypes.Time64us,
		"time64:ns":    arrow.FixedWidthTypes.Time64ns,
		"duration:s":   arrow.FixedWidthTypes.Duration_s,
		"duration:ms":  arrow.FixedWidthTypes.Duration_ms,
		"duration:us":  arrow.FixedWidthTypes.Duration_us,
		"duration:ns":  arrow.FixedWidthTypes.Duration_ns,
		"string":       arrow.BinaryTypes.String,
		"binary":       arrow.BinaryTypes.Binary,
		"large_string": arrow.BinaryTypes.LargeString,
		"large_binary": arrow.BinaryTypes.LargeBinary,
		"json":         arrow.BinaryTypes.LargeBinary,
		"blob":         arrow.BinaryTypes.LargeBinary,
	}
	if dt, ok := simple[s]; ok {
		if arrow.IsBaseBinary(dt.ID()) {
			return logicalType{kind: lkBinary, dt: dt}, nil
		}
		return logicalType{kind: lkPrimitive, dt: dt}, nil
	}
	switch s {
	case "struct":
		return logicalType{kind: lkStruct}, nil
	case "list", "list.struct":
		return logicalType{kind: lkList}, nil
	case "large_list", "large_list.struct":
		return logicalType{kind: lkList, large: true}, nil
	case "map":
		return logicalType{kind: lkMap}, nil
	}
	parts := strings.Split(s, ":")
	switch parts[0] {
	case "timestamp":
		if len(parts) < 3 {
			break
		}
		u, ok := timeUnitFromLance(parts[1])
		if !ok {
			break
		}
		tz := strings.Join(parts[2:], ":")
		if tz == "-" {
			tz = ""
		}
		return logicalType{kind: lkPrimitive, dt: &arrow.TimestampType{Unit: u, TimeZone: tz}}, nil
	case "decimal":
		if len(parts) != 4 {
			break
		}
		p, err1 := strconv.ParseInt(parts[2], 10, 32)
		sc, err2 := strconv.ParseInt(parts[3], 10, 32)
		if err1 != nil || err2 != nil {
			break
		}
		switch parts[1] {
		case "128":
			return logicalType{kind: lkPrimitive, dt: &arrow.Decimal128Type{Precision: int32(p), Scale: int32(sc)}}, nil
		case "256":
			return logicalType{kind: lkPrimitive, dt: &arrow.Decimal256Type{Precision: int32(p), Scale: int32(sc)}}, nil
		}
	case "fixed_size_binary":
		if len(parts) != 2 {
			break
		}
		n, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil || n < 0 {
			break
		}
		return logicalType{kind: lkPrimitive, dt: &arrow.FixedSizeBinaryType{ByteWidth: int(n)}}, nil
	case "fixed_size_list":
		if len(parts) < 3 {
			break
		}
		n, err := strconv.ParseInt(parts[len(parts)-1], 10, 32)
		if err != nil || n < 0 {
			break
		}
		innerName := strings.Join(parts[1:len(parts)-1], ":")
		var inner arrow.DataType
		if innerName == "lance.bfloat16" {
			inner = &arrow.FixedSizeBinaryType{ByteWidth: 2}
		} else {
			it, err := parseLogicalType(innerName)
			if err != nil || (it.kind != lkPrimitive && it.kind != lkFixedSizeList) {
				break
			}
			inner = it.dt
		}
		return logicalType{kind: lkFixedSizeList, dt: arrow.FixedSizeListOf(int32(n), inner)}, nil
	case "dict":
		// dict:{value}:{key}:{ordered}
		if len(parts) < 4 {
			break
		}
		kt, err1 := parseLogicalType(parts[len(parts)-2])
		vt, err2 := parseLogicalType(strings.Join(parts[1:len(parts)-2], ":"))
		if err1 != nil || err2 != nil || !arrow.IsInteger(kt.dt.ID()) || (vt.kind != lkPrimitive && vt.kind != lkBinary) {
			break
		}
		return logicalType{kind: lkDictionary, dt: &arrow.DictionaryType{
			IndexType: kt.dt, ValueType: vt.dt, Ordered: parts[len(parts)-1] == "true"}}, nil
	}
	return logicalType{}, fmt.Errorf("unknown logical type %q", s)
}

// logicalTypeOf returns the Lance logical type string of an Arrow type that
// the 2.0 writer supports.
func logicalTypeOf(dt arrow.DataType) (string, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return "bool", nil
	case *arrow.Int8Type:
		return "int8", nil
	case *arrow.Uint8Type:
		return "uint8", nil
	case *arrow.Int16Type:
		return "int16", nil
	case *arrow.Uint16Type:
		return "uint16", nil
	case *arrow.Int32Type:
		return "int32", nil
	case *arrow.Uint32Type:
		return "uint32", nil
	case *arrow.Int64Type:
		return "int64", nil
	case *arrow.Uint64Type:
		return "uint64", nil
	case *arrow.Float16Type:
		return "halffloat", nil
	case *arrow.Float32Type:
		return "float", nil
	case *arrow.Float64Type:
		return "double", nil
	case *arrow.StringType:
		return "string", nil
	case *arrow.BinaryType:
		return "binary", nil
	case *arrow.LargeStringType:
		return "large_string", nil
	case *arrow.LargeBinaryType:
		return "large_binary", nil
	case *arrow.Date32Type:
		return "date32:day", nil
	case *arrow.Date64Type:
		return "date64:ms", nil
	case *arrow.Time32Type:
		return "time32:" + timeUnitToLance(t.Unit), nil
	case *arrow.Time64Type:
		return "time64:" + timeUnitToLance(t.Unit), nil
	case *arrow.DurationType:
		return "duration:" + timeUnitToLance(t.Unit), nil
	case *arrow.TimestampType:
		tz := t.TimeZone
		if tz == "" {
			tz = "-"
		} else if strings.Contains(tz, ":") {
			// Lance splits the logical type on ':' (spec §6 trap 10).
			return "", fmt.Errorf("timestamp time zone %q contains ':', which Lance cannot parse back; use UTC or an IANA name", tz)
		}
		return "timestamp:" + timeUnitToLance(t.Unit) + ":" + tz, nil
	case *arrow.FixedSizeListType:
		inner, err := logicalTypeOf(t.Elem())
		if err != nil {
			return "", err
		}
		if _, ok := flatWidth(t.Elem()); !ok {
			return "", fmt.Errorf("fixed_size_list of %s is not supported (items must be fixed-width primitives)", t.Elem())
		}
		return fmt.Sprintf("fixed_size_list:%s:%d", inner, t.Len()), nil
	case *arrow.StructType:
		return "struct", nil
	}
	return "", fmt.Errorf("arrow type %s is not supported by the 2.0 writer", dt)
}

// flatWidth is the Flat bits_per_value of a fixed-width Arrow type.
func flatWidth(dt arrow.DataType) (int, bool) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return 1, true
	case arrow.FixedWidthDataType:
		switch dt.(type) {
		case *arrow.FixedSizeBinaryType, *arrow.DictionaryType:
			return 0, false
		}
		return t.BitWidth(), true
	}
	return 0, false
}
