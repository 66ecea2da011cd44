package arrowipc

import (
	"fmt"

	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
)

// Schema flatbuffer limits. arrow-go trusts vector lengths when it
// allocates and recurses into children without a depth limit, so a reader
// that hands bytes to arrow-go checks the whole field tree first.
const (
	MaxSchemaDepth  = 64
	MaxSchemaFields = 4096
)

// SchemaBigEndian reports whether a Schema table declares big-endian data
// (slot 0, Endianness; absent is little-endian).
func SchemaBigEndian(st flatbuf.Table) (bool, error) {
	e, err := st.I16(0, 0)
	return e != 0, err
}

// SchemaMetadata returns a Schema table's custom_metadata, in stored order.
func SchemaMetadata(st flatbuf.Table) (keys, vals [][]byte, err error) {
	return st.KeyValues(2)
}

// SchemaFields returns a Schema table's top-level Field tables.
func SchemaFields(st flatbuf.Table) ([]flatbuf.Table, error) { return st.Tables(1) }

// CheckSchema validates a Schema table: every vector and string of the
// schema and of its field tree lies inside the buffer, the tree is at most
// MaxSchemaDepth deep (which also rejects reference cycles) and holds at
// most MaxSchemaFields fields. Errors wrap flatbuf.ErrMalformed.
func CheckSchema(st flatbuf.Table) error {
	if _, _, err := st.KeyValues(2); err != nil {
		return err
	}
	if _, _, _, err := st.Vector(3, 8); err != nil {
		return err
	}
	fields, err := st.Tables(1)
	if err != nil {
		return err
	}
	count := 0
	for _, f := range fields {
		if err := checkField(f, 1, &count); err != nil {
			return err
		}
	}
	return nil
}

func checkField(f flatbuf.Table, depth int, count *int) error {
	*count++
	if depth > MaxSchemaDepth {
		return fmt.Errorf("%w: field tree deeper than %d", flatbuf.ErrMalformed, MaxSchemaDepth)
	}
	if *count > MaxSchemaFields {
		return fmt.Errorf("%w: more than %d fields", flatbuf.ErrMalformed, MaxSchemaFields)
	}
	if _, _, err := f.Str(FieldName); err != nil {
		return err
	}
	if _, err := f.U8(FieldTypeType, 0); err != nil {
		return err
	}
	if tt, ok, err := f.Table(FieldType); err != nil {
		return err
	} else if ok {
		// Type tables hold scalars, except Union.typeIds ([int], slot 1)
		// and Timestamp.timezone (string, slot 1): check slot 1 as a vector
		// of 4-byte elements when present and a reference.
		if tag, _ := f.U8(FieldTypeType, 0); tag == TypeUnion {
			if _, _, _, err := tt.Vector(1, 4); err != nil {
				return err
			}
		} else if tag == TypeTimestamp {
			if _, _, err := tt.Str(1); err != nil {
				return err
			}
		}
	}
	if dt, ok, err := f.Table(FieldDictionary); err != nil {
		return err
	} else if ok {
		if _, _, err := dt.Table(1); err != nil {
			return err
		}
	}
	if _, _, err := f.KeyValues(FieldMetadata); err != nil {
		return err
	}
	children, err := f.Tables(FieldChildren)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := checkField(c, depth+1, count); err != nil {
			return err
		}
	}
	return nil
}
