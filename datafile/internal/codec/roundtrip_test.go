package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

func inlineEnc(t uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: t}}}
}

// randWords returns n raw little-endian words of t bits, each < 2^w.
func randWords(r *rand.Rand, t, w uint64, n int) []byte {
	out := make([]byte, n*int(t/8))
	for i := 0; i < n; i++ {
		var v uint64
		if w > 0 {
			v = r.Uint64()
			if w < 64 {
				v &= 1<<w - 1
			}
		}
		switch t {
		case 8:
			out[i] = byte(v)
		case 16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		case 32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		default:
			binary.LittleEndian.PutUint64(out[8*i:], v)
		}
	}
	return out
}

// §7.3: every T and every W ≤ T round-trips, at edge lengths.
func TestSpec7_3_InlineBitpackingRoundTripAllWidths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tb := range []uint64{8, 16, 32, 64} {
		for w := uint64(0); w <= tb; w++ {
			for _, n := range []int{1, 7, 1023, 1024} {
				vals := randWords(r, tb, w, n)
				chunk := AppendBitpacked(nil, tb, vals, n)
				if want := int(tb/8) + 1024*int(w)/8; w == maxBits(vals, tb) && len(chunk) != want {
					t.Fatalf("T=%d W=%d n=%d: chunk of %d bytes, want %d", tb, w, n, len(chunk), want)
				}
				b, err := DecodeMiniBlock(inlineEnc(tb), [][]byte{chunk}, uint64(n), Limits{})
				if err != nil {
					t.Fatalf("T=%d W=%d n=%d: %v", tb, w, n, err)
				}
				if !bytes.Equal(b.Data, vals) {
					t.Fatalf("T=%d W=%d n=%d: round trip differs", tb, w, n)
				}
				// The same chunk at an odd address (the copying path).
				odd := append([]byte{0}, chunk...)[1:]
				b, err = DecodeMiniBlock(inlineEnc(tb), [][]byte{odd}, uint64(n), Limits{})
				if err != nil || !bytes.Equal(b.Data, vals) {
					t.Fatalf("T=%d W=%d n=%d: misaligned chunk: %v", tb, w, n, err)
				}
			}
		}
	}
}

func maxBits(vals []byte, tb uint64) uint64 {
	var m uint64
	for i := 0; i < len(vals)/int(tb/8); i++ {
		b := Block{Kind: Fixed, Bits: tb, Data: vals}
		v := b.Uint(uint64(i))
		for v>>m != 0 {
			m++
		}
	}
	return m
}

// §7.3 golden vectors: probes bp8/16/32/64, value i = i%8 (T=8) or i%1000.
func TestSpec7_3_FastLanesGoldenVectors(t *testing.T) {
	cases := []struct {
		t     uint64
		w     uint64
		first []byte
	}{
		{8, 3, []byte{0x00, 0x49, 0x92, 0xdb, 0x24, 0x6d, 0xb6, 0xff}},
		{16, 10, []byte{0x00, 0x00, 0x01, 0x04, 0x02, 0x08, 0x03, 0x0c}},
		{32, 10, []byte{0x00, 0x00, 0x02, 0x10, 0x01, 0x04, 0x12, 0x50}},
		{64, 10, []byte{0x00, 0x00, 0x02, 0x10, 0x60, 0x00, 0x02, 0x0a}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.t), func(t *testing.T) {
			vals := make([]byte, 1024*c.t/8)
			b := Block{Kind: Fixed, Bits: c.t, Data: vals}
			for i := 0; i < 1024; i++ {
				v := uint64(i % 1000)
				if c.t == 8 {
					v = uint64(i % 8)
				}
				putUint(&b, uint64(i), v)
			}
			chunk := AppendBitpacked(nil, c.t, vals, 1024)
			wb := Block{Kind: Fixed, Bits: c.t, Data: chunk}
			w := wb.Uint(0)
			if w != c.w {
				t.Fatalf("width %d, want %d", w, c.w)
			}
			got := chunk[c.t/8 : c.t/8+8]
			if !bytes.Equal(got, c.first) {
				t.Fatalf("first packed bytes % x, want % x", got, c.first)
			}
		})
	}
}

func putUint(b *Block, i, v uint64) {
	switch b.Bits {
	case 8:
		b.Data[i] = byte(v)
	case 16:
		binary.LittleEndian.PutUint16(b.Data[2*i:], uint16(v))
	case 32:
		binary.LittleEndian.PutUint32(b.Data[4*i:], uint32(v))
	case 64:
		binary.LittleEndian.PutUint64(b.Data[8*i:], v)
	}
}

func oolEnc(t, w uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{UncompressedBitsPerValue: t, Values: flatEnc(w)}}}
}

// §7.4: full blocks without width words; the tail packed or raw, decided
// by the length (T14).
func TestSpec7_4_OutOfLineBitpackingTail(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{5, 1024, 1030, 2047, 3000} {
		for _, rawTail := range []bool{false, true} {
			vals := randWords(r, 16, 2, n)
			full := n / 1024
			var buf []byte
			for b := 0; b < full; b++ {
				c := AppendBitpacked(nil, 16, vals[b*2048:], 1024)
				buf = append(buf, c[2:]...)
			}
			if rem := n % 1024; rem > 0 {
				if rawTail {
					buf = append(buf, vals[full*2048:]...)
				} else {
					var blk [1024]uint16
					loadWords(blk[:rem], vals[full*2048:])
					out := make([]uint16, 2*64)
					packBlock(blk[:], out, 2)
					buf = storeWords(buf, out)
				}
			}
			b, err := DecodeBlock(oolEnc(16, 2), buf, uint64(n), Limits{})
			if err != nil {
				t.Fatalf("n=%d raw=%v: %v", n, rawTail, err)
			}
			if !bytes.Equal(b.Data, vals) {
				t.Fatalf("n=%d raw=%v: values differ", n, rawTail)
			}
		}
	}
}

// §7.5/§7.6 and §4.7: RLE block frame golden (def 0,0,0,0,1,0,0,0,0,0).
func TestSpec7_6_RLEBlockGolden(t *testing.T) {
	frame := []byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4, 1, 5}
	enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flatEnc(16), RunLengths: flatEnc(8)}}}
	lv, err := DecodeLevels(enc, frame, 10, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lv) != "[0 0 0 0 1 0 0 0 0 0]" {
		t.Fatalf("levels %v", lv)
	}
	// A zero run and a short count are corrupt.
	bad := append([]byte(nil), frame...)
	bad[15] = 0
	if _, err := DecodeLevels(enc, bad, 10, Limits{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zero run: %v", err)
	}
	if _, err := DecodeLevels(enc, frame, 11, Limits{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short runs: %v", err)
	}
}

// EncodeLevels round-trips through DecodeLevels, flat in 2.1 and RLE in 2.2.
func TestSpec7_6_EncodeLevelsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, minor := range []int{1, 2} {
		for _, n := range []int{0, 1, 10, 300, 5000} {
			lv := make([]uint16, n)
			for i := range lv {
				if r.IntN(20) == 0 {
					lv[i] = uint16(r.IntN(4))
				}
			}
			enc, buf := EncodeLevels(lv, EncodeOptions{Minor: minor})
			if minor == 1 && enc.GetFlat() == nil {
				t.Fatalf("2.1 levels must be flat")
			}
			got, err := DecodeLevels(enc, buf, uint64(n), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(lv) {
				t.Fatalf("minor %d n %d: differ", minor, n)
			}
		}
	}
}

// §7.10: both framings round-trip; a bare zstd frame is accepted.
func TestSpec7_10_GeneralFraming(t *testing.T) {
	src := bytes.Repeat([]byte("lancekeeper general compression "), 100)
	for _, s := range []pb21.CompressionScheme{pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4, pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD} {
		framed, err := CompressGeneral(nil, s, 0, src)
		if err != nil {
			t.Fatal(err)
		}
		enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{Compression: &pb21.BufferCompression{Scheme: s}, Values: flatEnc(8)}}}
		b, err := DecodeBlock(enc, framed, uint64(len(src)), Limits{})
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		if !bytes.Equal(b.Data, src) {
			t.Fatalf("%v: differs", s)
		}
		if s == pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD {
			if binary.LittleEndian.Uint64(framed) != uint64(len(src)) || !bytes.Equal(framed[8:12], zstdMagic[:]) {
				t.Fatalf("zstd framing % x", framed[:12])
			}
			b, err := DecodeBlock(enc, framed[8:], uint64(len(src)), Limits{})
			if err != nil || !bytes.Equal(b.Data, src) {
				t.Fatalf("bare zstd frame: %v", err)
			}
			if _, err := DecodeBlock(enc, framed, uint64(len(src)), Limits{MaxBytes: 100}); !errors.Is(err, ErrLimit) {
				t.Fatalf("limit: %v", err)
			}
		}
	}
}

// §7.7: the trained table round-trips text, escapes included.
func TestSpec7_7_FSSTRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"index", "vector", "lance", "table", "zone", "seed", "héllo", "日本語", "\x00\xff"}
	var vals [][]byte
	for i := 0; i < 3000; i++ {
		var s []byte
		for j := r.IntN(6); j >= 0; j-- {
			s = append(s, words[r.IntN(len(words))]...)
			s = append(s, ' ')
		}
		if i%97 == 0 {
			s = append(s, byte(r.IntN(256)), byte(r.IntN(256)))
		}
		vals = append(vals, s)
	}
	tab := TrainFSST(vals)
	if tab.Len() == 0 || tab.Len() > 255 {
		t.Fatalf("%d symbols", tab.Len())
	}
	ser := tab.Bytes()
	if len(ser) != SymbolTableSize {
		t.Fatalf("table of %d bytes", len(ser))
	}
	back, err := ParseSymbolTable(ser)
	if err != nil {
		t.Fatal(err)
	}
	var in, out int
	for _, v := range vals {
		c := tab.Encode(nil, v)
		in += len(v)
		out += len(c)
		d, err := back.Decode(nil, c)
		if err != nil || !bytes.Equal(d, v) {
			t.Fatalf("%q: %q %v", v, d, err)
		}
	}
	if out*2 > in {
		t.Fatalf("compressed %d to %d bytes", in, out)
	}
	// An escape at the end and an unknown code are corrupt.
	if _, err := back.Decode(nil, []byte{255}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("dangling escape: %v", err)
	}
	if tab.Len() < 254 {
		if _, err := back.Decode(nil, []byte{254}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("unknown code: %v", err)
		}
	}
}

func varBlock(vals [][]byte, ob uint64) Block {
	ow := int(ob / 8)
	buf := variableBuffer(vals, ow)
	b, err := (&decoder{ctx: ctxMini, left: DefaultMaxBytes}).variableMini(variableEnc(ob), variableEnc(ob).GetVariable(), buf, uint64(len(vals)))
	if err != nil {
		panic(err)
	}
	return b
}

// EncodeMiniBlock round-trips through DecodeMiniBlock: integers of every
// width (bit-packed when it pays), bitmaps, wide fixed values, strings
// (FSST for text ≥ 32 KiB) and W5's chunk counts.
func TestSpec8_EncodeMiniBlockRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	check := func(name string, b Block, want func(Block) bool, opts EncodeOptions) *pb21.CompressiveEncoding {
		t.Helper()
		enc, chunks, err := EncodeMiniBlock(b, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var total uint64
		reuse := NewDecoder(Limits{})
		reuse.Reuse()
		for i, c := range chunks {
			again, err := reuse.MiniBlock(enc, c.Buffers, c.N)
			if err != nil {
				t.Fatalf("%s chunk %d (reusing decoder): %v", name, i, err)
			}
			if s := sub(b, total, c.N, again); s.Kind == 0 {
				t.Fatalf("%s chunk %d: reusing decoder's values differ", name, i)
			}
			if i < len(chunks)-1 && (c.N&(c.N-1) != 0 || c.N > 4096) {
				t.Fatalf("%s: chunk %d holds %d values (W5)", name, i, c.N)
			}
			got, err := DecodeMiniBlock(enc, c.Buffers, c.N, Limits{})
			if err != nil {
				t.Fatalf("%s chunk %d: %v", name, i, err)
			}
			if s := sub(b, total, c.N, got); s.Kind == 0 || !want(s) {
				t.Fatalf("%s chunk %d: values differ", name, i)
			}
			total += c.N
		}
		if total != b.Num {
			t.Fatalf("%s: chunks hold %d values of %d", name, total, b.Num)
		}
		return enc
	}
	for _, tb := range []uint64{8, 16, 32, 64} {
		for _, w := range []uint64{0, 3, tb} {
			for _, n := range []int{1, 1000, 1024, 2500} {
				b := Block{Kind: Fixed, Num: uint64(n), Bits: tb, Data: randWords(r, tb, w, n)}
				enc := check(fmt.Sprintf("int T%d W%d n%d", tb, w, n), b, func(x Block) bool { return x.Kind == Fixed }, EncodeOptions{Minor: 2})
				if w == 3 && n >= 1000 && enc.GetInlineBitpacking() == nil {
					t.Fatalf("T%d W3 n%d not bit-packed", tb, n)
				}
			}
		}
	}
	runs := make([]byte, 4*10000)
	for i := 0; i < 10000; i++ {
		binary.LittleEndian.PutUint32(runs[4*i:], uint32((i/50)%7))
	}
	enc := check("runs", Block{Kind: Fixed, Num: 10000, Bits: 32, Data: runs}, func(x Block) bool { return true }, EncodeOptions{Minor: 1})
	if enc.GetRle() == nil {
		t.Fatalf("runs not RLE: %v", enc)
	}
	long := make([]byte, 8*9000) // one run longer than 255
	for i := range 9000 {
		long[8*i] = 7 // not 0: zeros bit-pack to one word per 1024 values, smaller than RLE
	}
	enc = check("long run", Block{Kind: Fixed, Num: 9000, Bits: 64, Data: long}, func(x Block) bool { return true }, EncodeOptions{Minor: 2})
	if enc.GetRle() == nil {
		t.Fatalf("constant not RLE")
	}
	bm := Block{Kind: Fixed, Num: 10000, Bits: 1, Data: randWords(r, 8, 8, 1250)}
	check("bool", bm, func(x Block) bool { return true }, EncodeOptions{Minor: 2})
	wide := Block{Kind: Fixed, Num: 700, Bits: 128, Data: randWords(r, 64, 64, 1400)}
	check("decimal128", wide, func(x Block) bool { return true }, EncodeOptions{Minor: 2})
	var text, short [][]byte
	for i := 0; i < 5000; i++ {
		text = append(text, []byte(fmt.Sprintf("index vector #%d of table %d", i, i%7)))
		short = append(short, []byte(fmt.Sprint(i%10)))
	}
	for _, ob := range []uint64{32, 64} {
		enc := check("text", varBlock(text, ob), func(x Block) bool { return true }, EncodeOptions{Minor: 2})
		if enc.GetFsst() == nil {
			t.Fatalf("text not FSST-compressed")
		}
		enc = check("short", varBlock(short, ob), func(x Block) bool { return true }, EncodeOptions{Minor: 1})
		if enc.GetVariable() == nil {
			t.Fatalf("short strings not variable")
		}
	}
}

// sub checks got against values [at, at+n) of b; it returns got if equal,
// a zero Block otherwise.
func sub(b Block, at, n uint64, got Block) Block {
	if got.Num != n {
		return Block{}
	}
	switch b.Kind {
	case Fixed:
		if b.Bits == 1 {
			for i := uint64(0); i < n; i++ {
				if b.Uint(at+i) != got.Uint(i) {
					return Block{}
				}
			}
			return got
		}
		w := b.Bits / 8
		if !bytes.Equal(b.Data[at*w:(at+n)*w], got.Data) {
			return Block{}
		}
	case Variable:
		for i := uint64(0); i < n; i++ {
			if !bytes.Equal(b.Value(at+i), got.Value(i)) {
				return Block{}
			}
		}
	}
	return got
}
