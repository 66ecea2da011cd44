package seedio

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestECatalogue produces every reader-side code of spec §5.2 once and checks
// errors.Is, errors.As (*SeedError with the code) and that the message names
// the code. E03 (buffer missing) is raised by the data-file reader that
// resolves the locator (through bufferMissingError), E01 by ParseLocator, and
// E25 (half-set flags) by the flags package.
func TestECatalogue(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	utf8 := arrow.BinaryTypes.String
	list := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	good := int64Spec(1, 4, 4, [2]any{int64(1), int64(2)})
	withMeta := func(s seedSpec, kv ...[2]string) seedSpec { s.meta = kv; return s }
	noFlag := decodeOpts(i64, 4, 4)
	noFlag.TableFlagged = false
	wantRPZ := decodeOpts(i64, 4, 4)
	wantRPZ.ExpectRowsPerZone = 8

	cases := []struct {
		code     string
		sentinel error
		ipc      []byte
		opts     DecodeOptions
		typed    bool // a *SeedError (bitmap hex/decode errors come from decodeNullBitmapHex)
	}{
		{"E02", ErrSeedLocatorRange, good.bytes(t), decodeOpts(i64, 0, 4), true},
		{"E04", ErrSeedNotIPCFile, []byte("not an arrow file, plainly"), decodeOpts(i64, 4, 4), true},
		{"E05", ErrSeedVersionUnsupported, withMeta(good, [2]string{metaVersion, "2"}).bytes(t), decodeOpts(i64, 4, 4), true},
		{"E06", ErrSeedSchema, withMeta(good, [2]string{metaVersion, "1"}, [2]string{metaVersion, "1"}).bytes(t), decodeOpts(i64, 4, 4), true},
		{"E07", ErrSeedValueType, good.bytes(t), decodeOpts(arrow.PrimitiveTypes.Int32, 4, 4), true},
		{"E08", ErrSeedBatchCount, func() []byte { s := good; s.batches = 2; return s.bytes(t) }(), decodeOpts(i64, 4, 4), true},
		{"E09", ErrSeedNullInCount, func() []byte { s := good; s.nullCount = map[int]bool{0: true}; return s.bytes(t) }(), decodeOpts(i64, 4, 4), true},
		{"E10", ErrSeedZoneLength, seedSpec{version: 1, valueType: i64, lens: []uint64{3, 1}}.bytes(t), decodeOpts(i64, 4, 4), true},
		{"E11", ErrSeedCoverage, good.bytes(t), decodeOpts(i64, 4, 5), true},
		{"E12", ErrSeedCountExceedsLength, seedSpec{version: 1, valueType: f64, lens: []uint64{4}, nulls: []uint32{0xFFFFFFFF}, nans: []uint32{1}}.bytes(t), decodeOpts(f64, 4, 4), true},
		{"E13", ErrSeedNegativeNaN, seedSpec{version: 1, valueType: f64, lens: []uint64{4}, nans: []uint32{1}, negs: []uint32{2}}.bytes(t), decodeOpts(f64, 4, 4), true},
		{"E14", ErrSeedNaNOnNonFloat, seedSpec{version: 1, valueType: utf8, lens: []uint64{4}, nans: []uint32{1}}.bytes(t), decodeOpts(utf8, 4, 4), true},
		{"E15", ErrSeedBoundNaN, seedSpec{version: 1, valueType: f64, lens: []uint64{4}, mins: []any{1.0}, maxs: []any{f64bits(posNaN64)}, nans: []uint32{1}}.bytes(t), decodeOpts(f64, 4, 4), true},
		{"E16", ErrSeedBoundOrder, int64Spec(1, 4, 4, [2]any{int64(3), int64(2)}).bytes(t), decodeOpts(i64, 4, 4), true},
		{"E17", ErrSeedBoundUnsupported, seedSpec{version: 1, valueType: list, lens: []uint64{4}, maxs: []any{nonNullNested}}.bytes(t), decodeOpts(list, 4, 4), true},
		{"E18", ErrSeedBoundWithoutValues, seedSpec{version: 1, valueType: i64, lens: []uint64{4}, nulls: []uint32{4}, mins: []any{int64(1)}, meta: [][2]string{{metaVersion, "1"}}}.bytes(t), decodeOpts(i64, 4, 4), true},
		{"E19", ErrSeedBoundEncoding, seedSpec{version: 1, valueType: utf8, lens: []uint64{4}, mins: []any{"a"}, maxs: []any{"b\xc3"}}.bytes(t), decodeOpts(utf8, 4, 4), true},
		{"E20", ErrSeedBitmapHex, withMeta(good, [2]string{metaVersion, "1"}, [2]string{metaNullBitmap, "3a3"}).bytes(t), decodeOpts(i64, 4, 4), false},
		{"E21", ErrSeedBitmapDecode, withMeta(good, [2]string{metaVersion, "1"}, [2]string{metaNullBitmap, emptyNullBitmapHex + "00"}).bytes(t), decodeOpts(i64, 4, 4), false},
		{"E22", ErrSeedBitmapRange, withMeta(good, [2]string{metaVersion, "1"}, [2]string{metaNullBitmap, hexOf(t, 4)}).bytes(t), decodeOpts(i64, 4, 4), true},
		{"E23", ErrSeedBitmapMismatch, withMeta(good, [2]string{metaVersion, "1"}, [2]string{metaNullBitmap, hexOf(t, 1)}).bytes(t), decodeOpts(i64, 4, 4), true},
		{"E24", ErrSeedRowsPerZoneMismatch, good.bytes(t), wantRPZ, true},
		{"E26", ErrSeedV1WithoutFlag, good.bytes(t), noFlag, true},
	}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			err := wantCode(t, c.ipc, c.opts, c.sentinel)
			if !strings.Contains(err.Error(), c.code) {
				t.Fatalf("message %q does not name %s", err, c.code)
			}
			var se *SeedError
			if errors.As(err, &se) != c.typed || (c.typed && se.Code != c.code) {
				t.Fatalf("typed error: %T %v", err, err)
			}
		})
	}
	// E03 is built by the data-file reader with bufferMissingError.
	e03 := bufferMissingError("c", 7, 3, nil)
	var se *SeedError
	if !errors.Is(e03, ErrSeedBufferMissing) || !errors.As(e03, &se) || se.Code != "E03" || !strings.Contains(e03.Error(), "buffer 7") {
		t.Fatalf("E03: %v", e03)
	}
	// E01 comes from ParseLocator, which callers run before Decode.
	if _, err := ParseLocator("3:8192:7"); !errors.Is(err, ErrSeedLocatorSyntax) || !strings.Contains(err.Error(), "E01") {
		t.Fatalf("E01: %v", err)
	}
}
