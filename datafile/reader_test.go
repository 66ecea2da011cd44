package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"gocloud.dev/blob/memblob"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/seedio"
)

func goldenBytes(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/spec_1_8_example.lance")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Offsets in the §1.8 example.
const (
	exSize     = 862
	exFooter   = exSize - FooterSize // 822
	exGBO      = 806
	exCMO      = 758
	exColStart = 410
	exFD       = 320
)

func put64(b []byte, off int, v uint64) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(c[off:], v)
	return c
}

func put32(b []byte, off int, v uint32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

func put16(b []byte, off int, v uint16) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint16(c[off:], v)
	return c
}

// rebuild assembles a file from the example's data region [0, 320), a
// FileDescriptor and column metadata blocks, laid out per §1.7.
func rebuild(t testing.TB, fd []byte, cols [][]byte, major, minor uint16) []byte {
	t.Helper()
	g := goldenBytes(t)
	out := append([]byte(nil), g[:exFD]...)
	out = append(out, fd...)
	colStart := uint64(len(out))
	var cmo []BufferRange
	for _, c := range cols {
		cmo = append(cmo, BufferRange{Pos: uint64(len(out)), Len: uint64(len(c))})
		out = append(out, c...)
	}
	ft := Footer{ColumnMetaStart: colStart, CMOStart: uint64(len(out)), NumColumns: uint32(len(cols)), NumGlobalBuffers: 1, Major: major, Minor: minor}
	for _, r := range cmo {
		out = appendRange(out, r)
	}
	ft.GBOStart = uint64(len(out))
	out = appendRange(out, BufferRange{Pos: exFD, Len: uint64(len(fd))})
	return ft.appendTo(out)
}

// goldenParts returns the example's FileDescriptor and column blocks.
func goldenParts(t testing.TB) (fd []byte, cols [][]byte) {
	g := goldenBytes(t)
	return g[exFD:exColStart], [][]byte{g[410:515], g[515:633], g[633:758]}
}

func fdWith(fields ...Field) []byte {
	return encodeFileDescriptor(&Schema{Fields: fields}, 3)
}

// page builds a Page message with the given raw encoding field.
func pageMsg(offs, sizes []uint64, length uint64, encodingField []byte) []byte {
	var b []byte
	b = pbAppendPackedUint64s(b, 1, offs)
	b = pbAppendPackedUint64s(b, 2, sizes)
	b = pbAppendVarintField(b, 3, length)
	b = append(b, encodingField...)
	return b
}

func colMsg(colEnc []byte, pages ...[]byte) []byte {
	var b []byte
	b = append(b, colEnc...)
	for _, p := range pages {
		b = pbAppendBytesField(b, 2, p)
	}
	return b
}

var stdColEnc = pbAppendBytesField(nil, 1, appendDirectAny(nil, typeColumnEncoding, columnEncodingValues()))

func stdPageEnc(ae []byte) []byte {
	return pbAppendBytesField(nil, 4, appendDirectAny(nil, typeArrayEncoding, ae))
}

// TestSpec16_ReaderChecks applies every check of spec §1.5/§1.6 (and the
// SHOULD checks after it) to damaged versions of the §1.8 example: each gives
// the documented sentinel, as a typed error naming the section and offset.
func TestSpec16_ReaderChecks(t *testing.T) {
	g := goldenBytes(t)
	fd, cols := goldenParts(t)
	int64Page := pageMsg([]uint64{0}, []uint64{24}, 3, stdPageEnc(encNoNulls(encFlat(64, 0))))
	f := func(name, lt string, id, parent int32) Field {
		return Field{Name: name, ID: id, ParentID: parent, LogicalType: lt}
	}
	cases := []struct {
		name    string
		file    []byte
		want    error
		section string // substring of FormatError.Section
		offset  int64  // expected FormatError.Offset, -2 = don't check
	}{
		{"§1.5 shorter than 8 bytes", g[:7], ErrNotLance, "file", 0},
		{"§1.5 bad magic", append(append([]byte(nil), g[:exSize-1]...), 'X'), ErrNotLance, "footer", exSize - 4},
		{"§1.5 legacy 0.0", put16(put16(g, exSize-8, 0), exSize-6, 0), ErrLegacyFormat, "", -2},
		{"§1.5 legacy 0.1", put16(g, exSize-6, 1), ErrLegacyFormat, "", -2},
		{"§1.5 legacy 0.2", put16(g, exSize-6, 2), ErrLegacyFormat, "", -2},
		{"§1.5 unknown 3.0", put16(put16(g, exSize-8, 3), exSize-6, 0), ErrUnsupportedVersion, "", -2},
		{"§1.5 unknown 0.4", put16(g, exSize-6, 4), ErrUnsupportedVersion, "", -2},
		{"§1.5 v2 shorter than 40 bytes", g[exSize-20:], ErrTruncated, "file", 0},
		{"§1.6-3 zero global buffers", put32(g, exFooter+24, 0), ErrMalformed, "footer", exFooter + 24},
		{"§1.6-3 GBO entry past EOF", put64(g, exGBO+8, 10000), ErrTruncated, "GBO table", exGBO},
		{"§1.6-3 GBO entry overflows", put64(g, exGBO, 1<<63), ErrTruncated, "GBO table", exGBO},
		{"§1.6-3 2.1 unaligned global buffer", put16(put16(put64(g, exGBO, 321), exSize-8, 2), exSize-6, 1), ErrMalformed, "GBO table", exGBO},
		{"§1.6-4 schema after column metadata", put64(put64(g, exGBO, 500), exGBO+8, 20), ErrMalformed, "GBO table", exGBO},
		{"§1.6-6 CMO/GBO gap", put64(g, exFooter+8, exCMO-8), ErrMalformed, "footer", exFooter + 8},
		{"§1.6-6 GBO not at footer", put64(g, exFooter+16, exGBO-16), ErrMalformed, "footer", -2},
		{"§1.6 offsets out of order", put64(g, exFooter, exCMO+1), ErrMalformed, "footer", exFooter},
		{"§1.6-6 CMO entry before column_meta_start", put64(g, exCMO, 100), ErrMalformed, "CMO table", exCMO},
		{"§1.6-6 CMO entry past cmo_start", put64(g, exCMO+16+8, 300), ErrMalformed, "CMO table", exCMO + 16},
		{"§1.6-5 FileDescriptor garbage", append(append(append([]byte(nil), g[:exFD]...), bytes.Repeat([]byte{0xff}, 90)...), g[exColStart:]...), ErrMalformed, "FileDescriptor", -2},
		{"§1.6-5 no schema", rebuild(t, pbAppendVarintField(nil, 2, 3), cols, 0, 3), ErrMalformed, "FileDescriptor", exFD},
		{"§1.6-5 parent after child (§3.3)", rebuild(t, fdWith(f("a", "int32", 1, 0), f("s", "struct", 0, -1)), [][]byte{cols[0], cols[0]}, 0, 3), ErrMalformed, "schema", -2},
		{"§1.6-5 unknown logical type", rebuild(t, fdWith(f("a", "frobnicate", 0, -1)), cols[:1], 0, 3), ErrUnsupported, "schema", -2},
		{"§1.6-7 column missing its encoding", rebuild(t, fd, [][]byte{colMsg(nil, int64Page), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 metadata", -2},
		{"§1.6-7 column encoding indirect", rebuild(t, fd, [][]byte{colMsg(pbAppendBytesField(nil, 1, pbAppendBytesField(nil, 1, pbAppendVarintField(nil, 1, 5))), int64Page), cols[1], cols[2]}, 0, 3), ErrUnsupported, "column 0 metadata encoding", -2},
		{"§1.6-7 page encoding indirect", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0}, []uint64{24}, 3, pbAppendBytesField(nil, 4, pbAppendBytesField(nil, 1, nil)))), cols[1], cols[2]}, 0, 3), ErrUnsupported, "column 0 page 0 encoding", -2},
		{"§1.6-7 page encoding none", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0}, []uint64{24}, 3, pbAppendBytesField(nil, 4, pbAppendBytesField(nil, 3, nil)))), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 page 0 encoding", -2},
		{"§1.6-7 page encoding unset", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0}, []uint64{24}, 3, pbAppendBytesField(nil, 4, nil))), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 page 0 encoding", -2},
		{"§1.6-7 page without encoding", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0}, []uint64{24}, 3, nil)), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 page 0", -2},
		{"§1.6-7 offsets/sizes length mismatch", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0, 64}, []uint64{24}, 3, stdPageEnc(encNoNulls(encFlat(64, 0))))), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 page 0", -2},
		{"page buffer past EOF", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{0}, []uint64{1 << 40}, 3, stdPageEnc(encNoNulls(encFlat(64, 0))))), cols[1], cols[2]}, 0, 3), ErrTruncated, "column 0 page 0", -2},
		{"§1.6-8 column encoding of wrong type", rebuild(t, fd, [][]byte{colMsg(pbAppendBytesField(nil, 1, appendDirectAny(nil, "lance.encodings.Wrong", nil)), int64Page), cols[1], cols[2]}, 0, 3), ErrMalformed, "column 0 metadata encoding", -2},
		{"§1.6-8 2.1 file with 2.0 page encodings", put16(put16(g, exSize-8, 2), exSize-6, 1), ErrMalformed, "column 0 page 0 encoding", -2},
		{"§1.6-9 2.1 unaligned page buffer", rebuild(t, fd, [][]byte{colMsg(stdColEnc, pageMsg([]uint64{8}, []uint64{24}, 3, pbAppendBytesField(nil, 4, appendDirectAny(nil, typePageLayout, nil)))), cols[1], cols[2]}, 2, 1), ErrMalformed, "column 0 page 0", -2},
		{"protobuf truncated varint", rebuild(t, []byte{0x10}, cols, 0, 3), ErrMalformed, "FileDescriptor", exFD},
		{"protobuf wrong wire type", rebuild(t, []byte{0x0d, 1, 2, 3, 4}, cols, 0, 3), ErrMalformed, "FileDescriptor", exFD},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenReaderAt(bytes.NewReader(c.file), int64(len(c.file)))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var fe *FormatError
			if c.section == "" {
				return
			}
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a *FormatError", err)
			}
			if !strings.Contains(fe.Section, c.section) {
				t.Errorf("section %q, want %q (%v)", fe.Section, c.section, err)
			}
			if c.offset != -2 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, err)
			}
		})
	}
}

// TestSpec16_AcceptedVariants: what Lance accepts, we accept (spec §1.4,
// §0, §7): a (2,0) footer, type.googleapis.com type URLs, unpacked repeated
// fields, unknown fields, and the retired Field #11.
func TestSpec16_AcceptedVariants(t *testing.T) {
	g := goldenBytes(t)
	fd, cols := goldenParts(t)
	// unpacked buffer_offsets/sizes + a type.googleapis.com URL + unknown fields
	var page []byte
	page = pbAppendVarintField(page, 1, 0)
	page = pbAppendVarintField(page, 2, 24)
	page = pbAppendVarintField(page, 3, 3)
	var a []byte
	a = pbAppendStringField(a, 1, "type.googleapis.com/"+typeArrayEncoding)
	a = pbAppendBytesField(a, 2, encNoNulls(encFlat(64, 0)))
	page = pbAppendBytesField(page, 4, pbAppendBytesField(nil, 2, pbAppendBytesField(nil, 1, a)))
	page = pbAppendVarintField(page, 99, 7) // unknown
	col0 := colMsg(stdColEnc, page)
	col0 = pbAppendStringField(col0, 77, "future")
	fdExtra := append(append([]byte(nil), fd...), pbAppendStringField(nil, 9, "x")...)
	// a field carrying the retired #11 "default"
	retired := Field{Name: "id", ID: 0, ParentID: -1, LogicalType: "int64"}
	fdRetired := pbAppendBytesField(nil, 1, pbAppendStringField(pbAppendBytesField(nil, 1, encodeField(&retired)), 11, "default"))
	fdRetired = pbAppendVarintField(fdRetired, 2, 3)

	cases := map[string][]byte{
		"footer (2,0) is 2.0":                           put16(put16(g, exSize-8, 2), exSize-6, 0),
		"unpacked, type.googleapis.com, unknown fields": rebuild(t, fdExtra, [][]byte{col0, cols[1], cols[2]}, 0, 3),
		"retired Field #11":                             rebuild(t, fdRetired, cols[:1], 0, 3),
	}
	for name, file := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := OpenReaderAt(bytes.NewReader(file), int64(len(file)))
			if err != nil {
				t.Fatal(err)
			}
			if f.Version() != V2_0 {
				t.Errorf("version %s", f.Version())
			}
			rec, err := f.ReadColumns(context.Background(), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			if rec.NumRows() != 3 {
				t.Errorf("rows %d", rec.NumRows())
			}
		})
	}
}

// TestOpen_NeverPanicsOnDamage: every truncation and every single-bit flip
// of the example either opens or fails with one of the package's typed
// errors; opened files also decode (or fail) without panicking.
func TestOpen_NeverPanicsOnDamage(t *testing.T) {
	g := goldenBytes(t)
	check := func(b []byte) {
		f, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			var fe *FormatError
			var le *LegacyFileError
			var ve *VersionError
			if !errors.As(err, &fe) && !errors.As(err, &le) && !errors.As(err, &ve) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if rec, err := f.ReadColumns(context.Background(), ReadOptions{}); err == nil {
			rec.Release()
		}
		_, _ = f.Seeds(context.Background(), seedio.DecodeOptions{})
	}
	for n := 0; n < len(g); n++ {
		check(g[:n])
		check(g[n:])
	}
	for i := 0; i < len(g); i++ {
		for bit := 0; bit < 8; bit++ {
			c := append([]byte(nil), g...)
			c[i] ^= 1 << bit
			check(c)
		}
	}
}

// countingReaderAt counts ReadAt calls.
type countingReaderAt struct {
	mu sync.Mutex
	r  *bytes.Reader
	n  int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.r.ReadAt(p, off)
}

// TestSpec16_FewRangeReads (§1.6 step 1): a file whose metadata fits in the
// tail is opened with one read; a larger one with two.
func TestSpec16_FewRangeReads(t *testing.T) {
	g := goldenBytes(t)
	cr := &countingReaderAt{r: bytes.NewReader(g)}
	if _, err := OpenReaderAt(cr, int64(len(g))); err != nil || cr.n != 1 {
		t.Errorf("small file: %d reads, err %v", cr.n, err)
	}
	// Many pages: metadata well over 64 KiB.
	rec := randomRecord(newRand(5), arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil), 20000)
	defer rec.Release()
	raw, _ := writeFile(t, rec.Schema(), WriterOptions{PageSize: 64}, rec)
	f0, err := OpenReaderAt(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if meta := int64(len(raw)) - int64(f0.GlobalBuffers()[0].Pos); meta <= DefaultTailSize {
		t.Fatalf("metadata is only %d bytes", meta)
	}
	cr = &countingReaderAt{r: bytes.NewReader(raw)}
	if _, err := OpenReaderAt(cr, int64(len(raw))); err != nil || cr.n != 2 {
		t.Errorf("large metadata: %d reads, err %v", cr.n, err)
	}
}

// TestOpen_Bucket opens through gocloud blob, with and without a known size.
func TestOpen_Bucket(t *testing.T) {
	ctx := context.Background()
	g := goldenBytes(t)
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "data/x.lance", g, nil); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []OpenOptions{{}, {Size: int64(len(g)), TailSize: 100}} {
		f, err := Open(ctx, bucket, "data/x.lance", opts)
		if err != nil {
			t.Fatal(err)
		}
		if f.Path() != "data/x.lance" || f.Size() != exSize || f.NumRows() != 3 {
			t.Errorf("opened %q size %d rows %d", f.Path(), f.Size(), f.NumRows())
		}
		rec, err := f.ReadColumns(ctx, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	// Errors carry the path.
	if err := bucket.WriteAll(ctx, "bad.lance", g[:100], nil); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, bucket, "bad.lance", OpenOptions{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Path != "bad.lance" || !strings.Contains(err.Error(), "bad.lance") {
		t.Errorf("got %v", err)
	}
	if _, err := Open(ctx, bucket, "missing.lance", OpenOptions{}); err == nil {
		t.Error("missing file opened")
	}
}

// TestSeeds_BrokenSeedsAreReportedNotFatal (R63, R1–R7): each broken locator
// is reported on its own seed; good seeds of the same file still decode.
func TestSeeds_BrokenSeedsAreReportedNotFatal(t *testing.T) {
	rec := randomRecord(newRand(11), arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil), 100)
	defer rec.Release()
	raw, res := writeFile(t, rec.Schema(), WriterOptions{SeedAllColumns: true}, rec)
	if len(res.Seeds) != 2 || res.Seeds[0].Locator != "1:8192" || res.Seeds[1].Locator != "2:8192" {
		t.Fatalf("seeds %+v", res.Seeds)
	}
	open := func(b []byte) *File {
		f, err := OpenReaderAt(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := open(raw)
	md := f.schema.Metadata
	md["lance.seed.nope"] = "1:8192" // R7: no such column
	md["lance.seed.a.b"] = "x"       // E01 (and no such column)
	md["lance.seed.zzz"] = "0:5"     // E02
	md["lance.seed.zz9"] = "9:8192"  // E03
	md["lance.seed."] = "2:01"       // E01 leading zero
	seeds, err := f.Seeds(context.Background(), seedio.DecodeOptions{TableFlagged: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]error{
		"":     seedio.ErrSeedLocatorSyntax,
		"a":    ErrSeedBufferShared, // buffer 1 is also named by "nope"
		"a.b":  seedio.ErrSeedLocatorSyntax,
		"b":    nil,
		"nope": ErrSeedColumnMissing,
		"zz9":  seedio.ErrSeedBufferMissing,
		"zzz":  seedio.ErrSeedLocatorRange,
	}
	if len(seeds) != len(want) {
		t.Fatalf("%d seeds", len(seeds))
	}
	for _, s := range seeds {
		w, ok := want[s.Column]
		if !ok {
			t.Errorf("unexpected seed %q", s.Column)
			continue
		}
		if w == nil {
			if s.Err != nil || s.Seed == nil || s.Seed.Version != 1 {
				t.Errorf("seed %q: %v", s.Column, s.Err)
			}
		} else if !errors.Is(s.Err, w) || s.Seed != nil {
			t.Errorf("seed %q: got %v, want %v", s.Column, s.Err, w)
		}
	}

	// Corrupt the bytes of seed 1 only: E04 for "a", "b" intact (R63).
	g1 := open(raw).GlobalBuffers()[1]
	bad := append([]byte(nil), raw...)
	copy(bad[g1.Pos:], "NOTARROW")
	seeds, _ = open(bad).Seeds(context.Background(), seedio.DecodeOptions{TableFlagged: true})
	if len(seeds) != 2 || !errors.Is(seeds[0].Err, seedio.ErrSeedNotIPCFile) || seeds[1].Err != nil {
		t.Errorf("corrupt seed: %v / %v", seeds[0].Err, seeds[1].Err)
	}
	// Without the table flag a v1 seed is unusable (E26, R61).
	seeds, _ = open(raw).Seeds(context.Background(), seedio.DecodeOptions{})
	for _, s := range seeds {
		if !errors.Is(s.Err, seedio.ErrSeedV1WithoutFlag) {
			t.Errorf("seed %q without flag: %v", s.Column, s.Err)
		}
	}
}

// TestR64_FailedSeedOmitsBufferAndLocator: when a collector fails, the
// writer writes neither the global buffer nor the locator, and the file is
// otherwise complete.
func TestR64_FailedSeedOmitsBufferAndLocator(t *testing.T) {
	rec := randomRecord(newRand(12), arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil), 50)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, rec.Schema(), WriterOptions{SeedAllColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("collector failed")
	_ = w.drain()         // the seed lanes have observed rec
	w.seeds[0].err = boom // as if Observe had failed (e.g. ErrSeedCountOverflow)
	res, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Seeds[0].Err, boom) || res.Seeds[0].BufferIndex != 0 || res.Seeds[1].BufferIndex != 1 {
		t.Fatalf("seeds %+v", res.Seeds)
	}
	f, err := OpenReaderAt(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.GlobalBuffers()) != 2 {
		t.Errorf("%d global buffers, want 2", len(f.GlobalBuffers()))
	}
	if _, ok := f.Metadata()["lance.seed.a"]; ok || f.Metadata()["lance.seed.b"] != "1:8192" {
		t.Errorf("metadata %v", f.Metadata())
	}
}

// TestProtobuf_NegativeParentIsTenBytes (§0): parent_id -1 is a 10-byte
// varint and reads back as -1.
func TestProtobuf_NegativeParentIsTenBytes(t *testing.T) {
	b := encodeField(&Field{Name: "a", ParentID: -1, LogicalType: "int8"})
	want := append([]byte{0x12, 1, 'a', 0x20}, append(bytes.Repeat([]byte{0xff}, 9), 1)...)
	if !bytes.HasPrefix(b, want) {
		t.Fatalf("% x", b)
	}
	f, err := decodeField(b, 0)
	if err != nil || f.ParentID != -1 {
		t.Fatalf("%+v %v", f, err)
	}
	if _, n := protowire.ConsumeVarint(b[4:]); n != 10 {
		t.Errorf("varint is %d bytes", n)
	}
}
