package seedio

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestR44_HexEncodeMatchesEncodingHex: the SWAR hex writer of Finish gives
// the bytes of encoding/hex for every length and every byte value.
func TestR44_HexEncodeMatchesEncodingHex(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	inputs := [][]byte{nil, all}
	for n := 1; n < 80 || n == 1000 || n == 4099; n++ {
		if n == 80 {
			n = 1000
		} else if n == 1001 {
			n = 4099
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		inputs = append(inputs, b)
	}
	for _, src := range inputs {
		checkHexEncode(t, src)
	}
}

// checkHexEncode: hexEncode writes encoding/hex's digits and nothing past
// them.
func checkHexEncode(t *testing.T, src []byte) {
	t.Helper()
	got := make([]byte, 2*len(src)+40)
	for i := range got {
		got[i] = '#'
	}
	hexEncode(got, src)
	if want := hex.EncodeToString(src) + strings.Repeat("#", 40); string(got) != want {
		t.Fatalf("len %d: got %s, want %s", len(src), got, want)
	}
}

// FuzzHexEncode: the SIMD and SWAR hex writers give encoding/hex's bytes
// (R44) for any input.
func FuzzHexEncode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("0123456789abcdef\xff\x00\x7f\x80"))
	f.Add([]byte(strings.Repeat("\xfe\x01", 40)))
	f.Fuzz(func(t *testing.T, src []byte) { checkHexEncode(t, src) })
}

// TestBoxSharedKeepsTypesAndValues: bounds boxed into one shared backing
// array have the dynamic type of the prototype and the right values.
func TestBoxSharedKeepsTypesAndValues(t *testing.T) {
	f := boxShared(any(float64(0)), []uint64{math.Float64bits(1.5), 1 << 63, math.Float64bits(math.Inf(-1))})
	if f[0].(float64) != 1.5 || !math.Signbit(f[1].(float64)) || f[1].(float64) != 0 || !math.IsInf(f[2].(float64), -1) {
		t.Fatalf("float64: %v", f)
	}
	ts := boxShared(any(arrow.Timestamp(0)), []arrow.Timestamp{-7, 1 << 40})
	if ts[0].(arrow.Timestamp) != -7 || ts[1].(arrow.Timestamp) != 1<<40 {
		t.Fatalf("timestamp: %v", ts)
	}
	src := []string{"ab", "", "ü"}
	s := boxShared(any(""), src)
	src[0] = "changed" // the boxed values are a copy
	if s[0].(string) != "ab" || s[1].(string) != "" || s[2].(string) != "ü" {
		t.Fatalf("string: %q", s)
	}
}

// TestR44_FinishNullBitmapHexIsTheIPCMetadata: the NullBitmapHex of a
// finished seed (which shares the IPC bytes) equals the seed_null_bitmap
// value decoded from IPC, and decodes to the null positions; a second
// Finish on the same collector (reused builder) does not alter the first
// seed.
func TestR44_FinishNullBitmapHexIsTheIPCMetadata(t *testing.T) {
	field := wField(arrow.PrimitiveTypes.Int64)
	c, err := NewCollector(field, CollectorOptions{RowsPerZone: 100})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, 5000)
	for i := range vals {
		if i%7 != 3 {
			vals[i] = int64(i * 31)
		}
	}
	arr := wArr(t, arrow.PrimitiveTypes.Int64, vals...)
	defer arr.Release()
	if err := c.Observe(arr); err != nil {
		t.Fatal(err)
	}
	first, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ipc := string(first.IPC)
	hexCopy := strings.Clone(first.NullBitmapHex)
	if err := c.Observe(array.NewSlice(arr, 1, 4000)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Finish(); err != nil {
		t.Fatal(err)
	}
	if string(first.IPC) != ipc || first.NullBitmapHex != hexCopy {
		t.Fatal("a later Finish changed an earlier seed")
	}
	dec, err := Decode(first.IPC, DecodeOptions{RowsPerZone: 100, NumRows: 5000, ColumnType: arrow.PrimitiveTypes.Int64, TableFlagged: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dec.NullBitmap.GetCardinality(), uint64((4999-3)/7+1); got != want {
		t.Fatalf("null bitmap cardinality %d, want %d", got, want)
	}
	if !strings.Contains(ipc, first.NullBitmapHex) || strings.Count(ipc, first.NullBitmapHex) != 2 {
		t.Fatal("NullBitmapHex is not the metadata value (schema message and footer)")
	}
	if !dec.NullBitmap.Equals(first.NullBitmap) {
		t.Fatal("decoded null bitmap differs from the collector's")
	}
}
