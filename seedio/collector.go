package seedio

// Collector: per-column computation of version-1 zone statistics (R19–R51).

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	flatbuffers "github.com/google/flatbuffers/go"
)

const (
	// DefaultRowsPerZone is the zone size used when CollectorOptions leaves
	// it 0 (R4).
	DefaultRowsPerZone = 8192
	// MaxRowsPerZone is the largest zone size a writer accepts (R4, Q14), so
	// that every count fits uint32 (R28).
	MaxRowsPerZone = math.MaxUint32
	// MaxSeedRows is the largest number of rows one seed can describe: row
	// offsets of a Lance data file are 32-bit (§1), and the null bitmap is a
	// 32-bit Roaring bitmap (R42).
	MaxSeedRows = 1 << 32
)

var (
	// ErrNoSeedForType: the column's type gets no seed at all (Union, and
	// dictionary, run-end-encoded or extension types over a union; decision
	// Q3). Writers write neither a buffer nor a locator for such a column.
	ErrNoSeedForType = errors.New("seedio: column type gets no seed")
	// ErrSeedCountOverflow: a count or row offset cannot be represented
	// exactly (more than 2^32 rows in one data file, or a zone count above
	// 2^32-1). The writer must omit the seed (R28, R64).
	ErrSeedCountOverflow = errors.New("seedio: seed count overflow")
	// ErrCollectorOptions: invalid CollectorOptions (rows_per_zone outside
	// 1…2^32-1, R4/T41; negative MaxBoundBytes).
	ErrCollectorOptions = errors.New("seedio: invalid collector options")
	// ErrObserveType: Observe got an array whose type differs from the
	// collector's field type, or a nil array.
	ErrObserveType = errors.New("seedio: observed array does not match the column type")
)

// CollectorOptions configures a Collector.
type CollectorOptions struct {
	RowsPerZone   uint64 // 0 => 8192 (DefaultRowsPerZone); valid 1..2^32-1 (R4)
	MaxBoundBytes int    // 0 => 64 (DefaultMaxBoundBytes); truncation length L for string/binary bounds (§6.2)
	// ExactZeros leaves float bounds at the exact totalOrder extrema
	// (no R39 widening: a zone of +0.0 and 1 gets min +0.0, not −0.0).
	// Writers leave it false; seeds verify sets it to compare a seed's
	// bounds with the real extrema.
	ExactZeros bool
}

// EncodedSeed is a finished version-1 seed for one column of one data file:
// the IPC bytes and the Seed they encode — the same type Decode returns for
// them (Version 1, exact counts and null positions, NaN signs known), so
// the writer and the reader share one Seed and one Zone type, as
// archive/zip's Reader and Writer share FileHeader.
type EncodedSeed struct {
	Column string
	// IPC is the complete Arrow IPC file (R9), one record batch (R10),
	// uncompressed (R12), metadata version="1" and seed_null_bitmap (R17,
	// R44).
	IPC []byte
	// NullBitmapHex is the seed_null_bitmap value written into IPC. It may
	// share memory with IPC: IPC must not be modified in place.
	NullBitmapHex string
	// Seed is what IPC encodes.
	Seed
}

// zoneCounts are the running counts of the open zone.
type zoneCounts struct {
	nulls, nans, negNaNs uint64
}

// accumulator computes the type-specific part of the statistics: logical
// nulls (with their offsets), NaN counts and bounds.
type accumulator interface {
	// observe processes rows [lo, hi) of arr, all inside the open zone; base
	// is the data-file row offset of row 0 of arr.
	observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64)
	// closeZone stores the bounds of the open zone (ordinary: the zone has
	// at least one ordinary value) and starts a new zone.
	closeZone(ordinary bool)
	// zoneBounds returns the stored bounds of closed zone i (nil = null).
	zoneBounds(i int) (min, max any)
	// reset forgets everything.
	reset()
}

// valueAccumulator is an accumulator for a value type that can also be fed
// through dictionary indices.
type valueAccumulator interface {
	accumulator
	// observeAt processes values[idx[k]] for every k; all are non-null.
	observeAt(values arrow.Array, idx []int, z *zoneCounts)
}

// Collector computes the version-1 seed of one column of one data file,
// batch by batch. A Collector is not safe for concurrent use. After Finish it
// is reset and can collect the next data file's column (R21, R51).
//
// Errors are sticky: once Observe fails, Finish returns the same error and
// the caller must write no seed for this data file (R64).
//
// Memory: the collector never retains input arrays. It keeps the open zone's
// running statistics (for strings and binaries copies of the current
// extrema), the finished zones' statistics, one 8 KiB chunk of null bits and
// the finished null-bitmap containers — O(zones) plus the size of the null
// bitmap the seed stores anyway, never O(rows).
type Collector struct {
	field     arrow.Field
	valueType arrow.DataType
	rpz       uint64
	maxBound  int

	acc      accumulator
	nulls    *nullRecorder
	rows     uint64 // rows observed in this data file
	zoneRows uint64 // rows in the open zone
	cur      zoneCounts
	zones    []zoneCounts // closed zones
	zoneLens []uint64
	err      error
	fb       *flatbuffers.Builder // reused by Finish's IPC writer
	// AppendFinish's working memory, reused from seed to seed.
	zoneBuf []Zone
	rawBuf  []byte
	body    fastBody
}

// boundsFiller is implemented by accumulators that set the bounds of all
// zones at once in Finish, with a few allocations instead of one per bound.
type boundsFiller interface {
	fillBounds(zones []Zone)
}

// NewCollector returns a collector for field. Union-typed fields (and
// dictionary, run-end-encoded or extension types over a union) get no seed:
// the error wraps ErrNoSeedForType. Invalid options wrap ErrCollectorOptions.
func NewCollector(field arrow.Field, opts CollectorOptions) (*Collector, error) {
	if field.Type == nil {
		return nil, fmt.Errorf("%w: field %q has no type", ErrCollectorOptions, field.Name)
	}
	rpz := opts.RowsPerZone
	if rpz == 0 {
		rpz = DefaultRowsPerZone
	}
	if rpz > MaxRowsPerZone {
		return nil, fmt.Errorf("%w: rows_per_zone %d exceeds 2^32-1 (R4)", ErrCollectorOptions, rpz)
	}
	maxBound := opts.MaxBoundBytes
	if maxBound == 0 {
		maxBound = DefaultMaxBoundBytes
	}
	if maxBound < 0 {
		return nil, fmt.Errorf("%w: MaxBoundBytes %d is negative", ErrCollectorOptions, maxBound)
	}
	if hasUnion(field.Type) {
		return nil, fmt.Errorf("%w: column %q has type %s (Q3: union columns are not seeded)", ErrNoSeedForType, field.Name, field.Type)
	}
	c := &Collector{
		field:     field,
		valueType: seedValueType(field.Type),
		rpz:       rpz,
		maxBound:  maxBound,
		nulls:     newNullRecorder(),
	}
	acc, err := newAccumulator(field.Type, maxBound)
	if err != nil {
		return nil, fmt.Errorf("column %q: %w", field.Name, err)
	}
	if opts.ExactZeros {
		setExactZeros(acc)
	}
	c.acc = acc
	return c, nil
}

// hasUnion reports whether the logical values of a column of type dt are
// union values (whose nullness is defined by the selected child, Q3).
func hasUnion(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case arrow.UnionType:
		return true
	case arrow.ExtensionType:
		return hasUnion(t.StorageType())
	case *arrow.DictionaryType:
		return hasUnion(t.ValueType)
	case *arrow.RunEndEncodedType:
		return hasUnion(t.Encoded())
	}
	return false
}

// Field returns the column field the collector was made for.
func (c *Collector) Field() arrow.Field { return c.field }

// RowsPerZone returns the zone size in use.
func (c *Collector) RowsPerZone() uint64 { return c.rpz }

// Rows returns how many rows have been observed since the last Finish/Reset.
func (c *Collector) Rows() uint64 { return c.rows }

// Observe adds the next batch of the column, in row order (R49). arr must
// have exactly the field's type. Zones span batch boundaries. Observe does
// not retain arr.
func (c *Collector) Observe(arr arrow.Array) error {
	if c.err != nil {
		return c.err
	}
	if arr == nil {
		c.err = fmt.Errorf("%w: column %q: nil array", ErrObserveType, c.field.Name)
		return c.err
	}
	if !arrow.TypeEqual(arr.DataType(), c.field.Type) {
		c.err = fmt.Errorf("%w: column %q has type %s, got array of type %s", ErrObserveType, c.field.Name, c.field.Type, arr.DataType())
		return c.err
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	n := uint64(arr.Len())
	if n == 0 {
		return nil
	}
	if n > MaxSeedRows-c.rows {
		c.err = fmt.Errorf("%w: column %q: %d rows observed, %d more exceed the 2^32-row limit of a seed", ErrSeedCountOverflow, c.field.Name, c.rows, n)
		return c.err
	}
	var pos uint64
	for pos < n {
		take := min(n-pos, c.rpz-c.zoneRows)
		c.acc.observe(arr, int(pos), int(pos+take), &c.cur, c.nulls, c.rows)
		c.zoneRows += take
		pos += take
		if c.zoneRows == c.rpz {
			if err := c.closeZone(); err != nil {
				c.err = err
				return err
			}
		}
	}
	c.rows += n
	return nil
}

// closeZone records the open zone (R20) and starts the next one.
func (c *Collector) closeZone() error {
	z := c.cur
	if z.nulls > math.MaxUint32 || z.nans > math.MaxUint32 || z.negNaNs > z.nans ||
		z.nulls+z.nans > c.zoneRows {
		return fmt.Errorf("%w: column %q zone %d: null_count %d, nan_count %d, negative_nan_count %d, zone_length %d",
			ErrSeedCountOverflow, c.field.Name, len(c.zones), z.nulls, z.nans, z.negNaNs, c.zoneRows)
	}
	c.acc.closeZone(c.zoneRows > z.nulls+z.nans)
	c.zones = append(c.zones, z)
	c.zoneLens = append(c.zoneLens, c.zoneRows)
	c.cur = zoneCounts{}
	c.zoneRows = 0
	return nil
}

// Reset discards everything observed since the last Finish (including a
// sticky error), e.g. when a data-file write is abandoned.
func (c *Collector) Reset() {
	c.acc.reset()
	c.nulls.reset()
	c.rows, c.zoneRows = 0, 0
	c.cur = zoneCounts{}
	c.zones = c.zones[:0]
	c.zoneLens = c.zoneLens[:0]
	c.err = nil
}

// Finish closes the last (possibly short) zone and encodes the seed. It
// returns (nil, nil) when no rows were observed (R11: no seed, no locator),
// and the sticky error if Observe failed (R64). The collector is reset in
// every case, ready for the next data file (R21, R51). The returned seed
// owns its memory; AppendFinish is the form for writers that only need the
// bytes.
func (c *Collector) Finish() (*EncodedSeed, error) {
	defer c.Reset()
	zones, err := c.closeAll(nil)
	if err != nil || zones == nil {
		return nil, err
	}
	raw := c.nulls.serialize()
	// raw is this seed's own buffer and is never modified: the bitmap can
	// reference it (its containers copy on write).
	bm := roaring.New()
	if m, err := bm.FromUnsafeBytes(raw); err != nil || m != int64(len(raw)) {
		return nil, fmt.Errorf("%w: column %q: null bitmap: read %d of %d bytes: %v", ErrEncode, c.field.Name, m, len(raw), err)
	}
	if c.fb == nil {
		c.fb = flatbuffers.NewBuilder(0)
	}
	var ipcBytes []byte
	var hexStr string
	if out, at, ok := encodeZonesFastRaw(c.fb, nil, nil, c.valueType, zones, raw); ok {
		// The hex digits were written once, into the IPC bytes, which are
		// never modified: NullBitmapHex shares them.
		ipcBytes = out
		hexStr = unsafe.String(&out[at], 2*len(raw))
	} else {
		if ipcBytes, hexStr, err = c.encodeSlow(zones, raw); err != nil {
			return nil, err
		}
	}
	return &EncodedSeed{
		Column:        c.field.Name,
		IPC:           ipcBytes,
		NullBitmapHex: hexStr,
		Seed: Seed{
			Version:            1,
			ValueType:          c.valueType,
			RowsPerZone:        c.rpz,
			NumRows:            c.rows,
			Zones:              zones,
			NullBitmap:         bm,
			NullPositionsExact: true,
		},
	}, nil
}

// AppendFinish is Finish for a writer that only needs the seed's bytes: it
// appends the seed's Arrow IPC file — byte for byte the EncodedSeed.IPC
// Finish would return — to dst and returns the extended slice, without
// building the decoded Seed. With no rows observed it returns dst unchanged
// (R11: no seed); on error it returns dst unchanged and the error (R64: no
// seed either). The collector is reset in every case. Its working memory
// (zones, serialized null bitmap, record batch body) is kept and reused by
// the next AppendFinish, so that with a dst of sufficient capacity a seed
// costs no allocation proportional to its size.
func (c *Collector) AppendFinish(dst []byte) ([]byte, error) {
	defer c.Reset()
	zones, err := c.closeAll(c.zoneBuf[:0])
	if err != nil || zones == nil {
		return dst, err
	}
	c.zoneBuf = zones
	defer clear(zones) // drop the boxed bounds until the next seed
	raw := c.nulls.appendSerialized(c.rawBuf[:0])
	c.rawBuf = raw
	if c.fb == nil {
		c.fb = flatbuffers.NewBuilder(0)
	}
	if out, _, ok := encodeZonesFastRaw(c.fb, &c.body, dst, c.valueType, zones, raw); ok {
		return out, nil
	}
	ipcBytes, _, err := c.encodeSlow(zones, raw)
	if err != nil {
		return dst, err
	}
	return append(dst, ipcBytes...), nil
}

// closeAll closes the last zone and returns every zone's statistics and
// bounds, appended to buf; nil zones (and nil error) when no rows were
// observed; the sticky error if Observe failed.
func (c *Collector) closeAll(buf []Zone) ([]Zone, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.rows == 0 {
		return nil, nil
	}
	if c.zoneRows > 0 {
		if err := c.closeZone(); err != nil {
			return nil, err
		}
	}
	zones := slices.Grow(buf[:0], len(c.zones))[:len(c.zones)]
	var start uint64
	for i, z := range c.zones {
		zones[i] = Zone{Index: i, Start: start, Stats: Stats{
			Rows:             c.zoneLens[i],
			NullCount:        z.nulls,
			NaNCount:         z.nans,
			NegativeNaNCount: z.negNaNs,
			NullCountExact:   true,
			NaNCountExact:    true,
			NaNSignKnown:     true,
		}}
		start += c.zoneLens[i]
	}
	if f, ok := c.acc.(boundsFiller); ok {
		f.fillBounds(zones)
	} else {
		for i := range zones {
			zones[i].Min, zones[i].Max = c.acc.zoneBounds(i)
		}
	}
	if err := checkZoneCounts(zones); err != nil {
		return nil, fmt.Errorf("column %q: %w", c.field.Name, err)
	}
	return zones, nil
}

// encodeSlow encodes the seed with arrow-go's IPC writer (value types the
// fast encoder does not handle); the hex digits are written once and never
// modified, so the returned string shares their bytes.
func (c *Collector) encodeSlow(zones []Zone, raw []byte) ([]byte, string, error) {
	hexBuf := make([]byte, hex.EncodedLen(len(raw)))
	hexEncode(hexBuf, raw)
	hexStr := unsafe.String(unsafe.SliceData(hexBuf), len(hexBuf))
	ipcBytes, err := encodeZones(c.valueType, zones, &hexStr)
	if err != nil {
		return nil, "", fmt.Errorf("column %q: %w", c.field.Name, err)
	}
	return ipcBytes, hexStr, nil
}
