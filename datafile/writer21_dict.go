package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// dictionaryFixed21 dictionary-encodes the fixed-width values of a page of
// an Arrow dictionary column (integers, floats, booleans as values). Lance
// 12 reads such a column only from dictionary pages: plain values fail
// with "Value data for Dictionary(Int32, Int64) should contain 1 child data
// array(s)" (tests/compat TestUsToLance21_R_W1_W14_EveryTypeReadByLance12).
// As Lance 12 writes them (observed on tables the peer creates): a
// mini-block page whose values are u32 indices into the page dictionary,
// the dictionary the distinct values as flat(bits) — in 2.2+ framed as
// general(lz4) — and num_dictionary_items their count. Null rows travel in
// the def levels; their zero slots index a value like any other.
func dictionaryFixed21(b codec.Block, nulls []bool, keyBits int, signed bool, eo codec.EncodeOptions) (*dict21, *pb21.CompressiveEncoding, []codec.Chunk, error) {
	if b.Kind != codec.Fixed {
		return nil, nil, nil, fmt.Errorf("dictionary of %s values", b.Kind)
	}
	n := int(b.Num)
	var data []byte
	if b.Bits == 1 {
		// Booleans: one byte-aligned flat(1) dictionary of the distinct bits.
		return dictionaryBool21(b, nulls, keyBits, signed, eo)
	}
	w := int(b.Bits / 8)
	if b.Bits%8 != 0 || w == 0 || len(b.Data) < n*w {
		return nil, nil, nil, fmt.Errorf("%d values of %d bits in %d bytes", n, b.Bits, len(b.Data))
	}
	ids := make(map[string]uint32)
	idx := make([]byte, 0, 4*n)
	for i := 0; i < n; i++ {
		if nulls != nil && nulls[i] {
			// A null row's slot indexes item 0 (def levels carry the null;
			// Lance 12 adds no item for it either).
			idx = binary.LittleEndian.AppendUint32(idx, 0)
			continue
		}
		v := b.Data[i*w : (i+1)*w]
		id, ok := ids[string(v)]
		if !ok {
			id = uint32(len(ids))
			ids[string(v)] = id
			data = append(data, v...)
		}
		idx = binary.LittleEndian.AppendUint32(idx, id)
	}
	if len(ids) == 0 {
		data = make([]byte, w) // every slot null: one zero item
		ids[""] = 0
	}
	return finishDict21(codec.Block{Kind: codec.Fixed, Num: uint64(len(ids)), Bits: b.Bits, Data: data}, idx, n, keyBits, signed, eo)
}

// dictionaryBool21 is dictionaryFixed21 for a bitmap of booleans.
func dictionaryBool21(b codec.Block, nulls []bool, keyBits int, signed bool, eo codec.EncodeOptions) (*dict21, *pb21.CompressiveEncoding, []codec.Chunk, error) {
	n := int(b.Num)
	if len(b.Data)*8 < n {
		return nil, nil, nil, fmt.Errorf("%d booleans in %d bytes", n, len(b.Data))
	}
	id := [2]int{-1, -1}
	var bits []byte
	items := 0
	idx := make([]byte, 0, 4*n)
	for i := 0; i < n; i++ {
		if nulls != nil && nulls[i] {
			idx = binary.LittleEndian.AppendUint32(idx, 0)
			continue
		}
		v := int(b.Data[i/8]>>(i%8)) & 1
		if id[v] < 0 {
			id[v] = items
			if items%8 == 0 {
				bits = append(bits, 0)
			}
			bits[items/8] |= byte(v) << (items % 8)
			items++
		}
		idx = binary.LittleEndian.AppendUint32(idx, uint32(id[v]))
	}
	if items == 0 {
		bits, items = []byte{0}, 1
	}
	return finishDict21(codec.Block{Kind: codec.Fixed, Num: uint64(items), Bits: 1, Data: bits}, idx, n, keyBits, signed, eo)
}

// finishDict21 encodes the dictionary block and the indices (given as u32,
// stored at the key type's width).
func finishDict21(db codec.Block, idx []byte, n, keyBits int, signed bool, eo codec.EncodeOptions) (*dict21, *pb21.CompressiveEncoding, []codec.Chunk, error) {
	denc, dbuf, err := codec.EncodeDictionary(db, eo)
	if err != nil {
		return nil, nil, nil, err
	}
	if idx, err = narrowIndices(idx, int(db.Num), keyBits, signed); err != nil {
		return nil, nil, nil, err
	}
	ienc, cs, err := codec.EncodeMiniBlock(codec.Block{Kind: codec.Fixed, Num: uint64(n), Bits: uint64(keyBits), Data: idx}, eo)
	if err != nil {
		return nil, nil, nil, err
	}
	return &dict21{enc: denc, buf: dbuf, items: db.Num}, ienc, cs, nil
}

// narrowIndices rewrites u32 indices at keyBits (8, 16, 32 or 64) bits;
// items distinct values must fit the key type (2^(k-1) for signed keys,
// 2^k for unsigned ones, as Lance 12 stores them: a uint8 dictionary of
// 256 values keeps flat(8) indices).
//
// More distinct values than the key type holds can only come from batches
// whose Arrow dictionaries differ (one Arrow array never has more). Lance
// 12 then widens the page's indices to 32 bits (its encoder concatenates
// the batches and, on a key overflow, casts the keys to UInt32), which its
// own reader refuses for a narrower declared key type ("dictionary indices
// use 32 bits but the declared … key type uses …"); such a page is refused
// here instead (ErrInvalidData), before a file Lance cannot read exists.
func narrowIndices(idx []byte, items, keyBits int, signed bool) ([]byte, error) {
	if keyBits == 32 && signed {
		return idx, nil
	}
	capacity := uint64(1) << keyBits
	if signed {
		capacity >>= 1
	}
	if keyBits < 64 && uint64(items) > capacity {
		return nil, fmt.Errorf("the page has %d distinct dictionary values, more than %d-bit %s keys hold (%d); Lance 12 would widen the indices to 32 bits, which it cannot read back for this key type", items, keyBits, map[bool]string{true: "signed", false: "unsigned"}[signed], capacity)
	}
	if keyBits == 32 {
		return idx, nil
	}
	n := len(idx) / 4
	out := make([]byte, 0, n*keyBits/8)
	for i := 0; i < n; i++ {
		v := binary.LittleEndian.Uint32(idx[4*i:])
		switch keyBits {
		case 8:
			out = append(out, byte(v))
		case 16:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 64:
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		default:
			return nil, fmt.Errorf("dictionary keys of %d bits", keyBits)
		}
	}
	return out, nil
}

// logicalNull reports whether element i of a is null; for a dictionary
// array also when its key selects a null dictionary value (Arrow's logical
// null, which Lance 12 returns as null).
func logicalNull(a arrow.Array, i int) bool {
	// arrow-go's Null arrays have no bitmap, so IsNull is false for them.
	if a.IsNull(i) || a.DataType().ID() == arrow.NULL {
		return true
	}
	if d, ok := a.(*array.Dictionary); ok && d.Dictionary().NullN() > 0 {
		return d.Dictionary().IsNull(d.GetValueIndex(i))
	}
	return false
}

// mayHoldNulls reports whether a may hold logical nulls.
func mayHoldNulls(a arrow.Array) bool {
	if a.NullN() > 0 {
		return true
	}
	d, ok := a.(*array.Dictionary)
	return ok && d.Dictionary().NullN() > 0
}

// oneListChunk joins the flat index chunks of a dictionary page into the
// single chunk a page with lists has (rows never span chunks, spec 2.1 W9).
// The chunks were encoded without bit-packing or RLE, so each one's buffer
// is its raw indices.
func oneListChunk(cs []codec.Chunk, n int) (codec.Chunk, error) {
	var out codec.Chunk
	var b []byte
	for _, c := range cs {
		if len(c.Buffers) != 1 {
			return out, fmt.Errorf("dictionary index chunk of %d buffers", len(c.Buffers))
		}
		b = append(b, c.Buffers[0]...)
		out.N += c.N
	}
	if out.N != uint64(n) {
		return out, fmt.Errorf("dictionary index chunks hold %d of %d values", out.N, n)
	}
	out.Buffers = [][]byte{b}
	return out, nil
}
