package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/lancekeeper/lancekeeper/manifest/pb"
)

func addSeeds(f *testing.F, glob string) {
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fuzz seeds match %s", glob)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzDecode feeds hostile bytes to the manifest file decoder. Whatever
// decodes must re-encode to bytes that decode to equal messages.
func FuzzDecode(f *testing.F) {
	addSeeds(f, "testdata/manifests/*.manifest")
	f.Add([]byte("LANC"))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode("fuzz", data)
		if err != nil {
			return
		}
		out, err := file.Encode()
		if err != nil {
			t.Fatalf("decoded file does not re-encode: %v", err)
		}
		again, err := Decode("fuzz2", out)
		if err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
		if !proto.Equal(file.Manifest, again.Manifest) || !proto.Equal(file.IndexSection, again.IndexSection) || !proto.Equal(file.Transaction, again.Transaction) {
			t.Fatal("round trip changed the messages")
		}
	})
}

// FuzzDeletionArrow feeds hostile bytes to the .arrow deletion-file reader.
func FuzzDeletionArrow(f *testing.F) {
	addSeeds(f, "testdata/deletions/*.arrow")
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := DecodeDeletionFile("fuzz.arrow", pb.DeletionFile_ARROW_ARRAY, data)
		if err != nil || rows.IsEmpty() {
			return
		}
		enc, err := EncodeDeletionArrow(rows)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeDeletionArrow("re.arrow", enc)
		if err != nil || !back.Equals(rows) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDeletionBitmap feeds hostile bytes to the .bin (Roaring32) reader.
// Whatever decodes (up to 2^20 rows) must re-encode to the same set.
func FuzzDeletionBitmap(f *testing.F) {
	addSeeds(f, "testdata/deletions/*.bin")
	f.Add([]byte{0x3a, 0x30, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x3b, 0x30, 0, 0, 1, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := DecodeDeletionFile("fuzz.bin", pb.DeletionFile_BITMAP, data)
		if err != nil || rows.GetCardinality() > 1<<20 {
			// Run containers let a few bytes describe billions of rows;
			// expanding those into array/bitmap containers is legitimate
			// but too slow for a fuzz iteration.
			return
		}
		enc, err := EncodeDeletionBitmap(rows)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeDeletionBitmap("re.bin", enc)
		if err != nil || !back.Equals(rows) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
