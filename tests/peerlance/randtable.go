package peerlance

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RandomTableOptions tune RandomTable.
type RandomTableOptions struct {
	// StorageVersion the table will be written with ("2.1" leaves out map,
	// which Lance 2.1 refuses).
	StorageVersion string
	// MaxRows bounds the row count (default 700). About one table in five
	// gets up to 4·MaxRows rows so that mini-block chunks (≤ 4096 values)
	// and full-zip spans are crossed.
	MaxRows int
	// MaxColumns bounds the columns besides "id" (default 5).
	MaxColumns int
	// EncodingHints gives about two columns in three Lance's encoding
	// field metadata (EncodingHintKeys): general compression zstd/lz4/none
	// and its level, the RLE threshold, the dictionary divisor, byte stream
	// split on/off and the structural encoding (miniblock/fullzip), so
	// that the pages Lance writes on request are decoded too.
	EncodingHints bool
}

// EncodingHintKeys are the Arrow field metadata keys Lance 12 reads to
// choose a column's encodings (lance-encoding constants), which RandomTable
// sets with EncodingHints.
var EncodingHintKeys = []string{
	"lance-encoding:compression", "lance-encoding:compression-level", "lance-encoding:rle-threshold",
	"lance-encoding:dict-divisor", "lance-encoding:bss", "lance-encoding:structural-encoding",
	"lance-encoding:packed",
}

// packable reports whether Lance 12 can store the struct packed (one
// column of row-wise values): children of fixed width or utf8/binary only.
func packable(st *arrow.StructType) bool {
	for _, f := range st.Fields() {
		switch f.Type.(type) {
		case arrow.FixedWidthDataType:
			if f.Type.ID() == arrow.BOOL || f.Type.ID() == arrow.NULL {
				return false
			}
		case *arrow.StringType, *arrow.BinaryType:
		default:
			return false
		}
	}
	return true
}

// hints draws Lance encoding field metadata for a column (nil for none).
func (g *tableGen) hints() map[string]string {
	if g.rng.IntN(3) == 0 {
		return nil
	}
	m := map[string]string{}
	for len(m) == 0 {
		if g.rng.IntN(2) == 0 {
			c := pick(g.rng, []string{"zstd", "lz4", "none", "zstd"})
			m["lance-encoding:compression"] = c
			if c == "zstd" && g.rng.IntN(2) == 0 {
				m["lance-encoding:compression-level"] = pick(g.rng, []string{"1", "3", "9", "19"})
			}
		}
		if g.rng.IntN(3) == 0 {
			m["lance-encoding:rle-threshold"] = pick(g.rng, []string{"0.9", "1.0", "0.1"})
		}
		if g.rng.IntN(3) == 0 {
			m["lance-encoding:dict-divisor"] = pick(g.rng, []string{"1", "2", "100000"})
		}
		if g.rng.IntN(3) == 0 {
			m["lance-encoding:bss"] = pick(g.rng, []string{"on", "off", "auto"})
		}
		if g.rng.IntN(4) == 0 {
			m["lance-encoding:structural-encoding"] = pick(g.rng, []string{"miniblock", "fullzip"})
		}
	}
	return m
}

// Value profiles of a generated column.
const (
	profRandom   = iota // random values, ~15 % nulls
	profAllNull         // every value null
	profConstant        // one value in every row (no nulls)
	profLowCard         // 3 distinct values, some nulls
	profUnique          // all distinct, no nulls
	profWide            // long strings / wide lists (full-zip pages)
	profRuns            // runs of one value (RLE)
	numProfiles
)

// RandomTable returns a random record for Lance's data-file decoders to be
// checked against: an int64 "id" column (0..n-1) and 1..MaxColumns columns
// of random types drawn from every Arrow type Lance writes (all integer and
// float widths including float16, bool, utf8, large_utf8, binary,
// large_binary, fixed_size_binary, decimal128/256, date32/64, time32/64,
// timestamp in every unit with and without a time zone, duration, null,
// dictionary<int32, utf8>, list, fixed_size_list, struct with null parents,
// map<utf8, int32> (not for 2.1) and nestings of these). large_list is
// left out: the peer's Arrow JS cannot read it from IPC (lance-corpus
// README). Each column gets a value profile: random with nulls, all null,
// constant, low cardinality, unique, or wide values (≥ 256-byte strings and
// 64-item fixed-size lists, which Lance stores full-zip). The same seed and
// options give the same record.
func RandomTable(seed uint64, opts RandomTableOptions) arrow.RecordBatch {
	if opts.MaxRows <= 0 {
		opts.MaxRows = 700
	}
	if opts.MaxColumns <= 0 {
		opts.MaxColumns = 5
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	tg := &tableGen{rng: rng, noMap: opts.StorageVersion == "2.1"}
	n := 1 + rng.IntN(opts.MaxRows)
	if rng.IntN(5) == 0 {
		n = opts.MaxRows + rng.IntN(3*opts.MaxRows)
	}
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
	profiles := []int{profUnique}
	nc := 1 + rng.IntN(opts.MaxColumns)
	for i := 0; i < nc; i++ {
		prof := rng.IntN(numProfiles)
		dt := tg.randType(0, prof, false)
		f := arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: true}
		if opts.EncodingHints {
			h := tg.hints()
			if st, ok := dt.(*arrow.StructType); ok && packable(st) && tg.rng.IntN(2) == 0 {
				if h == nil {
					h = map[string]string{}
				}
				h["lance-encoding:packed"] = "true"
				// Lance 12 refuses nulls in a packed struct ("per-value
				// compression not yet supported for block type Nullable")
				prof = pick(tg.rng, []int{profUnique, profConstant})
			}
			if h != nil {
				keys := make([]string, 0, len(h))
				for _, k := range EncodingHintKeys {
					if _, ok := h[k]; ok {
						keys = append(keys, k)
					}
				}
				vals := make([]string, len(keys))
				for j, k := range keys {
					vals[j] = h[k]
				}
				f.Metadata = arrow.NewMetadata(keys, vals)
			}
		}
		fields = append(fields, f)
		profiles = append(profiles, prof)
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for c, f := range fields {
		cg := &colGen{rng: rand.New(rand.NewPCG(seed+uint64(c)*7919, 17)), prof: profiles[c]}
		for row := 0; row < n; row++ {
			if c == 0 {
				b.Field(0).(*array.Int64Builder).Append(int64(row))
				continue
			}
			cg.appendValue(b.Field(c), f.Type, row, 0)
		}
	}
	return b.NewRecordBatch()
}

type tableGen struct {
	rng   *rand.Rand
	noMap bool
}

func (g *tableGen) primitive(prof int, underList bool) arrow.DataType {
	if underList {
		// Lance 12 cannot read back fixed-size lists below a list (its
		// scan fails with "the offset + length of the sliced Buffer cannot
		// exceed the existing length"), so they are only generated outside
		// lists.
		pool := []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64,
			arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean, &arrow.Decimal128Type{Precision: 9, Scale: 2},
			arrow.FixedWidthTypes.Float16, arrow.BinaryTypes.Binary, arrow.PrimitiveTypes.Uint8}
		return pick(g.rng, pool)
	}
	if prof == profWide {
		return pick(g.rng, []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString,
			arrow.FixedSizeListOf(64, arrow.PrimitiveTypes.Float32)})
	}
	pool := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString,
		arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary, &arrow.FixedSizeBinaryType{ByteWidth: 4},
		&arrow.FixedSizeBinaryType{ByteWidth: 16},
		&arrow.Decimal128Type{Precision: 38, Scale: 10}, &arrow.Decimal128Type{Precision: 9, Scale: 2},
		&arrow.Decimal256Type{Precision: 76, Scale: 20},
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
		arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns,
		&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "America/New_York"}, &arrow.TimestampType{Unit: arrow.Nanosecond},
		arrow.FixedWidthTypes.Duration_s, arrow.FixedWidthTypes.Duration_ms, arrow.FixedWidthTypes.Duration_us, arrow.FixedWidthTypes.Duration_ns,
		arrow.Null,
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
		arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int32),
	}
	return pick(g.rng, pool)
}

// randType draws a column type; nested types at most 3 levels deep.
func (g *tableGen) randType(depth, prof int, underList bool) arrow.DataType {
	if depth >= 3 || g.rng.IntN(3) != 0 {
		dt := g.primitive(prof, underList)
		if depth > 0 && dt.ID() == arrow.NULL {
			// Lance 12 refuses a null-typed struct child ("Arrays of type
			// Null cannot contain a null bitmask").
			dt = arrow.PrimitiveTypes.Int16
		}
		return dt
	}
	switch g.rng.IntN(5) {
	case 0, 1:
		return arrow.ListOfField(arrow.Field{Name: "item", Type: g.randType(depth+1, prof, true), Nullable: true})
	case 2, 3:
		nf := 1 + g.rng.IntN(3)
		fs := make([]arrow.Field, nf)
		for i := range fs {
			fs[i] = arrow.Field{Name: fmt.Sprintf("f%d", i), Type: g.randType(depth+1, prof, underList), Nullable: true}
		}
		return arrow.StructOf(fs...)
	default:
		if g.noMap {
			return arrow.ListOf(arrow.PrimitiveTypes.Int32)
		}
		return arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)
	}
}

type colGen struct {
	rng  *rand.Rand
	prof int
	// profRuns: rows left in the current run and its value's row
	runLeft, runRow int
}

// runRow returns the row whose value the current row repeats (profRuns:
// runs of 1..300 rows).
func (g *colGen) runOf(row int) int {
	if g.runLeft <= 0 {
		g.runLeft, g.runRow = 1+g.rng.IntN(300), row
	}
	g.runLeft--
	return g.runRow
}

func (g *colGen) null(depth int) bool {
	switch g.prof {
	case profAllNull:
		return depth == 0 || g.rng.IntN(2) == 0
	case profConstant, profUnique:
		return false
	case profLowCard:
		return g.rng.IntN(10) == 0
	}
	return g.rng.IntN(7) == 0
}

// ival draws an integer for the profile, within [lo, hi].
func (g *colGen) ival(row int, lo, hi int64) int64 {
	switch g.prof {
	case profRuns:
		r := uint64(g.runOf(row))*0x9e3779b97f4a7c15 + 1
		return lo + int64(r%(uint64(hi-lo)+1))
	case profConstant:
		return max(lo, min(hi, 7))
	case profLowCard:
		return max(lo, min(hi, int64(g.rng.IntN(3))*3-2))
	case profUnique:
		span := uint64(hi - lo)
		return lo + int64(uint64(row)%(span+1))
	}
	switch g.rng.IntN(6) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return 0
	}
	return lo + int64(g.rng.Uint64N(uint64(hi-lo)+1))
}

func (g *colGen) str(row int) string {
	switch g.prof {
	case profConstant:
		return "same"
	case profLowCard:
		return pick(g.rng, []string{"red", "green", "blue"})
	case profUnique:
		return fmt.Sprintf("value #%d", row)
	case profRuns:
		return fmt.Sprintf("run of value %d", g.runOf(row))
	case profWide:
		return strings.Repeat(pick(g.rng, sampleStrings()[1:]), 30+g.rng.IntN(40))
	}
	if g.rng.IntN(3) == 0 {
		return fmt.Sprintf("index vector #%d of %d", g.rng.IntN(1000), row)
	}
	return pick(g.rng, sampleStrings())
}

func (g *colGen) appendValue(b array.Builder, dt arrow.DataType, row, depth int) {
	if g.null(depth) {
		b.AppendNull()
		return
	}
	switch t := dt.(type) {
	case *arrow.NullType:
		b.AppendNull()
	case *arrow.Int8Type:
		b.(*array.Int8Builder).Append(int8(g.ival(row, math.MinInt8, math.MaxInt8)))
	case *arrow.Int16Type:
		b.(*array.Int16Builder).Append(int16(g.ival(row, math.MinInt16, math.MaxInt16)))
	case *arrow.Int32Type:
		b.(*array.Int32Builder).Append(int32(g.ival(row, math.MinInt32, math.MaxInt32)))
	case *arrow.Int64Type:
		b.(*array.Int64Builder).Append(g.ival(row, math.MinInt64/2, math.MaxInt64/2))
	case *arrow.Uint8Type:
		b.(*array.Uint8Builder).Append(uint8(g.ival(row, 0, math.MaxUint8)))
	case *arrow.Uint16Type:
		b.(*array.Uint16Builder).Append(uint16(g.ival(row, 0, math.MaxUint16)))
	case *arrow.Uint32Type:
		b.(*array.Uint32Builder).Append(uint32(g.ival(row, 0, math.MaxUint32)))
	case *arrow.Uint64Type:
		b.(*array.Uint64Builder).Append(uint64(g.ival(row, 0, math.MaxInt64)) * 2)
	case *arrow.Float16Type:
		b.(*array.Float16Builder).Append(float16.FromBits(uint16(g.ival(row, 0, math.MaxUint16))))
	case *arrow.Float32Type:
		v := math.Float32frombits(uint32(g.ival(row, 0, math.MaxUint32)))
		if g.prof == profRandom && g.rng.IntN(4) == 0 {
			v = math.Float32frombits(pick(g.rng, specialF32()))
		}
		b.(*array.Float32Builder).Append(v)
	case *arrow.Float64Type:
		v := float64(g.ival(row, -1e6, 1e6)) / 8
		if g.prof == profRandom && g.rng.IntN(4) == 0 {
			v = math.Float64frombits(pick(g.rng, specialF64()))
		}
		b.(*array.Float64Builder).Append(v)
	case *arrow.BooleanType:
		b.(*array.BooleanBuilder).Append(g.ival(row, 0, 1) == 1)
	case *arrow.StringType:
		b.(*array.StringBuilder).Append(g.str(row))
	case *arrow.LargeStringType:
		b.(*array.LargeStringBuilder).Append(g.str(row))
	case *arrow.BinaryType:
		b.(*array.BinaryBuilder).Append([]byte(g.str(row)))
	case *arrow.LargeBinaryType:
		b.(*array.BinaryBuilder).Append([]byte(g.str(row)))
	case *arrow.FixedSizeBinaryType:
		v := make([]byte, t.ByteWidth)
		x := uint64(g.ival(row, 0, math.MaxInt64))
		for i := range v {
			v[i] = byte(x >> (8 * (i % 8)))
		}
		b.(*array.FixedSizeBinaryBuilder).Append(v)
	case *arrow.Decimal128Type:
		x := g.ival(row, -999999999, 999999999)
		b.(*array.Decimal128Builder).Append(decimal128.FromI64(x))
	case *arrow.Decimal256Type:
		x := new(big.Int).SetInt64(g.ival(row, math.MinInt64/2, math.MaxInt64/2))
		x.Mul(x, big.NewInt(1_000_000_007))
		b.(*array.Decimal256Builder).Append(decimal256.FromBigInt(x))
	case *arrow.Date32Type:
		b.(*array.Date32Builder).Append(arrow.Date32(g.ival(row, -100000, 100000)))
	case *arrow.Date64Type:
		b.(*array.Date64Builder).Append(arrow.Date64(g.ival(row, -100000, 100000) * 86400000))
	case *arrow.Time32Type:
		b.(*array.Time32Builder).Append(arrow.Time32(g.ival(row, 0, 86399)))
	case *arrow.Time64Type:
		b.(*array.Time64Builder).Append(arrow.Time64(g.ival(row, 0, 86399_000_000)))
	case *arrow.TimestampType:
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(g.ival(row, -1<<40, 1<<40)))
	case *arrow.DurationType:
		b.(*array.DurationBuilder).Append(arrow.Duration(g.ival(row, -1<<40, 1<<40)))
	case *arrow.DictionaryType:
		if err := b.(*array.BinaryDictionaryBuilder).AppendString(g.str(row)); err != nil {
			panic(err)
		}
	case *arrow.FixedSizeListType:
		lb := b.(*array.FixedSizeListBuilder)
		lb.Append(true)
		for i := 0; i < int(t.Len()); i++ {
			g.appendValue(lb.ValueBuilder(), t.Elem(), row*int(t.Len())+i, depth+1)
		}
	case *arrow.ListType:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		k := g.rng.IntN(4)
		if g.prof == profConstant {
			k = 2
		}
		for i := 0; i < k; i++ {
			g.appendValue(lb.ValueBuilder(), t.Elem(), row*4+i, depth+1)
		}
	case *arrow.MapType:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		k := g.rng.IntN(3)
		for i := 0; i < k; i++ {
			mb.KeyBuilder().(*array.StringBuilder).Append(fmt.Sprintf("k%d", i))
			g.appendValue(mb.ItemBuilder(), arrow.PrimitiveTypes.Int32, row*3+i, depth+1)
		}
	case *arrow.StructType:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for i, f := range t.Fields() {
			g.appendValue(sb.FieldBuilder(i), f.Type, row, depth+1)
		}
	default:
		panic(fmt.Sprintf("peerlance: RandomTable cannot generate %s", dt))
	}
}
