package seedio

// The direct seed IPC writer (encode_fast.go) against arrow-go's
// ipc.FileWriter (encodeZonesArrow): byte-identical files for every value
// type it handles (R9–R18 are then as well kept as by arrow-go), over random
// zones with null and non-null bounds, empty and long strings, and with and
// without the null-bitmap key.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func fastTestTypes() []arrow.DataType {
	return []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.PrimitiveTypes.Date32, arrow.PrimitiveTypes.Date64,
		&arrow.TimestampType{Unit: arrow.Nanosecond},
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"},
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeBinary,
	}
}

// randomBound returns a random non-null bound of Go type as ValueAt gives.
func randomBound(rng *rand.Rand, dt arrow.DataType) any {
	u := rng.Uint64()
	switch dt.ID() {
	case arrow.INT8:
		return int8(u)
	case arrow.INT16:
		return int16(u)
	case arrow.INT32:
		return int32(u)
	case arrow.INT64:
		return int64(u)
	case arrow.UINT8:
		return uint8(u)
	case arrow.UINT16:
		return uint16(u)
	case arrow.UINT32:
		return uint32(u)
	case arrow.UINT64:
		return u
	case arrow.FLOAT32:
		return math.Float32frombits(uint32(u))
	case arrow.FLOAT64:
		return math.Float64frombits(u)
	case arrow.DATE32:
		return arrow.Date32(int32(u))
	case arrow.DATE64:
		return arrow.Date64(int64(u))
	case arrow.TIMESTAMP:
		return arrow.Timestamp(int64(u))
	}
	n := rng.IntN(40)
	if rng.IntN(8) == 0 {
		n = 0
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	if dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING {
		return string(b)
	}
	return b
}

func TestEncodeFast_MatchesArrowWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, dt := range fastTestTypes() {
		for iter := 0; iter < 40; iter++ {
			n := 1 + rng.IntN(140)
			switch {
			case iter < 10:
				n = 1 + iter
			case iter < 16: // builder capacity and 64-byte padding boundaries
				n = []int{31, 32, 33, 512, 513, 1025}[iter-10]
			case iter == 16:
				n = 1 + rng.IntN(5000)
			}
			nullRate := []int{0, 2, 10, 100}[rng.IntN(4)] // % of null bounds
			zones := make([]Zone, n)
			for i := range zones {
				z := &zones[i]
				z.Rows = uint64(1 + rng.IntN(10000))
				z.NullCount = uint64(rng.Uint32())
				z.NaNCount = uint64(rng.Uint32())
				z.NegativeNaNCount = uint64(rng.Uint32())
				if rng.IntN(100) >= nullRate {
					z.Min = randomBound(rng, dt)
				}
				if rng.IntN(100) >= nullRate {
					z.Max = randomBound(rng, dt)
				}
			}
			var hexp *string
			switch rng.IntN(3) {
			case 1:
				h := emptyNullBitmapHex
				hexp = &h
			case 2:
				h := strings.Repeat("0123456789abcdef", rng.IntN(5000))
				hexp = &h
			}
			fast, ok := encodeZonesFast(dt, zones, hexp)
			if !ok {
				t.Fatalf("%s: fast writer refused", dt)
			}
			ref, err := encodeZonesArrow(dt, zones, hexp)
			if err != nil {
				t.Fatalf("%s: arrow writer: %v", dt, err)
			}
			if !bytes.Equal(fast, ref) {
				t.Fatalf("%s, %d zones, null rate %d%%: %s", dt, n, nullRate, firstByteDiff(fast, ref))
			}
		}
	}
}

// TestEncodeFast_WrongGoTypeFallsBack: a bound of an unexpected Go type is
// not written by the fast path; encodeZones reports arrow-go's error.
func TestEncodeFast_WrongGoTypeFallsBack(t *testing.T) {
	zones := []Zone{{Stats: Stats{Rows: 1, Min: "x", Max: int32(1)}}}
	if _, ok := encodeZonesFast(arrow.PrimitiveTypes.Int64, zones, nil); ok {
		t.Fatal("fast writer accepted a string bound for int64")
	}
	if _, err := encodeZones(arrow.PrimitiveTypes.Int64, zones, nil); err == nil {
		t.Fatal("encodeZones accepted a string bound for int64")
	}
	if _, ok := encodeZonesFast(arrow.FixedWidthTypes.Boolean, []Zone{{Stats: Stats{Rows: 1}}}, nil); ok {
		t.Fatal("fast writer accepted a type it does not handle")
	}
}

func firstByteDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first difference at byte %d of %d/%d: %x vs %x", i, len(a), len(b), a[i:min(len(a), i+24)], b[i:min(len(b), i+24)])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}
