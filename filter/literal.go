package filter

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"

	"github.com/lancekeeper/lancekeeper/internal/floatorder"
)

func parseFloatLit(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan", "+nan":
		return math.Float64frombits(0x7ff8000000000000), nil // the canonical quiet NaN, as Lance parses 'NaN'
	case "-nan":
		return math.Float64frombits(0xfff8000000000000), nil
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
}

// wantDecimal accepts only plain decimal numbers ([-+]digits[.digits], at
// most 80 digits): arrow-go's decimal parsers panic on "inf" and "nan" and
// grow big.Ints from huge exponents.
func wantDecimal(l *litNode, scale int32) error {
	s := strings.TrimLeft(l.text, "+-")
	digits, dots, frac := 0, 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
			if dots > 0 {
				frac++
			}
		case c == '.':
			dots++
		default:
			digits = -1
		}
		if digits < 0 {
			break
		}
	}
	if l.kind != litNumber || digits < 1 || dots > 1 || digits > 80 || len(l.text)-len(s) > 1 {
		return fmt.Errorf("literal %s: want a plain decimal number such as -12.50", l.text)
	}
	if int32(frac) > scale {
		// Check that the extra digits are zeros (otherwise the literal
		// cannot be represented at the column's scale).
		if i := strings.IndexByte(s, '.'); i >= 0 && strings.TrimRight(s[i+1+int(max(scale, 0)):], "0") != "" {
			return fmt.Errorf("literal %s has more than %d fraction digits", l.text, scale)
		}
	}
	return nil
}

// valueType is the type literals bind to for a column of type dt: the
// dictionary's value type, an extension's storage type.
func valueType(dt arrow.DataType) arrow.DataType {
	for {
		switch t := dt.(type) {
		case *arrow.DictionaryType:
			dt = t.ValueType
		case arrow.ExtensionType:
			dt = t.StorageType()
		default:
			return dt
		}
	}
}

// bindLiteral converts a literal to the Go value seedio.ValueAt returns for
// value type dt. Floats of every width bind to float64 (comparisons with a
// float literal happen in Float64, as DataFusion coerces them).
func bindLiteral(l *litNode, dt arrow.DataType) (any, error) {
	want := func(k litKind, what string) error {
		if l.kind != k {
			return fmt.Errorf("literal %s does not fit %s: want %s", showLit(l), dt, what)
		}
		return nil
	}
	intLit := func(bits int) (int64, error) {
		if err := want(litNumber, "an integer"); err != nil {
			return 0, err
		}
		v, err := strconv.ParseInt(strings.ReplaceAll(l.text, "_", ""), 10, bits)
		if err != nil {
			return 0, fmt.Errorf("literal %s does not fit %s", l.text, dt)
		}
		return v, nil
	}
	uintLit := func(bits int) (uint64, error) {
		if err := want(litNumber, "a non-negative integer"); err != nil {
			return 0, err
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ReplaceAll(l.text, "_", ""), "+"), 10, bits)
		if err != nil {
			return 0, fmt.Errorf("literal %s does not fit %s", l.text, dt)
		}
		return v, nil
	}
	switch t := dt.(type) {
	case *arrow.Int8Type:
		v, err := intLit(8)
		return int8(v), err
	case *arrow.Int16Type:
		v, err := intLit(16)
		return int16(v), err
	case *arrow.Int32Type:
		v, err := intLit(32)
		return int32(v), err
	case *arrow.Int64Type:
		return intLit(64)
	case *arrow.Uint8Type:
		v, err := uintLit(8)
		return uint8(v), err
	case *arrow.Uint16Type:
		v, err := uintLit(16)
		return uint16(v), err
	case *arrow.Uint32Type:
		v, err := uintLit(32)
		return uint32(v), err
	case *arrow.Uint64Type:
		return uintLit(64)
	case *arrow.Float16Type, *arrow.Float32Type, *arrow.Float64Type:
		if err := want(litNumber, "a number"); err != nil {
			return nil, err
		}
		f, err := parseFloatLit(l.text)
		if err != nil {
			return nil, fmt.Errorf("literal %s is not a number", l.text)
		}
		return f, nil
	case *arrow.BooleanType:
		if err := want(litBool, "true or false"); err != nil {
			return nil, err
		}
		return l.text == "true", nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		if err := want(litString, "a 'string'"); err != nil {
			return nil, err
		}
		return l.text, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		switch l.kind {
		case litString:
			return []byte(l.text), nil
		case litHex:
			b, err := hex.DecodeString(l.text)
			if err != nil {
				return nil, fmt.Errorf("literal x'%s': %v", l.text, err)
			}
			return b, nil
		}
		return nil, fmt.Errorf("literal %s does not fit %s: want 'text' or x'hex'", showLit(l), dt)
	case *arrow.Date32Type, *arrow.Date64Type:
		if l.kind != litString && l.kind != litDate {
			return nil, fmt.Errorf("literal %s does not fit %s: want 'YYYY-MM-DD' or DATE 'YYYY-MM-DD'", showLit(l), dt)
		}
		tm, err := time.Parse("2006-01-02", l.text)
		if err != nil {
			return nil, fmt.Errorf("literal %s is not a YYYY-MM-DD date", showLit(l))
		}
		if _, ok := dt.(*arrow.Date32Type); ok {
			return arrow.Date32FromTime(tm), nil
		}
		return arrow.Date64FromTime(tm), nil
	case *arrow.TimestampType:
		if l.kind == litNumber {
			v, err := intLit(64)
			return arrow.Timestamp(v), err
		}
		if l.kind != litString && l.kind != litTimestamp && l.kind != litDate {
			return nil, fmt.Errorf("literal %s does not fit %s: want a 'YYYY-MM-DD HH:MM:SS' timestamp", showLit(l), dt)
		}
		ts, _, err := arrow.TimestampFromStringInLocation(l.text, t.Unit, time.UTC)
		if err != nil {
			return nil, fmt.Errorf("literal %s is not a timestamp", showLit(l))
		}
		return ts, nil
	case *arrow.Time32Type:
		v, err := intLit(32)
		return arrow.Time32(v), err
	case *arrow.Time64Type:
		v, err := intLit(64)
		return arrow.Time64(v), err
	case *arrow.DurationType:
		v, err := intLit(64)
		return arrow.Duration(v), err
	case *arrow.Decimal32Type:
		if err := wantDecimal(l, t.Scale); err != nil {
			return nil, err
		}
		return decimal.Decimal32FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal64Type:
		if err := wantDecimal(l, t.Scale); err != nil {
			return nil, err
		}
		return decimal.Decimal64FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal128Type:
		if err := wantDecimal(l, t.Scale); err != nil {
			return nil, err
		}
		return decimal128.FromString(l.text, t.Precision, t.Scale)
	case *arrow.Decimal256Type:
		if err := wantDecimal(l, t.Scale); err != nil {
			return nil, err
		}
		return decimal256.FromString(l.text, t.Precision, t.Scale)
	}
	return nil, fmt.Errorf("columns of type %s cannot be compared with a literal", dt)
}

// toColumnFloat converts a float64 literal to the column's float Go type
// when the conversion is exact, for pruning (seedio wants the column's
// type). ok is false when the value is not representable.
func toColumnFloat(dt arrow.DataType, v float64) (any, bool) {
	switch dt.ID() {
	case arrow.FLOAT32:
		f := float32(v)
		if math.IsNaN(v) {
			return float32FromBits(v), true
		}
		return f, float64(f) == v
	case arrow.FLOAT16:
		h := float16.FromBits(floatorder.Float16FromFloat64(v))
		if math.IsNaN(v) {
			bits := uint16(0x7e00)
			if math.Signbit(v) {
				bits |= 0x8000
			}
			return float16.FromBits(bits), true
		}
		return h, floatorder.Float16ToFloat64(h.Uint16()) == v
	}
	return v, true
}

func float32FromBits(v float64) float32 {
	if math.Signbit(v) {
		return math.Float32frombits(0xffc00000)
	}
	return math.Float32frombits(0x7fc00000)
}

func showLit(l *litNode) string {
	switch l.kind {
	case litString:
		return "'" + l.text + "'"
	case litHex:
		return "x'" + l.text + "'"
	case litDate:
		return "DATE '" + l.text + "'"
	case litTimestamp:
		return "TIMESTAMP '" + l.text + "'"
	}
	return l.text
}

func decodeRune(s string) (rune, int) { return utf8DecodeRune(s) }

func utf8DecodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
