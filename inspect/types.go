package inspect

import (
	"strings"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// ArrowType returns the Arrow type, in the notation of the corpus expect
// files (int32, utf8, timestamp[us, tz=UTC], list<int32>,
// struct<a: int32, b: utf8>, map<utf8, int32>, dictionary<int32, utf8>,
// …), of fields[i] of a flattened Lance schema, using its logical_type and
// (for nested types) its children, which are the fields whose parent_id is
// its id (lance-table-format.md §3.6). An unrecognised logical type is
// returned unchanged.
func ArrowType(fields []*pb.Field, i int) string {
	kids := childIndex(fields)
	return arrowType(fields, kids, i, 0)
}

// childIndex maps a field id to the positions of its children, in order.
func childIndex(fields []*pb.Field) map[int32][]int {
	kids := make(map[int32][]int)
	for j, f := range fields {
		if f.GetParentId() >= 0 {
			kids[f.GetParentId()] = append(kids[f.GetParentId()], j)
		}
	}
	return kids
}

func arrowType(fields []*pb.Field, kids map[int32][]int, i, depth int) string {
	f := fields[i]
	lt := f.GetLogicalType()
	if depth > 64 { // a corrupt schema whose parent links loop
		return lt
	}
	children := kids[f.GetId()]
	if f.GetParentId() == f.GetId() {
		children = nil
	}
	child := func(k int) string {
		if k >= len(children) {
			return "?"
		}
		return arrowType(fields, kids, children[k], depth+1)
	}
	switch lt {
	case "struct":
		parts := make([]string, len(children))
		for k, c := range children {
			parts[k] = fields[c].GetName() + ": " + arrowType(fields, kids, c, depth+1)
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	case "list", "list.struct":
		return "list<" + child(0) + ">"
	case "large_list", "large_list.struct":
		return "large_list<" + child(0) + ">"
	case "map":
		// map -> entries: struct<key, value>
		if len(children) == 1 {
			entries := kids[fields[children[0]].GetId()]
			if len(entries) == 2 {
				return "map<" + arrowType(fields, kids, entries[0], depth+2) + ", " + arrowType(fields, kids, entries[1], depth+2) + ">"
			}
		}
		return "map<?>"
	}
	return scalarArrowType(lt)
}

// scalarArrowType maps a non-nested logical type.
func scalarArrowType(lt string) string {
	switch lt {
	case "null", "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "binary", "large_binary":
		return lt
	case "halffloat":
		return "float16"
	case "float":
		return "float32"
	case "double":
		return "float64"
	case "string":
		return "utf8"
	case "large_string":
		return "large_utf8"
	case "json":
		return "large_binary"
	case "date32:day":
		return "date32"
	case "date64:ms":
		return "date64"
	case "lance.bfloat16":
		return "bfloat16"
	}
	parts := strings.Split(lt, ":")
	switch parts[0] {
	case "time32", "time64", "duration":
		if len(parts) == 2 {
			return parts[0] + "[" + parts[1] + "]"
		}
	case "timestamp":
		if len(parts) >= 3 {
			tz := strings.Join(parts[2:], ":")
			if tz == "-" {
				return "timestamp[" + parts[1] + "]"
			}
			return "timestamp[" + parts[1] + ", tz=" + tz + "]"
		}
	case "decimal":
		if len(parts) == 4 && (parts[1] == "128" || parts[1] == "256") {
			return "decimal" + parts[1] + "(" + parts[2] + ", " + parts[3] + ")"
		}
	case "fixed_size_binary":
		if len(parts) == 2 {
			return "fixed_size_binary[" + parts[1] + "]"
		}
	case "fixed_size_list":
		// fixed_size_list:{elem}:{n}; elem may itself contain ':'.
		if len(parts) >= 3 {
			elem := strings.Join(parts[1:len(parts)-1], ":")
			return "fixed_size_list<" + scalarArrowType(elem) + ">[" + parts[len(parts)-1] + "]"
		}
	case "dict":
		// dict:{value}:{index}:{ordered}; value may contain ':'.
		if len(parts) >= 4 {
			value := strings.Join(parts[1:len(parts)-2], ":")
			return "dictionary<" + scalarArrowType(parts[len(parts)-2]) + ", " + scalarArrowType(value) + ">"
		}
	}
	return lt
}
