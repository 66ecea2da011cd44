package seedio

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// §9 golden vectors (R42, R43, R44, R48).
func TestR42_NullBitmapGoldenVectors(t *testing.T) {
	rangeBM := func(lo, hi uint64) *roaring.Bitmap {
		b := roaring.New()
		b.AddRange(lo, hi)
		return b
	}
	cases := []struct {
		name string
		bm   *roaring.Bitmap
		hex  string
	}{
		{"empty", roaring.New(), "3a30000000000000"},
		{"nil", nil, "3a30000000000000"},
		{"1,3,5,9", roaring.BitmapOf(1, 3, 5, 9), "3a3000000100000000000300100000000100030005000900"},
		{"[0,100) run-optimised", rangeBM(0, 100), "3b3000000100006300010000006300"},
		{"[2,9) run-optimised", rangeBM(2, 9), "3b3000000100000600010002000600"},
	}
	for _, c := range cases {
		got, err := encodeNullBitmapHex(c.bm)
		if err != nil || got != c.hex {
			t.Errorf("%s: encodeNullBitmapHex = %q, %v; want %q", c.name, got, err, c.hex)
		}
		if got != strings.ToLower(got) {
			t.Errorf("R43: %s: hex not lowercase", c.name)
		}
		dec, err := decodeNullBitmapHex(c.hex)
		if err != nil {
			t.Fatalf("%s: decode golden: %v", c.name, err)
		}
		want := c.bm
		if want == nil {
			want = roaring.New()
		}
		if !dec.Equals(want) {
			t.Errorf("%s: decoded %v, want %v", c.name, dec, want)
		}
		// R43: readers accept uppercase.
		if up, err := decodeNullBitmapHex(strings.ToUpper(c.hex)); err != nil || !up.Equals(want) {
			t.Errorf("%s: uppercase: %v", c.name, err)
		}
	}
	// encodeNullBitmapHex must not modify its argument.
	b := roaring.New()
	b.AddRange(0, 1000)
	before, _ := b.ToBytes()
	if _, err := encodeNullBitmapHex(b); err != nil {
		t.Fatal(err)
	}
	after, _ := b.ToBytes()
	if string(before) != string(after) {
		t.Error("encodeNullBitmapHex run-optimised the caller's bitmap")
	}
}

// T13 (reader part of R44): "" is a present, empty bitmap.
func TestR44_EmptyStringIsEmptyBitmap(t *testing.T) {
	bm, err := decodeNullBitmapHex("")
	if err != nil || bm == nil || !bm.IsEmpty() {
		t.Fatalf(`decodeNullBitmapHex("") = %v, %v`, bm, err)
	}
}

// T15 (hex and decode parts): E20 / E21.
func TestT15_NullBitmapHexErrors(t *testing.T) {
	golden := "3a3000000100000000000300100000000100030005000900"
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"odd length", "3a3", ErrSeedBitmapHex},
		{"plus digit (Rust radix parser accepts it)", "+f" + golden[2:], ErrSeedBitmapHex},
		{"non-ASCII", "aé0", ErrSeedBitmapHex},
		{"non-ASCII even", "3aé0", ErrSeedBitmapHex},
		{"space", "3a 30", ErrSeedBitmapHex},
		{"0x prefix", "0x3a30000000000000", ErrSeedBitmapHex},
		{"trailing bytes", golden + "00", ErrSeedBitmapDecode},
		{"truncated", golden[:len(golden)-4], ErrSeedBitmapDecode},
		{"bad cookie", "3c30000000000000", ErrSeedBitmapDecode},
		{"too short", "3a30", ErrSeedBitmapDecode},
		{"roaring64 / treemap layout", "0100000000000000" + "3a30000000000000", ErrSeedBitmapDecode},
	}
	for _, c := range cases {
		_, err := decodeNullBitmapHex(c.in)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: decodeNullBitmapHex(%q) = %v, want %v", c.name, c.in, err, c.want)
		}
	}
}

// Hand-built portable layouts that violate one structural rule each (E21).
func TestR42_StrictRoaringLayout(t *testing.T) {
	le16 := func(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
	le32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	// no-run cookie, 1 array container with values vals, key k
	arrayBM := func(k uint16, card uint16, offset uint32, vals ...uint16) []byte {
		b := le32(nil, roaringCookieNoRun)
		b = le32(b, 1)
		b = le16(b, k)
		b = le16(b, card-1)
		b = le32(b, offset)
		for _, v := range vals {
			b = le16(b, v)
		}
		return b
	}
	runBM := func(card uint16, runs ...[2]uint16) []byte {
		b := le32(nil, roaringCookieRun) // size-1 = 0 in the high half
		b = append(b, 1)                 // container 0 is a run container
		b = le16(b, 0)
		b = le16(b, card-1)
		b = le16(b, uint16(len(runs)))
		for _, r := range runs {
			b = le16(b, r[0])
			b = le16(b, r[1])
		}
		return b
	}
	good := [][]byte{
		arrayBM(0, 3, 16, 1, 5, 9),
		runBM(10, [2]uint16{0, 4}, [2]uint16{10, 4}),
	}
	for i, b := range good {
		if _, err := decodeNullBitmapHex(hex.EncodeToString(b)); err != nil {
			t.Errorf("good layout %d: %v", i, err)
		}
	}
	twoKeys := func(k0, k1 uint16) []byte {
		b := le32(nil, roaringCookieNoRun)
		b = le32(b, 2)
		b = le16(b, k0)
		b = le16(b, 0)
		b = le16(b, k1)
		b = le16(b, 0)
		b = le32(b, 24)
		b = le32(b, 26)
		b = le16(b, 1)
		b = le16(b, 1)
		return b
	}
	if _, err := decodeNullBitmapHex(hex.EncodeToString(twoKeys(0, 1))); err != nil {
		t.Errorf("two sorted keys: %v", err)
	}
	bad := map[string][]byte{
		"unsorted array":      arrayBM(0, 3, 16, 5, 1, 9),
		"duplicate in array":  arrayBM(0, 3, 16, 1, 1, 9),
		"wrong offset":        arrayBM(0, 3, 17, 1, 5, 9),
		"card beyond data":    arrayBM(0, 4, 16, 1, 5, 9),
		"unsorted keys":       twoKeys(1, 0),
		"duplicate keys":      twoKeys(1, 1),
		"overlapping runs":    runBM(10, [2]uint16{0, 4}, [2]uint16{3, 4}),
		"run card mismatch":   runBM(11, [2]uint16{0, 4}, [2]uint16{10, 4}),
		"run leaves chunk":    runBM(20, [2]uint16{65530, 19}),
		"too many containers": le32(le32(nil, roaringCookieNoRun), 70000),
	}
	for name, b := range bad {
		if _, err := decodeNullBitmapHex(hex.EncodeToString(b)); !errors.Is(err, ErrSeedBitmapDecode) {
			t.Errorf("%s: %v, want E21", name, err)
		}
	}
	// A bitmap container whose popcount disagrees with its header.
	bc := le32(nil, roaringCookieNoRun)
	bc = le32(bc, 1)
	bc = le16(bc, 0)
	bc = le16(bc, 5000-1)
	bc = le32(bc, 16)
	words := make([]byte, 8192)
	for i := 0; i < 4999; i++ {
		words[i/8] |= 1 << (i % 8)
	}
	if _, err := decodeNullBitmapHex(hex.EncodeToString(append(bc, words...))); !errors.Is(err, ErrSeedBitmapDecode) {
		t.Errorf("bitmap popcount mismatch: %v", err)
	}
}

// Round trip of random bitmaps through encode/decode, against roaring's own
// serialization (array, bitmap and run containers, >= 4 containers so the
// run cookie carries an offset header).
func TestR42_NullBitmapRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		bm := roaring.New()
		for k := rng.IntN(8); k > 0; k-- {
			base := uint64(rng.IntN(1<<20)) &^ 0xFFFF
			switch rng.IntN(3) {
			case 0:
				for j := rng.IntN(100); j > 0; j-- {
					bm.Add(uint32(base) + uint32(rng.IntN(1<<16)))
				}
			case 1:
				for j := 0; j < 6000; j++ {
					bm.Add(uint32(base) + uint32(rng.IntN(1<<16)))
				}
			default:
				lo := base + uint64(rng.IntN(1<<16))
				bm.AddRange(lo, lo+uint64(rng.IntN(70000)))
			}
		}
		h, err := encodeNullBitmapHex(bm)
		if err != nil {
			t.Fatal(err)
		}
		c := bm.Clone()
		c.RunOptimize()
		ref, _ := c.ToBytes()
		if h != hex.EncodeToString(ref) {
			t.Fatalf("encoding differs from roaring's ToBytes after RunOptimize")
		}
		dec, err := decodeNullBitmapHex(h)
		if err != nil {
			t.Fatalf("decode of roaring's own bytes (%d containers): %v", len(ref), err)
		}
		if !dec.Equals(bm) {
			t.Fatalf("round trip changed the bitmap")
		}
	}
}

func FuzzDecodeNullBitmapHex(f *testing.F) {
	seeds := []string{
		"", "3a30000000000000",
		"3a3000000100000000000300100000000100030005000900",
		"3b3000000100006300010000006300",
		"3b3000000100000600010002000600",
		"3a3", "+f30000000000000", "aé0",
	}
	big := roaring.New()
	big.AddRange(0, 70000)
	for j := uint32(200000); j < 210000; j += 2 {
		big.Add(j)
	}
	for k := uint32(0); k < 6; k++ {
		big.Add(1<<20 + k<<16)
	}
	if h, err := encodeNullBitmapHex(big); err == nil {
		seeds = append(seeds, h)
	}
	noRun := roaring.New()
	for j := uint32(0); j < 5000; j++ {
		noRun.Add(j * 3)
	}
	if raw, err := noRun.ToBytes(); err == nil {
		seeds = append(seeds, hex.EncodeToString(raw))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bm, err := decodeNullBitmapHex(s)
		if err != nil {
			if !errors.Is(err, ErrSeedBitmapHex) && !errors.Is(err, ErrSeedBitmapDecode) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := bm.Validate(); err != nil {
			t.Fatalf("accepted an invalid bitmap: %v", err)
		}
		// Whatever we accept re-reads identically through roaring itself.
		raw, _ := hex.DecodeString(s)
		if len(raw) > 0 {
			ref := roaring.New()
			if _, err := ref.ReadFrom(strings.NewReader(string(raw))); err != nil || !ref.Equals(bm) {
				t.Fatalf("roaring disagrees: %v", err)
			}
		}
	})
}
