package manifest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

// randFragment returns a fragment exercising every DataFragment field
// (several files, base ids, deletion files, inline and external row-id
// and version sequences), chosen by r.
func randFragment(r *rand.Rand, id uint64) *pb.DataFragment {
	f := &pb.DataFragment{Id: id, PhysicalRows: r.Uint64N(1 << 40)}
	for range 1 + r.IntN(3) {
		df := &pb.DataFile{
			Path:             fmt.Sprintf("%x.lance", r.Uint64()),
			FileMajorVersion: 2, FileMinorVersion: uint32(r.IntN(3)), FileSizeBytes: r.Uint64N(1 << 33),
		}
		for j := range r.IntN(5) {
			df.Fields = append(df.Fields, int32(j)-int32(r.IntN(3)))
			df.ColumnIndices = append(df.ColumnIndices, int32(j))
		}
		if r.IntN(4) == 0 {
			b := uint32(r.IntN(3))
			df.BaseId = &b
		}
		f.Files = append(f.Files, df)
	}
	if r.IntN(3) == 0 {
		f.DeletionFile = &pb.DeletionFile{FileType: pb.DeletionFile_DeletionFileType(r.IntN(2)), ReadVersion: r.Uint64N(100), Id: r.Uint64(), NumDeletedRows: r.Uint64N(1000)}
	}
	switch r.IntN(3) {
	case 1:
		f.RowIdSequence = &pb.DataFragment_InlineRowIds{InlineRowIds: []byte{byte(r.Uint32()), 1, 2}}
		f.CreatedAtVersionSequence = &pb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: []byte{3}}
	case 2:
		f.RowIdSequence = &pb.DataFragment_ExternalRowIds{ExternalRowIds: &pb.ExternalFile{Path: "r.bin", Offset: r.Uint64N(9), Size: r.Uint64N(99)}}
		f.LastUpdatedAtVersionSequence = &pb.DataFragment_ExternalLastUpdatedAtVersions{ExternalLastUpdatedAtVersions: &pb.ExternalFile{Path: "v.bin"}}
	}
	if r.IntN(8) == 0 {
		// An unknown field, kept and written back by the marshaller.
		f.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), r.Uint64()))
	}
	return f
}

// randManifest returns a manifest with n fragments and a random choice of
// the other fields, unknown ones included (also one numbered 2 with the
// wrong wire type, and one numbered 1: Go keeps both as unknown).
func randManifest(r *rand.Rand, n int) *pb.Manifest {
	m := &pb.Manifest{
		Version: r.Uint64N(1 << 20), ReaderFeatureFlags: r.Uint64N(64), WriterFeatureFlags: r.Uint64N(64),
		Timestamp:     timestamppb.New(timestamppb.Now().AsTime()),
		WriterVersion: &pb.Manifest_WriterVersion{Library: "lancekeeper", Version: "0.1.0"},
		DataFormat:    &pb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.2"},
		Tag:           []string{"", "t"}[r.IntN(2)], TransactionFile: []string{"", "1-u.txn"}[r.IntN(2)],
		NextRowId: r.Uint64N(1000),
	}
	for i := range r.IntN(4) {
		m.Fields = append(m.Fields, &pb.Field{Name: fmt.Sprintf("c%d", i), Id: int32(i), ParentId: -1, LogicalType: "int64", Nullable: r.IntN(2) == 0})
	}
	for i := range n {
		m.Fragments = append(m.Fragments, randFragment(r, uint64(i)))
	}
	if r.IntN(2) == 0 {
		mf := uint32(n)
		m.MaxFragmentId = &mf
	}
	if r.IntN(2) == 0 {
		m.Config = map[string]string{"b": "2", "a": "1", "lance.auto_cleanup.interval": "20"}
		m.SchemaMetadata = map[string][]byte{"k": []byte("v")}
	}
	if r.IntN(3) == 0 {
		m.BasePaths = []*pb.BasePath{{Id: 1, Path: "s3://b/p"}}
		br := "main"
		m.Branch = &br
	}
	if r.IntN(3) == 0 {
		// Stale offsets, which Encode replaces.
		m.IndexSection, m.TransactionSection = u64p(7), u64p(9)
	}
	switch r.IntN(4) {
	case 1:
		m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 17, protowire.VarintType), 5))
	case 2:
		m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 5))
	case 3:
		m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 3))
	}
	return m
}

// appendTo returns the manifest after m with extra fragments appended,
// sharing m's fragment messages as the commit path's append does.
func appendTo(r *rand.Rand, m *pb.Manifest, extra int) *pb.Manifest {
	next := shallowCopy(m)
	next.Version++
	next.Fragments = append(m.Fragments[:len(m.Fragments):len(m.Fragments)], nil)[:len(m.Fragments)]
	for i := range extra {
		next.Fragments = append(next.Fragments, randFragment(r, uint64(len(m.Fragments)+i)))
	}
	next.Timestamp = timestamppb.New(timestamppb.Now().AsTime())
	return next
}

// checkEncodeFile checks EncodeFile against EncodePrelude (the bytes) and
// against Decode of those bytes (the File), and returns the File.
func checkEncodeFile(t *testing.T, prev *File, prelude []byte, m *pb.Manifest, idx *pb.IndexSection, txn *pb.Transaction) *File {
	t.Helper()
	want, err := EncodePrelude(prelude, m, idx, txn)
	if err != nil {
		t.Fatal(err)
	}
	f, got, err := EncodeFile("x", prev, prelude, m, idx, txn)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeFile wrote %d bytes that differ from EncodePrelude's %d", len(got), len(want))
	}
	dec, err := Decode("x", got)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(f.Manifest, dec.Manifest) || !proto.Equal(f.IndexSection, dec.IndexSection) || !proto.Equal(f.Transaction, dec.Transaction) {
		t.Fatal("EncodeFile's File differs from Decode of its bytes")
	}
	if f.Size != dec.Size || f.ManifestPos != dec.ManifestPos || !bytes.Equal(f.Prelude, dec.Prelude) ||
		f.FooterMajor != dec.FooterMajor || f.FooterMinor != dec.FooterMinor {
		t.Fatalf("EncodeFile's File layout %d/%d/%q differs from Decode's %d/%d/%q", f.Size, f.ManifestPos, f.Prelude, dec.Size, dec.ManifestPos, dec.Prelude)
	}
	return f
}

// TestSpec2_EncodeFileMatchesEncode is the round-trip property of the
// incremental encoder (spec §2 writer algorithm, one byte layout): over
// random manifests and chains of appends that share the previous
// version's fragment messages, EncodeFile's bytes equal a full
// EncodePrelude of the same messages, whether the fragments were copied
// from the previous File or marshalled, and its File equals Decode of
// them. Also the cases where nothing may be copied: a fragment replaced,
// fragments removed, a decoded (not encoded) previous File.
func TestSpec2_EncodeFileMatchesEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 17))
	idx := &pb.IndexSection{Indices: []*pb.IndexMetadata{{Name: "i", Fields: []int32{0}, Uuid: &pb.UUID{Uuid: make([]byte, 16)}, DatasetVersion: 3}}}
	txn := &pb.Transaction{ReadVersion: 2, Uuid: "u", Operation: &pb.Transaction_Append_{Append: &pb.Transaction_Append{}}}
	for iter := range 60 {
		var prelude []byte
		if iter%5 == 4 {
			prelude = []byte("dictionary values")
		}
		sIdx, sTxn := []*pb.IndexSection{nil, idx}[iter%2], []*pb.Transaction{nil, txn}[iter/2%2]
		m := randManifest(r, r.IntN(6))
		f := checkEncodeFile(t, nil, prelude, m, sIdx, sTxn)
		for range 1 + r.IntN(6) {
			next := appendTo(r, f.Manifest, r.IntN(3))
			nf := checkEncodeFile(t, f, prelude, next, sIdx, sTxn)
			if len(f.Manifest.Fragments) > 0 && len(nf.enc.frags) > 0 && nf.enc.frags[0] != f.Manifest.Fragments[0] {
				t.Fatal("the File does not keep the fragment messages it encoded")
			}
			f = nf
		}
		// A fragment replaced: not copied, still identical.
		if n := len(f.Manifest.Fragments); n > 0 {
			repl := appendTo(r, f.Manifest, 1)
			repl.Fragments[n-1] = proto.Clone(repl.Fragments[n-1]).(*pb.DataFragment)
			repl.Fragments[n-1].PhysicalRows++
			checkEncodeFile(t, f, prelude, repl, sIdx, sTxn)
			// Fewer fragments than the previous File.
			fewer := shallowCopy(f.Manifest)
			fewer.Fragments = f.Manifest.Fragments[:n-1]
			checkEncodeFile(t, f, prelude, fewer, sIdx, sTxn)
		}
		// A decoded previous File carries no encoded fragments.
		_, data, err := EncodeFile("x", nil, prelude, f.Manifest, sIdx, sTxn)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode("x", data)
		if err != nil {
			t.Fatal(err)
		}
		checkEncodeFile(t, dec, prelude, appendTo(r, dec.Manifest, 1), sIdx, sTxn)
	}
}

// TestSpec2_EncodeFileLeavesInputAlone: EncodeFile sets the section
// offsets on its own copy, as Encode does.
func TestSpec2_EncodeFileLeavesInputAlone(t *testing.T) {
	m := sampleManifest()
	before := proto.Clone(m)
	if _, _, err := EncodeFile("x", nil, nil, m, &pb.IndexSection{}, nil); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m, before) {
		t.Fatal("EncodeFile modified its input manifest")
	}
	if _, _, err := EncodeFile("x", nil, nil, nil, nil, nil); err == nil {
		t.Fatal("nil manifest encoded")
	}
}

// FuzzEncodeFile: for every manifest file that decodes (the real
// manifests of testdata as seeds), encoding its messages with EncodeFile
// — alone, and again after appending a fragment that shares the others —
// gives EncodePrelude's bytes.
func FuzzEncodeFile(f *testing.F) {
	paths, _ := filepath.Glob("testdata/manifests/*.manifest")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data, uint64(1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		file, err := Decode("fuzz", data)
		if err != nil {
			return
		}
		r := rand.New(rand.NewPCG(seed, 0))
		first := checkEncodeFile(t, nil, file.Prelude, file.Manifest, file.IndexSection, file.Transaction)
		checkEncodeFile(t, first, file.Prelude, appendTo(r, first.Manifest, 1+int(seed%3)), file.IndexSection, file.Transaction)
	})
}

// TestSpec2_EncodeFileCopiesThePreviousFragments proves the copy happens:
// a shared fragment changed against the contract after its File was made
// still reads back as it was encoded.
func TestSpec2_EncodeFileCopiesThePreviousFragments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f, _, err := EncodeFile("x", nil, nil, randManifest(r, 300), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := f.Manifest.Fragments[7].PhysicalRows
	next := appendTo(r, f.Manifest, 1)
	f.Manifest.Fragments[7].PhysicalRows = rows + 1 // breaks the contract on purpose
	_, data, err := EncodeFile("x", f, nil, next, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Decode("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := dec.Manifest.Fragments[7].PhysicalRows; got != rows {
		t.Fatalf("fragment 7 has %d rows, want the %d it was encoded with (copied, not marshalled again)", got, rows)
	}
	if got := len(dec.Manifest.Fragments); got != 301 {
		t.Fatalf("%d fragments, want 301", got)
	}
}

// setSome gives field fd of msg a non-default value (one element for a
// list or map), whatever its kind.
func setSome(msg protoreflect.Message, fd protoreflect.FieldDescriptor) {
	scalar := func(fd protoreflect.FieldDescriptor) protoreflect.Value {
		switch fd.Kind() {
		case protoreflect.BoolKind:
			return protoreflect.ValueOfBool(true)
		case protoreflect.EnumKind:
			return protoreflect.ValueOfEnum(1)
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			return protoreflect.ValueOfInt32(7)
		case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
			return protoreflect.ValueOfInt64(7)
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			return protoreflect.ValueOfUint32(7)
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return protoreflect.ValueOfUint64(7)
		case protoreflect.FloatKind:
			return protoreflect.ValueOfFloat32(7)
		case protoreflect.DoubleKind:
			return protoreflect.ValueOfFloat64(7)
		case protoreflect.StringKind:
			return protoreflect.ValueOfString("s")
		case protoreflect.BytesKind:
			return protoreflect.ValueOfBytes([]byte{7})
		}
		panic(fmt.Sprintf("kind %v", fd.Kind()))
	}
	switch {
	case fd.IsList():
		l := msg.Mutable(fd).List()
		if fd.Message() != nil {
			l.Append(protoreflect.ValueOfMessage(l.NewElement().Message()))
		} else {
			l.Append(scalar(fd))
		}
	case fd.IsMap():
		mp := msg.Mutable(fd).Map()
		v := mp.NewValue()
		if fd.MapValue().Message() == nil {
			v = scalar(fd.MapValue())
		}
		mp.Set(scalar(fd.MapKey()).MapKey(), v)
	case fd.Message() != nil:
		msg.Set(fd, protoreflect.ValueOfMessage(msg.NewField(fd).Message()))
	default:
		msg.Set(fd, scalar(fd))
	}
}

// TestShallowCopy_EveryField: pb.Manifest.ShallowCopy copies each field of Manifest
// (set alone, then all at once) and the unknown fields, and setting the
// copy's optional scalars leaves the original alone. A field added to the
// .proto and not to ShallowCopy fails here.
func TestShallowCopy_EveryField(t *testing.T) {
	all := &pb.Manifest{}
	fields := all.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		one := &pb.Manifest{}
		setSome(one.ProtoReflect(), fd)
		setSome(all.ProtoReflect(), fd)
		if c := one.ShallowCopy(); !c.ProtoReflect().Has(fd) || !proto.Equal(c, one) {
			t.Fatalf("ShallowCopy does not copy field %s", fd.Name())
		}
	}
	all.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 17, protowire.VarintType), 5))
	c := all.ShallowCopy()
	if !proto.Equal(c, all) {
		t.Fatal("ShallowCopy of a manifest with every field set differs")
	}
	*c.MaxFragmentId, *c.IndexSection, *c.TransactionSection, *c.Branch = 1, 1, 1, "other"
	if all.GetMaxFragmentId() != 7 || all.GetIndexSection() != 7 || all.GetTransactionSection() != 7 || all.GetBranch() != "s" {
		t.Fatal("the copy shares an optional scalar with the original")
	}
}
