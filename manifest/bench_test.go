package manifest

import (
	"fmt"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// largestCorpusManifest returns the bytes of the largest manifest file in
// the shared corpus.
func largestCorpusManifest(b *testing.B) (string, []byte) {
	b.Helper()
	var best string
	var bestSize int64
	for _, p := range corpusManifests(b) {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		if st.Size() > bestSize {
			best, bestSize = p, st.Size()
		}
	}
	data, err := os.ReadFile(best)
	if err != nil {
		b.Fatal(err)
	}
	return best, data
}

// BenchmarkDecodeLargestCorpusManifest decodes the largest real manifest
// (Lance 12 merge_insert, ~33 KB). Baseline: protobuf-go unmarshalling the
// same three payloads (manifest, index section, transaction) located in
// advance, so Decode/baseline is the cost of the container checks.
func BenchmarkDecodeLargestCorpusManifest(b *testing.B) {
	name, data := largestCorpusManifest(b)
	f, err := Decode(name, data)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d bytes, manifest at %d", name, len(data), f.ManifestPos)
	// The three protobuf payloads, located once; the baseline unmarshals
	// exactly these with protobuf-go and nothing else.
	msg := data[f.ManifestPos+4 : int64(len(data))-FooterSize]
	payload := func(off *uint64) []byte {
		if off == nil {
			return nil
		}
		n := uint64(data[*off]) | uint64(data[*off+1])<<8 | uint64(data[*off+2])<<16 | uint64(data[*off+3])<<24
		return data[*off+4 : *off+4+n]
	}
	idx, txn := payload(f.Manifest.IndexSection), payload(f.Manifest.TransactionSection)
	b.Run("baseline_proto_unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m pb.Manifest
			var i pb.IndexSection
			var t pb.Transaction
			if proto.Unmarshal(msg, &m) != nil || proto.Unmarshal(idx, &i) != nil || proto.Unmarshal(txn, &t) != nil {
				b.Fatal("unmarshal failed")
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(name, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// syntheticManifest builds a manifest with n fragments shaped like Lance
// 12's (one v2.2 data file of 3 columns each, every 10th with a deletion
// file).
func syntheticManifest(n int) *pb.Manifest {
	mf := uint32(n - 1)
	m := &pb.Manifest{
		Version:            uint64(n),
		Timestamp:          timestamppb.Now(),
		ReaderFeatureFlags: 1, WriterFeatureFlags: 1,
		MaxFragmentId: &mf,
		WriterVersion: &pb.Manifest_WriterVersion{Library: "lance", Version: "12.0.0"},
		DataFormat:    &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.2"},
		Fields: []*pb.Field{
			{Name: "id", Id: 0, ParentId: -1, LogicalType: "int64"},
			{Name: "name", Id: 1, ParentId: -1, LogicalType: "string", Nullable: true},
			{Name: "v", Id: 2, ParentId: -1, LogicalType: "double", Nullable: true},
		},
		Fragments: make([]*pb.DataFragment, n),
	}
	for i := range m.Fragments {
		fr := &pb.DataFragment{
			Id:           uint64(i),
			PhysicalRows: 1 << 20,
			Files: []*pb.DataFile{{
				Path:   fmt.Sprintf("%024b%026x.lance", i, i*7919),
				Fields: []int32{0, 1, 2}, ColumnIndices: []int32{0, 1, 2},
				FileMajorVersion: 2, FileMinorVersion: 2, FileSizeBytes: 64 << 20,
			}},
		}
		if i%10 == 0 {
			fr.DeletionFile = &pb.DeletionFile{FileType: pb.DeletionFile_BITMAP, ReadVersion: uint64(i), Id: uint64(i) * 2654435761, NumDeletedRows: 6000}
		}
		m.Fragments[i] = fr
	}
	return m
}

// BenchmarkSynthetic100kFragments encodes and decodes a manifest with
// 100,000 fragments (built once, outside the timed loop). Baseline:
// protobuf-go Marshal + Unmarshal of the bare message.
func BenchmarkSynthetic100kFragments(b *testing.B) {
	m := syntheticManifest(100_000)
	txn := &pb.Transaction{ReadVersion: 99_999, Uuid: "00000000-0000-4000-8000-000000000000",
		Operation: &pb.Transaction_Append_{Append: &pb.Transaction_Append{Fragments: m.Fragments[len(m.Fragments)-1:]}}}
	data, err := Encode(m, nil, txn)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("100k-fragment manifest file: %d bytes", len(data))
	b.Run("baseline_proto_marshal_unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				b.Fatal(err)
			}
			var back pb.Manifest
			if err := proto.Unmarshal(raw, &back); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encode+Decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			out, err := Encode(m, nil, txn)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Decode("bench", out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode("bench", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
