package codec_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/datafile"
	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
	"github.com/lancekeeper/lancekeeper/tests/peerlance"
)

// fuzzLimit bounds every decode in the fuzz targets: a hostile length may
// only produce ErrLimit, never a larger allocation.
const fuzzLimit = 1 << 20

// checkErr fails on an error that is not one of the package's typed errors.
func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ce *codec.Error
	if !errors.As(err, &ce) || !(errors.Is(err, codec.ErrCorrupt) || errors.Is(err, codec.ErrUnsupported) || errors.Is(err, codec.ErrLimit)) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
}

// blockBytes is the decoded size of a block tree.
func blockBytes(b *codec.Block) int {
	n := len(b.Data) + len(b.Offsets) + len(b.Validity)
	for i := range b.Children {
		n += blockBytes(&b.Children[i])
	}
	return n
}

// corpusChunks returns (value_compression, chunk value buffers, count)
// triples cut from the mini-block pages of a few corpus files, and the
// full-zip items, as fuzz seeds. Without the corpus it returns nothing (the
// f.Add seeds below still run).
type seedChunk struct {
	enc  []byte
	bufs [][]byte
	n    uint64
}

func corpusChunks(tb testing.TB) []seedChunk {
	corpus, err := peerlance.CorpusDir()
	if err != nil {
		return nil
	}
	var out []seedChunk
	// the corpus tables, and the Lance 12 files of the datafile testdata:
	// lance12_v2.2_encoding_hints.lance holds the compressions Lance writes
	// only on request (byte-stream split, general zstd/lz4, packed and
	// variable packed structs, fixed-size lists, full-zip per-value zstd)
	var paths []string
	for _, table := range []string{"all_types", "storage_2_1", "scalar_indices"} {
		files, _ := filepath.Glob(filepath.Join(corpus, "lance12", table+".lance", "data", "*.lance"))
		paths = append(paths, files...)
	}
	testdata, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "lance12_v2.*.lance"))
	paths = append(paths, testdata...)
	{
		for _, path := range paths {
			f, err := os.Open(path)
			if err != nil {
				continue
			}
			st, _ := f.Stat()
			df, err := datafile.OpenReaderAt(f, st.Size())
			if err != nil || df.Version().Minor() == 0 {
				f.Close()
				continue
			}
			for c := 0; c < df.NumColumns(); c++ {
				for _, p := range df.Column(c).Pages {
					var pl pb21.PageLayout
					if proto.Unmarshal(p.Encoding.Value, &pl) != nil {
						continue
					}
					if fz := pl.GetFullZipLayout(); fz != nil && fz.ValueCompression != nil && len(p.Buffers) > 0 {
						// full-zip items: the value compression and the
						// start of the zipped buffer (per-value context)
						b := make([]byte, min(p.Buffers[0].Len, 4096))
						f.ReadAt(b, int64(p.Buffers[0].Pos))
						enc, _ := proto.Marshal(fz.ValueCompression)
						out = append(out, seedChunk{enc: enc, bufs: [][]byte{b}, n: uint64(fz.GetNumItems())})
						continue
					}
					mb := pl.GetMiniBlockLayout()
					if mb == nil || len(p.Buffers) < 2 || p.Buffers[1].Len > 1<<16 {
						continue
					}
					bufs := make([][]byte, len(p.Buffers))
					for i, r := range p.Buffers {
						bufs[i] = make([]byte, r.Len)
						f.ReadAt(bufs[i], int64(r.Pos))
					}
					enc, _ := proto.Marshal(mb.ValueCompression)
					// The whole chunk area and the item count: the fuzzer
					// mutates from real value bytes.
					out = append(out, seedChunk{enc: enc, bufs: [][]byte{bufs[1]}, n: mb.NumItems})
					if mb.DefCompression != nil {
						de, _ := proto.Marshal(mb.DefCompression)
						out = append(out, seedChunk{enc: de, bufs: [][]byte{bufs[1]}, n: mb.NumItems})
					}
					if mb.Dictionary != nil && len(bufs) > 2 {
						de, _ := proto.Marshal(mb.Dictionary)
						out = append(out, seedChunk{enc: de, bufs: [][]byte{bufs[2]}, n: mb.NumDictionaryItems})
					}
				}
			}
			f.Close()
		}
	}
	return out
}

func encBytes(e *pb21.CompressiveEncoding) []byte {
	b, _ := proto.Marshal(e)
	return b
}

func flat(bits uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Flat{Flat: &pb21.Flat{BitsPerValue: bits}}}
}

// FuzzCompressiveEncoding decodes arbitrary bytes with an arbitrary
// (protobuf-encoded) CompressiveEncoding in all three contexts: every
// compression and nesting is reachable. Seeds: real corpus chunks and
// encodings, plus the spec's golden buffers.
func FuzzCompressiveEncoding(f *testing.F) {
	for _, s := range corpusChunks(f) {
		var b0, b1 []byte
		b0 = s.bufs[0]
		if len(b0) > 4096 {
			b0 = b0[:4096]
		}
		f.Add(s.enc, b0, b1, s.n)
	}
	rle := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flat(16), RunLengths: flat(8)}}}
	f.Add(encBytes(rle), []byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4, 1, 5}, []byte{4, 1, 5}, uint64(10))
	// 2.3 (Lance 12 after optimize): run lengths out-of-line bit-packed
	rleP := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flat(16),
		RunLengths: &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{UncompressedBitsPerValue: 8, Values: flat(3)}}}}}}
	f.Add(encBytes(rleP), []byte{0, 0, 1, 0, 0, 0}, []byte{4, 1, 5}, uint64(10))
	v := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Variable{Variable: &pb21.Variable{Offsets: flat(32)}}}
	f.Add(encBytes(v), []byte{12, 0, 0, 0, 13, 0, 0, 0, 15, 0, 0, 0, 'a', 'b', 'c', 0x48}, []byte(nil), uint64(2))
	f.Add(encBytes(v), []byte{32, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'x'}, []byte(nil), uint64(1))
	// The level forms of 2.2 all-null pages (one block per page, session
	// 24): out-of-line bit-packing over more than 1024 levels with a
	// packed tail, inline bit-packing of ≤ 1024 levels, the RLE frame.
	lv := make([]uint16, 2000)
	for i := range lv {
		lv[i] = uint16(1 + i%7/6)
	}
	f.Add(encBytes(codec.OutOfLine16Encoding(2)), codec.AppendOutOfLine16(nil, lv, 2), []byte(nil), uint64(len(lv)))
	raw := make([]byte, 2*700)
	for i := range 700 {
		raw[2*i] = byte(i % 3)
	}
	inl := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: 16}}}
	f.Add(encBytes(inl), codec.AppendBitpacked(nil, 16, raw, 700), []byte(nil), uint64(700))
	runs := make([]uint16, 3000)
	for i := range runs {
		runs[i] = uint16(i / 700 % 2)
	}
	re, rb := codec.EncodeLevels(runs, codec.EncodeOptions{Minor: 2})
	f.Add(encBytes(re), rb, []byte(nil), uint64(len(runs)))
	// fixed_size_list<fixed_size_list<int16, 3>, 2> with validity at both
	// levels: per value the outer bitmap, the items' bitmap, the items
	fslOf := func(d uint64, valid bool, inner *pb21.CompressiveEncoding) *pb21.CompressiveEncoding {
		return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{ItemsPerValue: d, HasValidity: valid, Values: inner}}}
	}
	f.Add(encBytes(fslOf(2, true, fslOf(3, true, flat(16)))), []byte{0b10, 0b111000, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}, []byte{3, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint64(2))
	f.Fuzz(func(t *testing.T, encb, b0, b1 []byte, n uint64) {
		var enc pb21.CompressiveEncoding
		if proto.Unmarshal(encb, &enc) != nil {
			return
		}
		decodeAllContexts(t, &enc, b0, b1, n%(1<<16))
	})
}

// decodeAllContexts decodes b0/b1 with enc as a mini-block chunk, a block,
// levels and full-zip items: typed errors only, output within the limit.
func decodeAllContexts(t *testing.T, enc *pb21.CompressiveEncoding, b0, b1 []byte, n uint64) {
	t.Helper()
	lim := codec.Limits{MaxBytes: fuzzLimit}
	if b, err := codec.DecodeMiniBlock(enc, [][]byte{b0, b1}, n, lim); err == nil {
		if blockBytes(&b) > fuzzLimit+len(b0)+len(b1) {
			t.Fatalf("decoded %d bytes over the limit", blockBytes(&b))
		}
	} else {
		checkErr(t, err)
	}
	if _, err := codec.DecodeBlock(enc, b0, n, lim); err != nil {
		checkErr(t, err)
	}
	lv, err := codec.DecodeLevels(enc, b0, n, lim)
	if err != nil {
		checkErr(t, err)
	}
	// LevelsInto (the reusing decoder the structural layer uses) appends
	// the same levels after what dst holds.
	rd := codec.NewDecoder(lim)
	rd.Reuse()
	into, err2 := rd.LevelsInto([]uint16{7}, enc, b0, n)
	rd.Close()
	if (err == nil) != (err2 == nil) {
		t.Fatalf("Levels error %v, LevelsInto error %v", err, err2)
	}
	if err == nil && (len(into) != len(lv)+1 || into[0] != 7 || !slices.Equal(into[1:], lv)) {
		t.Fatalf("LevelsInto gave %d levels, Levels %d", len(into)-1, len(lv))
	}
	vd, err := codec.NewValueDecoder(enc, lim)
	if err != nil {
		checkErr(t, err)
		return
	}
	for _, item := range [][]byte{b0, b1} {
		if fx := vd.FixedBytes(); fx > 0 && uint64(len(item)) > fx {
			item = item[:fx]
		}
		checkErr(t, vd.Append(item))
		checkErr(t, vd.AppendNull())
	}
	vd.Finish()
}

// FuzzStructuredCompressions: the compressions that wrap other ones —
// byte-stream split, fixed-size list (validity, nesting), packed struct
// and variable packed struct (§7.9, §7.11, §7.12) — seeded only with the
// real chunks of those kinds Lance 12 wrote (testdata
// lance12_v2.2_encoding_hints.lance) and hand-made forms, so that the
// fuzzer's effort goes to them; decoded in all three contexts.
func FuzzStructuredCompressions(f *testing.F) {
	structured := func(e *pb21.CompressiveEncoding) bool {
		switch e.GetCompression().(type) {
		case *pb21.CompressiveEncoding_ByteStreamSplit, *pb21.CompressiveEncoding_FixedSizeList,
			*pb21.CompressiveEncoding_PackedStruct, *pb21.CompressiveEncoding_VariablePackedStruct:
			return true
		}
		return false
	}
	for _, s := range corpusChunks(f) {
		var e pb21.CompressiveEncoding
		if proto.Unmarshal(s.enc, &e) != nil || !structured(&e) {
			continue
		}
		b0 := s.bufs[0]
		if len(b0) > 4096 {
			b0 = b0[:4096]
		}
		f.Add(s.enc, b0, []byte(nil), s.n)
	}
	bss := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_ByteStreamSplit{ByteStreamSplit: &pb21.ByteStreamSplit{Values: flat(32)}}}
	f.Add(encBytes(bss), []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte(nil), uint64(2))
	inner := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{ItemsPerValue: 2, HasValidity: true, Values: flat(32)}}}
	outer := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_FixedSizeList{FixedSizeList: &pb21.FixedSizeList{ItemsPerValue: 2, HasValidity: true, Values: inner}}}
	f.Add(encBytes(outer), append([]byte{0x3, 0xf}, make([]byte, 32)...), []byte{0x3, 0xf}, uint64(2))
	ps := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_PackedStruct{PackedStruct: &pb21.PackedStruct{BitsPerValue: []uint64{32, 64}, Values: flat(96)}}}
	f.Add(encBytes(ps), make([]byte, 24), []byte(nil), uint64(2))
	f.Fuzz(func(t *testing.T, encb, b0, b1 []byte, n uint64) {
		var enc pb21.CompressiveEncoding
		if proto.Unmarshal(encb, &enc) != nil || !structured(&enc) {
			return
		}
		decodeAllContexts(t, &enc, b0, b1, n%(1<<16))
	})
}

// FuzzBitpacking: inline (§7.3) and out-of-line (§7.4) bit-packing of
// every width over hostile buffers; decoded values of an encoded chunk
// round-trip.
func FuzzBitpacking(f *testing.F) {
	for _, tb := range []uint64{8, 16, 32, 64} {
		vals := make([]byte, 1024*tb/8)
		for i := range vals {
			vals[i] = byte(i * 7)
		}
		f.Add(codec.AppendBitpacked(nil, tb, vals, 1024), uint8(tb), uint8(3), uint16(1024))
	}
	f.Fuzz(func(t *testing.T, buf []byte, tb, w uint8, n uint16) {
		t64 := uint64(8) << (tb % 4)
		lim := codec.Limits{MaxBytes: fuzzLimit}
		in := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_InlineBitpacking{InlineBitpacking: &pb21.InlineBitpacking{UncompressedBitsPerValue: t64}}}
		b, err := codec.DecodeMiniBlock(in, [][]byte{buf}, uint64(n), lim)
		checkErr(t, err)
		if err == nil && n > 0 && n <= 1024 {
			again := codec.AppendBitpacked(nil, t64, b.Data, int(n))
			b2, err := codec.DecodeMiniBlock(in, [][]byte{again}, uint64(n), lim)
			if err != nil || string(b2.Data) != string(b.Data) {
				t.Fatalf("re-encoded chunk does not round-trip: %v", err)
			}
		}
		ool := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{UncompressedBitsPerValue: t64, Values: flat(uint64(w) % 70)}}}
		_, err = codec.DecodeBlock(ool, buf, uint64(n), lim)
		checkErr(t, err)
	})
}

// FuzzFSST: hostile symbol tables and compressed strings (§7.7), in the
// mini-block (variable) and per-value contexts; encoded strings round-trip.
func FuzzFSST(f *testing.F) {
	tab := codec.TrainFSST([][]byte{[]byte("index vector #0"), []byte("index vector #1"), []byte("lance table zone seeds")})
	comp := tab.Encode(nil, []byte("index vector #7 lance"))
	vb := binary.LittleEndian.AppendUint32(nil, 8)
	vb = binary.LittleEndian.AppendUint32(vb, uint32(8+len(comp)))
	vb = append(vb, comp...)
	f.Add(tab.Bytes(), vb, []byte("index lance zone"))
	f.Fuzz(func(t *testing.T, table, buf, plain []byte) {
		lim := codec.Limits{MaxBytes: fuzzLimit}
		enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Fsst{Fsst: &pb21.Fsst{SymbolTable: table,
			Values: &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Variable{Variable: &pb21.Variable{Offsets: flat(32)}}}}}}
		_, err := codec.DecodeMiniBlock(enc, [][]byte{buf}, 1, lim)
		checkErr(t, err)
		if vd, err := codec.NewValueDecoder(enc, lim); err == nil {
			checkErr(t, vd.Append(buf))
		} else {
			checkErr(t, err)
		}
		st, err := codec.ParseSymbolTable(table)
		if err != nil {
			checkErr(t, err)
			return
		}
		c := st.Encode(nil, plain)
		back, err := st.Decode(nil, c)
		if err != nil || string(back) != string(plain) {
			t.Fatalf("round trip of %q: %q %v", plain, back, err)
		}
	})
}

// FuzzRLE: run values and lengths of every width, mini-block (two buffers)
// and block (u64-prefixed frame) forms (§7.5, §7.6).
func FuzzRLE(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0}, []byte{50, 46}, uint8(32), uint8(8), uint16(96))
	f.Add([]byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4, 1, 5}, []byte{4, 1, 5}, uint8(16), uint8(8), uint16(10))
	f.Fuzz(func(t *testing.T, vals, runs []byte, vb, lb uint8, n uint16) {
		enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: flat(uint64(vb)), RunLengths: flat(uint64(lb))}}}
		lim := codec.Limits{MaxBytes: fuzzLimit}
		b, err := codec.DecodeMiniBlock(enc, [][]byte{vals, runs}, uint64(n), lim)
		checkErr(t, err)
		if err == nil && b.Num != uint64(n) {
			t.Fatalf("%d values, want %d", b.Num, n)
		}
		_, err = codec.DecodeBlock(enc, vals, uint64(n), lim)
		checkErr(t, err)
	})
}

// FuzzRLEPackedChild: RLE whose values or run lengths are out-of-line
// bit-packed (Lance 12's 2.3 optimize output packs the run lengths) over
// hostile bytes, widths and counts: a typed error or exactly n values.
func FuzzRLEPackedChild(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 0}, []byte{4, 1, 5}, false, uint8(16), uint8(8), uint8(3), uint16(10))
	f.Add(make([]byte, 5*128), []byte{3, 3, 3}, true, uint8(32), uint8(8), uint8(5), uint16(9))
	f.Fuzz(func(t *testing.T, vals, runs []byte, packValues bool, vb, lb, w uint8, n uint16) {
		packed := func(unc uint8) *pb21.CompressiveEncoding {
			return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{
				UncompressedBitsPerValue: uint64(unc), Values: flat(uint64(w))}}}
		}
		r := &pb21.Rle{Values: flat(uint64(vb)), RunLengths: packed(lb)}
		if packValues {
			r = &pb21.Rle{Values: packed(vb), RunLengths: flat(uint64(lb))}
		}
		enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: r}}
		lim := codec.Limits{MaxBytes: fuzzLimit}
		b, err := codec.DecodeMiniBlock(enc, [][]byte{vals, runs}, uint64(n), lim)
		checkErr(t, err)
		if err == nil && b.Num != uint64(n) {
			t.Fatalf("%d values, want %d", b.Num, n)
		}
	})
}

// FuzzGeneral: zstd and lz4 framing (§7.10, T15) over hostile bytes;
// compressed input round-trips.
func FuzzGeneral(f *testing.F) {
	src := []byte("lancekeeper lancekeeper lancekeeper general")
	for _, s := range []pb21.CompressionScheme{pb21.CompressionScheme_COMPRESSION_ALGORITHM_LZ4, pb21.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD} {
		c, _ := codec.CompressGeneral(nil, s, 0, src)
		f.Add(c, uint8(s), src)
	}
	f.Fuzz(func(t *testing.T, buf []byte, scheme uint8, plain []byte) {
		s := pb21.CompressionScheme(scheme % 3)
		enc := &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{
			Compression: &pb21.BufferCompression{Scheme: s}, Values: flat(8)}}}
		lim := codec.Limits{MaxBytes: fuzzLimit}
		_, err := codec.DecodeBlock(enc, buf, uint64(len(buf)), lim)
		checkErr(t, err)
		if s == 0 {
			return
		}
		c, err := codec.CompressGeneral(nil, s, 0, plain)
		if err != nil {
			t.Fatal(err)
		}
		b, err := codec.DecodeBlock(enc, c, uint64(len(plain)), lim)
		if err != nil || string(b.Data) != string(plain) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
