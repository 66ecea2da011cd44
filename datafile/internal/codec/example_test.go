package codec_test

import (
	"encoding/binary"
	"fmt"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
)

// A page of small integers is bit-packed in 1024-value chunks; each chunk
// decodes back on its own.
func ExampleEncodeMiniBlock() {
	vals := make([]byte, 4*3000)
	for i := 0; i < 3000; i++ {
		binary.LittleEndian.PutUint32(vals[4*i:], uint32(i%1000))
	}
	enc, chunks, err := codec.EncodeMiniBlock(codec.Block{Kind: codec.Fixed, Num: 3000, Bits: 32, Data: vals}, codec.EncodeOptions{Minor: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("uncompressed bits:", enc.GetInlineBitpacking().GetUncompressedBitsPerValue(), "chunks:", len(chunks))
	dc := codec.NewDecoder(codec.Limits{})
	defer dc.Close()
	b, err := dc.MiniBlock(enc, chunks[2].Buffers, chunks[2].N)
	if err != nil {
		panic(err)
	}
	fmt.Println("chunk 2:", chunks[2].N, "values, bytes", len(chunks[2].Buffers[0]), "first", b.Uint(0), "last", b.Uint(b.Num-1))
	// Output:
	// uncompressed bits: 32 chunks: 3
	// chunk 2: 952 values, bytes 1284 first 48 last 999
}

// An FSST symbol table trained on a sample compresses and expands strings.
func ExampleTrainFSST() {
	sample := [][]byte{[]byte("index vector #1"), []byte("index vector #2"), []byte("index table #3")}
	t := codec.TrainFSST(sample)
	c := t.Encode(nil, []byte("index vector #9"))
	back, err := t.Decode(nil, c)
	fmt.Println(len(c) < 15, string(back), err)
	// Output: true index vector #9 <nil>
}
