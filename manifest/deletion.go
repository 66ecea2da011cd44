package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// Deletion files (lance-table-format.md §4.7) list the row offsets of a
// fragment that are deleted. Two formats exist:
//
//   - .arrow (DeletionFile.ARROW_ARRAY): an Arrow IPC file with one
//     non-nullable column "row_id" of type UInt32 (Int32 accepted on read),
//     body compressed with ZSTD by current writers;
//   - .bin (DeletionFile.BITMAP): a 32-bit Roaring bitmap in the portable
//     serialization (cookies 12346 / 12347).

// BitmapThreshold is the largest number of deleted rows EncodeDeletionFile
// writes as an .arrow file; larger sets are written as .bin bitmaps, as
// Lance does (a 7000-row delete gives .bin, small deletes .arrow).
const BitmapThreshold = 5000

// MaxArrowDeletionAlloc bounds the memory decodeDeletionArrow may allocate
// while decoding one .arrow deletion file (decompressed buffers included):
// 64 MiB, i.e. 16 Mi row ids, far above the BitmapThreshold writers use.
const MaxArrowDeletionAlloc = 64 << 20

// DecodeDeletionFile decodes a deletion file of the given type into the set
// of deleted row offsets. name is used in error messages; every decoding
// failure is a *FormatError matching ErrCorrupt.
func DecodeDeletionFile(name string, typ pb.DeletionFile_DeletionFileType, data []byte) (*roaring.Bitmap, error) {
	switch typ {
	case pb.DeletionFile_ARROW_ARRAY:
		return decodeDeletionArrow(name, data)
	case pb.DeletionFile_BITMAP:
		return DecodeRoaring32(name, data)
	}
	return nil, formatErr(name, 0, "Unknown deletion file type %d", int32(typ))
}

// EncodeDeletionFile encodes deleted row offsets the way Lance chooses:
// up to BitmapThreshold rows as .arrow, more as .bin. An empty set is an
// error: a deletion file never records zero deleted rows (spec §9 trap 2).
func EncodeDeletionFile(rows *roaring.Bitmap) (pb.DeletionFile_DeletionFileType, []byte, error) {
	if rows == nil || rows.IsEmpty() {
		return 0, nil, errors.New("manifest: refusing to encode an empty deletion file")
	}
	if rows.GetCardinality() <= BitmapThreshold {
		data, err := encodeDeletionArrow(rows)
		return pb.DeletionFile_ARROW_ARRAY, data, err
	}
	data, err := EncodeRoaring32(rows)
	return pb.DeletionFile_BITMAP, data, err
}

// ---- .bin: portable Roaring32 ----

const (
	roaringCookieNoRuns = 12346
	roaringCookieRuns   = 12347
	roaringNoOffsetMax  = 4 // with runs, offsets are written only for >= 4 containers
	roaringArrayMax     = 4096
	roaringBitmapBytes  = 8192
)

// DecodeRoaring32 decodes and validates a portable 32-bit Roaring bitmap:
// a .bin deletion file, or an index fragment bitmap. The whole structure is
// validated before anything is allocated from it: container count ≤ 65536,
// keys strictly increasing, every container inside the data, array values
// strictly increasing, runs ordered, non-overlapping and within 16 bits,
// bitmap popcounts equal to the declared cardinality, and no trailing bytes.
func DecodeRoaring32(name string, data []byte) (*roaring.Bitmap, error) {
	n := len(data)
	u16 := func(off int) uint32 { return uint32(binary.LittleEndian.Uint16(data[off:])) }
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(data[off:]) }
	if n < 4 {
		return nil, formatErr(name, 0, "roaring bitmap: %d bytes, too short for the cookie", n)
	}
	pos := 4
	cookie := u32(0)
	var size int
	var runBits []byte
	hasOffsets := true
	switch {
	case cookie&0xffff == roaringCookieRuns:
		size = int(cookie>>16) + 1
		nb := (size + 7) / 8
		if n-pos < nb {
			return nil, formatErr(name, int64(pos), "roaring bitmap: run-container bitset of %d bytes runs past the end (%d bytes)", nb, n)
		}
		runBits = data[pos : pos+nb]
		pos += nb
		hasOffsets = size >= roaringNoOffsetMax
	case cookie == roaringCookieNoRuns:
		if n-pos < 4 {
			return nil, formatErr(name, int64(pos), "roaring bitmap: container count runs past the end")
		}
		c := u32(pos)
		if c > 1<<16 {
			return nil, formatErr(name, int64(pos), "roaring bitmap: %d containers, more than 65536", c)
		}
		size = int(c)
		pos += 4
	default:
		return nil, formatErr(name, 0, "roaring bitmap: unknown cookie %d (want %d or %d)", cookie, roaringCookieNoRuns, roaringCookieRuns)
	}
	headerLen := 4 * size
	if hasOffsets {
		headerLen += 4 * size
	}
	if n-pos < headerLen {
		return nil, formatErr(name, int64(pos), "roaring bitmap: header for %d containers runs past the end (%d bytes)", size, n)
	}
	desc := pos
	pos += 4 * size
	offsets := pos
	if hasOffsets {
		pos += 4 * size
	}
	isRun := func(i int) bool { return runBits != nil && runBits[i/8]&(1<<(i%8)) != 0 }
	rb := roaring.New()
	prevKey := -1
	vals := make([]uint32, 0, 64)
	for i := 0; i < size; i++ {
		key := int(u16(desc + 4*i))
		card := int(u16(desc+4*i+2)) + 1
		if key <= prevKey {
			return nil, formatErr(name, int64(desc+4*i), "roaring bitmap: container %d key %d is not above the previous key %d", i, key, prevKey)
		}
		prevKey = key
		if hasOffsets && int(u32(offsets+4*i)) != pos {
			return nil, formatErr(name, int64(offsets+4*i), "roaring bitmap: container %d offset %d, but it starts at %d", i, u32(offsets+4*i), pos)
		}
		high := uint32(key) << 16
		switch {
		case isRun(i):
			if n-pos < 2 {
				return nil, formatErr(name, int64(pos), "roaring bitmap: run count of container %d runs past the end", i)
			}
			nruns := int(u16(pos))
			pos += 2
			if n-pos < 4*nruns {
				return nil, formatErr(name, int64(pos), "roaring bitmap: %d runs of container %d run past the end", nruns, i)
			}
			total, next := 0, 0
			for r := 0; r < nruns; r++ {
				start, length := int(u16(pos)), int(u16(pos+2))+1
				if start < next || start+length > 1<<16 {
					return nil, formatErr(name, int64(pos), "roaring bitmap: run %d of container %d [%d, +%d) overlaps or leaves the container", r, i, start, length)
				}
				next = start + length
				total += length
				rb.AddRange(uint64(high)+uint64(start), uint64(high)+uint64(start+length))
				pos += 4
			}
			if total != card {
				return nil, formatErr(name, int64(desc+4*i), "roaring bitmap: run container %d holds %d values, header says %d", i, total, card)
			}
		case card > roaringArrayMax:
			if n-pos < roaringBitmapBytes {
				return nil, formatErr(name, int64(pos), "roaring bitmap: bitmap container %d runs past the end", i)
			}
			got := 0
			vals = vals[:0]
			for w := 0; w < roaringBitmapBytes/8; w++ {
				word := binary.LittleEndian.Uint64(data[pos+8*w:])
				got += bits.OnesCount64(word)
				for word != 0 {
					b := bits.TrailingZeros64(word)
					vals = append(vals, high|uint32(64*w+b))
					word &= word - 1
				}
			}
			if got != card {
				return nil, formatErr(name, int64(pos), "roaring bitmap: bitmap container %d has %d bits set, header says %d", i, got, card)
			}
			rb.AddMany(vals)
			pos += roaringBitmapBytes
		default:
			if n-pos < 2*card {
				return nil, formatErr(name, int64(pos), "roaring bitmap: array container %d (%d values) runs past the end", i, card)
			}
			vals = vals[:0]
			prev := -1
			for j := 0; j < card; j++ {
				v := int(u16(pos + 2*j))
				if v <= prev {
					return nil, formatErr(name, int64(pos+2*j), "roaring bitmap: array container %d is not strictly increasing", i)
				}
				prev = v
				vals = append(vals, high|uint32(v))
			}
			rb.AddMany(vals)
			pos += 2 * card
		}
	}
	if pos != n {
		return nil, formatErr(name, int64(pos), "roaring bitmap: %d trailing bytes after the last container", n-pos)
	}
	return rb, nil
}

// EncodeRoaring32 encodes rows as a .bin deletion file: the portable
// Roaring32 serialization (cookie 12346) with array containers (≤ 4096
// values) and bitmap containers only, never run containers (like Lance's
// writer), so every Roaring reader accepts it.
func EncodeRoaring32(rows *roaring.Bitmap) ([]byte, error) {
	type container struct {
		key  uint16
		vals []uint16
	}
	var cs []container
	it := rows.ManyIterator()
	buf := make([]uint32, 4096)
	for {
		k := it.NextMany(buf)
		if k == 0 {
			break
		}
		for _, v := range buf[:k] {
			hi := uint16(v >> 16)
			if len(cs) == 0 || cs[len(cs)-1].key != hi {
				cs = append(cs, container{key: hi})
			}
			c := &cs[len(cs)-1]
			c.vals = append(c.vals, uint16(v))
		}
	}
	size := 8 + 8*len(cs)
	for _, c := range cs {
		if len(c.vals) > roaringArrayMax {
			size += roaringBitmapBytes
		} else {
			size += 2 * len(c.vals)
		}
	}
	out := make([]byte, 0, size)
	out = binary.LittleEndian.AppendUint32(out, roaringCookieNoRuns)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(cs)))
	for _, c := range cs {
		out = binary.LittleEndian.AppendUint16(out, c.key)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(c.vals)-1))
	}
	off := 8 + 8*len(cs)
	for _, c := range cs {
		out = binary.LittleEndian.AppendUint32(out, uint32(off))
		if len(c.vals) > roaringArrayMax {
			off += roaringBitmapBytes
		} else {
			off += 2 * len(c.vals)
		}
	}
	for _, c := range cs {
		if len(c.vals) > roaringArrayMax {
			var words [roaringBitmapBytes / 8]uint64
			for _, v := range c.vals {
				words[v/64] |= 1 << (v % 64)
			}
			for _, w := range words {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
			continue
		}
		for _, v := range c.vals {
			out = binary.LittleEndian.AppendUint16(out, v)
		}
	}
	return out, nil
}

// ---- .arrow: Arrow IPC file ----

// encodeDeletionArrow encodes rows as a .arrow deletion file the way Lance
// writes one: an Arrow IPC file, one record batch, one non-nullable UInt32
// column "row_id" holding the offsets in ascending order, body compressed
// with ZSTD.
func encodeDeletionArrow(rows *roaring.Bitmap) ([]byte, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Uint32}}, nil)
	mem := memory.NewGoAllocator()
	b := array.NewUint32Builder(mem)
	defer b.Release()
	b.AppendValues(rows.ToArray(), nil)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	var out bytes.Buffer
	w, err := ipc.NewFileWriter(&out, ipc.WithSchema(schema), ipc.WithAllocator(mem), ipc.WithZstd())
	if err != nil {
		return nil, fmt.Errorf("manifest: arrow deletion writer: %w", err)
	}
	if err := w.Write(rec); err != nil {
		return nil, fmt.Errorf("manifest: write arrow deletion file: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("manifest: close arrow deletion file: %w", err)
	}
	return out.Bytes(), nil
}

// ReadDeletionFile reads and decodes the deletion file at key in b.
func ReadDeletionFile(ctx context.Context, b *blob.Bucket, key string, typ pb.DeletionFile_DeletionFileType) (*roaring.Bitmap, error) {
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("deletion file %s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("read deletion file %s: %w", key, err)
	}
	return DecodeDeletionFile(key, typ, data)
}
