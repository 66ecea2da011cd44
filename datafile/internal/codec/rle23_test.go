package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

func flatCE(bits uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Flat{Flat: &pb21.Flat{BitsPerValue: bits}}}
}

func oolbpCE(uncompressed, w uint64) *pb21.CompressiveEncoding {
	return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_OutOfLineBitpacking{OutOfLineBitpacking: &pb21.OutOfLineBitpacking{
		UncompressedBitsPerValue: uncompressed, Values: flatCE(w)}}}
}

// packTail8 packs up to 1024 u8 values (each < 2^w) as one FastLanes block
// (the packed tail of out-of-line bit-packing, §7.4).
func packTail8(vals []uint8, w uint) []byte {
	in := make([]uint8, 1024)
	copy(in, vals)
	out := make([]uint8, w*128)
	packBlock(in, out, w)
	return out
}

func packTail32(vals []uint32, w uint) []byte {
	in := make([]uint32, 1024)
	copy(in, vals)
	out := make([]uint32, w*32)
	packBlock(in, out, w)
	return storeWords(nil, out)
}

// TestSpec21_7_5_RLEOneChildOutOfLinePacked23: Lance 12's 2.3 output
// (after optimize) writes RLE mini-block values whose run lengths are
// out-of-line bit-packed (`rle(32, oolbp(8←3))`); the flat child gives the
// run count. Packed values with flat run lengths decode the same way; two
// packed children, or a packed child shorter than its runs, are typed
// errors.
func TestSpec21_7_5_RLEOneChildOutOfLinePacked23(t *testing.T) {
	const nruns = 300
	runVals16 := make([]byte, 2*nruns)
	runVals32 := make([]uint32, nruns)
	runLens := make([]uint8, nruns)
	var want16, want32 []byte
	for j := range nruns {
		binary.LittleEndian.PutUint16(runVals16[2*j:], uint16(j*7))
		runVals32[j] = uint32(j % 29)
		runLens[j] = uint8(1 + j%7)
		for range runLens[j] {
			want16 = binary.LittleEndian.AppendUint16(want16, uint16(j*7))
			want32 = binary.LittleEndian.AppendUint32(want32, uint32(j%29))
		}
	}
	n := uint64(len(want16) / 2)
	rle := func(v, l *pb21.CompressiveEncoding) *pb21.CompressiveEncoding {
		return &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_Rle{Rle: &pb21.Rle{Values: v, RunLengths: l}}}
	}
	for _, c := range []struct {
		name       string
		enc        *pb21.CompressiveEncoding
		vals, runs []byte
		want       []byte
		err        error
	}{
		{"runs_packed_block_tail", rle(flatCE(16), oolbpCE(8, 3)), runVals16, packTail8(runLens, 3), want16, nil},
		{"runs_packed_raw_tail", rle(flatCE(16), oolbpCE(8, 3)), runVals16, runLens, want16, nil},
		{"values_packed", rle(oolbpCE(32, 5), flatCE(8)), packTail32(runVals32, 5), runLens, want32, nil},
		{"both_flat", rle(flatCE(16), flatCE(8)), runVals16, runLens, want16, nil},
		{"both_packed", rle(oolbpCE(32, 5), oolbpCE(8, 3)), packTail32(runVals32, 5), packTail8(runLens, 3), nil, ErrUnsupported},
		{"runs_packed_short", rle(flatCE(16), oolbpCE(8, 3)), runVals16, packTail8(runLens, 3)[:100], nil, ErrCorrupt},
		{"runs_general", rle(flatCE(16), &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_General{General: &pb21.General{Values: flatCE(8)}}}), runVals16, runLens, nil, ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := DecodeMiniBlock(c.enc, [][]byte{c.vals, c.runs}, n, Limits{})
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Num != n || !bytes.Equal(b.Data, c.want) {
				t.Fatalf("decoded %d values, want %d; equal %v", b.Num, n, bytes.Equal(b.Data, c.want))
			}
		})
	}
}
