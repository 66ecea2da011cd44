package zonemap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/seedio"
)

// isInf reports whether v is a float infinity.
func isInf(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsInf(x, 0)
	case float32:
		return math.IsInf(float64(x), 0)
	case float16.Num:
		return x.Uint16()&0x7FFF == 0x7C00
	}
	return false
}

// fileSchema is the Arrow schema of zonemap.lance for a column of type vt.
func fileSchema(vt arrow.DataType, rowsPerZone uint64) *arrow.Schema {
	md := arrow.NewMetadata([]string{MetaRowsPerZone}, []string{strconv.FormatUint(rowsPerZone, 10)})
	return arrow.NewSchema([]arrow.Field{
		{Name: colMin, Type: vt, Nullable: true},
		{Name: colMax, Type: vt, Nullable: true},
		{Name: colNullCount, Type: arrow.PrimitiveTypes.Uint32},
		{Name: colNaNCount, Type: arrow.PrimitiveTypes.Uint32},
		{Name: colFragmentID, Type: arrow.PrimitiveTypes.Uint64},
		{Name: colZoneStart, Type: arrow.PrimitiveTypes.Uint64},
		{Name: colZoneLength, Type: arrow.PrimitiveTypes.Uint64},
	}, &md)
}

// WriteSegment writes seg as a zonemap.lance file (a Lance 2.0 file, which
// Lance 12 reads for index files) to w and returns its size. The segment is
// checked first (Check): WriteSegment never writes an index Lance would
// misread.
func WriteSegment(w io.Writer, seg *Segment) (int64, error) {
	if err := seg.Check(); err != nil {
		return 0, err
	}
	for i, z := range seg.Zones {
		if z.Length > uint64(z.NullCount)+uint64(z.NaNCount) && (z.Min == nil || z.Max == nil) {
			// Lance 12 prunes such a zone from every comparison.
			return 0, fmt.Errorf("%w: zone %d has ordinary values but a null bound, which Lance reads as \"no values\"", ErrInvalidIndex, i)
		}
	}
	mem := memory.NewGoAllocator()
	mins := make([]any, len(seg.Zones))
	maxs := make([]any, len(seg.Zones))
	for i, z := range seg.Zones {
		mins[i], maxs[i] = z.Min, z.Max
	}
	minArr, err := seedio.BuildValues(mem, seg.ValueType, mins)
	if err != nil {
		return 0, fmt.Errorf("zonemap: min column: %w", err)
	}
	defer minArr.Release()
	maxArr, err := seedio.BuildValues(mem, seg.ValueType, maxs)
	if err != nil {
		return 0, fmt.Errorf("zonemap: max column: %w", err)
	}
	defer maxArr.Release()
	u32 := func(get func(Zone) uint32) arrow.Array {
		b := array.NewUint32Builder(mem)
		defer b.Release()
		b.Reserve(len(seg.Zones))
		for _, z := range seg.Zones {
			b.UnsafeAppend(get(z))
		}
		return b.NewArray()
	}
	u64 := func(get func(Zone) uint64) arrow.Array {
		b := array.NewUint64Builder(mem)
		defer b.Release()
		b.Reserve(len(seg.Zones))
		for _, z := range seg.Zones {
			b.UnsafeAppend(get(z))
		}
		return b.NewArray()
	}
	cols := []arrow.Array{minArr, maxArr,
		u32(func(z Zone) uint32 { return z.NullCount }),
		u32(func(z Zone) uint32 { return z.NaNCount }),
		u64(func(z Zone) uint64 { return z.FragmentID }),
		u64(func(z Zone) uint64 { return z.Start }),
		u64(func(z Zone) uint64 { return z.Length }),
	}
	for _, c := range cols[2:] {
		defer c.Release()
	}
	sch := fileSchema(seg.ValueType, seg.RowsPerZone)
	rec := array.NewRecordBatch(sch, cols, int64(len(seg.Zones)))
	defer rec.Release()

	cw := &countingWriter{w: w}
	fw, err := datafile.NewWriter(cw, sch, datafile.WriterOptions{})
	if err != nil {
		return 0, fmt.Errorf("zonemap: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		return 0, fmt.Errorf("zonemap: %w", err)
	}
	if seg.NullRows != nil {
		b, err := EncodeRowAddrMap(seg.NullRows)
		if err != nil {
			return 0, err
		}
		idx, err := fw.AddGlobalBuffer(b)
		if err != nil {
			return 0, fmt.Errorf("zonemap: %w", err)
		}
		if err := fw.SetSchemaMetadata(MetaNullBitmap, strconv.FormatUint(uint64(idx), 10)); err != nil {
			return 0, fmt.Errorf("zonemap: %w", err)
		}
	}
	if _, err := fw.Close(); err != nil {
		return 0, fmt.Errorf("zonemap: %w", err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// EncodeSegment is WriteSegment into memory.
func EncodeSegment(seg *Segment) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := WriteSegment(&buf, seg); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadOptions bound what ReadSegment accepts.
type ReadOptions struct {
	// ValueType, when set, is the indexed column's type in the table; a
	// file whose min/max columns have another type is invalid.
	ValueType arrow.DataType
	// Stats counts the reads (bytes and requests) of the file.
	Stats *datafile.IOStats
	// MaxDecodeBytes caps the memory decoding may take (0 = the datafile
	// default).
	MaxDecodeBytes int64
}

// ReadSegment opens and validates the zonemap.lance file at key in bucket.
// Every problem — unreadable file, wrong schema or types, zones out of
// order or overlapping, impossible counts, NaN or disordered bounds, a
// malformed null bitmap or one disagreeing with the counts — is an error
// wrapping ErrInvalidIndex (or the datafile error), and the segment must
// then be ignored.
func ReadSegment(ctx context.Context, bucket *blob.Bucket, key string, opts ReadOptions) (*Segment, error) {
	f, err := datafile.Open(ctx, bucket, key, datafile.OpenOptions{Stats: opts.Stats})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidIndex, key, err)
	}
	seg, err := decodeFile(ctx, f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return seg, nil
}

// DecodeSegment is ReadSegment over the bytes of a zonemap.lance file.
func DecodeSegment(b []byte, opts ReadOptions) (*Segment, error) {
	f, err := datafile.OpenReaderAt(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidIndex, err)
	}
	return decodeFile(context.Background(), f, opts)
}

func decodeFile(ctx context.Context, f *datafile.File, opts ReadOptions) (seg *Segment, err error) {
	defer func() {
		if r := recover(); r != nil {
			seg, err = nil, fmt.Errorf("%w: decoder failed on malformed input: %v", ErrInvalidIndex, r)
		}
	}()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidIndex, fmt.Sprintf(format, args...))
	}
	if f.NumRows() > math.MaxInt32 {
		return nil, bad("%d zones", f.NumRows())
	}
	md := f.Metadata()
	seg = &Segment{RowsPerZone: DefaultRowsPerZone}
	if v, ok := md[MetaRowsPerZone]; ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || n > MaxRowsPerZone {
			return nil, bad("schema metadata %s = %q is not a zone size in 1..%d", MetaRowsPerZone, v, uint64(MaxRowsPerZone))
		}
		seg.RowsPerZone = n
	}
	rec, err := f.ReadRows(ctx, datafile.ReadRequest{ReadOptions: datafile.ReadOptions{MaxDecodeBytes: opts.MaxDecodeBytes}})
	if err != nil {
		return nil, bad("%v", err)
	}
	defer rec.Release()
	sch := rec.Schema()
	col := func(name string) (arrow.Array, error) {
		idx := sch.FieldIndices(name)
		if len(idx) != 1 {
			return nil, bad("%d columns named %q, want 1", len(idx), name)
		}
		return rec.Column(idx[0]), nil
	}
	minCol, err := col(colMin)
	if err != nil {
		return nil, err
	}
	maxCol, err := col(colMax)
	if err != nil {
		return nil, err
	}
	vt := minCol.DataType()
	if !arrow.TypeEqual(vt, maxCol.DataType()) {
		return nil, bad("min is %s but max is %s", vt, maxCol.DataType())
	}
	if opts.ValueType != nil && !arrow.TypeEqual(vt, opts.ValueType) {
		return nil, bad("min/max are %s but the column is %s", vt, opts.ValueType)
	}
	if err := SupportedType(vt); err != nil {
		return nil, bad("%v", err)
	}
	seg.ValueType = vt
	u32 := func(name string) (*array.Uint32, error) {
		c, err := col(name)
		if err != nil {
			return nil, err
		}
		a, ok := c.(*array.Uint32)
		if !ok {
			return nil, bad("column %s is %s, want uint32", name, c.DataType())
		}
		if a.NullN() != 0 {
			return nil, bad("column %s has nulls", name)
		}
		return a, nil
	}
	u64 := func(name string) (*array.Uint64, error) {
		c, err := col(name)
		if err != nil {
			return nil, err
		}
		a, ok := c.(*array.Uint64)
		if !ok {
			return nil, bad("column %s is %s, want uint64", name, c.DataType())
		}
		if a.NullN() != 0 {
			return nil, bad("column %s has nulls", name)
		}
		return a, nil
	}
	nulls, err := u32(colNullCount)
	if err != nil {
		return nil, err
	}
	nans, err := u32(colNaNCount)
	if err != nil {
		return nil, err
	}
	frags, err := u64(colFragmentID)
	if err != nil {
		return nil, err
	}
	starts, err := u64(colZoneStart)
	if err != nil {
		return nil, err
	}
	lengths, err := u64(colZoneLength)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	seg.Zones = make([]Zone, n)
	for i := 0; i < n; i++ {
		z := &seg.Zones[i]
		z.FragmentID, z.Start, z.Length = frags.Value(i), starts.Value(i), lengths.Value(i)
		z.NullCount, z.NaNCount = nulls.Value(i), nans.Value(i)
		if z.Min, err = seedio.ValueAt(minCol, i); err != nil {
			return nil, bad("zone %d min: %v", i, err)
		}
		if z.Max, err = seedio.ValueAt(maxCol, i); err != nil {
			return nil, bad("zone %d max: %v", i, err)
		}
	}
	if v, ok := md[MetaNullBitmap]; ok {
		idx, err := strconv.ParseUint(v, 10, 32)
		if err != nil || idx == 0 || idx >= uint64(len(f.GlobalBuffers())) {
			return nil, bad("schema metadata %s = %q does not name one of the file's %d extra global buffers", MetaNullBitmap, v, len(f.GlobalBuffers())-1)
		}
		b, err := f.GlobalBuffer(ctx, int(idx))
		if err != nil {
			return nil, bad("null bitmap buffer %d: %v", idx, err)
		}
		m, err := DecodeRowAddrMap(b)
		if err != nil {
			return nil, err
		}
		seg.NullRows = m.Rows
		if len(m.Full) > 0 {
			// "Every row of the fragment": the rows its zones cover.
			for id := range m.Full {
				bm := roaring.New()
				for _, z := range seg.Zones {
					if z.FragmentID == uint64(id) {
						bm.AddRange(z.Start, z.End())
					}
				}
				seg.NullRows[id] = bm
			}
		}
	}
	if err := seg.Check(); err != nil {
		return nil, err
	}
	return seg, nil
}

// Check validates the segment's invariants: a supported value type; a zone
// size in 1..MaxRowsPerZone; zones sorted by (fragment, start), within
// 32-bit offsets, non-empty, at most RowsPerZone rows long... (a Lance zone
// spans at most RowsPerZone live rows, but with deletions its offset span
// may be longer, so only the 32-bit bound is checked); null_count +
// nan_count <= zone_length; no NaN count on a non-float column; bounds
// never NaN except Max as the NaN marker of a zone with NaNs, Min <= Max;
// no bound on a zone without values; and, with a null bitmap, offsets
// inside the fragment's zones and per-zone cardinalities equal to the null
// counts.
//
// Lance itself writes null bounds for zones with values for some types
// (decimals and fixed-size binaries in Lance 12's seeds); Check accepts
// them in files it reads, since Prune treats a null bound as unknown, but
// this package never writes them.
func (s *Segment) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidIndex, fmt.Sprintf(format, args...))
	}
	if s.ValueType == nil {
		return bad("no value type")
	}
	if err := SupportedType(s.ValueType); err != nil {
		return bad("%v", err)
	}
	if s.RowsPerZone == 0 || s.RowsPerZone > MaxRowsPerZone {
		return bad("rows_per_zone %d is outside 1..%d", s.RowsPerZone, uint64(MaxRowsPerZone))
	}
	if len(s.Zones) == 0 {
		return bad("no zones")
	}
	float := isFloat(s.ValueType)
	for i, z := range s.Zones {
		if z.Length == 0 {
			return bad("zone %d (fragment %d, start %d) is empty", i, z.FragmentID, z.Start)
		}
		if z.FragmentID > math.MaxUint32 {
			return bad("zone %d: fragment id %d exceeds uint32", i, z.FragmentID)
		}
		if z.Start > math.MaxUint32 || z.Length > 1<<32 || z.Start+z.Length > 1<<32 {
			return bad("zone %d (fragment %d): rows [%d, +%d) exceed 32-bit offsets", i, z.FragmentID, z.Start, z.Length)
		}
		if i > 0 {
			p := s.Zones[i-1]
			if z.FragmentID < p.FragmentID || (z.FragmentID == p.FragmentID && z.Start < p.End()) {
				return bad("zone %d (fragment %d, start %d) is out of order or overlaps zone %d (fragment %d, rows [%d, %d))",
					i, z.FragmentID, z.Start, i-1, p.FragmentID, p.Start, p.End())
			}
		}
		if uint64(z.NullCount)+uint64(z.NaNCount) > z.Length {
			return bad("zone %d: null_count %d + nan_count %d exceed zone_length %d", i, z.NullCount, z.NaNCount, z.Length)
		}
		if !float && z.NaNCount != 0 {
			return bad("zone %d: nan_count %d on a %s column", i, z.NaNCount, s.ValueType)
		}
		ordinary := z.Length > uint64(z.NullCount)+uint64(z.NaNCount)
		if isNaN(z.Min) {
			return bad("zone %d: min is NaN", i)
		}
		if isNaN(z.Max) && z.NaNCount == 0 {
			return bad("zone %d: max is NaN but nan_count is 0", i)
		}
		if !ordinary && (z.Min != nil || z.Max != nil) {
			// Only NaN markers: Lance's (null min, NaN max) and ours
			// (±Inf min with a NaN or -Inf max), on a float zone with NaNs.
			minOK := z.Min == nil || isInf(z.Min)
			maxOK := z.Max != nil && (isNaN(z.Max) || isInf(z.Max))
			if !float || z.NaNCount == 0 || !minOK || !maxOK {
				return bad("zone %d: bounds on a zone without ordinary values", i)
			}
		}
		if z.Min != nil && z.Max != nil && !isNaN(z.Max) {
			c, err := seedio.CompareValues(z.Min, z.Max)
			if err != nil {
				return bad("zone %d: %v", i, err)
			}
			if c > 0 {
				return bad("zone %d: min > max", i)
			}
		}
		if ordinary && (z.Min == nil) != (z.Max == nil) {
			return bad("zone %d: one bound is null, the other is not", i)
		}
	}
	if s.NullRows != nil {
		byFrag := map[uint64][]Zone{}
		for _, z := range s.Zones {
			byFrag[z.FragmentID] = append(byFrag[z.FragmentID], z)
		}
		for id, bm := range s.NullRows {
			if bm.IsEmpty() {
				continue
			}
			zs := byFrag[uint64(id)]
			if len(zs) == 0 {
				return bad("null bitmap lists rows of fragment %d, which has no zones", id)
			}
			var inZones uint64
			for _, z := range zs {
				inZones += bm.CardinalityInRange(z.Start, z.End())
			}
			if inZones != bm.GetCardinality() {
				return bad("null bitmap of fragment %d has rows outside its zones", id)
			}
		}
		for i, z := range s.Zones {
			var got uint64
			if bm := s.NullRows[uint32(z.FragmentID)]; bm != nil {
				got = bm.CardinalityInRange(z.Start, z.End())
			}
			if got != uint64(z.NullCount) {
				return bad("zone %d (fragment %d, rows [%d, %d)): null bitmap has %d rows, null_count is %d", i, z.FragmentID, z.Start, z.End(), got, z.NullCount)
			}
		}
	}
	return nil
}
