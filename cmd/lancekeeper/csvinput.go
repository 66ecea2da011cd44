package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// csvSampleRows is how many data rows decide the inferred column types.
const csvSampleRows = 1000

// csvBatchRows is the number of rows per record batch of CSV input.
const csvBatchRows = 64 << 10

// csvOptions control how CSV input becomes Arrow records.
type csvOptions struct {
	comma  rune          // field delimiter (default ',')
	schema *arrow.Schema // --schema: explicit column types by name
	target *arrow.Schema // the table's schema on append: its types win for its columns
	sample int           // rows sampled for inference (default csvSampleRows)
}

// csvNull reports whether a CSV field is null: an empty field, NULL or null.
func csvNull(s string) bool { return s == "" || s == "NULL" || s == "null" }

// parseDelimiter accepts one character, or the two-character escape \t.
func parseDelimiter(s string) (rune, error) {
	switch s {
	case `\t`, "\t", "tab", "TAB":
		return '\t', nil
	}
	r := []rune(s)
	if len(r) != 1 || r[0] == '"' || r[0] == '\r' || r[0] == '\n' || r[0] == 0xFFFD {
		return 0, fmt.Errorf("--delimiter %q: want one character (or \\t)", s)
	}
	return r[0], nil
}

// csvSchemaTypes are the type names --schema accepts.
var csvSchemaTypes = map[string]arrow.DataType{
	"bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
	"int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
	"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64,
	"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
	"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
	"float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64,
	"utf8": arrow.BinaryTypes.String, "string": arrow.BinaryTypes.String,
	"large_utf8": arrow.BinaryTypes.LargeString, "binary": arrow.BinaryTypes.Binary,
	"date32":        arrow.FixedWidthTypes.Date32,
	"timestamp[s]":  &arrow.TimestampType{Unit: arrow.Second},
	"timestamp[ms]": &arrow.TimestampType{Unit: arrow.Millisecond},
	"timestamp[us]": &arrow.TimestampType{Unit: arrow.Microsecond},
	"timestamp[ns]": &arrow.TimestampType{Unit: arrow.Nanosecond},
}

// parseCSVSchema parses `name:type[?],…` (a trailing `!` marks a column not
// nullable; columns are nullable by default).
func parseCSVSchema(s string) (*arrow.Schema, error) {
	var fields []arrow.Field
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndex(part, ":")
		if i <= 0 {
			return nil, fmt.Errorf("--schema %q: want name:type", part)
		}
		name, typ := strings.TrimSpace(part[:i]), strings.ToLower(strings.TrimSpace(part[i+1:]))
		nullable := true
		if strings.HasSuffix(typ, "!") {
			nullable, typ = false, strings.TrimSuffix(typ, "!")
		}
		dt, ok := csvSchemaTypes[typ]
		if !ok {
			return nil, fmt.Errorf("--schema column %q: unknown type %q (want bool, int8…int64, uint8…uint64, float32, float64, utf8, large_utf8, binary, date32, timestamp[s|ms|us|ns])", name, typ)
		}
		if seen[name] {
			return nil, fmt.Errorf("--schema: column %q given twice", name)
		}
		seen[name] = true
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: nullable})
	}
	if len(fields) == 0 {
		return nil, errors.New("--schema: no columns")
	}
	return arrow.NewSchema(fields, nil), nil
}

// csvKind is an inferred column kind; a column widens int → float → string,
// and any other mix of kinds becomes string.
type csvKind int

const (
	kindNone csvKind = iota // only nulls seen so far
	kindInt
	kindFloat
	kindBool
	kindDate
	kindTimestamp
	kindString
)

func kindOf(v string) csvKind {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return kindInt
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return kindFloat
	}
	if _, err := strconv.ParseBool(v); err == nil {
		return kindBool
	}
	if _, err := time.Parse("2006-01-02", v); err == nil {
		return kindDate
	}
	if _, _, err := arrow.TimestampFromStringInLocation(v, arrow.Nanosecond, time.UTC); err == nil {
		return kindTimestamp
	}
	return kindString
}

func widen(a, b csvKind) csvKind {
	switch {
	case a == kindNone:
		return b
	case b == kindNone, a == b:
		return a
	case (a == kindInt && b == kindFloat) || (a == kindFloat && b == kindInt):
		return kindFloat
	}
	return kindString
}

// csvRow is one data row with the line it starts on.
type csvRow struct {
	line   int
	fields []string
}

// csvRecords reads CSV rows as Arrow record batches with the types inferred
// from a sample (or given / taken from the table).
type csvRecords struct {
	name   string
	r      *csv.Reader
	schema *arrow.Schema
	header []string
	buf    []csvRow // sampled rows not yet returned
	cur    arrow.RecordBatch
	err    error
	eof    bool
}

func newCSVRecords(src io.Reader, name string, o csvOptions) (*csvRecords, error) {
	cr := csv.NewReader(src)
	if o.comma != 0 {
		cr.Comma = o.comma
	}
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("empty: no header row")
		}
		return nil, csvLineError(err)
	}
	cr.FieldsPerRecord = len(header)
	c := &csvRecords{name: name, r: cr, header: header}
	n := o.sample
	if n <= 0 {
		n = csvSampleRows
	}
	for len(c.buf) < n {
		row, ok, err := c.readRow()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		c.buf = append(c.buf, row)
	}
	if len(c.buf) == 0 {
		return nil, errors.New("no data rows after the header")
	}
	if c.schema, err = c.buildSchema(o); err != nil {
		return nil, err
	}
	return c, nil
}

func csvLineError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}

func (c *csvRecords) readRow() (csvRow, bool, error) {
	rec, err := c.r.Read()
	if err == io.EOF {
		return csvRow{}, false, nil
	}
	if err != nil {
		return csvRow{}, false, csvLineError(err)
	}
	line, _ := c.r.FieldPos(0)
	return csvRow{line: line, fields: rec}, true, nil
}

func (c *csvRecords) buildSchema(o csvOptions) (*arrow.Schema, error) {
	given := map[string]arrow.Field{}
	if o.schema != nil {
		hdr := map[string]bool{}
		for _, h := range c.header {
			hdr[h] = true
		}
		for _, f := range o.schema.Fields() {
			if !hdr[f.Name] {
				return nil, fmt.Errorf("--schema names column %q, which the CSV header does not have", f.Name)
			}
			given[f.Name] = f
		}
	}
	if o.target != nil {
		for _, f := range o.target.Fields() {
			if _, ok := given[f.Name]; !ok {
				given[f.Name] = f
			}
		}
	}
	fields := make([]arrow.Field, len(c.header))
	for i, h := range c.header {
		if f, ok := given[h]; ok {
			if !csvSupported(f.Type) {
				return nil, fmt.Errorf("column %q: type %s cannot be read from CSV", h, f.Type)
			}
			fields[i] = arrow.Field{Name: h, Type: f.Type, Nullable: f.Nullable}
			continue
		}
		k := kindNone
		for _, row := range c.buf {
			if v := row.fields[i]; !csvNull(v) {
				k = widen(k, kindOf(v))
			}
		}
		fields[i] = arrow.Field{Name: h, Type: c.kindType(k, i), Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// kindType is the Arrow type of an inferred kind; timestamps are seconds
// unless a sampled value has a fraction (then nanoseconds), UTC when a
// value carries a zone.
func (c *csvRecords) kindType(k csvKind, col int) arrow.DataType {
	switch k {
	case kindInt:
		return arrow.PrimitiveTypes.Int64
	case kindFloat:
		return arrow.PrimitiveTypes.Float64
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindTimestamp:
		unit, tz := arrow.Second, ""
		for _, row := range c.buf {
			v := row.fields[col]
			if csvNull(v) {
				continue
			}
			if _, err := arrow.TimestampFromString(v, arrow.Second); err != nil || strings.Contains(v, ".") {
				unit = arrow.Nanosecond
			}
			if _, zoned, _ := arrow.TimestampFromStringInLocation(v, arrow.Nanosecond, time.UTC); zoned {
				tz = "UTC"
			}
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}
	}
	return arrow.BinaryTypes.String // strings, and columns with only nulls in the sample
}

func csvSupported(dt arrow.DataType) bool {
	switch dt.(type) {
	case *arrow.BooleanType, *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float32Type, *arrow.Float64Type, *arrow.StringType, *arrow.LargeStringType,
		*arrow.BinaryType, *arrow.LargeBinaryType, *arrow.Date32Type, *arrow.TimestampType:
		return true
	}
	return false
}

func (c *csvRecords) Retain()                        {}
func (c *csvRecords) Release()                       { c.releaseCur() }
func (c *csvRecords) Schema() *arrow.Schema          { return c.schema }
func (c *csvRecords) Err() error                     { return c.err }
func (c *csvRecords) RecordBatch() arrow.RecordBatch { return c.cur }
func (c *csvRecords) Record() arrow.RecordBatch      { return c.cur }

func (c *csvRecords) releaseCur() {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
}

func (c *csvRecords) Next() bool {
	c.releaseCur()
	if c.err != nil {
		return false
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer b.Release()
	n := 0
	for n < csvBatchRows {
		var row csvRow
		if len(c.buf) > 0 {
			row, c.buf = c.buf[0], c.buf[1:]
		} else {
			if c.eof {
				break
			}
			var ok bool
			var err error
			if row, ok, err = c.readRow(); err != nil {
				c.err = fmt.Errorf("%w %s: %v", errInput, c.name, err)
				return false
			} else if !ok {
				c.eof = true
				break
			}
		}
		for i, v := range row.fields {
			f := c.schema.Field(i)
			if err := appendCSV(b.Field(i), f, v); err != nil {
				c.err = fmt.Errorf("%w %s: line %d, column %q: %v", errInput, c.name, row.line, f.Name, err)
				return false
			}
		}
		n++
	}
	if n == 0 {
		return false
	}
	c.cur = b.NewRecordBatch()
	return true
}

// appendCSV parses one field as the column's type and appends it.
func appendCSV(bl array.Builder, f arrow.Field, v string) error {
	if csvNull(v) {
		if !f.Nullable {
			return errors.New("null in a non-nullable column")
		}
		bl.AppendNull()
		return nil
	}
	switch b := bl.(type) {
	case *array.BooleanBuilder:
		x, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not a bool", v)
		}
		b.Append(x)
	case *array.Int8Builder:
		x, err := parseIntFit(v, 8)
		b.Append(int8(x))
		return err
	case *array.Int16Builder:
		x, err := parseIntFit(v, 16)
		b.Append(int16(x))
		return err
	case *array.Int32Builder:
		x, err := parseIntFit(v, 32)
		b.Append(int32(x))
		return err
	case *array.Int64Builder:
		x, err := parseIntFit(v, 64)
		b.Append(x)
		return err
	case *array.Uint8Builder:
		x, err := parseUintFit(v, 8)
		b.Append(uint8(x))
		return err
	case *array.Uint16Builder:
		x, err := parseUintFit(v, 16)
		b.Append(uint16(x))
		return err
	case *array.Uint32Builder:
		x, err := parseUintFit(v, 32)
		b.Append(uint32(x))
		return err
	case *array.Uint64Builder:
		x, err := parseUintFit(v, 64)
		b.Append(x)
		return err
	case *array.Float32Builder:
		x, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return fmt.Errorf("%q is not a float32", v)
		}
		b.Append(float32(x))
	case *array.Float64Builder:
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a float64", v)
		}
		b.Append(x)
	case *array.StringBuilder:
		b.Append(v)
	case *array.LargeStringBuilder:
		b.Append(v)
	case *array.BinaryBuilder:
		b.Append([]byte(v))
	case *array.Date32Builder:
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return fmt.Errorf("%q is not a date (YYYY-MM-DD)", v)
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		ts, _, err := arrow.TimestampFromStringInLocation(v, f.Type.(*arrow.TimestampType).Unit, time.UTC)
		if err != nil {
			return fmt.Errorf("%q is not a timestamp", v)
		}
		b.Append(ts)
	default:
		return fmt.Errorf("type %s cannot be read from CSV", f.Type)
	}
	return nil
}

func parseIntFit(v string, bits int) (int64, error) {
	x, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%s does not fit in int%d [%d, %d]", v, bits, int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1))
		}
		return 0, fmt.Errorf("%q is not an integer (int%d)", v, bits)
	}
	return x, nil
}

func parseUintFit(v string, bits int) (uint64, error) {
	x, err := strconv.ParseUint(v, 10, bits)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) || strings.HasPrefix(v, "-") {
			max := uint64(math.MaxUint64)
			if bits < 64 {
				max = uint64(1)<<bits - 1
			}
			return 0, fmt.Errorf("%s does not fit in uint%d [0, %d]", v, bits, max)
		}
		return 0, fmt.Errorf("%q is not an integer (uint%d)", v, bits)
	}
	return x, nil
}
