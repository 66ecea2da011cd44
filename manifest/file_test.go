package manifest

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func u64p(v uint64) *uint64 { return &v }

func sampleManifest() *pb.Manifest {
	return &pb.Manifest{
		Version:            3,
		ReaderFeatureFlags: 1,
		WriterFeatureFlags: 1,
		Timestamp:          timestamppb.New(timestamppb.Now().AsTime()),
		Fields: []*pb.Field{
			{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64", Nullable: true},
		},
		Fragments:     []*pb.DataFragment{{Id: 0, PhysicalRows: 10, Files: []*pb.DataFile{{Path: "a.lance", Fields: []int32{0}, ColumnIndices: []int32{0}, FileMajorVersion: 2, FileMinorVersion: 2}}}},
		WriterVersion: &pb.Manifest_WriterVersion{Library: "lancekeeper", Version: "0.1.0"},
		DataFormat:    &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.2"},
		// Stale offsets that Encode must overwrite.
		IndexSection:       u64p(999),
		TransactionSection: u64p(777),
	}
}

// TestSpec2_EncodeLayout checks the writer algorithm of spec §2: index
// section at 0, transaction next, manifest, then the 16-byte footer.
func TestSpec2_EncodeLayout(t *testing.T) {
	m := sampleManifest()
	idx := &pb.IndexSection{Indices: []*pb.IndexMetadata{{Name: "id_idx", Fields: []int32{0}, Uuid: &pb.UUID{Uuid: make([]byte, 16)}}}}
	txn := &pb.Transaction{ReadVersion: 2, Uuid: "u", Operation: &pb.Transaction_Append_{Append: &pb.Transaction_Append{}}}
	for _, tc := range []struct {
		name      string
		idx       *pb.IndexSection
		txn       *pb.Transaction
		wantIdxAt *uint64
		wantTxnAt bool
	}{
		{"none", nil, nil, nil, false},
		{"index only", idx, nil, u64p(0), false},
		{"txn only", nil, txn, nil, true},
		{"both", idx, txn, u64p(0), true},
		{"empty index section", &pb.IndexSection{}, nil, u64p(0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Encode(m, tc.idx, tc.txn)
			if err != nil {
				t.Fatal(err)
			}
			if *m.IndexSection != 999 || *m.TransactionSection != 777 {
				t.Fatal("Encode modified the caller's manifest")
			}
			f, err := Decode("x", data)
			if err != nil {
				t.Fatal(err)
			}
			if string(data[len(data)-4:]) != "LANC" || f.FooterMajor != 0 || f.FooterMinor != 2 {
				t.Fatalf("footer = %d.%d %q", f.FooterMajor, f.FooterMinor, data[len(data)-4:])
			}
			if (tc.wantIdxAt == nil) != (f.Manifest.IndexSection == nil) || (tc.wantIdxAt != nil && *tc.wantIdxAt != *f.Manifest.IndexSection) {
				t.Fatalf("index_section = %v, want %v", f.Manifest.IndexSection, tc.wantIdxAt)
			}
			if tc.wantTxnAt != (f.Manifest.TransactionSection != nil) {
				t.Fatalf("transaction_section = %v", f.Manifest.TransactionSection)
			}
			if tc.idx != nil && !proto.Equal(f.IndexSection, tc.idx) {
				t.Fatal("index section differs")
			}
			if tc.txn != nil && !proto.Equal(f.Transaction, tc.txn) {
				t.Fatal("transaction differs")
			}
			if tc.txn != nil && tc.idx == nil && *f.Manifest.TransactionSection != 0 {
				t.Fatalf("transaction without index must sit at 0, got %d", *f.Manifest.TransactionSection)
			}
			want := proto.Clone(m).(*pb.Manifest)
			want.IndexSection, want.TransactionSection = f.Manifest.IndexSection, f.Manifest.TransactionSection
			if !proto.Equal(want, f.Manifest) {
				t.Fatal("manifest differs after round trip")
			}
			again, err := Encode(f.Manifest, f.IndexSection, f.Transaction)
			if err != nil || string(again) != string(data) {
				t.Fatal("re-encoding a decoded file is not byte-identical")
			}
		})
	}
}

func TestSpec2_DecodeRejects(t *testing.T) {
	good, err := Encode(sampleManifest(), &pb.IndexSection{}, &pb.Transaction{Uuid: "t"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode("good", good)
	if err != nil {
		t.Fatal(err)
	}
	mpos := f.ManifestPos
	footer := int64(len(good)) - 16
	mut := func(fn func(b []byte) []byte) []byte {
		b := append([]byte(nil), good...)
		return fn(b)
	}
	putMpos := func(v int64) []byte {
		return mut(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[footer:], uint64(v)); return b })
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		wantOff int64
	}{
		{"empty", nil, 0},
		{"15 bytes", good[len(good)-15:], 0},
		{"bad magic", mut(func(b []byte) []byte { b[len(b)-1] = 'X'; return b }), footer + 12},
		{"M_pos negative", putMpos(-1), footer},
		{"M_pos past footer", putMpos(footer), footer},
		{"M_pos huge", putMpos(1 << 62), footer},
		{"slack before footer", mut(func(b []byte) []byte {
			b = append(b[:footer:footer], append([]byte{0}, good[footer:]...)...)
			return b
		}), mpos},
		{"length prefix too long", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[mpos:], 1<<31); return b }), mpos},
		{"index section length past footer", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[0:], uint32(footer)); return b }), 0},
		{"garbage manifest", mut(func(b []byte) []byte {
			for i := mpos + 4; i < footer; i++ {
				b[i] = 0xff
			}
			return b
		}), mpos + 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("m.manifest", tc.data)
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want *FormatError matching ErrCorrupt", err)
			}
			if fe.File != "m.manifest" || fe.Offset != tc.wantOff {
				t.Fatalf("error names %s@%d, want m.manifest@%d: %v", fe.File, fe.Offset, tc.wantOff, err)
			}
		})
	}
}

// TestSpec2_FooterVersionNotValidated: Lance opened a manifest whose footer
// said 7.9 (spec §2, §9 trap 6).
func TestSpec2_FooterVersionNotValidated(t *testing.T) {
	data, err := Encode(sampleManifest(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(data[len(data)-8:], 7)
	binary.LittleEndian.PutUint16(data[len(data)-6:], 9)
	f, err := Decode("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if f.FooterMajor != 7 || f.FooterMinor != 9 {
		t.Fatalf("footer %d.%d", f.FooterMajor, f.FooterMinor)
	}
}

func TestSpec2_SectionOffsetOutsideFile(t *testing.T) {
	m := sampleManifest()
	m.IndexSection = nil
	m.TransactionSection = nil
	data, err := Encode(m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := Decode("x", data)
	// Rewrite the manifest with an index_section offset beyond the file, by hand.
	bad := proto.Clone(f.Manifest).(*pb.Manifest)
	bad.IndexSection = u64p(1 << 40)
	raw, _ := proto.Marshal(bad)
	file := binary.LittleEndian.AppendUint32(nil, uint32(len(raw)))
	file = append(file, raw...)
	file = binary.LittleEndian.AppendUint64(file, 0)
	file = append(file, 0, 0, 2, 0, 'L', 'A', 'N', 'C')
	if _, err := Decode("x", file); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
}

// TestCorpus_AllManifestsDecode decodes every manifest file of the shared
// corpus, and checks the round trip of issue 2: decode → Encode → decode
// gives equal messages.
func TestCorpus_AllManifestsDecode(t *testing.T) {
	paths := corpusManifests(t)
	identical := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(p, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		out, err := f.Encode()
		if err != nil {
			t.Errorf("%s: encode: %v", p, err)
			continue
		}
		g, err := Decode(p+" (re-encoded)", out)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !proto.Equal(f.Manifest, g.Manifest) || !proto.Equal(f.IndexSection, g.IndexSection) || !proto.Equal(f.Transaction, g.Transaction) {
			t.Errorf("%s: re-encoded file decodes to a different message", p)
		}
		switch {
		case string(out) == string(data):
			identical++
		default:
			rel, _ := filepath.Rel(corpusDir(t), p)
			reason := diffReason(f)
			if reason == "unexplained" {
				t.Errorf("re-encoding of %s differs for no known reason", rel)
			}
			t.Logf("differs: %s (%s)", rel, reason)
		}
	}
	t.Logf("%d corpus manifest files decode and round-trip; %d re-encode byte-identically", len(paths), identical)
}

// diffReason names the likely reason a re-encoding is not byte-identical:
// maps with several entries (Lance writes them in hash order, we sort).
func diffReason(f *File) string {
	m := f.Manifest
	multi := len(m.GetConfig()) > 1 || len(m.GetSchemaMetadata()) > 1 || len(m.GetTableMetadata()) > 1
	for _, fd := range m.GetFields() {
		if len(fd.GetMetadata()) > 1 {
			multi = true
		}
	}
	if f.Transaction != nil && len(f.Transaction.GetTransactionProperties()) > 1 {
		multi = true
	}
	if multi {
		return "a map with several entries; Lance writes map entries in hash order"
	}
	if _, zeroKey := f.Transaction.GetUpdateConfig().GetFieldMetadataUpdates()[0]; zeroKey {
		return "a map entry with key 0: protobuf-go writes the default key, prost omits it"
	}
	if strings.Contains(m.GetWriterVersion().GetLibrary(), "hand-edit") {
		return "hand-edited manifest with fields out of field-number order"
	}
	return "unexplained"
}
