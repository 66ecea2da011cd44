package datafile

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/datafile/internal/codec"
)

// valueSink accumulates the visible value slots of one leaf column of a
// 2.1+ file, across chunks, pages and full-zip items, in the physical shape
// the codec package decodes (spec §7): fixed-width values (bits 1 = bitmap),
// variable-width values (offsets + bytes), fixed-size lists (item validity +
// items) or packed structs (one sink per field). It converts to Arrow at the
// end (arrayData).
type valueSink struct {
	kind codec.Kind
	n    uint64 // value slots appended

	bits uint64 // fixed: bits per value (0 until the first block fixes it)
	data []byte // fixed values / variable bytes

	ow int    // variable: offset width in bytes (4; 8 for large types)
	ob []byte // variable: n+1 offsets into data, in the Arrow width

	dim      uint64       // fsl: items per value
	validity []byte       // fsl: item validity bitmap (nil = all valid so far)
	children []*valueSink // fsl: [items]; struct: one per field

	budget *budget
}

// newSink makes the sink for the leaf Arrow type dt.
func newSink(dt arrow.DataType, b *budget) (*valueSink, error) {
	s := &valueSink{budget: b}
	switch t := dt.(type) {
	case *arrow.NullType:
		s.kind = codec.Fixed
	case *arrow.BooleanType:
		s.kind, s.bits = codec.Fixed, 1
	case *arrow.StringType, *arrow.BinaryType:
		s.kind, s.ow, s.ob = codec.Variable, 4, make([]byte, 4)
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		s.kind, s.ow, s.ob = codec.Variable, 8, make([]byte, 8)
	case *arrow.DictionaryType:
		return newSink(t.ValueType, b)
	case *arrow.FixedSizeListType:
		c, err := newSink(t.Elem(), b)
		if err != nil {
			return nil, err
		}
		s.kind, s.dim, s.children = codec.List, uint64(max(t.Len(), 0)), []*valueSink{c}
	case *arrow.StructType:
		s.kind = codec.Struct
		for _, f := range t.Fields() {
			c, err := newSink(f.Type, b)
			if err != nil {
				return nil, err
			}
			s.children = append(s.children, c)
		}
	default:
		w, ok := fixedBits(dt)
		if !ok {
			return nil, fmt.Errorf("datafile: no 2.1+ value decoding for Arrow type %s: %w", dt, ErrUnsupported)
		}
		s.kind, s.bits = codec.Fixed, w
	}
	return s, nil
}

// fixedBits is the bit width of a fixed-width Arrow type.
func fixedBits(dt arrow.DataType) (uint64, bool) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return 1, true
	case *arrow.FixedSizeBinaryType:
		return uint64(t.ByteWidth) * 8, t.ByteWidth > 0
	case arrow.FixedWidthDataType:
		w := t.BitWidth()
		return uint64(w), w > 0 && w%8 == 0
	}
	return 0, false
}

func (s *valueSink) take(n uint64) error {
	if s.budget == nil {
		return nil
	}
	return s.budget.take(n, "decoded values")
}

// reserve grows the sink for about n more values of dataBytes bytes, so
// that pages append without repeated reallocation.
func (s *valueSink) reserve(n, dataBytes uint64) {
	const maxReserve = 1 << 28
	if s.kind == codec.Variable && n < maxReserve {
		s.ob = slices.Grow(s.ob, int(n)*s.ow)
	}
	if (s.kind == codec.Variable || s.kind == codec.Fixed) && dataBytes < maxReserve {
		s.data = slices.Grow(s.data, int(dataBytes))
	}
}

// appendBlock appends values [from, to) of a decoded block.
func (s *valueSink) appendBlock(b *codec.Block, from, to uint64) error {
	if from > to || to > b.Num {
		return fmt.Errorf("datafile: value slots [%d, %d) outside a decoded block of %d values: %w", from, to, b.Num, ErrMalformed)
	}
	n := to - from
	if n == 0 {
		return nil
	}
	if s.kind == codec.Fixed && s.bits == 0 { // null type: nothing stored
		s.n += n
		return nil
	}
	if b.Kind != s.kind {
		return fmt.Errorf("datafile: decoded %s values for a %s column: %w", b.Kind, s.kind, ErrMalformed)
	}
	switch s.kind {
	case codec.Fixed:
		if b.Bits != s.bits {
			return fmt.Errorf("datafile: decoded %d-bit values for a %d-bit column: %w", b.Bits, s.bits, ErrMalformed)
		}
		if s.bits == 1 {
			if uint64(len(b.Data))*8 < to {
				return fmt.Errorf("datafile: bitmap of %d bytes for %d values: %w", len(b.Data), to, ErrMalformed)
			}
			if err := s.take(n/8 + 1); err != nil {
				return err
			}
			s.data = appendBits(s.data, s.n, b.Data, from, n)
		} else {
			w := s.bits / 8
			if uint64(len(b.Data)) < to*w {
				return fmt.Errorf("datafile: %d bytes for %d values of %d bits: %w", len(b.Data), to, s.bits, ErrMalformed)
			}
			if err := s.take(n * w); err != nil {
				return err
			}
			s.data = append(s.data, b.Data[from*w:to*w]...)
		}
	case codec.Variable:
		if b.OffsetBits != 32 && b.OffsetBits != 64 {
			return fmt.Errorf("datafile: variable values with %d-bit offsets: %w", b.OffsetBits, ErrMalformed)
		}
		if uint64(len(b.Offsets)) < (b.Num+1)*(b.OffsetBits/8) {
			return fmt.Errorf("datafile: %d offset bytes for %d values: %w", len(b.Offsets), b.Num, ErrMalformed)
		}
		start, end := b.Offset(from), b.Offset(to)
		if start > end || end > uint64(len(b.Data)) {
			return fmt.Errorf("datafile: value bytes [%d, %d) outside a %d-byte buffer: %w", start, end, len(b.Data), ErrMalformed)
		}
		if err := s.take(end - start + n*uint64(s.ow)); err != nil {
			return err
		}
		if s.ow == 4 && uint64(len(s.data))+(end-start) > math.MaxInt32 {
			return fmt.Errorf("datafile: variable-width column of more than %d bytes exceeds 32-bit offsets: %w", math.MaxInt32, ErrUnsupported)
		}
		// New offset = old offset - start + len(data), in modular
		// arithmetic of the offset width (the results fit, checked above).
		shift := uint64(len(s.data)) - start
		at := len(s.ob)
		s.ob = slices.Grow(s.ob, int(n)*s.ow)[:at+int(n)*s.ow]
		dst := s.ob[at:]
		if b.OffsetBits == 32 && s.ow == 4 {
			src := b.Offsets[4*(from+1) : 4*(to+1)]
			prev, e, sh := uint32(start), uint32(end), uint32(shift)
			for k := 0; k < int(n); k++ {
				o := binary.LittleEndian.Uint32(src[4*k:])
				if o < prev || o > e {
					s.ob = s.ob[:at]
					return fmt.Errorf("datafile: offsets decrease or leave the buffer at value %d: %w", from+1+uint64(k), ErrMalformed)
				}
				prev = o
				binary.LittleEndian.PutUint32(dst[4*k:], o+sh)
			}
		} else {
			prev := start
			for k := uint64(0); k < n; k++ {
				o := b.Offset(from + 1 + k)
				if o < prev || o > end {
					s.ob = s.ob[:at]
					return fmt.Errorf("datafile: offsets decrease or leave the buffer at value %d: %w", from+1+k, ErrMalformed)
				}
				prev = o
				if s.ow == 4 {
					binary.LittleEndian.PutUint32(dst[4*k:], uint32(o+shift))
				} else {
					binary.LittleEndian.PutUint64(dst[8*k:], o+shift)
				}
			}
		}
		s.data = append(s.data, b.Data[start:end]...)
	case codec.List:
		if b.Dim != s.dim || len(b.Children) != 1 {
			return fmt.Errorf("datafile: fixed-size list of %d items for a column of %d: %w", b.Dim, s.dim, ErrMalformed)
		}
		if b.Validity != nil || s.validity != nil {
			if uint64(len(b.Validity))*8 < to*s.dim && b.Validity != nil {
				return fmt.Errorf("datafile: fixed-size list validity too short: %w", ErrMalformed)
			}
			if s.validity == nil {
				s.validity = appendOnes(nil, 0, s.n*s.dim)
			}
			if b.Validity != nil {
				s.validity = appendBits(s.validity, s.n*s.dim, b.Validity, from*s.dim, n*s.dim)
			} else {
				s.validity = appendOnes(s.validity, s.n*s.dim, n*s.dim)
			}
		}
		if err := s.children[0].appendBlock(&b.Children[0], from*s.dim, to*s.dim); err != nil {
			return err
		}
	case codec.Struct:
		if len(b.Children) != len(s.children) {
			return fmt.Errorf("datafile: packed struct of %d fields for a struct of %d: %w", len(b.Children), len(s.children), ErrMalformed)
		}
		for i, c := range s.children {
			if err := c.appendBlock(&b.Children[i], from, to); err != nil {
				return err
			}
		}
	}
	s.n += n
	return nil
}

// appendDict appends dict[idx[i]] for i in [from, to).
func (s *valueSink) appendDict(dict, idx *codec.Block, from, to uint64) error {
	if idx.Kind != codec.Fixed || (idx.Bits != 8 && idx.Bits != 16 && idx.Bits != 32 && idx.Bits != 64) {
		return fmt.Errorf("datafile: dictionary indices are %s of %d bits: %w", idx.Kind, idx.Bits, ErrMalformed)
	}
	if to > idx.Num || uint64(len(idx.Data)) < idx.Num*idx.Bits/8 {
		return fmt.Errorf("datafile: dictionary indices too short: %w", ErrMalformed)
	}
	if s.kind == codec.Fixed && s.bits == 0 {
		s.n += to - from
		return nil
	}
	for i := from; i < to; i++ {
		k := idx.Uint(i)
		if k >= dict.Num {
			if dict.Num == 0 {
				k = 0 // a null slot of an empty dictionary
				if err := s.appendZeros(1); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("datafile: dictionary index %d of a %d-item dictionary: %w", k, dict.Num, ErrMalformed)
		}
		if err := s.appendBlock(dict, k, k+1); err != nil {
			return err
		}
	}
	return nil
}

// appendZeros appends n filler slots (zero / empty / null).
func (s *valueSink) appendZeros(n uint64) error {
	if n == 0 {
		return nil
	}
	switch s.kind {
	case codec.Fixed:
		if s.bits == 1 {
			if err := s.take(n/8 + 1); err != nil {
				return err
			}
			s.data = appendZeroBits(s.data, s.n, n)
		} else if s.bits > 0 {
			w := s.bits / 8
			if err := s.take(mulSat(n, w)); err != nil {
				return err
			}
			s.data = append(s.data, make([]byte, n*w)...)
		}
	case codec.Variable:
		if err := s.take(mulSat(n, uint64(s.ow))); err != nil {
			return err
		}
		last := s.ob[len(s.ob)-s.ow:]
		s.ob = slices.Grow(s.ob, int(n)*s.ow)
		for range n {
			s.ob = append(s.ob, last...)
		}
	case codec.List:
		if s.validity != nil {
			s.validity = appendOnes(s.validity, s.n*s.dim, n*s.dim)
		}
		if err := s.children[0].appendZeros(mulSat(n, s.dim)); err != nil {
			return err
		}
	case codec.Struct:
		for _, c := range s.children {
			if err := c.appendZeros(n); err != nil {
				return err
			}
		}
	}
	s.n += n
	return nil
}

// appendBits appends n bits of src starting at bit from to dst, which holds
// have bits.
func appendBits(dst []byte, have uint64, src []byte, from, n uint64) []byte {
	need := int((have + n + 7) / 8)
	for len(dst) < need {
		dst = append(dst, 0)
	}
	if have%8 == 0 && from%8 == 0 {
		copy(dst[have/8:], src[from/8:(from+n+7)/8])
		// clear bits past the end in the last byte
		if r := (have + n) % 8; r != 0 {
			dst[len(dst)-1] &= byte(1<<r) - 1
		}
		return dst
	}
	for i := uint64(0); i < n; i++ {
		if bitutil.BitIsSet(src, int(from+i)) {
			bitutil.SetBit(dst, int(have+i))
		}
	}
	return dst
}

func appendZeroBits(dst []byte, have, n uint64) []byte {
	need := int((have + n + 7) / 8)
	for len(dst) < need {
		dst = append(dst, 0)
	}
	return dst
}

func appendOnes(dst []byte, have, n uint64) []byte {
	dst = appendZeroBits(dst, have, n)
	for i := have; i < have+n; i++ {
		bitutil.SetBit(dst, int(i))
	}
	return dst
}

// arrayData converts the sink to Arrow data of type dt with the given
// validity bitmap (nil = all valid) and null count.
func (s *valueSink) arrayData(dt arrow.DataType, valid []byte, nulls int, mem memory.Allocator) (arrow.ArrayData, error) {
	n := int(s.n)
	vb := func() *memory.Buffer {
		if valid == nil || nulls == 0 {
			return nil
		}
		return memory.NewBufferBytes(valid)
	}
	if nulls == 0 {
		valid = nil
	}
	switch t := dt.(type) {
	case *arrow.NullType:
		return array.NewData(dt, n, []*memory.Buffer{nil}, nil, n, 0), nil
	case *arrow.DictionaryType:
		vd, err := s.arrayData(t.ValueType, valid, nulls, mem)
		if err != nil {
			return nil, err
		}
		defer vd.Release()
		return dictEncode(t, vd, mem)
	case *arrow.StringType, *arrow.BinaryType:
		if s.kind != codec.Variable {
			return nil, fmt.Errorf("datafile: %s column decoded as %s values: %w", dt, s.kind, ErrMalformed)
		}
		if len(s.data) > 1<<31-1 || s.ow != 4 {
			return nil, fmt.Errorf("datafile: %s column of %d bytes exceeds 32-bit offsets: %w", dt, len(s.data), ErrUnsupported)
		}
		if err := s.checkUTF8(dt); err != nil {
			return nil, err
		}
		return array.NewData(dt, n, []*memory.Buffer{vb(), memory.NewBufferBytes(s.ob), memory.NewBufferBytes(s.data)}, nil, nulls, 0), nil
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		if s.kind != codec.Variable {
			return nil, fmt.Errorf("datafile: %s column decoded as %s values: %w", dt, s.kind, ErrMalformed)
		}
		if s.ow != 8 {
			return nil, fmt.Errorf("datafile: %s column decoded with %d-byte offsets: %w", dt, s.ow, ErrMalformed)
		}
		if err := s.checkUTF8(dt); err != nil {
			return nil, err
		}
		return array.NewData(dt, n, []*memory.Buffer{vb(), memory.NewBufferBytes(s.ob), memory.NewBufferBytes(s.data)}, nil, nulls, 0), nil
	case *arrow.FixedSizeListType:
		c := s.children[0]
		cn := 0
		if s.validity != nil {
			cn = int(c.n) - bitutil.CountSetBits(s.validity, 0, int(c.n))
		}
		cd, err := c.arrayData(t.Elem(), s.validity, cn, mem)
		if err != nil {
			return nil, err
		}
		defer cd.Release()
		return array.NewData(dt, n, []*memory.Buffer{vb()}, []arrow.ArrayData{cd}, nulls, 0), nil
	case *arrow.StructType:
		kids := make([]arrow.ArrayData, len(s.children))
		for i, c := range s.children {
			cd, err := c.arrayData(t.Field(i).Type, nil, 0, mem)
			if err != nil {
				for _, k := range kids[:i] {
					k.Release()
				}
				return nil, err
			}
			kids[i] = cd
		}
		d := array.NewData(dt, n, []*memory.Buffer{vb()}, kids, nulls, 0)
		for _, k := range kids {
			k.Release()
		}
		return d, nil
	}
	if s.kind != codec.Fixed {
		return nil, fmt.Errorf("datafile: %s column decoded as %s values: %w", dt, s.kind, ErrMalformed)
	}
	data := s.data
	if s.bits == 1 {
		data = appendZeroBits(data, 0, s.n)
	}
	return array.NewData(dt, n, []*memory.Buffer{vb(), memory.NewBufferBytes(data)}, nil, nulls, 0), nil
}

// checkUTF8 requires every value of a string column to be valid UTF-8, as
// Arrow string arrays must be (the 2.0 path's checkUTF8; binary columns are
// not checked).
func (s *valueSink) checkUTF8(dt arrow.DataType) error {
	if dt.ID() != arrow.STRING && dt.ID() != arrow.LARGE_STRING {
		return nil
	}
	n := len(s.ob)/s.ow - 1
	off := func(i int) uint64 {
		if s.ow == 4 {
			return uint64(binary.LittleEndian.Uint32(s.ob[4*i:]))
		}
		return binary.LittleEndian.Uint64(s.ob[8*i:])
	}
	if n <= 0 {
		return nil
	}
	lo, hi := off(0), off(n)
	if lo > hi || hi > uint64(len(s.data)) {
		return formatErr(ErrMalformed, "", -1, "%s offsets [%d, %d] outside %d value bytes", dt, lo, hi, len(s.data))
	}
	// The values are valid UTF-8 one by one exactly when their concatenation
	// is valid and no value starts inside a multi-byte sequence (on a
	// continuation byte): one fast pass over the bytes, one over the offsets.
	bad := !utf8.Valid(s.data[lo:hi])
	for i := 0; !bad && i < n; i++ {
		o, e := off(i), off(i+1)
		if o > e || e > hi {
			return formatErr(ErrMalformed, "", -1, "%s value %d has offsets [%d, %d]", dt, i, o, e)
		}
		bad = o < e && s.data[o]&0xC0 == 0x80
	}
	if !bad {
		return nil
	}
	for i := 0; i < n; i++ {
		if o, e := off(i), off(i+1); o <= e && e <= hi && !utf8.Valid(s.data[o:e]) {
			return formatErr(ErrMalformed, "", -1, "%s value %d is not valid UTF-8", dt, i)
		}
	}
	return formatErr(ErrMalformed, "", -1, "%s values are not valid UTF-8", dt)
}

// dictEncode turns plain values into an Arrow dictionary array of type t.
func dictEncode(t *arrow.DictionaryType, vd arrow.ArrayData, mem memory.Allocator) (arrow.ArrayData, error) {
	vals := array.MakeFromData(vd)
	defer vals.Release()
	if bv, ok := vals.(*array.Boolean); ok {
		return dictEncodeBool(t, bv)
	}
	if _, ok := t.IndexType.(arrow.FixedWidthDataType); !ok || !arrow.IsInteger(t.IndexType.ID()) {
		return nil, fmt.Errorf("datafile: dictionary with %s keys: %w", t.IndexType, ErrUnsupported)
	}
	if bits, ok := fixedBits(t.ValueType); ok && bits%8 == 0 {
		return dictEncodeFixed(t, vd, int(bits/8))
	}
	// Variable-width values: arrow-go's builder compares them by bytes.
	b := array.NewDictionaryBuilder(mem, t)
	defer b.Release()
	if err := b.AppendArray(vals); err != nil {
		return nil, fmt.Errorf("datafile: dictionary-encoding %s values: %w", t.ValueType, err)
	}
	a := b.NewArray()
	defer a.Release()
	d := a.Data()
	d.Retain()
	return d, nil
}

// dictEncodeFixed dictionary-encodes fixed-width values of w bytes by their
// bit patterns: every distinct pattern is its own dictionary item, so NaN
// payloads and signs (and -0.0 vs +0.0) come back exactly as the page
// stores them, as Lance 12 returns them (issue 12 item 1). arrow-go's
// dictionary builder is not used for these: its float memo table hashes
// every NaN as one canonical NaN and compares floats with cmp.Compare, so
// all NaNs of an array collapsed onto the first NaN it saw. Null slots get
// key 0 (an all-null array gets one zero item).
func dictEncodeFixed(t *arrow.DictionaryType, vd arrow.ArrayData, w int) (arrow.ArrayData, error) {
	kw := t.IndexType.(arrow.FixedWidthDataType).BitWidth() / 8
	maxKey := uint64(1)<<(8*kw-1) - 1 // signed keys
	if !arrow.IsSignedInteger(t.IndexType.ID()) {
		maxKey = maxKey<<1 | 1
	}
	n, off := vd.Len(), vd.Offset()
	var valid []byte
	if bufs := vd.Buffers(); len(bufs) > 0 && bufs[0] != nil && vd.NullN() > 0 {
		valid = bufs[0].Bytes()
	}
	var src []byte
	if bufs := vd.Buffers(); len(bufs) > 1 && bufs[1] != nil {
		src = bufs[1].Bytes()
	}
	if len(src) < (off+n)*w {
		return nil, fmt.Errorf("datafile: %d %s values in %d bytes: %w", n, t.ValueType, len(src), ErrMalformed)
	}
	keys := make([]byte, n*kw)
	var items []byte
	ids := make(map[string]uint64)
	for i := 0; i < n; i++ {
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			continue // key 0
		}
		v := src[(off+i)*w : (off+i+1)*w]
		id, ok := ids[string(v)]
		if !ok {
			id = uint64(len(ids))
			if id > maxKey {
				return nil, fmt.Errorf("datafile: more than %d distinct %s values for %s keys: %w", maxKey+1, t.ValueType, t.IndexType, ErrUnsupported)
			}
			ids[string(v)] = id
			items = append(items, v...)
		}
		for j := 0; j < kw; j++ {
			keys[i*kw+j] = byte(id >> (8 * j))
		}
	}
	numItems := len(ids)
	if numItems == 0 && n > 0 {
		items, numItems = make([]byte, w), 1
	}
	dict := array.NewData(t.ValueType, numItems, []*memory.Buffer{nil, memory.NewBufferBytes(items)}, nil, 0, 0)
	defer dict.Release()
	var vb *memory.Buffer
	nulls := 0
	if valid != nil {
		nulls = vd.NullN()
		vcopy := make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.CopyBitmap(valid, off, n, vcopy, 0)
		vb = memory.NewBufferBytes(vcopy)
	}
	return array.NewDataWithDictionary(t, n, []*memory.Buffer{vb, memory.NewBufferBytes(keys)}, nulls, 0, dict), nil
}

// dictEncodeBool builds a dictionary of booleans (arrow-go has no builder for
// it): the dictionary [false, true], each row's key its value.
func dictEncodeBool(t *arrow.DictionaryType, bv *array.Boolean) (arrow.ArrayData, error) {
	kt, ok := t.IndexType.(arrow.FixedWidthDataType)
	if !ok || !arrow.IsInteger(t.IndexType.ID()) {
		return nil, fmt.Errorf("datafile: dictionary with %s keys: %w", t.IndexType, ErrUnsupported)
	}
	kw := kt.BitWidth() / 8
	n := bv.Len()
	keys := make([]byte, n*kw)
	for i := 0; i < n; i++ {
		if bv.IsValid(i) && bv.Value(i) {
			keys[i*kw] = 1
		}
	}
	dict := array.NewData(arrow.FixedWidthTypes.Boolean, 2, []*memory.Buffer{nil, memory.NewBufferBytes([]byte{2})}, nil, 0, 0)
	defer dict.Release()
	var vb *memory.Buffer
	if bv.NullN() > 0 {
		valid := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := 0; i < n; i++ {
			if bv.IsValid(i) {
				bitutil.SetBit(valid, i)
			}
		}
		vb = memory.NewBufferBytes(valid)
	}
	return array.NewDataWithDictionary(t, n, []*memory.Buffer{vb, memory.NewBufferBytes(keys)}, bv.NullN(), 0, dict), nil
}
