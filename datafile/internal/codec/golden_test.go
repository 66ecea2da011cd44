package codec

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

func hexBytes(s string) []byte {
	var out []byte
	for _, f := range bytes.Fields([]byte(s)) {
		var b byte
		fmt.Sscanf(string(f), "%02x", &b)
		out = append(out, b)
	}
	return out
}

func lz4General(inner *pb21.CompressiveEncoding) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{
		Compression: &pb21.BufferCompression{Scheme: pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4}, Values: inner}}}
}

// §7.8 golden 1 (all_types dict_utf8, 2.2): the LZ4-framed variable block
// is ["red","green","blue"].
func TestSpec7_8_DictionaryGolden(t *testing.T) {
	buf := hexBytes("24 00 00 00 62 20 00 00 00 18 00 01 00 f0 09 03 00 00 00 08 00 00 00 0c 00 00 00 72 65 64 67 72 65 65 6e 62 6c 75 65")
	b, err := DecodeBlock(lz4General(variableEnc(32)), buf, 3, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s %s %s", b.Value(0), b.Value(1), b.Value(2)); got != "red green blue" {
		t.Fatalf("dictionary %q", got)
	}
	// EncodeDictionary gives the same block (before LZ4) and round-trips.
	enc, framed, err := EncodeDictionary(b, EncodeOptions{Minor: 2})
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeBlock(enc, framed, 3, Limits{})
	if err != nil || string(back.Data) != "redgreenblue" || back.Value(1) == nil || string(back.Value(1)) != "green" {
		t.Fatalf("round trip: %v", err)
	}
	raw, _ := (&decoder{ctx: ctxBlock, left: 1 << 20}).general(enc, enc.GetGeneral().GetCompression(), framed)
	want := hexBytes("20 00 00 00 18 00 00 00 00 00 00 00 03 00 00 00 08 00 00 00 0c 00 00 00 72 65 64 67 72 65 65 6e 62 6c 75 65")
	if !bytes.Equal(raw, want) {
		t.Fatalf("encoded block % x, want % x", raw, want)
	}
	// 2.1: no LZ4 around it; a fixed-width dictionary is plain flat (as
	// Lance 12 writes an Arrow dictionary of int64/float32 in 2.1).
	enc21, blk21, err := EncodeDictionary(b, EncodeOptions{Minor: 1})
	if err != nil || enc21.GetVariable() == nil || !bytes.Equal(blk21, want) {
		t.Fatalf("2.1 dictionary: %v", err)
	}
	fixed := Block{Kind: Fixed, Num: 2, Bits: 64, Data: make([]byte, 16)}
	if enc21, blk21, err := EncodeDictionary(fixed, EncodeOptions{Minor: 1}); err != nil || enc21.GetFlat().GetBitsPerValue() != 64 || !bytes.Equal(blk21, fixed.Data) {
		t.Fatalf("2.1 fixed-width dictionary: %v %v", enc21, err)
	}
	enc22, buf22, err := EncodeDictionary(fixed, EncodeOptions{Minor: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeBlock(enc22, buf22, 2, Limits{}); err != nil || !bytes.Equal(got.Data, fixed.Data) {
		t.Fatalf("2.2 fixed dictionary: %v", err)
	}
}

// §4.7: the utf8 chunk's value buffer (11 offsets from 44, "" "a"
// "héllo wörld" …) decodes in place.
func TestSpec7_2_VariableMiniBlockGolden(t *testing.T) {
	vals := [][]byte{[]byte(""), []byte("a"), []byte("héllo wörld"), []byte("日本語")}
	buf := variableBuffer(vals, 4)
	if buf[0] != 20 || len(buf)%4 != 0 || buf[len(buf)-1] != 0x48 {
		t.Fatalf("buffer % x", buf)
	}
	b, err := DecodeMiniBlock(variableEnc(32), [][]byte{buf}, 4, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if !bytes.Equal(b.Value(uint64(i)), v) {
			t.Fatalf("value %d = %q", i, b.Value(uint64(i)))
		}
	}
	// Offsets before their own end or past the buffer are corrupt.
	bad := append([]byte(nil), buf...)
	bad[0] = 4
	if _, err := DecodeMiniBlock(variableEnc(32), [][]byte{bad}, 4, Limits{}); err == nil {
		t.Fatal("offset inside the offsets accepted")
	}
}

// §7.7 golden: the str_text table header fd 00 08 01 54 53 53 46 = 253
// symbols, switch on; "cc d0 e0 fa" with symbols "index ", "vector ",
// "#", "0" is "index vector #0". Our serialized table has the same header
// layout.
func TestSpec7_7_FSSTTableLayout(t *testing.T) {
	tab := &SymbolTable{on: true, n: 4}
	for i, s := range []string{"index ", "vector ", "#", "0"} {
		var w [8]byte
		copy(w[:], s)
		tab.sym[i] = uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 | uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		tab.slen[i] = uint8(len(s))
	}
	ser := tab.Bytes()
	if !bytes.Equal(ser[:8], []byte{4, 0, 0, 1, 0x54, 0x53, 0x53, 0x46}) || ser[8+32] != 6 || len(ser) != SymbolTableSize {
		t.Fatalf("header % x, lengths at %d: %d", ser[:8], 8+32, ser[8+32])
	}
	back, err := ParseSymbolTable(ser)
	if err != nil {
		t.Fatal(err)
	}
	out, err := back.Decode(nil, []byte{0, 1, 2, 3})
	if err != nil || string(out) != "index vector #0" {
		t.Fatalf("%q %v", out, err)
	}
	if c := back.Encode(nil, []byte("index vector #0")); !bytes.Equal(c, []byte{0, 1, 2, 3}) {
		t.Fatalf("encoded % x", c)
	}
	// The switch off: strings are verbatim.
	ser[3] = 0
	off, _ := ParseSymbolTable(ser)
	if out, _ := off.Decode(nil, []byte("abc")); string(out) != "abc" {
		t.Fatalf("switch off: %q", out)
	}
}

// §5.5 fz_small: per-value variable items with a null; §7.11 per-value
// fixed-size list items = validity bytes then the items.
func TestSpec5_5_PerValueItems(t *testing.T) {
	vd, err := NewValueDecoder(variableEnc(32), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if vd.FixedBytes() != 0 {
		t.Fatal("variable items have a fixed size")
	}
	x := bytes.Repeat([]byte("x"), 300)
	_ = vd.Append(x)
	_ = vd.AppendNull()
	_ = vd.Append(nil)
	_ = vd.Append(bytes.Repeat([]byte("yz"), 150))
	b := vd.Finish()
	if b.Num != 4 || !bytes.Equal(b.Value(0), x) || len(b.Value(1)) != 0 || len(b.Value(2)) != 0 || len(b.Value(3)) != 300 {
		t.Fatalf("items %+v", b.Num)
	}
	fsl := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{ItemsPerValue: 3, HasValidity: true, Values: flatEnc(32)}}}
	vd, err = NewValueDecoder(fsl, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if vd.FixedBytes() != 1+12 {
		t.Fatalf("fsl item of %d bytes", vd.FixedBytes())
	}
	if err := vd.Append(hexBytes("05 01 00 00 00 02 00 00 00 03 00 00 00")); err != nil {
		t.Fatal(err)
	}
	if err := vd.Append(make([]byte, 5)); err == nil {
		t.Fatal("short item accepted")
	}
	b = vd.Finish()
	if b.Kind != List || b.Dim != 3 || b.Validity[0] != 5 || b.Children[0].Num != 3 || b.Children[0].Uint(2) != 3 {
		t.Fatalf("fsl %+v", b)
	}
	// §7.13 variable packed struct (blob v2 descriptor row).
	vps := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_VariablePackedStruct{VariablePackedStruct: &pb21.VariablePackedStruct{Fields: []*pb21.FieldEncoding{
		{Value: flatEnc(8), Layout: &pb21.FieldEncoding_BitsPerValue{BitsPerValue: 8}},
		{Value: flatEnc(64), Layout: &pb21.FieldEncoding_BitsPerValue{BitsPerValue: 64}},
		{Value: flatEnc(64), Layout: &pb21.FieldEncoding_BitsPerValue{BitsPerValue: 64}},
		{Value: flatEnc(32), Layout: &pb21.FieldEncoding_BitsPerValue{BitsPerValue: 32}},
		{Value: variableEnc(32), Layout: &pb21.FieldEncoding_BitsPerLength{BitsPerLength: 32}},
	}}}}
	vd, err = NewValueDecoder(vps, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	row := hexBytes("00 00 00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 00 00 00 00 03 00 00 00 61 62 63")
	if err := vd.Append(row); err != nil {
		t.Fatal(err)
	}
	b = vd.Finish()
	if b.Kind != Struct || len(b.Children) != 5 || b.Children[2].Uint(0) != 100 || string(b.Children[4].Value(0)) != "abc" {
		t.Fatalf("vps %+v", b)
	}
}

// §7.12 packed struct (legacy blob descriptors [64,64]) and §7.14 constant.
func TestSpec7_12_PackedStructAndConstant(t *testing.T) {
	ps := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_PackedStruct{PackedStruct: &pb21.PackedStruct{BitsPerValue: []uint64{64, 64}, Values: flatEnc(128)}}}
	buf := hexBytes("00 00 00 00 00 00 00 00 e0 c8 10 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
	b, err := DecodeMiniBlock(ps, [][]byte{buf}, 2, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Children[0].Uint(1) != 1 || b.Children[1].Uint(0) != 1100000 || b.Children[1].Uint(1) != 0 {
		t.Fatalf("packed %+v", b)
	}
	c := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Constant{Constant: &pb21.Constant{Value: []byte{7, 0, 0, 0}}}}
	b, err = DecodeBlock(c, nil, 3, Limits{})
	if err != nil || b.Bits != 32 || b.Uint(2) != 7 {
		t.Fatalf("constant: %v", err)
	}
}
