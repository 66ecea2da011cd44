package peerlance

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Value renders element i of arr in the peer driver's JSON value encoding
// (tests/peer/README.md), canonicalized like Canonical, so that a value Go
// holds can be compared with a value Lance returned through `rows`:
//
//	null -> null; bool -> true/false; int8..int32, uint8..uint32 -> number;
//	int64, uint64, temporal types -> decimal string of the stored integer;
//	float16/32/64 -> {"f16"|"f32"|"f64": "0x<bits>"}; decimal -> "-1.50";
//	utf8 -> string; binary kinds -> lowercase hex; lists -> arrays;
//	struct -> object; map -> [{"key":k,"value":v}]; dictionary -> its value.
func Value(arr arrow.Array, i int) (string, error) {
	v, err := valueOf(arr, i)
	if err != nil {
		return "", err
	}
	return encodeCanonical(v)
}

// Canonical re-encodes a JSON value with sorted object keys, numbers kept as
// written and no HTML escaping, so equal values compare equal as strings.
func Canonical(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("peerlance: canonicalizing %.200q: %w", raw, err)
	}
	return encodeCanonical(v)
}

func encodeCanonical(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("peerlance: encoding value: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// CanonicalRow returns row i of r with every value canonicalized.
func (r *Rows) CanonicalRow(i int) ([]string, error) {
	if i < 0 || i >= len(r.Rows) {
		return nil, fmt.Errorf("peerlance: row %d out of range (%d rows)", i, len(r.Rows))
	}
	out := make([]string, len(r.Rows[i]))
	for j, raw := range r.Rows[i] {
		c, err := Canonical(raw)
		if err != nil {
			return nil, fmt.Errorf("row %d column %s: %w", i, r.Columns[j], err)
		}
		out[j] = c
	}
	return out, nil
}

// FloatBits decodes a float value of the encoding ({"f16"|"f32"|"f64": "0x..."})
// into its width in bits and its bit pattern.
func FloatBits(raw json.RawMessage) (width int, bits uint64, err error) {
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return 0, 0, fmt.Errorf("peerlance: %.100q is not a float value", raw)
	}
	for k, v := range m {
		switch k {
		case "f16":
			width = 16
		case "f32":
			width = 32
		case "f64":
			width = 64
		default:
			return 0, 0, fmt.Errorf("peerlance: %.100q is not a float value", raw)
		}
		bits, err = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, width)
		if err != nil || !strings.HasPrefix(v, "0x") {
			return 0, 0, fmt.Errorf("peerlance: bad float bits in %.100q", raw)
		}
	}
	return width, bits, nil
}

func f16JSON(b uint16) any { return map[string]any{"f16": fmt.Sprintf("0x%04x", b)} }
func f32JSON(b uint32) any { return map[string]any{"f32": fmt.Sprintf("0x%08x", b)} }
func f64JSON(b uint64) any { return map[string]any{"f64": fmt.Sprintf("0x%016x", b)} }

func num(v int64) json.Number   { return json.Number(strconv.FormatInt(v, 10)) }
func unum(v uint64) json.Number { return json.Number(strconv.FormatUint(v, 10)) }

func str(s string) any {
	if !utf8.ValidString(s) {
		return map[string]any{"invalid_utf8_hex": hex.EncodeToString([]byte(s))}
	}
	return s
}

func formatDecimal(v *big.Int, scale int32) string {
	neg := v.Sign() < 0
	s := new(big.Int).Abs(v).String()
	switch {
	case scale > 0:
		if len(s) <= int(scale) {
			s = strings.Repeat("0", int(scale)-len(s)+1) + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	case scale < 0:
		if v.Sign() == 0 {
			s = "0"
		} else {
			s += strings.Repeat("0", int(-scale))
		}
	}
	if neg {
		return "-" + s
	}
	return s
}

func valueOf(arr arrow.Array, i int) (any, error) {
	if i < 0 || i >= arr.Len() {
		return nil, fmt.Errorf("peerlance: index %d out of range [0, %d)", i, arr.Len())
	}
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.Null:
		return nil, nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return num(int64(a.Value(i))), nil
	case *array.Int16:
		return num(int64(a.Value(i))), nil
	case *array.Int32:
		return num(int64(a.Value(i))), nil
	case *array.Uint8:
		return unum(uint64(a.Value(i))), nil
	case *array.Uint16:
		return unum(uint64(a.Value(i))), nil
	case *array.Uint32:
		return unum(uint64(a.Value(i))), nil
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), nil
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10), nil
	case *array.Float16:
		return f16JSON(a.Value(i).Uint16()), nil
	case *array.Float32:
		return f32JSON(math.Float32bits(a.Value(i))), nil
	case *array.Float64:
		return f64JSON(math.Float64bits(a.Value(i))), nil
	case *array.Decimal128:
		return formatDecimal(a.Value(i).BigInt(), a.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Decimal256:
		return formatDecimal(a.Value(i).BigInt(), a.DataType().(*arrow.Decimal256Type).Scale), nil
	case *array.Date32:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Date64:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Time32:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Time64:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Timestamp:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Duration:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.MonthInterval:
		b := binary.LittleEndian.AppendUint32(nil, uint32(a.Value(i)))
		return map[string]any{"interval_hex": hex.EncodeToString(b)}, nil
	case *array.DayTimeInterval:
		v := a.Value(i)
		b := binary.LittleEndian.AppendUint32(nil, uint32(v.Days))
		b = binary.LittleEndian.AppendUint32(b, uint32(v.Milliseconds))
		return map[string]any{"interval_hex": hex.EncodeToString(b)}, nil
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		b := binary.LittleEndian.AppendUint32(nil, uint32(v.Months))
		b = binary.LittleEndian.AppendUint32(b, uint32(v.Days))
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Nanoseconds))
		return map[string]any{"interval_hex": hex.EncodeToString(b)}, nil
	case *array.String:
		return str(a.Value(i)), nil
	case *array.LargeString:
		return str(a.Value(i)), nil
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.FixedSizeBinary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.Dictionary:
		return valueOf(a.Dictionary(), a.GetValueIndex(i))
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		o := make(map[string]any, a.NumField())
		for f := 0; f < a.NumField(); f++ {
			v, err := valueOf(a.Field(f), i)
			if err != nil {
				return nil, fmt.Errorf("struct field %s: %w", st.Field(f).Name, err)
			}
			o[st.Field(f).Name] = v
		}
		return o, nil
	case array.ListLike: // list, large_list, fixed_size_list, map (a list of entry structs)
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			v, err := valueOf(vals, int(j))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("peerlance: no JSON encoding for Arrow type %s", arr.DataType())
	}
}

// TypeString renders an Arrow type in the corpus notation used by `info`
// and `rows` schemas (lance-corpus/README.md, "Type strings").
func TypeString(dt arrow.DataType) (string, error) {
	unit := func(u arrow.TimeUnit) string { return [...]string{"s", "ms", "us", "ns"}[u&3] }
	switch t := dt.(type) {
	case *arrow.NullType:
		return "null", nil
	case *arrow.BooleanType:
		return "bool", nil
	case *arrow.Int8Type:
		return "int8", nil
	case *arrow.Int16Type:
		return "int16", nil
	case *arrow.Int32Type:
		return "int32", nil
	case *arrow.Int64Type:
		return "int64", nil
	case *arrow.Uint8Type:
		return "uint8", nil
	case *arrow.Uint16Type:
		return "uint16", nil
	case *arrow.Uint32Type:
		return "uint32", nil
	case *arrow.Uint64Type:
		return "uint64", nil
	case *arrow.Float16Type:
		return "float16", nil
	case *arrow.Float32Type:
		return "float32", nil
	case *arrow.Float64Type:
		return "float64", nil
	case *arrow.StringType:
		return "utf8", nil
	case *arrow.LargeStringType:
		return "large_utf8", nil
	case *arrow.BinaryType:
		return "binary", nil
	case *arrow.LargeBinaryType:
		return "large_binary", nil
	case *arrow.FixedSizeBinaryType:
		return fmt.Sprintf("fixed_size_binary[%d]", t.ByteWidth), nil
	case *arrow.Date32Type:
		return "date32", nil
	case *arrow.Date64Type:
		return "date64", nil
	case *arrow.Time32Type:
		return "time32[" + unit(t.Unit) + "]", nil
	case *arrow.Time64Type:
		return "time64[" + unit(t.Unit) + "]", nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "timestamp[" + unit(t.Unit) + ", tz=" + t.TimeZone + "]", nil
		}
		return "timestamp[" + unit(t.Unit) + "]", nil
	case *arrow.DurationType:
		return "duration[" + unit(t.Unit) + "]", nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal128(%d, %d)", t.Precision, t.Scale), nil
	case *arrow.Decimal256Type:
		return fmt.Sprintf("decimal256(%d, %d)", t.Precision, t.Scale), nil
	case *arrow.MapType:
		k, err := TypeString(t.KeyType())
		if err != nil {
			return "", err
		}
		v, err := TypeString(t.ItemType())
		if err != nil {
			return "", err
		}
		return "map<" + k + ", " + v + ">", nil
	case *arrow.ListType:
		e, err := TypeString(t.Elem())
		return "list<" + e + ">", err
	case *arrow.LargeListType:
		e, err := TypeString(t.Elem())
		return "large_list<" + e + ">", err
	case *arrow.FixedSizeListType:
		e, err := TypeString(t.Elem())
		return fmt.Sprintf("fixed_size_list<%s>[%d]", e, t.Len()), err
	case *arrow.StructType:
		parts := make([]string, t.NumFields())
		for i, f := range t.Fields() {
			s, err := TypeString(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = f.Name + ": " + s
		}
		return "struct<" + strings.Join(parts, ", ") + ">", nil
	case *arrow.DictionaryType:
		k, err := TypeString(t.IndexType)
		if err != nil {
			return "", err
		}
		v, err := TypeString(t.ValueType)
		if err != nil {
			return "", err
		}
		return "dictionary<" + k + ", " + v + ">", nil
	default:
		return "", fmt.Errorf("peerlance: no type string for Arrow type %s", dt)
	}
}

// WriteIPCFile writes records (all of one schema) as an Arrow IPC file, the
// input format of the driver's --ipc and --schema-ipc arguments. With no
// records it writes a schema-only file.
func WriteIPCFile(path string, schema *arrow.Schema, recs ...arrow.RecordBatch) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("peerlance: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("peerlance: closing %s: %w", path, cerr)
		}
	}()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		return fmt.Errorf("peerlance: IPC writer for %s: %w", path, err)
	}
	for _, r := range recs {
		if !r.Schema().Equal(schema) {
			return errors.Join(fmt.Errorf("peerlance: record schema %s differs from %s", r.Schema(), schema), w.Close())
		}
		if err := w.Write(r); err != nil {
			return errors.Join(fmt.Errorf("peerlance: writing %s: %w", path, err), w.Close())
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("peerlance: finishing %s: %w", path, err)
	}
	return nil
}
