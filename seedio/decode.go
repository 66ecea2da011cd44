package seedio

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const defaultDecodeBytes = 256 << 20

// DefaultMaxDecodedBytes is the default cap on the bytes Decode lets the IPC
// reader allocate for decompressed buffers and arrays.
const DefaultMaxDecodedBytes = defaultDecodeBytes

// DecodeOptions carries what validation needs from the data file and the
// table (spec §5.1 inputs).
type DecodeOptions struct {
	// RowsPerZone is rows_per_zone from the locator (ParseLocator); >= 1.
	RowsPerZone uint64
	// NumRows is N, the data file's physical row count.
	NumRows uint64
	// ColumnType is the column's stored Arrow type in the data file. The
	// seed's min/max type must equal it exactly (R15, E07); for an
	// extension type the storage type is expected (Q4). nil skips the R15
	// check and takes the seed's own min/max type (inspection tools only).
	ColumnType arrow.DataType
	// TableFlagged reports that the table's manifest sets
	// FLAG_ZONE_WRITE_SEEDS in both reader and writer flags. When false a v1
	// seed is refused with ErrSeedV1WithoutFlag (E26, R61); v0 seeds never
	// need the flag (R62).
	TableFlagged bool
	// ExpectRowsPerZone, when non-zero, is the rows_per_zone a consumer
	// (e.g. a zone-map index) needs; a seed with another value is refused
	// with ErrSeedRowsPerZoneMismatch (E24) after full validation.
	ExpectRowsPerZone uint64
	// MaxDecodedBytes caps decompressed and decoded memory; 0 means
	// DefaultMaxDecodedBytes. Exceeding it is E04.
	MaxDecodedBytes uint64
}

// Decode parses and validates the bytes of one seed global buffer (an Arrow
// IPC file) and returns its zones. The checks run in the order of spec
// §5.1 (items 3–11) and stop at the first failure; the returned error is a
// *SeedError (or the *LocatorError / bitmap errors of ParseLocator and
// decodeNullBitmapHex) wrapping the catalogue sentinel, e.g.
// errors.Is(err, ErrSeedCoverage). Per R63 a caller treats any error as "no
// seed for this column" and must not use any part of the seed.
//
// Decode never panics on hostile input and bounds its allocations by the
// input size and opts.MaxDecodedBytes. IPC bodies compressed with ZSTD or
// LZ4 are accepted (Q15); writers never produce them (R12).
//
// v0 seeds (no `version` key) get the structural checks that do not depend
// on v1 columns (§3.5): a NaN bound, or a bound of a zone without ordinary
// values, makes that side unknown; NaN signs are unknown; and for
// Dictionary, RunEndEncoded, Null and Union columns the null counts and the
// bitmap are marked inexact (Stats.NullCountExact, Seed.NullPositionsExact).
func Decode(ipcBytes []byte, opts DecodeOptions) (seed *Seed, err error) {
	defer func() {
		if r := recover(); r != nil {
			seed = nil
			err = &SeedError{Code: "E04", Zone: NoZone, Err: ErrSeedNotIPCFile,
				Msg: fmt.Sprintf("IPC reader failed on malformed input: %v", r)}
		}
	}()
	return decode(ipcBytes, opts)
}

func decode(b []byte, opts DecodeOptions) (*Seed, error) {
	if opts.RowsPerZone == 0 {
		return nil, newErr("E02", ErrSeedLocatorRange, NoZone, "", "rows_per_zone is 0")
	}
	budget := opts.MaxDecodedBytes
	if budget == 0 {
		budget = DefaultMaxDecodedBytes
	}

	// §5.1 item 3: the buffer is exactly one Arrow IPC file.
	lay, err := checkIPCFile(b, budget)
	if err != nil {
		return nil, err
	}

	alloc := newBudgetAllocator(budget)
	rdr, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(alloc))
	if err != nil {
		return nil, wrapErr("E04", ErrSeedNotIPCFile, err, NoZone, "", "arrow-go could not open the IPC file")
	}
	defer rdr.Close()
	if err := checkStreamSchema(lay.schemaMsg, rdr.Schema(), alloc); err != nil {
		return nil, err
	}

	// Item 4: schema metadata (raw, as stored in the footer).
	version, bitmapHex, hasBitmap, err := readSeedMetadata(lay)
	if err != nil {
		return nil, err
	}
	if version == 1 && !opts.TableFlagged {
		return nil, newErr("E26", ErrSeedV1WithoutFlag, NoZone, metaVersion,
			"the manifest lacks FLAG_ZONE_WRITE_SEEDS (1<<16) in reader and writer flags; the seed must be ignored (R61)")
	}

	// Item 5: fields and value type.
	valueType, err := checkSeedSchema(rdr.Schema(), version, opts.ColumnType)
	if err != nil {
		return nil, err
	}

	// Item 6: batch count, batch body, nulls in counts.
	cols, nzones, err := loadSeedBatch(rdr, version, opts.NumRows)
	if err != nil {
		return nil, err
	}
	if cols != nil {
		defer cols.release()
	}

	seed := &Seed{
		Version:            version,
		ValueType:          valueType,
		RowsPerZone:        opts.RowsPerZone,
		NumRows:            opts.NumRows,
		NullPositionsExact: version == 1 || !v0NullsInexact(valueType),
	}

	// Items 7–9: geometry, counts, bounds.
	zones, err := validateZones(cols, nzones, seed, opts)
	if err != nil {
		return nil, err
	}
	seed.Zones = zones

	// Item 10: null bitmap.
	if hasBitmap {
		bm, err := validateBitmap(bitmapHex, zones, opts.NumRows)
		if err != nil {
			return nil, err
		}
		seed.NullBitmap = bm
	}

	// Item 11: consumer compatibility.
	if opts.ExpectRowsPerZone != 0 && opts.ExpectRowsPerZone != opts.RowsPerZone {
		return nil, newErr("E24", ErrSeedRowsPerZoneMismatch, NoZone, "",
			"seed has rows_per_zone %d, consumer expects %d", opts.RowsPerZone, opts.ExpectRowsPerZone)
	}
	return seed, nil
}

// readSeedMetadata implements §5.1 item 4 on the footer's raw key/value
// list: duplicate keys are E06 (arrow-go would keep the first, arrow-rs the
// last, R18); `version` absent → 0, exactly "1" → 1, else E05.
func readSeedMetadata(lay *ipcLayout) (version int, bitmapHex string, hasBitmap bool, err error) {
	seen := make(map[string]struct{}, len(lay.metaKeys))
	for _, k := range lay.metaKeys {
		if _, dup := seen[string(k)]; dup {
			return 0, "", false, newErr("E06", ErrSeedSchema, NoZone, shorten(string(k)),
				"schema metadata key %q appears more than once (R18)", shorten(string(k)))
		}
		seen[string(k)] = struct{}{}
	}
	for i, k := range lay.metaKeys {
		switch string(k) {
		case metaVersion:
			v := string(lay.metaVals[i])
			if v != seedVersion1 {
				return 0, "", false, newErr("E05", ErrSeedVersionUnsupported, NoZone, metaVersion,
					"version %q is not \"1\" (R17)", shorten(v))
			}
			version = 1
		case metaNullBitmap:
			bitmapHex, hasBitmap = string(lay.metaVals[i]), true
		}
	}
	return version, bitmapHex, hasBitmap, nil
}

// checkStreamSchema requires the schema message at the start of the file to
// describe the same schema as the footer (arrow-rs and arrow-go read the
// footer; a disagreeing leading schema is a malformed file).
func checkStreamSchema(msg []byte, footer *arrow.Schema, mem memory.Allocator) error {
	r, err := ipc.NewReader(bytes.NewReader(msg), ipc.WithAllocator(mem))
	if err != nil {
		return wrapErr("E04", ErrSeedNotIPCFile, err, NoZone, "", "leading schema message unreadable")
	}
	defer r.Release()
	s := r.Schema()
	if !s.Equal(footer) || !metadataEqual(s.Metadata(), footer.Metadata()) {
		return newErr("E04", ErrSeedNotIPCFile, NoZone, "", "leading schema message differs from the footer schema")
	}
	return nil
}

func metadataEqual(a, b arrow.Metadata) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Keys() {
		if a.Keys()[i] != b.Keys()[i] || a.Values()[i] != b.Values()[i] {
			return false
		}
	}
	return true
}

// checkSeedSchema implements §5.1 item 5 (R14, §3.2, R15).
func checkSeedSchema(s *arrow.Schema, version int, columnType arrow.DataType) (arrow.DataType, error) {
	want := []string{fieldMin, fieldMax, fieldNullCount, fieldNaNCount, fieldZoneLength}
	if version == 1 {
		want = []string{fieldMin, fieldMax, fieldNullCount, fieldNaNCount, fieldNegativeNaNCount, fieldZoneLength}
	}
	fields := s.Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	if version == 0 && s.HasField(fieldNegativeNaNCount) {
		return nil, newErr("E06", ErrSeedSchema, NoZone, fieldNegativeNaNCount,
			"a v0 seed (no version key) has a negative_nan_count column; v0 never carries sign counts (R52)")
	}
	if version == 1 && !s.HasField(fieldNegativeNaNCount) {
		return nil, newErr("E06", ErrSeedSchema, NoZone, fieldNegativeNaNCount,
			"a v1 seed lacks the negative_nan_count column (R14)")
	}
	if len(fields) != len(want) {
		return nil, newErr("E06", ErrSeedSchema, NoZone, "", "fields %q, want %q (R14)", names, want)
	}
	for i, f := range fields {
		if f.Name != want[i] {
			return nil, newErr("E06", ErrSeedSchema, NoZone, f.Name, "field %d is %q, want %q (fields %q)", i, f.Name, want[i], names)
		}
		switch f.Name {
		case fieldMin, fieldMax:
			if !f.Nullable {
				return nil, newErr("E06", ErrSeedSchema, NoZone, f.Name, "bound column must be nullable (R14)")
			}
		case fieldZoneLength:
			if f.Type.ID() != arrow.UINT64 || f.Nullable {
				return nil, newErr("E06", ErrSeedSchema, NoZone, f.Name, "type %s nullable=%v, want non-nullable uint64 (R14)", f.Type, f.Nullable)
			}
		default:
			if f.Type.ID() != arrow.UINT32 || f.Nullable {
				return nil, newErr("E06", ErrSeedSchema, NoZone, f.Name, "type %s nullable=%v, want non-nullable uint32 (R14)", f.Type, f.Nullable)
			}
		}
	}
	minT, maxT := fields[0].Type, fields[1].Type
	if !sameType(minT, maxT) {
		return nil, newErr("E07", ErrSeedValueType, NoZone, fieldMax, "max type %s differs from min type %s", maxT, minT)
	}
	if columnType == nil {
		return minT, nil
	}
	want0 := unwrapExtension(columnType)
	if !sameType(minT, want0) {
		return nil, newErr("E07", ErrSeedValueType, NoZone, fieldMin,
			"min/max type %s differs from the column's stored type %s (R15)", minT, want0)
	}
	return minT, nil
}

// sameType is exact type equality as R15 demands: arrow.TypeEqual plus
// child field names and nullability at every level (arrow.TypeEqual ignores
// list child names) and dictionary index/value/ordered.
func sameType(a, b arrow.DataType) bool {
	if !arrow.TypeEqual(a, b) {
		return false
	}
	if da, ok := a.(*arrow.DictionaryType); ok {
		db := b.(*arrow.DictionaryType)
		return da.Ordered == db.Ordered && sameType(da.IndexType, db.IndexType) && sameType(da.ValueType, db.ValueType)
	}
	na, ok := a.(arrow.NestedType)
	if !ok {
		return true
	}
	nb, ok := b.(arrow.NestedType)
	if !ok {
		return false
	}
	fa, fb := na.Fields(), nb.Fields()
	if len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i].Name != fb[i].Name || fa[i].Nullable != fb[i].Nullable || !sameType(fa[i].Type, fb[i].Type) {
			return false
		}
	}
	return true
}

// seedColumns holds the arrays of the one record batch.
type seedColumns struct {
	rec                              arrow.RecordBatch
	min, max                         arrow.Array
	nullCount, nanCount, negNaNCount *array.Uint32
	zoneLength                       *array.Uint64
}

func (c *seedColumns) release() { c.rec.Release() }

// loadSeedBatch implements §5.1 item 6. It returns nil columns (and 0
// zones) for an accepted zero-batch seed.
func loadSeedBatch(rdr *ipc.FileReader, version int, n uint64) (*seedColumns, int, error) {
	nb := rdr.NumRecords()
	switch {
	case nb == 0 && version == 0 && n == 0:
		return nil, 0, nil // Lance writes no seed for N = 0, but a zero-batch v0 seed is harmless (R11)
	case nb != 1:
		return nil, 0, newErr("E08", ErrSeedBatchCount, NoZone, "",
			"%d record batches for a v%d seed of %d rows, want exactly 1 (R10, Q6)", nb, version, n)
	}
	rec, err := rdr.RecordBatchAt(0)
	if err != nil {
		return nil, 0, wrapErr("E04", ErrSeedNotIPCFile, err, NoZone, "", "record batch 0 unreadable")
	}
	c := &seedColumns{rec: rec}
	ok := false
	defer func() {
		if !ok {
			rec.Release()
		}
	}()
	for i := 0; i < int(rec.NumCols()); i++ {
		col := rec.Column(i)
		if int64(col.Len()) != rec.NumRows() {
			return nil, 0, newErr("E04", ErrSeedNotIPCFile, NoZone, rec.ColumnName(i),
				"column has %d rows, record batch %d", col.Len(), rec.NumRows())
		}
		if err := validateStructure(col); err != nil {
			return nil, 0, wrapErr("E04", ErrSeedNotIPCFile, err, NoZone, rec.ColumnName(i), "column data is malformed")
		}
	}
	c.min, c.max = rec.Column(0), rec.Column(1)
	idx := 2
	c.nullCount = rec.Column(idx).(*array.Uint32)
	idx++
	c.nanCount = rec.Column(idx).(*array.Uint32)
	idx++
	if version == 1 {
		c.negNaNCount = rec.Column(idx).(*array.Uint32)
		idx++
	}
	c.zoneLength = rec.Column(idx).(*array.Uint64)
	counts := []arrow.Array{c.nullCount, c.nanCount, c.zoneLength}
	if c.negNaNCount != nil {
		counts = append(counts, c.negNaNCount)
	}
	for _, col := range counts {
		if col.NullN() == 0 {
			continue
		}
		for z := 0; z < col.Len(); z++ {
			if col.IsNull(z) {
				name := rec.ColumnName(columnIndex(rec, col))
				return nil, 0, newErr("E09", ErrSeedNullInCount, z, name, "count column has a null (R16)")
			}
		}
	}
	ok = true
	return c, int(rec.NumRows()), nil
}

func columnIndex(rec arrow.RecordBatch, col arrow.Array) int {
	for i := 0; i < int(rec.NumCols()); i++ {
		if rec.Column(i) == col {
			return i
		}
	}
	return 0
}

// validateStructure runs arrow-go's full structural validation, with UTF-8
// checks disabled (string types are re-typed as their binary twins) so that
// an invalid UTF-8 bound is reported as E19 rather than as a broken file.
func validateStructure(arr arrow.Array) error {
	data := retypeStrings(arr.Data())
	defer data.Release()
	a := array.MakeFromData(data)
	defer a.Release()
	return array.ValidateFull(a)
}

func retypeStrings(d arrow.ArrayData) arrow.ArrayData {
	return normalizeForValidation(d, true)
}

// normalizeForValidation rebuilds d for array.ValidateFull: string types (at
// top level or as dictionary values, when top) become their binary twins,
// and Null arrays loaded from IPC without buffers get the one (absent)
// validity buffer arrow-go's validator expects. Children keep their types.
func normalizeForValidation(d arrow.ArrayData, top bool) arrow.ArrayData {
	dt := d.DataType()
	if top {
		dt = binaryTwin(dt)
	}
	bufs := d.Buffers()
	if dt.ID() == arrow.NULL && len(bufs) == 0 {
		bufs = []*memory.Buffer{nil}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = normalizeForValidation(c, false)
	}
	out := array.NewData(dt, d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	if dt.ID() == arrow.DICTIONARY {
		dd := normalizeForValidation(d.Dictionary(), top)
		out.SetDictionary(dd)
		dd.Release()
	}
	return out
}

// binaryTwin replaces a string type (or the string value type of a
// dictionary) by the binary type of the same layout. Nested types keep their
// type: their bounds must be null anyway (R35).
func binaryTwin(dt arrow.DataType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.StringType:
		return arrow.BinaryTypes.Binary
	case *arrow.LargeStringType:
		return arrow.BinaryTypes.LargeBinary
	case *arrow.StringViewType:
		return arrow.BinaryTypes.BinaryView
	case *arrow.DictionaryType:
		if v := binaryTwin(t.ValueType); v != t.ValueType {
			return &arrow.DictionaryType{IndexType: t.IndexType, ValueType: v, Ordered: t.Ordered}
		}
	}
	return dt
}

// budgetAllocator bounds the memory arrow-go may allocate while decoding
// one seed. Exceeding the budget panics with errBudget, which Decode's
// recover turns into E04.
type budgetAllocator struct {
	left uint64
	mem  memory.Allocator
}

var errBudget = errors.New("decoded size exceeds MaxDecodedBytes")

func newBudgetAllocator(budget uint64) *budgetAllocator {
	return &budgetAllocator{left: budget, mem: memory.NewGoAllocator()}
}

func (a *budgetAllocator) take(size int) {
	if size < 0 || uint64(size) > a.left {
		panic(fmt.Errorf("%w: %d bytes requested, %d left", errBudget, size, a.left))
	}
	a.left -= uint64(size)
}

func (a *budgetAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.mem.Allocate(size)
}

func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	if size > len(b) {
		a.take(size - len(b))
	}
	return a.mem.Reallocate(size, b)
}

func (a *budgetAllocator) Free(b []byte) { a.mem.Free(b) }
