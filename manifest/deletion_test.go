package manifest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lancekeeper/lancekeeper/internal/flatbuf"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// corpusDeletionFiles maps every deletion file of the corpus to the number
// of deleted rows its manifest records (0 = not recorded).
func corpusDeletionFiles(t *testing.T) map[string]uint64 {
	t.Helper()
	root := corpusDir(t)
	out := map[string]uint64{}
	for _, p := range corpusManifests(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(p, data)
		if err != nil {
			t.Fatal(err)
		}
		dsRoot := filepath.Dir(p)
		if filepath.Base(p) != LegacyLatestName {
			dsRoot = filepath.Dir(dsRoot)
		}
		r, err := NewResolver(f.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		for _, frag := range f.Manifest.GetFragments() {
			d := frag.GetDeletionFile()
			if d == nil {
				continue
			}
			loc, err := r.DeletionFile(frag.GetId(), d)
			if err != nil {
				t.Fatal(err)
			}
			full := filepath.Join(dsRoot, filepath.FromSlash(loc.Path))
			if loc.Base != "" {
				continue // lives in another dataset (branch base); that dataset's own manifests cover it
			}
			if _, err := os.Stat(full); err != nil {
				continue // removed by cleanup; an older manifest still names it
			}
			out[full] = d.GetNumDeletedRows()
		}
	}
	if len(out) == 0 {
		t.Fatalf("no deletion files found under %s", root)
	}
	return out
}

func deletionType(path string) pb.DeletionFile_DeletionFileType {
	if strings.HasSuffix(path, ".bin") {
		return pb.DeletionFile_BITMAP
	}
	return pb.DeletionFile_ARROW_ARRAY
}

// TestCorpus_DeletionFiles decodes every real deletion file (both formats)
// and checks the count against num_deleted_rows where the manifest records
// one (spec §4.7; §9 trap 2: 0 means unknown).
func TestCorpus_DeletionFiles(t *testing.T) {
	arrow, bin := 0, 0
	for path, want := range corpusDeletionFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		typ := deletionType(path)
		rows, err := DecodeDeletionFile(path, typ, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want != 0 && rows.GetCardinality() != want {
			t.Errorf("%s: %d rows, manifest says %d", path, rows.GetCardinality(), want)
		}
		if typ == pb.DeletionFile_BITMAP {
			bin++
			again, err := EncodeRoaring32(rows)
			if err != nil || !bytes.Equal(again, data) {
				t.Errorf("%s: re-encoded .bin differs from Lance's bytes", path)
			}
		} else {
			arrow++
		}
	}
	if arrow == 0 || bin == 0 {
		t.Fatalf("corpus should have both formats: %d arrow, %d bin", arrow, bin)
	}
}

// TestSpec4_7_HistoricalDeletionCount: 0.7.5 with_deletions records no
// num_deleted_rows; Lance 12 counts 90 of 100 rows, so the file holds 10.
func TestSpec4_7_HistoricalDeletionCount(t *testing.T) {
	p := filepath.Join(corpusDir(t), "historical/0.7.5/with_deletions/_deletions/0-1-8958018423523767581.arrow")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := decodeDeletionArrow(p, data)
	if err != nil {
		t.Fatal(err)
	}
	if rows.GetCardinality() != 10 || !rows.Contains(10) || !rows.Contains(19) {
		t.Fatalf("rows = %v", rows.ToArray())
	}
}

func TestSpec4_7_EncodeChoosesFormatByThreshold(t *testing.T) {
	for _, n := range []int{1, 3, BitmapThreshold, BitmapThreshold + 1, 20000} {
		rows := roaring.New()
		for i := 0; i < n; i++ {
			rows.Add(uint32(i * 3))
		}
		typ, data, err := EncodeDeletionFile(rows)
		if err != nil {
			t.Fatal(err)
		}
		wantTyp := pb.DeletionFile_ARROW_ARRAY
		if n > BitmapThreshold {
			wantTyp = pb.DeletionFile_BITMAP
		}
		if typ != wantTyp {
			t.Fatalf("%d rows: type %v, want %v", n, typ, wantTyp)
		}
		if typ == pb.DeletionFile_ARROW_ARRAY && !bytes.HasPrefix(data, []byte("ARROW1")) {
			t.Fatal("arrow deletion file lacks ARROW1 magic")
		}
		got, err := DecodeDeletionFile("x", typ, data)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(rows) {
			t.Fatalf("%d rows: round trip differs", n)
		}
	}
	if _, _, err := EncodeDeletionFile(roaring.New()); err == nil {
		t.Fatal("an empty deletion file must be refused (§9 trap 2)")
	}
}

// TestSpec4_7_BitmapWithRunsDecodes: readers must accept cookie 12347 (run
// containers) even though our writer never emits them.
func TestSpec4_7_BitmapWithRunsDecodes(t *testing.T) {
	for _, n := range []uint64{100, 70000, 1 << 20} {
		rb := roaring.New()
		rb.AddRange(5, 5+n)
		rb.Add(1 << 30)
		rb.RunOptimize()
		data, err := rb.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint16(data) != roaringCookieRuns {
			t.Fatalf("expected a run-container serialization")
		}
		got, err := DecodeRoaring32("x", data)
		if err != nil || !got.Equals(rb) {
			t.Fatalf("n=%d: %v", n, err)
		}
		plain, err := EncodeRoaring32(rb)
		if err != nil || binary.LittleEndian.Uint32(plain) != roaringCookieNoRuns {
			t.Fatalf("n=%d: writer must not emit run containers: %v (cookie %x)", n, err, plain[:4])
		}
	}
}

func TestSpec4_7_ArrowAcceptsInt32(t *testing.T) {
	// An Int32 row_id column (the type the proto comment names).
	data := int32ArrowFile(t, []int32{4, 1, 9})
	rows, err := decodeDeletionArrow("x", data)
	if err != nil || rows.GetCardinality() != 3 || !rows.Contains(9) {
		t.Fatalf("%v %v", rows, err)
	}
	if _, err := decodeDeletionArrow("x", int32ArrowFile(t, []int32{1, -1})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("negative row id: %v", err)
	}
}

func TestSpec4_7_DeletionDecodersRejectGarbage(t *testing.T) {
	valid, _ := EncodeRoaring32(roaring.BitmapOf(1, 2, 3))
	arrowValid, _ := encodeDeletionArrow(roaring.BitmapOf(1, 2, 3))
	for _, tc := range []struct {
		name string
		typ  pb.DeletionFile_DeletionFileType
		data []byte
	}{
		{"bin empty", pb.DeletionFile_BITMAP, nil},
		{"bin bad cookie", pb.DeletionFile_BITMAP, []byte{1, 2, 3, 4, 0, 0, 0, 0}},
		{"bin truncated", pb.DeletionFile_BITMAP, valid[:len(valid)-1]},
		{"bin trailing", pb.DeletionFile_BITMAP, append(append([]byte(nil), valid...), 0)},
		{"bin too many containers", pb.DeletionFile_BITMAP, []byte{0x3a, 0x30, 0, 0, 0xff, 0xff, 0xff, 0xff}},
		{"arrow empty", pb.DeletionFile_ARROW_ARRAY, nil},
		{"arrow garbage", pb.DeletionFile_ARROW_ARRAY, []byte("ARROW1\x00\x00garbage")},
		{"arrow truncated", pb.DeletionFile_ARROW_ARRAY, arrowValid[:len(arrowValid)-3]},
		{"json as arrow", pb.DeletionFile_ARROW_ARRAY, mustJSON(t)},
		{"unknown type", 7, valid},
	} {
		if _, err := DecodeDeletionFile("del", tc.typ, tc.data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func mustJSON(t *testing.T) []byte {
	b, err := json.Marshal(map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func int32ArrowFile(t *testing.T, vals []int32) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "row_id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewInt32Builder(memory.NewGoAllocator())
	defer b.Release()
	b.AppendValues(vals, nil)
	col := b.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(vals)))
	var out bytes.Buffer
	w, err := ipc.NewFileWriter(&out, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestSpec4_7_ArrowHugeVectorLength is the regression for a fuzz crasher
// found against arrow-go's reader (it allocated a slice sized by the
// schema's field count before checking it, and ran out of memory): a
// footer whose schema claims 2^31-1 fields must fail cleanly.
func TestSpec4_7_ArrowHugeVectorLength(t *testing.T) {
	data, err := encodeDeletionArrow(roaring.BitmapOf(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(data))
	footLen := uint64(binary.LittleEndian.Uint32(data[n-10:]))
	footStart := n - 10 - footLen
	ft, err := flatbuf.Root(data[footStart : n-10])
	if err != nil {
		t.Fatal(err)
	}
	schema, _, err := ft.Table(1)
	if err != nil {
		t.Fatal(err)
	}
	// The schema's fields vector: its length word lies 4 bytes before its
	// first element.
	start, _, _, err := schema.Vector(1, 4)
	if err != nil {
		t.Fatal(err)
	}
	q := start - 4
	binary.LittleEndian.PutUint32(data[footStart+q:], 0x7fffffff)
	if _, err := decodeDeletionArrow("huge", data); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	// The same holds for a record batch claiming 2^62 rows.
	data2, _ := encodeDeletionArrow(roaring.BitmapOf(1, 2, 3))
	idx := bytes.Index(data2, []byte{3, 0, 0, 0, 0, 0, 0, 0}) // batch length 3 (i64) in the message
	if idx < 0 {
		t.Fatal("batch length not found in the encoded message")
	}
	binary.LittleEndian.PutUint64(data2[idx:], 1<<62)
	if _, err := decodeDeletionArrow("rows", data2); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
}
