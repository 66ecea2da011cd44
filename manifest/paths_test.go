package manifest

import (
	"errors"
	"testing"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func u32p(v uint32) *uint32 { return &v }

func TestSpec4_10_ResolveBaseID(t *testing.T) {
	m := &pb.Manifest{BasePaths: []*pb.BasePath{
		{Id: 0, IsDatasetRoot: true, Path: "/src/main.lance"},
		{Id: 3, IsDatasetRoot: false, Path: "s3://bucket/extra/"},
	}}
	r, err := NewResolver(m)
	if err != nil {
		t.Fatal(err)
	}
	del := &pb.DeletionFile{FileType: pb.DeletionFile_BITMAP, ReadVersion: 4, Id: 99}
	idx := &pb.IndexMetadata{Name: "i", Uuid: &pb.UUID{Uuid: []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 1, 2, 3, 4, 5, 6, 7}}}
	for _, tc := range []struct {
		name string
		got  func() (Location, error)
		want string
	}{
		{"data, no base", func() (Location, error) { return r.DataFile(&pb.DataFile{Path: "a.lance"}) }, "data/a.lance"},
		{"data, base 0 (present-with-0) dataset root", func() (Location, error) { return r.DataFile(&pb.DataFile{Path: "a.lance", BaseId: u32p(0)}) }, "/src/main.lance/data/a.lance"},
		{"data, plain base", func() (Location, error) { return r.DataFile(&pb.DataFile{Path: "a.lance", BaseId: u32p(3)}) }, "s3://bucket/extra/a.lance"},
		{"deletion, no base", func() (Location, error) { return r.DeletionFile(7, del) }, "_deletions/7-4-99.bin"},
		{"deletion, arrow", func() (Location, error) {
			return r.DeletionFile(0, &pb.DeletionFile{ReadVersion: 1, Id: 18446744073709551615})
		}, "_deletions/0-1-18446744073709551615.arrow"},
		{"index, no base", func() (Location, error) { return r.IndexDir(idx) }, "_indices/01234567-89ab-cdef-0001-020304050607"},
		{"index, base 0", func() (Location, error) {
			i := &pb.IndexMetadata{Uuid: idx.Uuid, BaseId: u32p(0)}
			return r.IndexDir(i)
		}, "/src/main.lance/_indices/01234567-89ab-cdef-0001-020304050607"},
	} {
		loc, err := tc.got()
		if err != nil || loc.String() != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, loc.String(), err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unknown base id", func() error { _, err := r.DataFile(&pb.DataFile{Path: "a", BaseId: u32p(9)}); return err }()},
		{"unknown deletion type", func() error { _, err := r.DeletionFile(1, &pb.DeletionFile{FileType: 7}); return err }()},
		{"short uuid", func() error { _, err := r.IndexDir(&pb.IndexMetadata{}); return err }()},
		{"duplicate base ids", func() error {
			_, err := NewResolver(&pb.Manifest{BasePaths: []*pb.BasePath{{Id: 1}, {Id: 1}}})
			return err
		}()},
	} {
		if !errors.Is(tc.err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", tc.name, tc.err)
		}
	}
}
