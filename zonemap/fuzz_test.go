package zonemap

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
)

var update = flag.Bool("update", false, "rewrite the golden files and fuzz seeds under testdata/")

// goldenSegments are the segments pinned under testdata/golden and used to
// seed the fuzz corpora.
func goldenSegments() map[string]*Segment {
	str := &Segment{ValueType: arrow.BinaryTypes.String, RowsPerZone: 8192, Zones: []Zone{
		{FragmentID: 2, Start: 0, Length: 8192, NullCount: 2, Min: "", Max: "zz"},
		{FragmentID: 2, Start: 8192, Length: 5, Min: "ab", Max: "ab"},
	}, NullRows: map[uint32]*roaring.Bitmap{2: roaring.BitmapOf(0, 8191)}}
	ints := &Segment{ValueType: arrow.PrimitiveTypes.Int32, RowsPerZone: 16, Zones: []Zone{
		{FragmentID: 0, Start: 0, Length: 16, Min: int32(-5), Max: int32(5)},
		{FragmentID: 1, Start: 0, Length: 3, NullCount: 3},
	}}
	return map[string]*Segment{"float64_nan_markers": sampleSegment(), "utf8": str, "int32_no_bitmap": ints}
}

// TestGoldenFiles pins the bytes WriteSegment produces (a Lance 2.0 file;
// the layout Lance 12 loads, checked by tests/compat) and that the golden
// files decode back to their segments.
func TestGoldenFiles(t *testing.T) {
	for name, seg := range goldenSegments() {
		b, err := EncodeSegment(seg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", name+".lance")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			seedDir := filepath.Join("testdata", "fuzz", "FuzzDecodeSegment")
			if err := os.MkdirAll(seedDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(seedDir, name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(b))+")\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if seg.NullRows != nil {
				rm, err := EncodeRowAddrMap(seg.NullRows)
				if err != nil {
					t.Fatal(err)
				}
				seedDir := filepath.Join("testdata", "fuzz", "FuzzDecodeRowAddrMap")
				if err := os.MkdirAll(seedDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(seedDir, name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(rm))+")\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGoldenFiles -update)", err)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("%s: WriteSegment output changed (%d bytes, golden %d)", name, len(b), len(want))
		}
		got, err := DecodeSegment(want, ReadOptions{ValueType: seg.ValueType})
		if err != nil || !sameSegment(got, seg) {
			t.Fatalf("%s: golden file decodes to %+v, %v", name, got, err)
		}
	}
}

// FuzzDecodeSegment feeds hostile bytes to the zonemap.lance reader: it
// must return a segment that passes Check and re-encodes to an equal
// segment, or an error — never panic.
func FuzzDecodeSegment(f *testing.F) {
	for _, seg := range goldenSegments() {
		b, err := EncodeSegment(seg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		seg, err := DecodeSegment(data, ReadOptions{MaxDecodeBytes: 64 << 20})
		if err != nil {
			return
		}
		if err := seg.Check(); err != nil {
			t.Fatalf("decoded segment fails Check: %v", err)
		}
		written := true
		for _, z := range seg.Zones {
			if z.Length > uint64(z.NullCount)+uint64(z.NaNCount) && (z.Min == nil || z.Max == nil) {
				written = false // readable (Lance writes these), never written by us
			}
		}
		if !written {
			return
		}
		out, err := EncodeSegment(seg)
		if err != nil {
			t.Fatalf("decoded segment does not re-encode: %v", err)
		}
		again, err := DecodeSegment(out, ReadOptions{})
		if err != nil || !sameSegment(seg, again) {
			t.Fatalf("round trip changed the segment: %v", err)
		}
	})
}

// FuzzDecodeRowAddrMap feeds hostile bytes to the null-bitmap decoder.
func FuzzDecodeRowAddrMap(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeRowAddrMap(data)
		if err != nil {
			return
		}
		if len(m.Full) > 0 {
			return // full entries have no re-encoding of their own
		}
		out, err := EncodeRowAddrMap(m.Rows)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRowAddrMap(out)
		if err != nil {
			t.Fatalf("re-encoded map does not decode: %v", err)
		}
		for id, bm := range m.Rows {
			if bm.IsEmpty() {
				continue
			}
			if o := again.Rows[id]; o == nil || !o.Equals(bm) {
				t.Fatal(fmt.Sprintf("fragment %d changed in the round trip", id))
			}
		}
	})
}
