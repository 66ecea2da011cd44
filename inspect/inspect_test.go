package inspect

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/lancekeeper/lancekeeper/manifest"
	"github.com/lancekeeper/lancekeeper/manifest/pb"
	"github.com/lancekeeper/lancekeeper/snapshot"
	"github.com/lancekeeper/lancekeeper/store"
)

func TestSpec3_6_ArrowTypeNames(t *testing.T) {
	f := func(id, parent int32, name, lt string) *pb.Field {
		return &pb.Field{Id: id, ParentId: parent, Name: name, LogicalType: lt}
	}
	fields := []*pb.Field{
		f(0, -1, "a", "timestamp:us:UTC"),
		f(1, -1, "b", "timestamp:ns:-"),
		f(2, -1, "c", "fixed_size_list:float:4"),
		f(3, -1, "d", "dict:string:int32:false"),
		f(4, -1, "e", "decimal:256:76:20"),
		f(5, -1, "l", "list.struct"),
		f(6, 5, "item", "struct"),
		f(7, 6, "x", "int32"),
		f(8, -1, "m", "map"),
		f(9, 8, "entries", "struct"),
		f(10, 9, "key", "string"),
		f(11, 9, "value", "large_list"),
		f(12, 11, "item", "double"),
		f(13, -1, "j", "json"),
		f(14, -1, "ts", "timestamp:ms:Etc/GMT+5"),
		f(15, -1, "weird", "some_future_type"),
		f(16, -1, "loop", "struct"),
		f(17, 17, "self", "struct"),
		f(18, -1, "fsl_ts", "fixed_size_list:timestamp:us:UTC:2"),
	}
	want := map[int]string{
		0:  "timestamp[us, tz=UTC]",
		1:  "timestamp[ns]",
		2:  "fixed_size_list<float32>[4]",
		3:  "dictionary<int32, utf8>",
		4:  "decimal256(76, 20)",
		5:  "list<struct<x: int32>>",
		8:  "map<utf8, large_list<float64>>",
		13: "large_binary",
		14: "timestamp[ms, tz=Etc/GMT+5]",
		15: "some_future_type",
		16: "struct<>",
		17: "struct<>",
		18: "fixed_size_list<timestamp[us, tz=UTC]>[2]",
	}
	for i, w := range want {
		if got := ArrowType(fields, i); got != w {
			t.Errorf("ArrowType(%s %q) = %q, want %q", fields[i].GetName(), fields[i].GetLogicalType(), got, w)
		}
	}
}

// legacyFile builds a Lance v1 data file tail: filler, Metadata protobuf
// with batch_offsets, 16-byte footer.
func legacyFile(offsets []int32, packed bool) []byte {
	var meta []byte
	meta = protowire.AppendTag(meta, 1, protowire.VarintType)
	meta = protowire.AppendVarint(meta, 7)
	if packed {
		var p []byte
		for _, o := range offsets {
			p = protowire.AppendVarint(p, uint64(uint32(o)))
		}
		meta = protowire.AppendTag(meta, 2, protowire.BytesType)
		meta = protowire.AppendBytes(meta, p)
	} else {
		for _, o := range offsets {
			meta = protowire.AppendTag(meta, 2, protowire.VarintType)
			meta = protowire.AppendVarint(meta, uint64(uint32(o)))
		}
	}
	data := make([]byte, 100)
	pos := len(data)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(meta)))
	data = append(data, meta...)
	data = binary.LittleEndian.AppendUint64(data, uint64(pos))
	data = append(data, 0, 0, 1, 0, 'L', 'A', 'N', 'C')
	return data
}

func TestLegacyV1RowCount(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		name string
		data []byte
		want uint64
		bad  bool
	}{
		{"packed", legacyFile([]int32{0, 40, 100}, true), 100, false},
		{"unpacked", legacyFile([]int32{0, 7}, false), 7, false},
		{"no offsets", legacyFile(nil, true), 0, true},
		{"negative", legacyFile([]int32{0, -5}, true), 0, true},
		{"short", []byte("LANC"), 0, true},
		{"bad magic", append(legacyFile([]int32{0, 1}, true)[:110], 'X'), 0, true},
	} {
		key := "data/" + tc.name + ".lance"
		if err := st.Put(ctx, key, tc.data); err != nil {
			t.Fatal(err)
		}
		got, err := legacyNumRows(ctx, st, key)
		if tc.bad {
			if !errors.Is(err, manifest.ErrCorrupt) {
				t.Errorf("%s: err = %v, want ErrCorrupt", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

// TestSpec6_3_InspectReportsRefusals: a version with an unknown bit is
// still inspected, and the refusal names the bit; a half-set paired bit is
// refused on both paths.
func TestSpec6_3_InspectReportsRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		reader        uint64
		writer        uint64
		readRefused   bool
		writeRefused  bool
		refusedReader uint64
	}{
		{"supported", 1, 1, false, false, 0},
		{"unknown writer bit", 0, 1 << 20, false, true, 0},
		{"unknown reader bit", 1 << 12, 1 << 12, true, true, 1 << 12},
		{"half-set bit 8", 256, 0, true, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(ctx, "mem://")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m := &pb.Manifest{Version: 1, ReaderFeatureFlags: tc.reader, WriterFeatureFlags: tc.writer,
				Fields: []*pb.Field{{Name: "x", ParentId: -1, LogicalType: "int64"}}}
			data, err := manifest.Encode(m, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, manifest.ManifestPath(manifest.V2, 1), data); err != nil {
				t.Fatal(err)
			}
			s, err := Summarize(ctx, snapshot.NewDataset("mem://", st), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if (s.ReadRefused != "") != tc.readRefused || (s.WriteRefused != "") != tc.writeRefused || s.RefusedReaderBits != tc.refusedReader {
				t.Fatalf("read %q write %q bits %d", s.ReadRefused, s.WriteRefused, s.RefusedReaderBits)
			}
			if tc.writer == 1<<20 && !strings.Contains(s.WriteRefused, "bit 20") {
				t.Fatalf("refusal does not name the bit: %s", s.WriteRefused)
			}
			if s.NumRows == nil || *s.NumRows != 0 {
				t.Fatalf("an empty table has 0 rows: %v %s", s.NumRows, s.NumRowsError)
			}
		})
	}
}

// TestCorpus_LegacyDataFileRows: 0.7.5 records neither physical_rows nor
// num_deleted_rows; the row count comes from the v1 data file (100) and
// the .arrow deletion file (10), as Lance 12 counts.
func TestCorpus_LegacyDataFileRows(t *testing.T) {
	root := corpusRoot(t)
	ctx := context.Background()
	d, err := snapshot.OpenDataset(ctx, filepath.Join(root, "historical/0.7.5/with_deletions"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for v, want := range map[uint64][2]uint64{1: {100, 0}, 2: {90, 10}} {
		s, err := Summarize(ctx, d, Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		if s.PhysicalRows != 0 || s.NumRows == nil || *s.NumRows != want[0] || *s.DeletedRows != want[1] {
			t.Fatalf("version %d: physical %d, rows %v deleted %v (%s)", v, s.PhysicalRows, s.NumRows, s.DeletedRows, s.NumRowsError)
		}
	}
}
