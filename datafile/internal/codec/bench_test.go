package codec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// Decode throughput benchmarks (MB/s of decoded output). Each reports, as
// "x_copy", its speed relative to copying the same output bytes in the same
// run (BenchmarkBaselineCopy), and the bit-unpacking benchmark also against
// the spec's reference loop (§7.3, BenchmarkBaselineReferenceUnpack).
// Run: go test ./datafile/internal/codec -run '^$' -bench . -benchtime 2x…

const benchValues = 1 << 20

type benchPage struct {
	enc    *pb21.CompressiveEncoding
	chunks []Chunk
	out    int64
}

func benchInt64(tb testing.TB) benchPage {
	r := rand.New(rand.NewPCG(1, 1))
	data := make([]byte, 8*benchValues)
	for i := 0; i < benchValues; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(i)*3+uint64(r.IntN(1000))) // row ids + noise: ~22 bits
	}
	enc, chunks, err := EncodeMiniBlock(Block{Kind: Fixed, Num: benchValues, Bits: 64, Data: data}, EncodeOptions{Minor: 2})
	if err != nil || enc.GetInlineBitpacking() == nil {
		tb.Fatalf("not bit-packed: %v", err)
	}
	return benchPage{enc, chunks, int64(len(data))}
}

func benchFloat64(tb testing.TB, bss bool) benchPage {
	data := make([]byte, 8*benchValues)
	for i := 0; i < benchValues; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(math.Sin(float64(i)/1000)*100))
	}
	enc, chunks, err := EncodeMiniBlock(Block{Kind: Fixed, Num: benchValues, Bits: 64, Data: data}, EncodeOptions{Minor: 2, NoBitpacking: true})
	if err != nil {
		tb.Fatal(err)
	}
	if bss {
		enc = &pb21.CompressiveEncoding{Compression: &pb21.CompressiveEncoding_ByteStreamSplit{ByteStreamSplit: &pb21.ByteStreamSplit{Values: flatEnc(64)}}}
		for i := range chunks {
			c := chunks[i].Buffers[0]
			s := make([]byte, len(c))
			split(s, c, int(chunks[i].N), 8)
			chunks[i].Buffers = [][]byte{s}
		}
	}
	return benchPage{enc, chunks, int64(len(data))}
}

func benchText(tb testing.TB) benchPage {
	words := []string{"index", "vector", "lance", "table", "zone", "seed", "page", "chunk", "value", "query"}
	r := rand.New(rand.NewPCG(2, 2))
	n := benchValues / 4
	var vals [][]byte
	var total int
	for i := 0; i < n; i++ {
		s := fmt.Sprintf("%s %s %s #%d", words[r.IntN(10)], words[r.IntN(10)], words[r.IntN(10)], i)
		vals = append(vals, []byte(s))
		total += len(s)
	}
	ow := 4
	b := Block{Kind: Variable, Num: uint64(n), OffsetBits: 32}
	b.Offsets = make([]byte, 0, 4*(n+1))
	b.Offsets = binary.LittleEndian.AppendUint32(b.Offsets, 0)
	for _, v := range vals {
		b.Data = append(b.Data, v...)
		b.Offsets = binary.LittleEndian.AppendUint32(b.Offsets, uint32(len(b.Data)))
	}
	enc, chunks, err := EncodeMiniBlock(b, EncodeOptions{Minor: 2})
	if err != nil || enc.GetFsst() == nil {
		tb.Fatalf("not FSST: %v", err)
	}
	return benchPage{enc, chunks, int64(total + ow*(n+1))}
}

func runPage(b *testing.B, p benchPage) {
	dc := NewDecoder(Limits{})
	dc.Reuse()
	defer dc.Close()
	b.SetBytes(p.out)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range p.chunks {
			if _, err := dc.MiniBlock(p.enc, c.Buffers, c.N); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDecodeBitpackedInt64(b *testing.B) { runPage(b, benchInt64(b)) }
func BenchmarkDecodeFlatFloat64(b *testing.B)    { runPage(b, benchFloat64(b, false)) }
func BenchmarkDecodeBSSFloat64(b *testing.B)     { runPage(b, benchFloat64(b, true)) }
func BenchmarkDecodeFSSTUtf8(b *testing.B)       { runPage(b, benchText(b)) }

// BenchmarkBaselineCopy copies 8 MiB: the memory-bandwidth yardstick.
func BenchmarkBaselineCopy(b *testing.B) {
	src := make([]byte, 8*benchValues)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
}

// BenchmarkBaselineReferenceUnpack is §7.3's reference loop, value by
// value, on the same int64 page as BenchmarkDecodeBitpackedInt64.
func BenchmarkBaselineReferenceUnpack(b *testing.B) {
	p := benchInt64(b)
	out := make([]uint64, 1024)
	words := make([]uint64, 1024)
	b.SetBytes(p.out)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range p.chunks {
			buf := c.Buffers[0]
			w := binary.LittleEndian.Uint64(buf)
			for k := uint64(0); k < w*16; k++ {
				words[k] = binary.LittleEndian.Uint64(buf[8+8*k:])
			}
			for lane := uint64(0); lane < 16; lane++ {
				for row := uint64(0); row < 64; row++ {
					bit := row * w
					k, s := bit/64, bit%64
					v := words[k*16+lane] >> s
					if s+w > 64 {
						v |= words[(k+1)*16+lane] << (64 - s)
					}
					if w < 64 {
						v &= 1<<w - 1
					}
					out[uint64(fastlanesOrder[row/8])*16+(row%8)*128+lane] = v
				}
			}
		}
	}
}

// Encode throughput (MB/s of input) of the writer's choices, against the
// copy baseline: bit-packing an int64 page, FSST-compressing a text page.
func BenchmarkEncodeBitpackInt64(b *testing.B) {
	data := make([]byte, 8*benchValues)
	for i := 0; i < benchValues; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(i)*3)
	}
	blk := Block{Kind: Fixed, Num: benchValues, Bits: 64, Data: data}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := EncodeMiniBlock(blk, EncodeOptions{Minor: 2}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeFSSTUtf8(b *testing.B) {
	p := benchText(b)
	// Rebuild the plain page from the decoded chunks.
	dc := NewDecoder(Limits{})
	var blk Block
	blk.Kind, blk.OffsetBits = Variable, 64
	offs := []byte{0, 0, 0, 0, 0, 0, 0, 0}
	for _, c := range p.chunks {
		v, err := dc.MiniBlock(p.enc, c.Buffers, c.N)
		if err != nil {
			b.Fatal(err)
		}
		for i := uint64(0); i < v.Num; i++ {
			blk.Data = append(blk.Data, v.Value(i)...)
			offs = binary.LittleEndian.AppendUint64(offs, uint64(len(blk.Data)))
		}
		blk.Num += v.Num
	}
	blk.Offsets = offs
	b.SetBytes(int64(len(blk.Data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		enc, _, err := EncodeMiniBlock(blk, EncodeOptions{Minor: 2})
		if err != nil || enc.GetFsst() == nil {
			b.Fatal(err)
		}
	}
}
