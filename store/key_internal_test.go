package store

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// splitSegmentsCheck is the segment rule of checkPath written with
// strings.Split, as it was before session 24.
func splitSegmentsCheck(key string) error {
	for i, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("empty path segment %d (leading, trailing or doubled '/')", i)
		case seg == "." || seg == "..":
			return fmt.Errorf("path segment %d is %q", i, seg)
		case strings.HasPrefix(seg, tempPrefix):
			return fmt.Errorf("path segment %d starts with %q (reserved for temporary files)", i, tempPrefix)
		}
	}
	return nil
}

// TestCheckPath_SegmentsWithoutSplit: the segment rules of a key (no empty
// segment, no "." or "..", no temporary-file prefix; storage.md "Keys")
// give the same verdict and message, segment number included, as the
// strings.Split form they replaced, on keys made of the pieces that
// matter.
func TestCheckPath_SegmentsWithoutSplit(t *testing.T) {
	pieces := []string{"a", "/", ".", "..", tempPrefix, "b.lance", "_versions", "x"}
	r := rand.New(rand.NewPCG(24, 2))
	for range 20000 {
		var sb strings.Builder
		for range 1 + r.IntN(8) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		key := sb.String()
		want := splitSegmentsCheck(key)
		if strings.Contains(key, "../") {
			continue // refused before the segments are looked at
		}
		got := checkPath(key)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("checkPath(%q) = %v, want %v", key, got, want)
		}
	}
}
