package indexfile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
	"gocloud.dev/blob"
	"google.golang.org/protobuf/encoding/protowire"
)

// ErrCorrupt matches (errors.Is) every error caused by bytes that are not
// a valid index file.
var ErrCorrupt = errors.New("corrupt index file")

// ErrUnsupported matches errors for index files whose fragments Lance 12
// itself cannot work out (its recompute fails or panics on them).
var ErrUnsupported = errors.New("Lance 12 cannot recompute this index's fragment bitmap")

// FormatError names what is wrong in an index file and where.
type FormatError struct {
	File   string
	Offset int64
	Reason string
	Err    error
}

func (e *FormatError) Error() string {
	msg := fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrCorrupt.
func (e *FormatError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the underlying decoder error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError says why Lance 12 cannot recompute the bitmap of an index.
type UnsupportedError struct {
	File   string
	Reason string
}

func (e *UnsupportedError) Error() string { return e.File + ": " + e.Reason }

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// FooterSize is the size of the footer every index.idx ends with.
const FooterSize = 16

// MaxMetadata bounds the Index protobuf of a legacy file (the IVF
// centroids and the PQ codebook travel inside it).
const MaxMetadata = 64 << 20

// rowIDChunk is how many row ids are read at once (512 KiB).
const rowIDChunk = 64 << 10

// Footer is the 16-byte tail of an index.idx file.
type Footer struct {
	MetadataPos  uint64
	Major, Minor uint16
}

// Legacy reports whether the footer is of the legacy (protobuf) vector
// index format, 0.0 or 0.1; Lance reads 0.2 as IVF_HNSW in a v1 Lance
// file and 0.3 / 2.x as a Lance v2 index file.
func (f Footer) Legacy() bool { return f.Major == 0 && f.Minor <= 1 }

// ParseFooter decodes the last FooterSize bytes of a file.
func ParseFooter(file string, tail []byte, size int64) (Footer, error) {
	if len(tail) != FooterSize || size < FooterSize {
		return Footer{}, &FormatError{File: file, Reason: fmt.Sprintf("%d bytes is too short for the index footer", size)}
	}
	if string(tail[12:]) != "LANC" {
		return Footer{}, &FormatError{File: file, Offset: size - 4, Reason: "magic number does not match"}
	}
	return Footer{
		MetadataPos: binary.LittleEndian.Uint64(tail),
		Major:       binary.LittleEndian.Uint16(tail[8:]),
		Minor:       binary.LittleEndian.Uint16(tail[10:]),
	}, nil
}

// Partition is one IVF partition of a legacy index: the byte offset of
// its PQ codes and its number of rows.
type Partition struct {
	Offset uint64
	Rows   uint32
}

// LegacyVector is what a legacy index.idx says about itself.
type LegacyVector struct {
	Name           string
	Columns        []string
	DatasetVersion uint64
	// Stages names the stages in file order: "Flat", "IVF", "PQ",
	// "Transform", "DiskANN" ("" for a stage with no kind set).
	Stages []string
	// MetricType is VectorIndex.metric_type (0 L2, 1 cosine, 2 dot, 3
	// hamming).
	MetricType uint32
	// PQ is the last PQ stage of the list (nil without one).
	PQ *PQStage
	// NumSubVectors of the PQ stage Lance opens: the bytes of one row's PQ
	// code. Set, like Partitions, only when the stages form an index Lance
	// can open (FragmentsSupported is nil).
	NumSubVectors uint32
	// Partitions Lance visits when it recomputes the fragments.
	Partitions []Partition
	// FragmentsSupported is nil when Lance can open the index and read its
	// row ids, else an error matching ErrUnsupported saying why not.
	FragmentsSupported error
}

// PQStage is what a PQ stage says about the codes.
type PQStage struct {
	NumBits, NumSubVectors uint32
}

// readerAt reads ranges of a blob object under a context.
type readerAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
}

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	rr, err := r.bucket.NewRangeReader(r.ctx, r.key, off, int64(len(p)), nil)
	if err != nil {
		return 0, err
	}
	defer rr.Close()
	return io.ReadFull(rr, p)
}

// OpenFooter reads the footer of the index file at key.
func OpenFooter(ctx context.Context, bucket *blob.Bucket, key string) (Footer, int64, error) {
	attrs, err := bucket.Attributes(ctx, key)
	if err != nil {
		return Footer{}, 0, err
	}
	f, err := readFooter(readerAt{ctx, bucket, key}, attrs.Size, key)
	return f, attrs.Size, err
}

// LegacyFragments reads the legacy vector index at key (size bytes) and
// returns the fragment ids of its row ids, as Lance's commit recomputes
// them, and the file's description.
func LegacyFragments(ctx context.Context, bucket *blob.Bucket, key string, size int64) (*roaring.Bitmap, *LegacyVector, error) {
	return ReadLegacyFragments(readerAt{ctx, bucket, key}, size, key)
}

func readFooter(r io.ReaderAt, size int64, file string) (Footer, error) {
	if size < FooterSize {
		return Footer{}, &FormatError{File: file, Reason: fmt.Sprintf("%d bytes is too short for the index footer", size)}
	}
	tail := make([]byte, FooterSize)
	if _, err := r.ReadAt(tail, size-FooterSize); err != nil {
		return Footer{}, fmt.Errorf("%s: read footer: %w", file, err)
	}
	return ParseFooter(file, tail, size)
}

// ReadLegacyMetadata reads the footer and the Index message of the legacy
// vector index at key (size bytes), without its partitions.
func ReadLegacyMetadata(ctx context.Context, bucket *blob.Bucket, key string, size int64) (*LegacyVector, error) {
	return readLegacyMetadata(readerAt{ctx, bucket, key}, size, key)
}

// ReadLegacyFragments is LegacyFragments over any io.ReaderAt; file names
// the bytes in errors.
func ReadLegacyFragments(r io.ReaderAt, size int64, file string) (*roaring.Bitmap, *LegacyVector, error) {
	lv, err := readLegacyMetadata(r, size, file)
	if err != nil {
		return nil, nil, err
	}
	if lv.FragmentsSupported != nil {
		return nil, nil, lv.FragmentsSupported
	}
	bm, err := lv.fragments(r, uint64(size), file)
	if err != nil {
		return nil, nil, err
	}
	return bm, lv, nil
}

func readLegacyMetadata(r io.ReaderAt, size int64, file string) (*LegacyVector, error) {
	foot, err := readFooter(r, size, file)
	if err != nil {
		return nil, err
	}
	if !foot.Legacy() {
		return nil, &UnsupportedError{File: file, Reason: fmt.Sprintf("index file version %d.%d is not the legacy vector index format; Lance 12 does not recompute the fragments of IVF_HNSW (0.2) or Lance v2 (0.3, 2.x) vector indices", foot.Major, foot.Minor)}
	}
	end := uint64(size - FooterSize)
	pos := foot.MetadataPos
	if pos > end || end-pos < 4 {
		return nil, &FormatError{File: file, Offset: size - FooterSize, Reason: fmt.Sprintf("metadata position %d is outside the file", pos)}
	}
	var lenb [4]byte
	if _, err := r.ReadAt(lenb[:], int64(pos)); err != nil {
		return nil, fmt.Errorf("%s: read metadata length: %w", file, err)
	}
	n := uint64(binary.LittleEndian.Uint32(lenb[:]))
	// The message may run into the footer (Lance reads it from the last
	// block), but not past the end of the file.
	if n > MaxMetadata || n > uint64(size)-pos-4 {
		return nil, &FormatError{File: file, Offset: int64(pos), Reason: fmt.Sprintf("metadata length %d does not fit in the file", n)}
	}
	msg := make([]byte, n)
	if _, err := r.ReadAt(msg, int64(pos)+4); err != nil {
		return nil, fmt.Errorf("%s: read metadata: %w", file, err)
	}
	return ParseLegacyMetadata(file, int64(pos)+4, msg)
}

// fragments reads each partition's row ids and collects their fragment ids.
func (lv *LegacyVector) fragments(r io.ReaderAt, size uint64, file string) (*roaring.Bitmap, error) {
	bm := roaring.New()
	code := uint64(lv.NumSubVectors)
	var buf []byte
	for i, p := range lv.Partitions {
		rows := uint64(p.Rows)
		// code*rows + 8*rows cannot overflow: both factors are < 2^32.
		start := p.Offset + code*rows
		if start < p.Offset || start > size || size-start < 8*rows {
			return nil, &FormatError{File: file, Offset: int64(min(p.Offset, math.MaxInt64)), Reason: fmt.Sprintf("partition %d (%d rows at offset %d, %d code bytes a row) runs past the end of the file (%d bytes)", i, rows, p.Offset, code, size)}
		}
		for done := uint64(0); done < rows; {
			k := min(rows-done, rowIDChunk)
			if uint64(cap(buf)) < 8*k {
				buf = make([]byte, 8*k)
			}
			b := buf[:8*k]
			if _, err := r.ReadAt(b, int64(start+8*done)); err != nil {
				return nil, fmt.Errorf("%s: read row ids of partition %d: %w", file, i, err)
			}
			for j := 0; j < len(b); j += 8 {
				bm.Add(uint32(binary.LittleEndian.Uint64(b[j:]) >> 32))
			}
			done += k
		}
	}
	return bm, nil
}

// ParseLegacyMetadata decodes the Index protobuf of a legacy index file
// (at offset off of file) and works out the partitions Lance visits.
func ParseLegacyMetadata(file string, off int64, msg []byte) (*LegacyVector, error) {
	bad := func(reason string, err error) error {
		return &FormatError{File: file, Offset: off, Reason: "legacy index metadata: " + reason, Err: err}
	}
	lv := &LegacyVector{}
	var vec []byte
	hasVec := false
	err := walk(msg, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			lv.Name = string(v)
		case num == 2 && typ == protowire.BytesType:
			lv.Columns = append(lv.Columns, string(v))
		case num == 3 && typ == protowire.VarintType:
			lv.DatasetVersion = x
		case num == 5 && typ == protowire.BytesType:
			vec, hasVec = v, true
		}
		return nil
	})
	if err != nil {
		return nil, bad("Index message", err)
	}
	if !hasVec {
		lv.FragmentsSupported = &UnsupportedError{File: file, Reason: "the Index message has no vector_index implementation (Lance: missing implementation field)"}
		return lv, nil
	}
	var stages [][]byte
	if err := walk(vec, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 3 && typ == protowire.BytesType:
			stages = append(stages, v)
		case num == 4 && typ == protowire.VarintType:
			lv.MetricType = uint32(x)
		}
		return nil
	}); err != nil {
		return nil, bad("VectorIndex message", err)
	}
	// A stage is a oneof: the last kind set wins.
	kinds := make([]protowire.Number, len(stages))
	bodies := make([][]byte, len(stages))
	for i, s := range stages {
		if err := walk(s, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if num >= 1 && num <= 5 && typ == protowire.BytesType {
				kinds[i], bodies[i] = num, v
			}
			return nil
		}); err != nil {
			return nil, bad(fmt.Sprintf("stage %d", i), err)
		}
		lv.Stages = append(lv.Stages, [...]string{"", "Flat", "IVF", "PQ", "Transform", "DiskANN"}[kinds[i]])
		if kinds[i] == 3 {
			pq := &PQStage{}
			if err := walk(bodies[i], func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.VarintType:
					pq.NumBits = uint32(x)
				case num == 2 && typ == protowire.VarintType:
					pq.NumSubVectors = uint32(x)
				}
				return nil
			}); err != nil {
				return nil, bad("PQ stage", err)
			}
			lv.PQ = pq
		}
	}
	if err := lv.layout(kinds, bodies, file); err != nil {
		if !errors.Is(err, ErrUnsupported) {
			return nil, bad("IVF stage", err)
		}
		lv.FragmentsSupported = err
	}
	return lv, nil
}

// layout works out, as Lance opens the stages, the PQ code size and the
// partitions whose row ids Lance reads; an index Lance cannot open gives
// an error matching ErrUnsupported.
func (lv *LegacyVector) layout(kinds []protowire.Number, bodies [][]byte, file string) error {
	// Lance builds the index from the last stage back: a PQ stage must come
	// first (i.e. be last in the file), an IVF or transform stage needs a
	// stage after it, DiskANN is refused, flat and empty stages are skipped.
	unsupported := func(reason string) error {
		return &UnsupportedError{File: file, Reason: fmt.Sprintf("vector index stages %v: %s", lv.Stages, reason)}
	}
	var top string // "", "PQ", "IVF"
	var ivf []byte
	ivfOverIVF := false
	for i := len(kinds) - 1; i >= 0; i-- {
		switch kinds[i] {
		case 4:
			if top == "" {
				return unsupported("a transform stage with nothing after it")
			}
		case 2:
			if top == "" {
				return unsupported("an IVF stage with nothing after it")
			}
			if top == "IVF" {
				ivfOverIVF = true
			}
			top, ivf = "IVF", bodies[i]
		case 3:
			if top != "" {
				return unsupported("a PQ stage that is not the last stage")
			}
			top = "PQ"
			if err := walk(bodies[i], func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if num == 2 && typ == protowire.VarintType {
					lv.NumSubVectors = uint32(x)
				}
				return nil
			}); err != nil {
				return err
			}
		case 5:
			return unsupported("DiskANN support is removed from Lance")
		}
	}
	switch {
	case top == "":
		return unsupported("no IVF or PQ stage")
	case top == "PQ":
		return unsupported("a PQ stage without IVF (Lance: PQ is not initialized)")
	case ivfOverIVF:
		return unsupported("an IVF stage over another IVF stage")
	}
	parts, err := ivfPartitions(ivf)
	if err != nil {
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			ue.File = file
		}
		return err
	}
	lv.Partitions = parts
	return nil
}

// tensorElemSize is the byte size of each lance.index.pb.Tensor data type.
var tensorElemSize = [...]uint64{2, 2, 4, 8, 1, 2, 4, 8}

// ivfPartitions decodes an IVF stage into the partitions Lance visits: as
// many as the centroids have rows (the tensor's first dimension, or the
// deprecated float list divided into one vector a length), else one a
// length; offsets are the recorded ones, or running sums of the lengths
// when none are recorded.
func ivfPartitions(ivf []byte) ([]Partition, error) {
	var offsets []uint64
	var lengths []uint32
	var nCentroids uint64
	var tensor []byte
	hasTensor := false
	err := walk(ivf, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1: // repeated float centroids (deprecated)
			switch typ {
			case protowire.BytesType:
				if len(v)%4 != 0 {
					return errors.New("packed centroids are not whole floats")
				}
				nCentroids += uint64(len(v) / 4)
			case protowire.Fixed32Type:
				nCentroids++
			}
		case 2: // repeated uint64 offsets
			switch typ {
			case protowire.BytesType:
				for len(v) > 0 {
					o, n := protowire.ConsumeVarint(v)
					if n < 0 {
						return protowire.ParseError(n)
					}
					offsets, v = append(offsets, o), v[n:]
				}
			case protowire.VarintType:
				offsets = append(offsets, x)
			}
		case 3: // repeated uint32 lengths
			switch typ {
			case protowire.BytesType:
				for len(v) > 0 {
					l, n := protowire.ConsumeVarint(v)
					if n < 0 {
						return protowire.ParseError(n)
					}
					lengths, v = append(lengths, uint32(l)), v[n:]
				}
			case protowire.VarintType:
				lengths = append(lengths, uint32(x))
			}
		case 4:
			if typ == protowire.BytesType {
				tensor, hasTensor = v, true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(offsets) == 0 {
		var sum uint64
		for _, l := range lengths {
			offsets = append(offsets, sum)
			sum += uint64(l)
		}
	}
	if len(offsets) != len(lengths) {
		return nil, &UnsupportedError{Reason: fmt.Sprintf("IVF stage has %d offsets and %d lengths (Lance asserts they agree)", len(offsets), len(lengths))}
	}
	n := uint64(len(lengths))
	switch {
	case hasTensor:
		rows, err := tensorRows(tensor)
		if err != nil {
			return nil, err
		}
		n = rows
	case nCentroids > 0:
		if len(lengths) == 0 {
			return nil, &UnsupportedError{Reason: "IVF stage has centroids but no partition lengths"}
		}
		dim := nCentroids / uint64(len(lengths))
		if dim == 0 || nCentroids%dim != 0 {
			return nil, &UnsupportedError{Reason: fmt.Sprintf("IVF stage: %d centroid floats do not form vectors for %d partitions", nCentroids, len(lengths))}
		}
		n = nCentroids / dim
	}
	if n > uint64(len(lengths)) {
		return nil, &UnsupportedError{Reason: fmt.Sprintf("IVF stage has %d centroids but %d partitions", n, len(lengths))}
	}
	parts := make([]Partition, n)
	for i := range parts {
		parts[i] = Partition{Offset: offsets[i], Rows: lengths[i]}
	}
	return parts, nil
}

// tensorRows checks a Tensor as Lance turns it into vectors (2-D shape,
// known data type, enough data) and returns its number of rows.
func tensorRows(t []byte) (uint64, error) {
	var dtype uint64
	var shape []uint64
	var data uint64
	err := walk(t, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			dtype = x
		case num == 2 && typ == protowire.BytesType:
			for len(v) > 0 {
				s, n := protowire.ConsumeVarint(v)
				if n < 0 {
					return protowire.ParseError(n)
				}
				shape, v = append(shape, uint64(uint32(s))), v[n:]
			}
		case num == 2 && typ == protowire.VarintType:
			shape = append(shape, uint64(uint32(x)))
		case num == 3 && typ == protowire.BytesType:
			data = uint64(len(v))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(shape) != 2 {
		return 0, &UnsupportedError{Reason: fmt.Sprintf("IVF centroids tensor shape %v is not 2-D", shape)}
	}
	if dtype >= uint64(len(tensorElemSize)) {
		return 0, &UnsupportedError{Reason: fmt.Sprintf("IVF centroids tensor data type %d is unknown", dtype)}
	}
	hi, elems := bits.Mul64(shape[0], shape[1])
	hi2, need := bits.Mul64(elems, tensorElemSize[dtype])
	if hi != 0 || hi2 != 0 || data < need {
		return 0, &UnsupportedError{Reason: fmt.Sprintf("IVF centroids tensor %v holds %d bytes, too few for its shape", shape, data)}
	}
	if shape[1] == 0 {
		return 0, nil
	}
	return shape[0], nil
}

// walk calls fn for every field of a protobuf message: v is the payload of
// a length-delimited field, x the value of a varint or fixed field.
func walk(msg []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
