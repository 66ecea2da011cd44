package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addGoldenSeeds(f *testing.F, prefix string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", prefix+"*.json"))
	if len(files) == 0 {
		f.Fatalf("no golden %s*.json seeds", prefix)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeTag: hostile tag files never panic, and whatever decodes
// re-encodes to bytes that decode to the same tag (§7.1).
func FuzzDecodeTag(f *testing.F) {
	addGoldenSeeds(f, "tag_")
	f.Add([]byte(`{"version":1,"createdAt":"0000-01-01T00:00:00+01:00"}`))
	f.Add([]byte(`{"version":18446744073709551615,"branch":"a/b","metadata":{"\u0000":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tag, err := DecodeTag("fuzz", data)
		if err != nil {
			return
		}
		enc := EncodeTag(tag)
		back, err := DecodeTag("fuzz", enc)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		if !bytes.Equal(EncodeTag(back), enc) {
			t.Fatalf("encoding not stable: %q vs %q", EncodeTag(back), enc)
		}
	})
}

// FuzzDecodeBranch: hostile branch files never panic, and whatever decodes
// re-encodes stably (§7.2).
func FuzzDecodeBranch(f *testing.F) {
	addGoldenSeeds(f, "branch_")
	f.Add([]byte(`{"parentVersion":1,"identifier":{"version_mapping":[[1,"x"],[2,"y"]]},"createAt":-5}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		br, err := DecodeBranch("fuzz/b", data)
		if err != nil {
			return
		}
		enc := EncodeBranch(br)
		back, err := DecodeBranch("fuzz/b", enc)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		if !bytes.Equal(EncodeBranch(back), enc) {
			t.Fatalf("encoding not stable: %q vs %q", EncodeBranch(back), enc)
		}
	})
}
